"""The Python a printed TT-Lang program runs besides its sections, as real functions.

A program is one file for tt-lang-sim: its operations, then the host code that allocates the DRAM
tensors, calls the sections in order and reads the outputs back. That host code lives here as
functions the linter and the type checker read, and `print_ttlang` copies each one a program
uses by its source (`inspect.getsource`), under the name it has here; nothing is a string
literal. What a program uses is what its text names (printer.py: `used_helpers`), so a GEMM
prints neither the rope matrices nor `_index`.

The program's own tables (TENSORS, CONSTANTS, INPUTS, OUTPUTS, SECTIONS) are printed per program
after its sections; they are declared below, empty, only so that `run` reads here as it runs
there. torch and ttnn come with tt-lang-sim and are imported by the program, not by this module.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch
    import ttnn

# The program's tables (printed per program by print_ttlang) ─────────────────────────────────────

TENSORS: dict[str, tuple[tuple[int, ...], str]] = {}
CONSTANTS: dict[str, object] = {}
INPUTS: list[str] = []
OUTPUTS: list[str] = []
SECTIONS: list[tuple[object, list[str]]] = []


# Read by the kernels ──────────────────────────────────────────────────────────────────────────


def _index(t, i):
    # element i of an index vector in DRAM as a Python int: SIMULATOR-ONLY (TT-Lang has no
    # scalar read of a tensor or a block in a datamovement kernel)
    return int(t.to_torch()[0, i])


def _coord(item, items_m, items_n, gx, gy, dealt):
    """The block (row, column) of work item `item`: sp's item space
    (docs/sp.md#work-items-and-the-item-space)."""
    if not dealt:
        return divmod(item, items_n)
    rm, em, rn, en = items_m // gy, items_m % gy, items_n // gx, items_n % gx
    per_long_row = (rm + 1) * items_n
    if item < em * per_long_row:
        y = item // per_long_row
    else:
        y = em + (item - em * per_long_row) // (rm * items_n)
    rest = item - (y * rm + min(y, em)) * items_n
    rmy = rm + (y < em)
    rnx_long = rn + 1
    per_long_col = rnx_long * rmy
    if rest < en * per_long_col:
        x = rest // per_long_col
    else:
        x = en + (rest - en * per_long_col) // (rn * rmy)
    t = rest - rmy * (x * rn + min(x, en))
    rnx = rn + (x < en)
    if t < rm * rn:
        i, j = divmod(t, rn)
    else:
        t -= rm * rn
        i = j = None
        if rnx > rn:
            if t < rm:
                i, j = t, rn
            else:
                t -= rm
        if i is None and rmy > rm:
            if t < rn:
                i, j = rm, t
            else:
                t -= rn
        if i is None:
            i, j = rm, rn
    return y + i * gy, x + j * gx


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


def _onehot():
    """Tile a * 32 + b is E(a, b): 1 at (a, b), zeros elsewhere (row moves by matmul)."""
    e = np.zeros((32, 32 * 1024), np.float32)
    for a in range(32):
        for b in range(32):
            e[a, (a * 32 + b) * 32 + b] = 1.0
    return e


def _attn_d(queries, keys, qpad, kpad, causal):
    """Per (query i, key j): j - i (causal) or 0 where both are real, else 1e9; a key is masked
    where this exceeds the threshold (pos for causal, 0.5 otherwise)."""
    i = np.arange(qpad)[:, None]
    j = np.arange(kpad)[None, :]
    d = (j - i).astype(np.float32) if causal else np.zeros((qpad, kpad), np.float32)
    d[(i >= queries) | (j >= keys)] = 1e9
    return d


def _argmax_idx(cols, cpad):
    """Every row the column indices 0 .. cpad - 1 (argmax's and the router's)."""
    return np.tile(np.arange(cpad, dtype=np.float32), (32, 1))


def _argmax_neg(cols, cpad):
    """-1e30 on the padding columns past `cols`, 0 elsewhere: they never win a maximum."""
    n = np.zeros((32, cpad), np.float32)
    n[:, cols:] = -1e30
    return n


# The host: allocate, run the sections in order, read the outputs back ─────────────────────────


def _dtypes(dt):
    """(torch dtype, ttnn dtype) of an element type of the IR."""
    return {
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


def run(arrays):
    """The program on `arrays` (input name -> numpy array): allocates every DRAM tensor (tile
    layout, DRAM), calls the sections in program order, returns the outputs by name."""
    device = ttnn.open_device(device_id=0)
    try:
        dram = {}
        arrays = {**arrays, **{k: f() for k, f in CONSTANTS.items()}}
        for name, (shape, dt) in TENSORS.items():
            if name in arrays:
                host = torch.from_numpy(np.asarray(arrays[name]).reshape(_as_2d(shape)).copy())
            else:
                host = torch.zeros(_as_2d(shape))
            torch_dtype, ttnn_dtype = _dtypes(dt)
            dram[name] = ttnn.from_torch(
                host.to(torch_dtype),
                dtype=ttnn_dtype,
                layout=ttnn.TILE_LAYOUT,
                device=device,
                memory_config=ttnn.DRAM_MEMORY_CONFIG,
            )
        for section, names in SECTIONS:
            section(*[dram[n] for n in names])
        results = {}
        for name in OUTPUTS:
            shape, dt = TENSORS[name] if name in TENSORS else (np.shape(arrays[name]), "f32")
            if name not in dram:
                results[name] = np.asarray(arrays[name])
                continue
            rows, cols = _as_2d(shape)
            value = ttnn.to_torch(dram[name])[:rows, :cols]
            value = value.to(torch.int32 if dt.startswith("i") else torch.float32)
            results[name] = value.numpy().reshape(shape)
        return results
    finally:
        ttnn.close_device(device)


def _seeded_inputs(seed=0):
    gen = np.random.default_rng(seed)
    return {
        n: gen.standard_normal(TENSORS[n][0]).astype(np.float32) for n in INPUTS if n in TENSORS
    }


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
    _index,
    _coord,
    _rope_perm,
    _rope_dup,
    _col_keep,
    _stat_col,
    _stat_gather,
    _stat_counts,
    _onehot,
    _attn_d,
    _argmax_idx,
    _argmax_neg,
)
"""Printed before the sections, each only where the program names it."""

HOST = (_dtypes, _as_2d, run, _seeded_inputs, main)
"""Printed after the program's tables; `main` is every program's entry, the rest as it uses them."""
