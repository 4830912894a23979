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

A deployment over several chips (issue 23) is SPMD (docs/mesh.md): every chip runs the same
sections on its own shard, the collectives between them move data between chips. Its host reads as
a program for a multi-chip box: ttnn's mesh (`ttnn.open_mesh_device`), one device per chip, every
chip's DRAM tensors on its own device, each section launched on every chip and the collectives
called between them in program order (`deployment`, printed per program by deploy.py); `main_chips`
is its entry. Decided, and why:

- **One launch per chip.** tt-lang-sim 1.1.6's mesh APIs are stubs (ttl/sim/ttnnsim.py): a
  section launched on a mesh tensor would run once on the whole tensor, and no chip's partial
  result would ever exist. Launching each section on each chip's own shard is the honest check,
  and on a box it is what a mesh launch does.
- **all_reduce and all_gather are ttnn's.** On a chip the chips' tensors are one mesh tensor
  (`ttnn.aggregate_as_tensor`), reduced or gathered over the ttnn cluster axis in place and
  split back (`ttnn.get_device_tensors`). tt-lang-sim has neither: its collectives take the
  chips' tensors stacked along one dim of one host tensor (`_stacked`, tagged with the mesh
  mapper that says so) and return every chip's result stacked the same way, which is what
  ttnn's `ConcatMeshToTensor` reads back from a box. Each shim picks its branch by what ttnn
  offers, as `_embedding` does.
- **reduce_scatter and all_to_all on the host.** tt-lang-sim has neither: the host reads the
  group's tensors back, sums (in chip order) or re-splits them in torch and writes each chip's
  block to its device. On a chip `ttnn.reduce_scatter` runs instead; all_to_all stays a host
  step everywhere (its only ttnn form is MoE's dispatch/combine pair, a different contract).
  argmax_gather (the vocab-parallel arg-max) is a host step everywhere too: ttnn has no MAXLOC,
  and its (value, index) pairs are a few bytes per row.
- **Two-dimensional tensors.** Every DRAM tensor is stored as (rows, cols) (`_as_2d`),
  so a collective gathers or splits dim 0 (the leading dim of the logical tensor: whole rows)
  or dim 1 (the last); deploy.py refuses a sharded middle dim by name.

The program's own tables (TENSORS, CONSTANTS, EXPERTS, INPUTS, OUTPUTS, SECTIONS; MESH and
`deployment` for several chips) are printed per program after its sections; they are declared
below, empty, only so that `run` and `run_chips` read here as they run there. torch and ttnn come with tt-lang-sim and are imported by the program, not by this
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
MESH: tuple[int, int] = (1, 1)
"""ttnn's mesh shape (rows, cols) of a deployment: a 1-D mesh of n chips is (1, n)."""


def deployment(mesh, devices, drams):
    """Printed per program: every section on every chip's DRAM, the collectives between."""


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


def _attn_users_d(users, capacity, qpad, kpad):
    """Per (query row u, key x) of the batched attention: x's position x % capacity where key x
    is user u's own (x // capacity == u), else 1e9; a key is masked where this exceeds the
    threshold pos[u], so an idle user (-1) sees none."""
    u = np.arange(qpad)[:, None]
    x = np.arange(kpad)[None, :]
    d = (x % capacity).astype(np.float32)
    return np.where((x // capacity == u) & (u < users) & (x < users * capacity), d, 1e9).astype(
        np.float32
    )


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


def _user_positions(pos, users, last):
    """The users' positions, read back and checked before anything is written: each -1 (idle)
    or in [0, last] (last = S - T, the last a user's T rows start at)."""
    p = ttnn.to_torch(pos)[0, :users].long()
    for b, j in enumerate(p.tolist()):
        if j != -1 and not 0 <= j <= last:
            raise RuntimeError(f"scatter: position {j} of user {b} (pos[{b}]) outside [0, {last}]")
    return p


def _token_rows(src, pos, p, t, tokens):
    """The users' t-th rows and their positions pos + t (an idle user's -1): what one call of
    paged_update_cache, which writes one row per user, takes; src and pos themselves where each
    user writes one row (the positions then stay on the device)."""
    if tokens == 1:
        return src, pos
    rows = ttnn.slice(src, [t, 0], list(src.shape), [tokens, 1])
    at = torch.where(p >= 0, p + t, -1)[None].int()
    return rows, ttnn.from_torch(at, dtype=ttnn.int32, device=pos.device())


def _batch_update_cache(cache, src, pos, users, capacity, tokens):
    """cache[b * capacity + pos[b] + t] = src[b * tokens + t] for t < tokens and every user b
    not idle (pos[b] = -1): the batched KV-cache write, in place."""
    p = _user_positions(pos, users, capacity - tokens)
    if hasattr(ttnn, "experimental"):  # a chip: one row per user a call
        for t in range(tokens):
            rows, at = _token_rows(src, pos, p, t, tokens)
            ttnn.experimental.paged_update_cache(cache, rows, update_idxs_tensor=at)
        return
    # tt-lang-sim's ttnn has no update_cache: the same rows by torch, on the host
    live = torch.nonzero(p >= 0).flatten()
    for t in range(tokens):
        ttnn.to_torch(cache)[live * capacity + p[live] + t] = ttnn.to_torch(src)[live * tokens + t]


def _paged_update_cache(cache, src, pos, table, users, blocks, block_size, pool, tokens):
    """cache[table[b, j // N] * N + j % N] = src[b * tokens + t], j = pos[b] + t, N =
    block_size, for t < tokens and every user b not idle: the batched KV-cache write through the
    block table (`blocks` ids a user), in place; every block id written is checked to lie in the
    pool first."""
    p = _user_positions(pos, users, blocks * block_size - tokens)
    ids = ttnn.to_torch(table)[:users, :blocks].long()
    live = torch.nonzero(p >= 0).flatten()
    for b in live.tolist():
        for k in range(int(p[b]) // block_size, (int(p[b]) + tokens - 1) // block_size + 1):
            if not 0 <= int(ids[b, k]) < pool:
                raise RuntimeError(
                    f"scatter: block id {int(ids[b, k])} of user {b} (table[{b}, {k}]) outside "
                    f"[0, {pool})"
                )
    if hasattr(ttnn, "experimental"):  # a chip: one row per user a call, the table on the device
        for t in range(tokens):
            rows, at = _token_rows(src, pos, p, t, tokens)
            ttnn.experimental.paged_update_cache(
                cache, rows, update_idxs_tensor=at, page_table=table
            )
        return
    # tt-lang-sim's ttnn has no update_cache: the same rows by torch, on the host
    for t in range(tokens):
        j = p[live] + t
        slot = ids[live, j // block_size] * block_size + j % block_size
        ttnn.to_torch(cache)[slot] = ttnn.to_torch(src)[live * tokens + t]


def _paged_gather(pos, cache, out, table, users, capacity, tokens, block_size, pool):
    """out[u * S + j] = cache[table[u, j // N] * N + j % N] for j <= pos[u] + T - 1, zero past
    it and for an idle user (S = capacity, N = block_size, T = tokens): the users' paged caches
    laid contiguously for the attention. The host reads the positions and the block ids back,
    checks every one a user holds (in the pool) before any row moves, and computes the row ids."""
    p = _user_positions(pos, users, capacity - tokens)
    blocks = ttnn.to_torch(table)[:users].long()
    ids = torch.full((users * capacity,), -1, dtype=torch.long)
    for u in torch.nonzero(p >= 0).flatten().tolist():
        j = torch.arange(int(p[u]) + tokens)
        held = blocks[u, : int(j[-1]) // block_size + 1]
        for k, b in enumerate(held.tolist()):
            if not 0 <= b < pool:
                raise RuntimeError(
                    f"gather: block id {b} of user {u} (table[{u}, {k}]) outside [0, {pool})"
                )
        ids[u * capacity + j] = held[j // block_size] * block_size + j % block_size
    if hasattr(
        ttnn, "embedding"
    ):  # a chip: ttnn copies the rows; an id past the pool is a zero row
        dead = pool * block_size
        rows = ttnn.from_torch(
            torch.where(ids < 0, dead, ids)[None].int(),
            dtype=ttnn.uint32,
            layout=ttnn.ROW_MAJOR_LAYOUT,
            device=cache.device(),
        )
        ttnn.embedding(rows, cache, pad_token=dead, layout=ttnn.TILE_LAYOUT, output_tensor=out)
        return
    # tt-lang-sim's ttnn has no embedding: the same rows by torch, on the host
    o, live = ttnn.to_torch(out), torch.nonzero(ids >= 0).flatten()
    o[: users * capacity] = 0
    o[live] = ttnn.to_torch(cache)[ids[live]]


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


# A deployment over several chips: a launch per chip, the collectives between ───────────────


def _open_chips():
    """ttnn's mesh of the deployment and one device per chip, in chip order (row-major)."""
    mesh = ttnn.open_mesh_device(ttnn.MeshShape(*MESH))
    if hasattr(mesh, "get_devices"):  # a box: the mesh's own devices
        return mesh, mesh.get_devices()
    # tt-lang-sim's mesh is a stub that holds no device: one simulated device per chip
    return mesh, [ttnn.open_device(device_id=c) for c in range(MESH[0] * MESH[1])]


def _close_chips(mesh, devices):
    if not hasattr(mesh, "get_devices"):
        for device in devices:
            ttnn.close_device(device)
    ttnn.close_mesh_device(mesh)


def _groups(axis):
    """The chips of each group a collective over ttnn cluster axis `axis` runs within."""
    ids = np.arange(MESH[0] * MESH[1]).reshape(MESH)
    return (ids.T if axis == 0 else ids).tolist()


def _logical(tensor, name):
    """A DRAM tensor's (rows, cols) on the host, its tile padding cut off."""
    rows, cols = _as_2d(TENSORS[name][0])
    return ttnn.to_torch(tensor)[:rows, :cols]


def _stacked(mesh, parts, name):
    """tt-lang-sim's form of a group's mesh tensor: the chips' tensors stacked along a new dim 0
    (row-major layout: no tile padding between them), tagged as sharded over it."""
    return ttnn.from_torch(
        torch.stack([_logical(p, name) for p in parts]),
        layout=ttnn.ROW_MAJOR_LAYOUT,
        mesh_mapper=ttnn.ShardTensor2dMesh(mesh, mesh_shape=(1, len(parts)), dims=(None, 0)),
    )


def _on_chip(value, device, name):
    """A host (rows, cols) value as the DRAM tensor `name` on `device`."""
    torch_dtype, ttnn_dtype = _dtypes(TENSORS[name][1])
    return ttnn.from_torch(
        value.contiguous().to(torch_dtype),
        dtype=ttnn_dtype,
        layout=ttnn.TILE_LAYOUT,
        device=device,
        memory_config=ttnn.DRAM_MEMORY_CONFIG,
    )


def _all_reduce(mesh, devices, drams, src, dst, axis):
    """dst = the sum of src over the chips along cluster axis `axis`, on every one of them."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: the tensors stay on their devices
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        summed = ttnn.all_reduce(whole, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(summed), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim's mesh is a stub: its collective takes each group stacked in one host tensor
    for group in _groups(axis):
        stack = _stacked(mesh, [drams[c][src] for c in group], src)
        summed = ttnn.to_torch(ttnn.all_reduce(stack, cluster_axis=1, mesh_device=mesh))
        for i, c in enumerate(group):
            drams[c][dst] = _on_chip(summed[i], devices[c], dst)


def _all_gather(mesh, devices, drams, src, dst, axis, dim):
    """dst = the chips' src along cluster axis `axis`, concatenated in chip order along `dim`."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: the tensors stay on their devices
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        gathered = ttnn.all_gather(whole, dim, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(gathered), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim's mesh is a stub: its collective takes each group stacked in one host tensor
    for group in _groups(axis):
        stack = _stacked(mesh, [drams[c][src] for c in group], src)
        gathered = ttnn.all_gather(stack, dim + 1, cluster_axis=1, mesh_device=mesh)
        every = ttnn.to_torch(gathered)
        for i, c in enumerate(group):
            drams[c][dst] = _on_chip(every[i], devices[c], dst)


def _reduce_scatter(mesh, devices, drams, src, dst, axis, dim):
    """dst = block i, along `dim`, of the sum of src over the chips along cluster axis `axis`,
    on chip i of the axis."""
    if hasattr(ttnn, "aggregate_as_tensor"):  # a box: ttnn's reduce_scatter
        whole = ttnn.aggregate_as_tensor([dram[src] for dram in drams])
        scattered = ttnn.reduce_scatter(whole, dim, cluster_axis=axis, mesh_device=mesh)
        for dram, part in zip(drams, ttnn.get_device_tensors(scattered), strict=True):
            dram[dst] = part
        return
    # tt-lang-sim has no reduce_scatter: the sum, in chip order, and its split on the host
    for group in _groups(axis):
        total = _logical(drams[group[0]][src], src).clone()
        for c in group[1:]:
            total += _logical(drams[c][src], src)
        for block, c in zip(torch.chunk(total, len(group), dim), group, strict=True):
            drams[c][dst] = _on_chip(block, devices[c], dst)


def _all_to_all(mesh, devices, drams, src, dst, axis, src_dim, dst_dim):
    """Chip j of cluster axis `axis` gets block j (along `dst_dim`) of every chip's src,
    concatenated in chip order along `src_dim`: a host step, read back and written again."""
    for group in _groups(axis):
        blocks = [torch.chunk(_logical(drams[c][src], src), len(group), dst_dim) for c in group]
        for j, c in enumerate(group):
            drams[c][dst] = _on_chip(torch.cat([b[j] for b in blocks], src_dim), devices[c], dst)


def _argmax_gather(mesh, devices, drams, src, dst, axis):
    """dst = per row, the global column of the first maximum of src over the chips along cluster
    axis `axis`, chip i holding the i-th block of columns (MPI's MAXLOC): each chip's first local
    maximum and its value, the first largest value in chip order, its index offset by that chip's
    first column. A host step, read back and written again: ttnn has no MAXLOC."""
    for group in _groups(axis):
        parts = [_logical(drams[c][src], src).float() for c in group]
        index = torch.stack([p.argmax(-1) for p in parts])
        value = torch.stack(
            [p.gather(-1, i[:, None])[:, 0] for p, i in zip(parts, index, strict=True)]
        )
        chip = value.argmax(0)  # the first largest: a tie goes to the lower chip's columns
        best = index.gather(0, chip[None])[0] + chip * parts[0].shape[-1]
        rows, cols = _as_2d(TENSORS[dst][0])
        for c in group:
            drams[c][dst] = _on_chip(best.reshape(rows, cols), devices[c], dst)


def run_chips(per_chip):
    """The program on every chip: `per_chip[c]` is chip c's inputs (name -> numpy array, its
    own shard); returns every chip's outputs by name, in chip order."""
    mesh, devices = _open_chips()
    try:
        drams = [
            _allocate(arrays, device) for arrays, device in zip(per_chip, devices, strict=True)
        ]
        deployment(mesh, devices, drams)
        return [_results(dram, arrays) for dram, arrays in zip(drams, per_chip, strict=True)]
    finally:
        _close_chips(mesh, devices)


def main_chips():
    """`python PROGRAM.py [inputs.npz] [outputs.npz]`: chip c's input NAME is `NAME@c` in the
    file (else seeded normal draws, seed c), its outputs are saved the same way and listed."""
    args = [a for a in sys.argv[1:] if a != "--"]
    chips = range(MESH[0] * MESH[1])
    if args:
        arrays = np.load(args[0])
        per_chip = [{n: arrays[f"{n}@{c}"] for n in INPUTS} for c in chips]
    else:
        per_chip = [_seeded_inputs(c) for c in chips]
    outputs = run_chips(per_chip)
    saved = {
        f"{n}@{c}": v for c, values in zip(chips, outputs, strict=True) for n, v in values.items()
    }
    np.savez(args[1] if len(args) > 1 else "outputs.npz", **saved)
    for name, value in saved.items():
        print(f"{name}: {value.shape} {value.dtype}")


KERNEL_HELPERS = (
    _rope_perm,
    _rope_dup,
    _col_keep,
    _stat_col,
    _stat_gather,
    _stat_counts,
    _attn_d,
    _attn_users_d,
    _argmax_idx,
    _argmax_cols,
    _argmax_neg,
    _embedding,
    _update_cache,
    _user_positions,
    _token_rows,
    _batch_update_cache,
    _paged_update_cache,
    _paged_gather,
)
"""Printed before the sections, each only where the program names it: the constants' sources
and the host steps' ttnn shims (called by a section that is a host step, never by a kernel: a
kernel calls no Python function, api_check.py)."""

HOST = (_dtypes, _as_2d, _arg, _allocate, _results, run, _seeded_inputs, main)
"""Printed after the program's tables; `main` is a one-chip program's entry, the rest as it uses
them."""

COLLECTIVES = (_all_gather, _reduce_scatter, _all_reduce, _all_to_all, _argmax_gather)
"""The host function of each collective, as deploy.py calls them (one per `mesh` collective)."""

CHIPS_HOST = (
    _dtypes,
    _as_2d,
    _arg,
    _allocate,
    _results,
    _seeded_inputs,
    _groups,
    _logical,
    _stacked,
    _on_chip,
    *COLLECTIVES,
    _open_chips,
    _close_chips,
    run_chips,
    main_chips,
)
"""Printed after a deployment's tables and `deployment`, each where it uses it; `main_chips` is
its entry."""

LOAD_HELPERS = (round_bfp8_b, _q8_0_as_bfp8_b)
"""Printed before the tables, where a program's Q8_0_WEIGHTS names them (a Q8_0 argument's
conversion at load)."""
