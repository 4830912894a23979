"""The host side of a printed Triton program, as real functions the printer copies in.

A printed program is a Python module a person runs (`python prog.py --inputs in.npz`): its
kernels are printed from the IR, but its host code is the same for every program. It lives here
as functions, so linters and type checkers read it as code, and the printer copies each one in
with `inspect.getsource` (as the TT-Lang printer copies `coord_source`). Only the functions a
program uses are copied: `_check_range` where a kernel reads a runtime index.

The names these functions read from the printed module (the tables TENSORS, INPUTS, OUTPUTS;
`launch`, the kernels' launches in program order; torch) are the printer's; here they are
declared empty, so the functions lint as they will run. torch is an optional dependency
(`.[triton]`): this module imports it only for type checkers, so `spatial-opt -t triton` prints
without it.
"""

from __future__ import annotations

import argparse
import os
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import torch

# The printed module's tables (printer.py fills them from the IR), empty here.
TENSORS: dict[str, tuple[tuple[int, int], Any, tuple[int, ...]]] = {}
INPUTS: list[str] = []
OUTPUTS: list[str] = []


def launch(t: dict[str, Any], device: str) -> None:
    """Printed per program: each kernel launched over its grid, in program order."""
    raise NotImplementedError


def _check_range(values, lo, hi, what):
    bad = values[(values < lo) | (values > hi)]
    if bad.numel():
        raise IndexError(f"{what}: {int(bad[0])} outside [{lo}, {hi}]")


def _table(rows, device):
    return torch.tensor(rows, dtype=torch.int32, device=device)


def run(inputs, device="cuda", every=False):
    """The entry's outputs (torch tensors, declared shapes) from its inputs (by name); with
    every=True, every DRAM tensor (held shape) instead."""
    t = {}
    for name, (shape, dtype, _) in TENSORS.items():
        if name in inputs:
            given = torch.as_tensor(inputs[name]).to(device=device, dtype=dtype)
            t[name] = given.reshape(shape).contiguous().clone()
        else:
            t[name] = torch.zeros(shape, dtype=dtype, device=device)
    launch(t, device)
    if every:
        return t
    return {name: t[name].reshape(TENSORS[name][2]) for name in OUTPUTS}


def _draw(seed):
    rng = np.random.default_rng(seed)
    out = {}
    for name in INPUTS:
        _, dtype, declared = TENSORS[name]
        if dtype.is_floating_point:
            out[name] = rng.standard_normal(declared).astype(np.float32)
        else:
            out[name] = np.zeros(declared, np.int32)
    return out


def _as_torch(value):
    """An input array as torch reads it: floats (bf16 arrives as f32) as f32, ints as they are."""
    array = np.asarray(value)
    if np.issubdtype(array.dtype, np.floating):
        array = array.astype(np.float32)
    return torch.from_numpy(array)


def _as_numpy(tensor):
    return (tensor.float() if tensor.is_floating_point() else tensor).cpu().numpy()


def main(argv=None):
    interpreted = os.environ.get("TRITON_INTERPRET") == "1"
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--inputs", help=".npz of the inputs by name (bf16 as f32); missing: drawn")
    ap.add_argument("--out", default="outputs.npz")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--device", default="cpu" if interpreted else "cuda")
    args = ap.parse_args(argv)
    inputs = _draw(args.seed)
    if args.inputs:
        with np.load(args.inputs) as f:
            inputs.update({k: f[k] for k in f.files if k in INPUTS})
    outs = run({k: _as_torch(v) for k, v in inputs.items()}, args.device)
    np.savez(args.out, **{k: _as_numpy(v) for k, v in outs.items()})
    print(f"wrote {', '.join(outs)} to {args.out}")
    return 0


HELPERS = (_check_range,)
"""Functions a program holds only where a kernel needs them (`_check_range`: a runtime index)."""

ALWAYS = (_table, run, _draw, _as_torch, _as_numpy, main)
"""The functions every program holds, in printed order."""
