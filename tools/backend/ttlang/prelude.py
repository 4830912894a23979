"""The fixed text of a `-t ttlang` program (imports, the item space's numbering, the host), and
the refusal every TT-Lang printer module raises."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException


class Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 0

    def __call__(self, text: str = "") -> None:
        self.lines.append("    " * self.depth + text if text else "")

    def indent(self) -> _Indent:
        return _Indent(self)

    def branch(self, cond: str, then: list[str], otherwise: list[str]) -> None:
        """`if cond:` the lines `then`, `else:` the lines `otherwise` (a kernel's first K block
        against the later ones, most often)."""
        for head, body in ((f"if {cond}:", then), ("else:", otherwise)):
            self(head)
            with self.indent():
                for line in body:
                    self(line)


class _Indent:
    def __init__(self, lines: Lines) -> None:
        self.l = lines

    def __enter__(self) -> None:
        self.l.depth += 1

    def __exit__(self, *exc: object) -> None:
        self.l.depth -= 1


class TTLangUnsupported(DiagnosticException):
    """A section (or construct) TT-Lang cannot express, named with what is missing."""

    def __init__(self, section: str, what: str):
        self.section, self.what = section, what
        super().__init__(f"-t ttlang: section @{section}: {what}")


PRELUDE = """
import sys

import numpy as np
import torch
import ttl
import ttnn


def _index(t, i):
    # element i of an index vector in DRAM as a Python int: SIMULATOR-ONLY (TT-Lang has no
    # scalar read of a tensor or a block in a datamovement kernel)
    return int(t.to_torch()[0, i])
"""


def coord_source(item, items_m, items_n, gx, gy, dealt):
    """The block (row, column) of work item `item`: sp's item space (docs/sp.md#work-items-and-the-item-space)."""
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


HOST_MAIN = '''

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
    return np.tile(np.arange(cpad, dtype=np.float32), (32, 1))


def _argmax_neg(cols, cpad):
    n = np.zeros((32, cpad), np.float32)
    n[:, cols:] = -1e30
    return n

TORCH = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32, "i32": torch.int32}
TTNN = {"bf16": ttnn.bfloat16, "f16": ttnn.float16, "f32": ttnn.float32, "i32": getattr(ttnn, "int32", None)}


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
            dram[name] = ttnn.from_torch(
                host.to(TORCH[dt]),
                dtype=TTNN[dt],
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
        n: gen.standard_normal(TENSORS[n][0]).astype(np.float32)
        for n in INPUTS
        if n in TENSORS
    }


if __name__ == "__main__":
    args = [a for a in sys.argv[1:] if a != "--"]
    arrays = dict(np.load(args[0])) if args else _seeded_inputs()
    outputs = run(arrays)
    np.savez(args[1] if len(args) > 1 else "outputs.npz", **outputs)
    for name, value in outputs.items():
        print(f"{name}: {value.shape} {value.dtype}")
'''
