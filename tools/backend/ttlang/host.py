"""The Python a printed TT-Lang program runs besides its sections, as real functions.

A program is one file for tt-lang-sim: its operations, then the host code that allocates the DRAM
tensors, calls the sections in order and reads the outputs back. That host code lives here as
functions the linter and the type checker read, and `print_ttlang` copies each one a program
uses by its source (`inspect.getsource`), under the name it has here; nothing is a string
literal. What a program uses is what its text names (printer.py: `used_helpers`), so a GEMM
prints neither the rope matrices nor `_embedding`.

No kernel reads a value from a tensor: the TT-Lang specification has no scalar read of a tensor
or a block in a kernel and no runtime argument (an operation takes TT-NN tensors), so a
data-dependent address is host work between operations (docs/backend-ttlang.md#indexed):

- the embedding gather and the KV-cache write are ttnn ops the host calls (`_embedding`,
  `_update_cache`): on a chip `ttnn.embedding` and `ttnn.experimental.paged_update_cache`, as
  tt-metal's Llama runs them; tt-lang-sim 1.1.6's ttnn has neither, so there the same rows move
  by torch on the tensors' host copies, still outside every kernel. Each shim picks its branch
  once per call by what ttnn offers, and prints the ttnn call a chip makes.
- an expert's weights are their own DRAM tensor (EXPERTS: each stacked weight tensor is
  allocated as one tensor per expert, of its rows), and the host passes the routed one to the
  section (`_arg`): it reads the id the route section wrote, as `ttnn.to_torch` does on a chip.

The program's own tables (TENSORS, CONSTANTS, EXPERTS, INPUTS, OUTPUTS, SECTIONS) are printed per
program after its sections; they are declared below, empty, only so that `run` reads here as it
runs there. torch and ttnn come with tt-lang-sim and are imported by the program, not by this
module.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect.tools.interpreters.bfp8 import round_bfp8_b

if TYPE_CHECKING:
    import torch
    import ttnn

# The program's tables (printed per program by print_ttlang) ─────────────────────────────────────

TENSORS: dict[str, tuple[tuple[int, ...], str]] = {}
CONSTANTS: dict[str, object] = {}
EXPERTS: dict[str, int] = {}
Q8_0_WEIGHTS: dict[str, tuple[Callable[..., np.ndarray], str, int]] = {}
INPUTS: list[str] = []
OUTPUTS: list[str] = []
SECTIONS: list[tuple[object, list[str]]] = []


# The constants the host allocates beside the program's tensors ────────────────────────────────


def _rope_perm(style, head_dim, n):
    """x @ P: each head's rotate-half with its sign (neox: [-x2, x1]; interleaved: pairs)."""
    p = np.zeros((n, n), np.float32)
    half = head_dim // 2
    for h0 in range(0, n - head_dim + 1, head_dim):
        for j in range(half):
            a, b = (h0 + j, h0 + half + j) if style == "neox" else (h0 + 2 * j, h0 + 2 * j + 1)
            p[b, a] = -1.0
            p[a, b] = 1.0
    return p


def _rope_dup(style, head_dim, c, n):
    """cos @ D: cos[j] to both columns of pair j of every head."""
    d = np.zeros((c, n), np.float32)
    half = head_dim // 2
    for h0 in range(0, n - head_dim + 1, head_dim):
        for j in range(half):
            a, b = (h0 + j, h0 + half + j) if style == "neox" else (h0 + 2 * j, h0 + 2 * j + 1)
            d[j, a] = d[j, b] = 1.0
    return d


def _col_keep(cols, cpad):
    """1 on the real columns of a row, 0 on the padding past `cols` (a row reduction's mask)."""
    k = np.zeros((32, cpad), np.float32)
    k[:, :cols] = 1.0
    return k


def _stat_col(col, n):
    """Ones in column `col` of every 32-wide tile of one tile row (a statistic's selector)."""
    s = np.zeros((32, n), np.float32)
    s[:, col::32] = 1.0
    return s


def _stat_gather(col, kw):
    """x @ G: column `col` of tile j of a row of kw tiles, to column j of a tile row."""
    g = np.zeros((32 * kw, 32 * -(-kw // 32)), np.float32)
    for j in range(kw):
        g[32 * j + col, j] = 1.0
    return g


def _stat_counts(kw, block, last):
    """Column 0 of tile j of a page of kw partials: its block's real columns (`block`, the
    last one `last`); 1 elsewhere (a divisor where the statistics are masked out)."""
    n = np.ones((32, 32 * kw), np.float32)
    n[:, 0::32] = block
    n[:, 32 * (kw - 1)] = last
    return n


def _attn_d(queries, keys, qpad, kpad, causal):
    """Per (query i, key j): j - i (causal) or 0 where both are real, else 1e9; a key is masked
    where this exceeds the threshold (pos for causal, 0.5 otherwise)."""
    i = np.arange(qpad)[:, None]
    j = np.arange(kpad)[None, :]
    d = (j - i).astype(np.float32) if causal else np.zeros((qpad, kpad), np.float32)
    d[(i >= queries) | (j >= keys)] = 1e9
    return d


def _argmax_idx(cols, cpad):
    """Every row the column indices 0 .. cpad - 1 (the router's)."""
    return np.tile(np.arange(cpad, dtype=np.float32), (32, 1))


def _argmax_cols(kw, last):
    """arg-max's [I | S | T] for K blocks of kw tiles, in f32 (fill blocks are bf16 and would
    round indices past 256): I the block's column indices 0 .. 32 kw - 1 in every row, S the
    block's width (one K block's index offset from the previous), T last - 0.5 (a column of the
    last block past its `last` real ones is padding: I > T)."""
    a = np.zeros((32, 32 * kw + 64), np.float32)
    a[:, : 32 * kw] = np.arange(32 * kw, dtype=np.float32)
    a[:, 32 * kw : 32 * kw + 32] = 32 * kw
    a[:, 32 * kw + 32 :] = last - 0.5
    return a


def _argmax_neg(cols, cpad):
    """-1e30 on the padding columns past `cols`, 0 elsewhere: they never win a maximum."""
    n = np.zeros((32, cpad), np.float32)
    n[:, cols:] = -1e30
    return n


# The host steps between operations: a row at an address read at run time ─────────────────────


def _embedding(ids, table, out, rows, table_rows):
    """out[r] = table[ids[r]] for r < rows: the token embedding."""
    if hasattr(ttnn, "embedding"):  # a chip
        ttnn.embedding(ids, table, layout=ttnn.TILE_LAYOUT, output_tensor=out)
        return
    # tt-lang-sim's ttnn has no embedding: the same rows by torch, on the host
    i = ttnn.to_torch(ids)[0, :rows].long()
    if i.min() < 0 or i.max() >= table_rows:
        raise RuntimeError(f"gather: an id of {i.tolist()} outside [0, {table_rows})")
    ttnn.to_torch(out)[:rows] = ttnn.to_torch(table)[i]


def _update_cache(cache, src, pos, rows, cache_rows):
    """cache[p + r] = src[r] for r < rows, p = pos[0]: the KV-cache write, in place."""
    if hasattr(ttnn, "experimental"):  # a chip: the position stays on the device
        ttnn.experimental.paged_update_cache(cache, src, update_idxs_tensor=pos)
        return
    # tt-lang-sim's ttnn has no update_cache: the same rows by torch, on the host
    p = int(ttnn.to_torch(pos)[0, 0])
    if p < 0 or p + rows > cache_rows:
        raise RuntimeError(f"scatter: rows {p}..{p + rows} outside [0, {cache_rows})")
    ttnn.to_torch(cache)[p : p + rows] = ttnn.to_torch(src)[:rows]


def _arg(dram, name):
    """A section's argument: a tensor by name, or (experts, ids): the expert ids[0] routes to,
    one DRAM tensor of EXPERTS' split, picked by the host (it reads the id back, a device-to-host
    read of one tile)."""
    if isinstance(name, str):
        return dram[name]
    experts, ids = name
    e = int(ttnn.to_torch(dram[ids])[0, 0])
    if not 0 <= e < len(dram[experts]):
        raise RuntimeError(
            f"id {e} in @{ids} outside [0, {len(dram[experts])}) experts of @{experts}"
        )
    return dram[experts][e]


# The host: allocate, run the sections in order, read the outputs back ─────────────────────────


def _q8_0_as_bfp8_b(values, scales, axis):
    """A Q8_0 argument (i8 values, one f16 scale per 32 along `axis`) as the chip stores it:
    f32(d) * q (exact in f32), rounded to bfp8_b by tt-metal's rule (round_bfp8_b). ttnn's
    from_torch(dtype=ttnn.bfloat8_b) rounds so on a chip, where this rounding is then exact; a
    simulator that keeps bfloat8_b in bf16 or f32 holds the chip's values because of it."""
    d = np.repeat(np.asarray(scales).astype(np.float16).astype(np.float32), 32, axis=axis)
    return round_bfp8_b(np.asarray(values).astype(np.float32) * d)


def _dtypes(dt):
    """(torch dtype, ttnn dtype) of an element type of the IR."""
    return {
        "bfp8_b": (torch.float32, ttnn.bfloat8_b),
        "bf16": (torch.bfloat16, ttnn.bfloat16),
        "f16": (torch.float16, ttnn.float16),
        "f32": (torch.float32, ttnn.float32),
        "i32": (torch.int32, getattr(ttnn, "int32", None)),
    }[dt]


def _as_2d(shape):
    if len(shape) == 1:
        return (1, shape[0])
    rows = 1
    for s in shape[:-1]:
        rows *= s
    return (rows, shape[-1])


def _allocate(arrays, device):
    """Every DRAM tensor of the program on `device` (tile layout, DRAM), the inputs' values from
    `arrays` (input name -> numpy array), the constants computed, the rest zero; a stacked expert
    tensor as one per expert."""
    dram = {}
    arrays = {**arrays, **{k: f() for k, f in CONSTANTS.items()}}
    for name, (convert, scales, axis) in Q8_0_WEIGHTS.items():
        arrays[name] = convert(arrays[name], arrays[scales], axis)
    for name, (shape, dt) in TENSORS.items():
        if name in arrays:
            host = torch.from_numpy(np.asarray(arrays[name]).reshape(_as_2d(shape)).copy())
        else:
            host = torch.zeros(_as_2d(shape))
        torch_dtype, ttnn_dtype = _dtypes(dt)
        parts = [host]
        if name in EXPERTS:
            parts = list(torch.split(host, EXPERTS[name]))
        parts = [
            ttnn.from_torch(
                part.to(torch_dtype),
                dtype=ttnn_dtype,
                layout=ttnn.TILE_LAYOUT,
                device=device,
                memory_config=ttnn.DRAM_MEMORY_CONFIG,
            )
            for part in parts
        ]
        dram[name] = parts if name in EXPERTS else parts[0]
    return dram


def _results(dram, arrays):
    """The outputs by name, read back from `dram` (an output that is an input no section
    writes is that input's value)."""
    results = {}
    for name in OUTPUTS:
        if name not in dram:
            results[name] = np.asarray(arrays[name])
            continue
        shape, dt = TENSORS[name]
        rows, cols = _as_2d(shape)
        value = ttnn.to_torch(dram[name])[:rows, :cols]
        value = value.to(torch.int32 if dt.startswith("i") else torch.float32)
        results[name] = value.numpy().reshape(shape)
    return results


def run(arrays):
    """The program on `arrays` (input name -> numpy array): allocates every DRAM tensor, calls
    the sections in program order, returns the outputs by name."""
    device = ttnn.open_device(device_id=0)
    try:
        dram = _allocate(arrays, device)
        for section, names in SECTIONS:
            section(*[_arg(dram, n) for n in names])
        return _results(dram, arrays)
    finally:
        ttnn.close_device(device)


def _seeded_inputs(seed=0):
    gen = np.random.default_rng(seed)
    drawn = {
        n: gen.standard_normal(TENSORS[n][0]).astype(np.float32) for n in INPUTS if n in TENSORS
    }
    for name, (_, scales, axis) in Q8_0_WEIGHTS.items():  # values in -127..127, scales 2^-9
        drawn[name] = np.clip(np.round(drawn[name] * 32), -127, 127)
        shape = list(TENSORS[name][0])
        shape[axis] //= 32
        drawn[scales] = np.full(shape, 2.0**-9, np.float32)
    return drawn


def main():
    """`python PROGRAM.py [inputs.npz] [outputs.npz]`: the inputs from the file (else seeded
    normal draws), the outputs saved and listed."""
    args = [a for a in sys.argv[1:] if a != "--"]
    arrays = dict(np.load(args[0])) if args else _seeded_inputs()
    outputs = run(arrays)
    np.savez(args[1] if len(args) > 1 else "outputs.npz", **outputs)
    for name, value in outputs.items():
        print(f"{name}: {value.shape} {value.dtype}")


KERNEL_HELPERS = (
    _rope_perm,
    _rope_dup,
    _col_keep,
    _stat_col,
    _stat_gather,
    _stat_counts,
    _attn_d,
    _argmax_idx,
    _argmax_cols,
    _argmax_neg,
    _embedding,
    _update_cache,
)
"""Printed before the sections, each only where the program names it: the constants' sources
and the host steps' ttnn shims (called by a section that is a host step, never by a kernel: a
kernel calls no Python function, api_check.py)."""

HOST = (_dtypes, _as_2d, _arg, _allocate, _results, run, _seeded_inputs, main)
"""Printed after the program's tables; `main` is every program's entry, the rest as it uses them."""

LOAD_HELPERS = (round_bfp8_b, _q8_0_as_bfp8_b)
"""Printed before the tables, where a program's Q8_0_WEIGHTS names them (a Q8_0 argument's
conversion at load)."""
