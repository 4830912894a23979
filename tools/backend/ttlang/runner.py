"""`spatial-run --backend tt-lang-sim`: run the program `-t ttlang` prints under Tenstorrent's
functional simulator (tt-lang-sim), in a subprocess, and return its outputs.

The simulator's grid is the target's mesh and `--max-l1` the target's local memory (both as the
module records them). A program the simulator rejects (a deadlock, an L1 overflow, a bad copy)
is `BackendFailed` with the simulator's own message: the sim-only wheel crashes while printing
its diagnostic (a FileNotFoundError on ttl/ttl/diagnostics.py), so the message is the exception
raised before that one, which is what `simulator_message` extracts.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.mesh import StepOp
from spatial_dialect.tools.backend.executors import BackendFailed, BackendUnavailable

INSTALL = "tt-lang-sim is not installed: pip install -e '.[ttlang]' (it pulls torch, about 5 GB)"
TIMEOUT_S = 600


def emit(module: ModuleOp) -> str:
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang

    text = io.StringIO()
    print_ttlang(module, text)
    return text.getvalue()


# For the counting tests (run_traced): before the simulator's main, give every DataflowBuffer a
# unique trace name (the simulator's own is id(self) & 0xFFFF, which can collide) and record, at
# exit, each one's bytes, page, block count and the node it was made for (None: the operation's
# template, made by ttl.make_dataflow_buffer_like; a node's own copy is made by the simulator's
# _build_node_context). `op` counts operations: templates after node copies start a new one.
DFB_HOOK = """
import atexit, json, os, sys
from ttl.sim import dfb as _d
_rec, _op = [], [0, False]
_init = _d.DataflowBuffer.__init__
def _made(self, *a, **k):
    _init(self, *a, **k)
    f = sys._getframe(1)
    node = f.f_locals.get("node") if f.f_code.co_name == "_build_node_context" else None
    if node is None and _op[1]:
        _op[0] += 1
        _op[1] = False
    _op[1] = _op[1] or node is not None
    self._trace_name = "dfb_%d" % len(_rec)
    _rec.append(dict(dfb=self._trace_name, node=node, op=_op[0], bytes=int(self.capacity_bytes),
                     page=[int(v) for v in self.shape], block_count=int(self.block_count)))
_d.DataflowBuffer.__init__ = _made
_path = os.environ["SPATIAL_TTLANG_DFBS"]
atexit.register(lambda: json.dump(_rec, open(_path, "w")))
"""


# Also for the counting tests: every tile-matmul and tile operation a compute kernel performs,
# as trace events the simulator attributes to the running kernel (the simulator traces data
# movement only). `tile_matmul`: m x k x n tiles of a block product (each output tile's K tiles);
# with the DFBs its operands were taken from (None: an expression's result); `tile_op`: the
# tiles of every other block expression's result, but the input tiles of a reduction (it reads
# them all to make one), so a fused chain counts each operator once.
COMPUTE_HOOK = """
import math as _m
from ttl.sim import dfb as _cd, math as _cm, trace as _ct
_ct._EVENT_CATEGORY.update(tile_matmul="copy", tile_op="copy")
_quiet = [0]
def _count(event, tiles, **data):
    if _ct.TRACE.enabled and not _quiet[0]:
        _ct.trace(event, tiles=int(tiles), **data)
def _dfb(block):
    return getattr(getattr(block, "dfb", None), "_trace_name", None)
_mm = _cd.matmul
def _matmul(a, b, *args, **kw):
    _quiet[0] += 1
    try:
        r = _mm(a, b, *args, **kw)
    finally:
        _quiet[0] -= 1
    (m, k), n = a.shape[-2:], b.shape[-1]
    _count("tile_matmul", _m.prod(r.shape[:-2]) * m * k * n, operands=[_dfb(a), _dfb(b)])
    return r
_cd.matmul = _matmul
_red = _cm._reduce_impl
def _reduce(block, *args, **kw):
    _quiet[0] += 1
    try:
        r = _red(block, *args, **kw)
    finally:
        _quiet[0] -= 1
    _count("tile_op", _m.prod(block.shape))
    return r
_cm._reduce_impl = _reduce
_binit = _cd.Block.__init__
def _block(self, *a, **k):
    _binit(self, *a, **k)
    temporary = k.get("is_temporary", a[4] if len(a) > 4 else False)
    if temporary:
        _count("tile_op", _m.prod(k.get("shape", a[1] if len(a) > 1 else ())))
_cd.Block.__init__ = _block
"""


# Always, before the simulator's main: a block written to a DRAM tensor declared bf16 or f16 is
# rounded to that type (to nearest, ties to even), as the packer rounds what it writes to a 16-bit
# buffer and as the reference rounds each op's result once. The simulator backs 16-bit tensors with
# f32 ("float32 promotion") and copies blocks into them unrounded (a slice of a tensor, which
# a copy writes to, even forgets the declared type: kept here), so a section that read another
# section's bf16 output read its unrounded f32 value while the host, reading it back, saw it
# rounded: the tiny bf16 Qwen3-Next layer's matmuls after its rms norms differed from the
# reference in 4 of 10 elements, enough to flip an MoE route downstream. Likewise a host value
# given to `ttnn.from_torch` as a 16-bit tensor is rounded to it, as a chip stores it: the host
# writes a collective's result back that way (host.py `_on_chip`), a sum the simulator made in f32.
ROUND_HOOK = """
from ttl.sim import copyhandlers as _rh, ttnnsim as _rt
_narrow = tuple(_rt._PROMOTABLE_FLOAT_DTYPES.values())
_slice = _rt.Tensor.__getitem__
def _sliced(self, key):
    part = _slice(self, key)
    if isinstance(part, _rt.Tensor):
        part._dtype = self._dtype
    return part
_rt.Tensor.__getitem__ = _sliced
_send = _rh.BlockToTensorHandler.transfer
def _rounded(self, src, dst):
    _send(self, src, dst)
    if dst.dtype in _narrow and dst.underlying_dtype != dst.dtype and not _rh._is_dry_run():
        raw = dst.to_torch()
        raw.copy_(raw.to(dst.dtype).to(raw.dtype))
_rh.BlockToTensorHandler.transfer = _rounded
_from = _rt.from_torch
def _from_rounded(tensor, dtype=None, *args, **kwargs):
    if dtype in _narrow and tensor.is_floating_point():
        tensor = tensor.to(dtype).to(tensor.dtype)
    return _from(tensor, dtype, *args, **kwargs)
_rt.from_torch = _from_rounded
"""


def simulator_command(
    module: ModuleOp, program: Path, *extra: str, dfbs: bool = False
) -> list[str]:
    """`tt-lang-sim PROGRAM --grid X,Y --max-l1 BYTES ...` for the module's recorded target;
    ROUND_HOOK first; with `dfbs`, the hooks DFB_HOOK and COMPUTE_HOOK before it (the caller sets
    SPATIAL_TTLANG_DFBS)."""
    from spatial_dialect.passes.target_choice import recorded_target

    target = recorded_target(module, "tt-lang-sim")
    gx, gy = target.mesh_x, target.mesh_y
    meshes = [p.one(sp.MeshOp) for p in module.walk() if isinstance(p, sp.ProgramOp)]
    local = min((m.local_mem for m in meshes if m is not None), default=None)
    main = ROUND_HOOK + "from ttl.sim.ttlang_sim import main; main()"
    if dfbs:
        main = DFB_HOOK + COMPUTE_HOOK + main
    cmd = [sys.executable, "-c", main, str(program)]
    cmd += ["--grid", f"{gx},{gy}"]
    if local:
        cmd += ["--max-l1", str(local)]
    return cmd + list(extra)


def simulator_message(output: str) -> str:
    """The simulator's own diagnostic in `output`: the exception before the crash in its
    diagnostics printer, else the last exception line, else the tail of the output."""
    chunks = re.split(
        r"\nDuring handling of the above exception, another exception occurred:\n", output
    )
    for chunk in chunks:
        if "diagnostics.py" in chunk and "FileNotFoundError" in chunk:
            continue
        lines = [ln for ln in chunk.strip().splitlines() if ln.strip()]
        errors = [
            ln for ln in lines if re.match(r"^[\w.]*(Error|Exception|Deadlock)\w*:", ln.strip())
        ]
        if errors:
            return errors[-1].strip()
    lines = [ln for ln in output.strip().splitlines() if ln.strip()]
    errors = [ln for ln in lines if re.match(r"^[\w.]*(Error|Exception)\w*:", ln.strip())]
    if errors:
        return errors[-1].strip()
    return " / ".join(lines[-3:]) if lines else "no output"


def run_program(
    module: ModuleOp,
    inputs: Sequence[np.ndarray],
    workdir: Path,
    extra: Sequence[str] = (),
    dfbs: bool = False,
) -> list[np.ndarray]:
    entry = next(op for op in module.walk() if isinstance(op, sp.EntryOp))
    names = [s.data for s in entry.inputs.data]
    outputs = [s.data for s in entry.outputs.data]
    _require_simulator()
    text = emit(module)  # a refusal before the inputs are looked at
    arrays = dict(zip(names, map(_savable, inputs), strict=True))
    got = _simulate(module, text, workdir, arrays, extra, dfbs)
    return [_as(got[n], a) for n, a in zip(outputs, _dtypes(module, outputs), strict=True)]


def _require_simulator() -> None:
    if importlib.util.find_spec("ttl") is None or importlib.util.find_spec("ttl.sim") is None:
        raise BackendUnavailable(INSTALL)


def _simulate(
    module: ModuleOp,
    text: str,
    workdir: Path,
    arrays: dict[str, np.ndarray],
    extra: Sequence[str] = (),
    dfbs: bool = False,
) -> dict[str, np.ndarray]:
    """The printed program `text` run under tt-lang-sim on `arrays` (its inputs file), its
    outputs file read back."""
    program = workdir / "program.py"
    program.write_text(text)
    np.savez(workdir / "inputs.npz", **arrays)
    out = workdir / "outputs.npz"
    cmd = simulator_command(
        module, program, *extra, "--", str(workdir / "inputs.npz"), str(out), dfbs=dfbs
    )
    env = dict(os.environ, PYTHONUNBUFFERED="1", SPATIAL_TTLANG_DFBS=str(workdir / "dfbs.json"))
    try:
        proc = subprocess.run(
            cmd, capture_output=True, text=True, timeout=TIMEOUT_S, cwd=workdir, env=env
        )
    except subprocess.TimeoutExpired:
        raise BackendFailed(f"tt-lang-sim did not finish in {TIMEOUT_S} s") from None
    text = proc.stdout + proc.stderr
    if proc.returncode != 0 or not out.exists():
        raise BackendFailed(simulator_message(text))
    with np.load(out) as got:
        return dict(got)


def _savable(a: np.ndarray) -> np.ndarray:
    # numpy's .npz has no bfloat16 (ml_dtypes' is no numpy number): saved as f32, the
    # program rounds it to its tensor's dtype again
    a = np.asarray(a)
    native = np.issubdtype(a.dtype, np.number) or a.dtype == np.bool_
    return a if native else a.astype(np.float32)


def _dtypes(module: ModuleOp, names: list[str]) -> list[str]:

    found: dict[str, str] = {}
    for p in module.walk():
        if isinstance(p, sp.ProgramOp):
            for t in p.ops_of(sp.TensorOp):
                found.setdefault(t.sym_name.data, str(t.element_type))
        elif isinstance(p, StepOp):
            # a tensor only a step writes (an argmax_gather's indices) is declared by no section
            found.setdefault(p.tensor.data, str(p.result_type.get_element_type()))
    return [found.get(n, "f32") for n in names]


def _as(value: np.ndarray, dt: str) -> np.ndarray:
    if dt == "bf16":
        import ml_dtypes

        return value.astype(np.float32).astype(ml_dtypes.bfloat16)
    if dt == "f16":
        return value.astype(np.float16)
    if dt.startswith("i"):
        return value.astype(np.int32 if dt == "i32" else np.int8)
    return value.astype(np.float32)


@dataclass
class Traced:
    """What one traced run did: its outputs, the simulator's trace events (JSON lines of
    `--trace`) and the DataflowBuffers it made (DFB_HOOK's records)."""

    outputs: list[np.ndarray]
    events: list[dict]
    dfbs: list[dict]


def run_traced(module: ModuleOp, inputs: Sequence[np.ndarray]) -> Traced:
    """Run under tt-lang-sim with `--trace` and the DFB record (the counting tests)."""
    with tempfile.TemporaryDirectory(prefix="spatial-ttlang-") as d:
        work = Path(d)
        trace = work / "trace.jsonl"
        outs = run_program(module, inputs, work, ["--trace", str(trace)], dfbs=True)
        events = [json.loads(line) for line in trace.read_text().splitlines() if line.strip()]
        return Traced(outs, events, json.loads((work / "dfbs.json").read_text()))


def run_tt_lang_sim_chips(module: ModuleOp, stacks: Sequence[np.ndarray]) -> list[np.ndarray]:
    """A deployment over several chips on stacks (docs/mesh.md#reference-semantics: the mesh's
    axes, then one chip's shard), inputs and outputs in `sp.entry` order: the program runs
    every chip's sections on its own shard and the collectives between them (host.py)."""
    from spatial_dialect.tools.interpreters.deployment import chips, deployment_of, stack

    dep = deployment_of(module)
    if dep is None:
        raise BackendFailed("the module is no deployment over a mesh (its entry has no placements)")
    _require_simulator()
    text = emit(module)
    per_chip = {}
    for name, stacked in zip(dep.input_names, stacks, strict=True):
        for c, part in enumerate(chips(np.asarray(stacked), dep.mesh_shape)):
            per_chip[f"{name}@{c}"] = _savable(part)
    with tempfile.TemporaryDirectory(prefix="spatial-ttlang-") as d:
        got = _simulate(module, text, Path(d), per_chip)
    outputs = dep.output_names
    return [
        stack([_as(got[f"{name}@{c}"], dt) for c in range(dep.chips)], dep.mesh_shape)
        for name, dt in zip(outputs, _dtypes(module, outputs), strict=True)
    ]


def run_tt_lang_sim_mesh(module: ModuleOp, whole: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The mesh runner (tools/backend/executors.py MESH_BACKENDS): the WHOLE inputs sharded per
    the entry's placements, every chip simulated, the WHOLE outputs read back per theirs, by
    the plumbing every executor of a deployment shares (tools/interpreters/deployment.py)."""
    from spatial_dialect.tools.interpreters.deployment import (
        deployment_of,
        shard_inputs,
        unshard_outputs,
    )

    dep = deployment_of(module)
    if dep is None:
        raise BackendFailed("the module is no deployment over a mesh (its entry has no placements)")
    return unshard_outputs(dep, run_tt_lang_sim_chips(module, shard_inputs(dep, whole)))


def run_tt_lang_sim(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The backend runner (tools/backend/executors.py): emit, simulate, read back the outputs."""
    with tempfile.TemporaryDirectory(prefix="spatial-ttlang-") as d:
        return run_program(module, inputs, Path(d))
