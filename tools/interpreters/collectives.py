"""The reference meaning of the mesh dialect's collectives over stacked per-chip arrays
(docs/mesh.md#reference-semantics).

A deployment's value is a **stack**: one numpy array whose leading axes are the mesh's (chip
(i, j) of a 2x4 mesh holds ``stack[i, j]``) and whose trailing axes are one chip's local tensor.
Each collective is one function of a stack (``all_gather``, ``reduce_scatter``, ``all_reduce``,
``all_to_all``, ``argmax_gather``), and ``MeshFunctions`` registers one ``@impl`` per op with xDSL's interpreter, as
tg_functions.py does for tg, so a simulator of several chips can run the ops between the chips'
programs. ``shard`` and ``unshard`` turn a whole tensor into a stack under a sharding and back;
every collective keeps ``unshard`` unchanged (the tests' property), which is what a sharding
change means.

Decided here, and why:

- **Major to minor.** Two mesh axes that shard one dim split it in axis order: chip (c0, c1) of
  axes of n0 and n1 chips holds block c0 x n1 + c1 (DTensor's order; the verifier refuses a
  collective over any but the last splitting axis).
- **Partial sums are summed in the stack's dtype**, in chip order along the axis, as a chip
  would; the tests compare in float64.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    register_impls,
)

from spatial_dialect.mesh import (
    REPLICATE,
    AllGatherOp,
    AllReduceOp,
    AllToAllOp,
    ArgmaxGatherOp,
    CollectiveOp,
    ReduceScatterOp,
    entry_dim,
    is_partial,
)


def _local(rank: int, dim: int) -> int:
    """Where local dim ``dim`` lies in a stack of ``rank`` mesh axes once one of them is taken."""
    return rank - 1 + dim


def _spread(parts: Sequence[np.ndarray], axis: int) -> np.ndarray:
    return np.stack(list(parts), axis=axis)


def all_gather(stack: np.ndarray, rank: int, axis: int, dim: int) -> np.ndarray:
    """Every chip along ``axis`` gets the concatenation, in chip order, of their shards of ``dim``."""
    n = stack.shape[axis]
    whole = np.concatenate([np.take(stack, i, axis=axis) for i in range(n)], axis=_local(rank, dim))
    return _spread([whole] * n, axis)


def reduce_scatter(stack: np.ndarray, rank: int, axis: int, dim: int) -> np.ndarray:
    """The sum over ``axis``, split along ``dim``: chip i of the axis gets block i."""
    n = stack.shape[axis]
    total = stack.sum(axis=axis, dtype=stack.dtype)
    return _spread(np.split(total, n, axis=_local(rank, dim)), axis)


def all_reduce(stack: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """Every chip along ``axis`` gets the sum over it."""
    n = stack.shape[axis]
    return _spread([stack.sum(axis=axis, dtype=stack.dtype)] * n, axis)


def all_to_all(stack: np.ndarray, rank: int, axis: int, src_dim: int, dst_dim: int) -> np.ndarray:
    """Chip j of ``axis`` gets block j (along ``dst_dim``) of every chip's shard, concatenated
    in chip order along ``src_dim``: the split moves from ``src_dim`` to ``dst_dim``."""
    n = stack.shape[axis]
    blocks = [
        np.split(np.take(stack, i, axis=axis), n, axis=_local(rank, dst_dim)) for i in range(n)
    ]
    out = [
        np.concatenate([blocks[i][j] for i in range(n)], axis=_local(rank, src_dim))
        for j in range(n)
    ]
    return _spread(out, axis)


def argmax_gather(stack: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """Every chip along ``axis`` gets, per row, the global index of the row's first maximum over
    the chips' column blocks (MPI's MAXLOC; ops.py ArgmaxGatherOp): each chip's first local
    maximum and its value, the first largest value in chip order, its index offset by its chip's
    first column. A rank-1 local tensor is one row; the result is i32, as tg.argmax's."""
    n = stack.shape[axis]
    parts = [np.take(stack, i, axis=axis) for i in range(n)]
    if parts[0].ndim == rank:  # one local dim: one row
        parts = [p[..., None, :] for p in parts]
    width = parts[0].shape[-1]
    local = [p.argmax(axis=-1) for p in parts]
    values = [
        np.take_along_axis(p, i[..., None], axis=-1)[..., 0]
        for p, i in zip(parts, local, strict=True)
    ]
    best_value, best = values[0], local[0].astype(np.int64)
    for c in range(1, n):
        # Strictly larger only: a tie keeps the earlier chip, whose columns come first.
        wins = values[c] > best_value
        best_value = np.where(wins, values[c], best_value)
        best = np.where(wins, local[c] + c * width, best)
    return _spread([best.astype(np.int32)] * n, axis)


def repeated_axis(placements: Sequence[str], repeat: int) -> int | None:
    """The mesh axis a ``mesh.repeat`` acts on: the last axis that shards a dim (the finest split
    of it, major to minor), whose blocks are each held by ``repeat`` consecutive chips. None when
    ``repeat`` is 1; refused when no axis shards or ``repeat`` does not divide the axis."""
    if repeat == 1:
        return None
    axes = [a for a, e in enumerate(placements) if entry_dim(e) is not None]
    if repeat < 1 or not axes:
        raise ValueError(f"repeat {repeat} needs a sharded axis and >= 1, got {list(placements)}")
    return axes[-1]


def blocked_dim(placements: Sequence[str], blocks: int) -> int | None:
    """The tensor dim ``mesh.blocks`` cuts into blocks: the one dim the placements shard (None
    when ``blocks`` is 1; refused when no dim or several are sharded)."""
    if blocks == 1:
        return None
    dims = {entry_dim(e) for e in placements} - {None}
    if blocks < 1 or len(dims) != 1:
        raise ValueError(f"blocks {blocks} needs one sharded dim and >= 1, got {list(placements)}")
    return dims.pop()


def shard(
    whole: np.ndarray,
    mesh_shape: Sequence[int],
    placements: Sequence[str],
    rng: np.random.Generator | None = None,
    repeat: int = 1,
    blocks: int = 1,
) -> np.ndarray:
    """The stack of ``whole`` under ``placements``. A partial axis holds random addends whose sum
    (in chip order) is the tensor, so it needs ``rng``. ``repeat`` r: the last sharding axis (of
    n chips) cuts its dim into n / r blocks, each held by r consecutive chips (contract 23 section
    1: fewer KV heads than chips). ``blocks`` b: the sharded dim is b equal blocks, each sharded
    alike, and a chip's shard is its slice of each block in block order (docs/mesh.md: tg.moe's
    stacked experts)."""
    dim = blocked_dim(placements, blocks)
    if dim is not None:
        parts = [
            shard(b, mesh_shape, placements, rng, repeat) for b in np.split(whole, blocks, dim)
        ]
        return np.concatenate(parts, axis=len(mesh_shape) + dim)
    stack = whole
    rep_axis = repeated_axis(placements, repeat)
    for a, (n, entry) in enumerate(zip(mesh_shape, placements, strict=True)):
        dim = entry_dim(entry)
        if dim is not None:
            r = repeat if a == rep_axis else 1
            if n % r:
                raise ValueError(f"repeat {r} does not divide mesh axis {a} of {n} chips")
            blocks = np.split(stack, n // r, axis=a + dim)
            stack = _spread([b for b in blocks for _ in range(r)], a)
        elif entry == REPLICATE:
            stack = _spread([stack] * n, a)
        else:
            assert is_partial(entry) and rng is not None, f"{entry} needs an rng"
            # The same addends on every chip of the earlier axes, so replicas stay bit-equal.
            local = stack.shape[a:]
            parts = [
                np.broadcast_to(rng.standard_normal(local).astype(stack.dtype), stack.shape)
                for _ in range(n - 1)
            ]
            rest = stack - sum(parts, np.zeros_like(stack))
            stack = _spread([*parts, rest], a)
    return stack


def unshard(
    stack: np.ndarray, placements: Sequence[str], repeat: int = 1, blocks: int = 1
) -> np.ndarray:
    """The whole tensor a stack holds under ``placements``: shards concatenated (the minor axis
    first), partial sums added, replicas read from chip 0 (``replicas_agree`` checks the others);
    under ``repeat`` r, one chip of each group of r (the first) is read; under ``blocks`` b, each
    of the b blocks of every chip's shard is unsharded alone and the blocks concatenated."""
    dim = blocked_dim(placements, blocks)
    if dim is not None:
        parts = np.split(stack, blocks, axis=len(placements) + dim)
        return np.concatenate([unshard(p, placements, repeat) for p in parts], axis=dim)
    rep_axis = repeated_axis(placements, repeat)
    for a in reversed(range(len(placements))):
        entry = placements[a]
        dim = entry_dim(entry)
        if dim is not None:
            n = stack.shape[a]
            r = repeat if a == rep_axis else 1
            stack = np.concatenate(
                [np.take(stack, i, axis=a) for i in range(0, n, r)], axis=a + dim
            )
        elif entry == REPLICATE:
            stack = np.take(stack, 0, axis=a)
        else:
            stack = stack.sum(axis=a, dtype=stack.dtype)
    return stack


def replicas_agree(stack: np.ndarray, placements: Sequence[str]) -> bool:
    """Whether every replicated axis holds equal copies."""
    for a, entry in enumerate(placements):
        if entry == REPLICATE and not all(
            np.array_equal(np.take(stack, i, axis=a), np.take(stack, 0, axis=a))
            for i in range(stack.shape[a])
        ):
            return False
    return True


@register_impls
class MeshFunctions(InterpreterFunctions):
    """One ``@impl`` per collective: a value is a stack (module docstring)."""

    @staticmethod
    def _where(op: CollectiveOp) -> tuple[int, int, str, str]:
        a = op.axis.value.data
        return len(op.src.placements), a, op.src.placements[a], op.dst.placements[a]

    @impl(AllGatherOp)
    def run_all_gather(self, interp: Interpreter, op: AllGatherOp, args: PythonValues):
        rank, a, before, _ = self._where(op)
        return (all_gather(args[0], rank, a, entry_dim(before)),)

    @impl(ReduceScatterOp)
    def run_reduce_scatter(self, interp: Interpreter, op: ReduceScatterOp, args: PythonValues):
        rank, a, _, after = self._where(op)
        return (reduce_scatter(args[0], rank, a, entry_dim(after)),)

    @impl(AllReduceOp)
    def run_all_reduce(self, interp: Interpreter, op: AllReduceOp, args: PythonValues):
        rank, a, _, _ = self._where(op)
        return (all_reduce(args[0], rank, a),)

    @impl(AllToAllOp)
    def run_all_to_all(self, interp: Interpreter, op: AllToAllOp, args: PythonValues):
        rank, a, before, after = self._where(op)
        return (all_to_all(args[0], rank, a, entry_dim(before), entry_dim(after)),)

    @impl(ArgmaxGatherOp)
    def run_argmax_gather(self, interp: Interpreter, op: ArgmaxGatherOp, args: PythonValues):
        rank, a, _, _ = self._where(op)
        return (argmax_gather(args[0], rank, a),)
