"""How one value lies over the mesh while the tensor-parallel pass decides (docs/tensor-parallel.md).

Decided here, and why:

- **A layout is one of three kinds over a group of mesh axes**: replicated everywhere (``R``),
  dim ``d`` split over the group's axes major to minor (``S``), or a partial sum over them (``P``);
  the axes outside the group replicate. The group is every axis (a 2-D mesh shards over both, one
  collective per axis) or, where that does not divide, the minor axis alone. Mixed layouts over
  two groups never meet in one op: the rules ask for one group per op.
- **A shard may repeat** (``repeat`` r, contract 23 section 1): the group's minor axis cuts the dim
  into blocks held by r consecutive chips; KV heads take it when there are fewer heads than chips.
- **A shard may be blocked** (``stacked`` E, ``mesh.blocks``): the dim is E equal blocks (tg.moe's
  experts stacked by rows) and each block is split over the group, so a chip holds the same slice
  of every block; the local shape is the plain shard's. Only arguments take it (no collective
  gathers one: an all_gather concatenates whole shards).
- **Conversions only gather**: ``S -> R`` is an all_gather per axis (minor axis first, as the
  mesh verifier asks), ``P -> R`` an all_reduce per axis (``P -> S`` a reduce_scatter per axis
  for the distributed norm's residual stream, norm.py). ``R -> S`` would be a local slice, which
  tg has no op for; a plan needing it is not taken. An argument has no layout until its first
  reader chooses one (the host shards it), so arguments never convert.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spatial_dialect.mesh import REPLICATE, Collective, partial_entry, shard_entry

R, S, P = "R", "S", "P"


@dataclass(frozen=True)
class Layout:
    kind: str
    dim: int = -1
    axes: tuple[int, ...] = ()
    repeat: int = 1
    stacked: int = 1
    """The dim is this many equal blocks, each split over the group (``mesh.blocks``)."""

    def placements(self, rank: int) -> list[str]:
        entry = {R: REPLICATE, S: shard_entry(self.dim), P: partial_entry()}[self.kind]
        return [entry if a in self.axes else REPLICATE for a in range(rank)]

    def blocks(self, sizes: Sequence[int]) -> int:
        """How many distinct blocks the dim is cut into (1 unless sharded)."""
        if self.kind != S:
            return 1
        n = 1
        for a in self.axes:
            n *= sizes[a]
        return n // self.repeat

    def local_shape(self, shape: Sequence[int], sizes: Sequence[int]) -> list[int]:
        out = list(shape)
        if self.kind == S:
            out[self.dim] //= self.blocks(sizes)
        return out

    def describe(self) -> str:
        if self.kind == R:
            return "replicated"
        axes = ("axis " if len(self.axes) == 1 else "axes ") + ", ".join(map(str, self.axes))
        if self.kind == P:
            return f"a partial sum over {axes}"
        rep = f", each block on {self.repeat} chips" if self.repeat > 1 else ""
        if self.stacked > 1:
            rep += f", within each of {self.stacked} stacked blocks"
        return f"split on dim {self.dim} over {axes}{rep}"


REPLICATED = Layout(R)


def shard(dim: int, axes: tuple[int, ...], repeat: int = 1, stacked: int = 1) -> Layout:
    return Layout(S, dim, axes, repeat, stacked)


def partial(axes: tuple[int, ...]) -> Layout:
    return Layout(P, -1, axes)


def splits(size: int, layout: Layout, sizes: Sequence[int], unit: int = 1) -> bool:
    """Whether a dim of ``size`` cuts into ``layout``'s blocks of a multiple of ``unit``."""
    n = layout.blocks(sizes)
    return size % n == 0 and (size // n) % unit == 0


@dataclass(frozen=True)
class Step:
    """One collective of a conversion: ``kind`` over mesh axis ``axis``, from one layout's
    placements to the next."""

    kind: Collective
    axis: int
    before: tuple[str, ...]
    after: tuple[str, ...]


def conversion(src: Layout, dst: Layout, rank: int, scatter: bool = False) -> list[Step] | None:
    """The collectives that turn ``src`` into ``dst`` (none when equal), or None when no gather
    does (``R -> S``, a repeated shard, a change of group). ``scatter``: a partial sum may also
    become a plain shard over its own axes, a reduce_scatter per axis (the distributed norm's
    residual stream, tensor_parallel/norm.py; off unless its mode is on, so that no other
    decision changes)."""
    if src == dst:
        return []
    if scatter and src.kind == P and dst.kind == S and dst.axes == src.axes:
        if dst.repeat == 1 and dst.stacked == 1:
            return partial_scatter_gather(src, dst.dim, rank)[: len(src.axes)]
    if dst.kind != R or src.repeat != 1 or src.stacked != 1:
        return None
    steps = []
    now = src.placements(rank)
    order = reversed(src.axes) if src.kind == S else src.axes
    kind = Collective.ALL_GATHER if src.kind == S else Collective.ALL_REDUCE
    for a in order:
        after = list(now)
        after[a] = REPLICATE
        steps.append(Step(kind, a, tuple(now), tuple(after)))
        now = after
    return steps


def partial_scatter_gather(src: Layout, dim: int, rank: int) -> list[Step]:
    """``P -> R`` as reduce_scatter over each axis then all_gather back (the runner-up of an
    all_reduce, as tt-metal prices it): the scatter runs major to minor, the gather minor first."""
    steps = []
    now = src.placements(rank)
    for a in src.axes:
        after = list(now)
        after[a] = shard_entry(dim)
        steps.append(Step(Collective.REDUCE_SCATTER, a, tuple(now), tuple(after)))
        now = after
    for a in reversed(src.axes):
        after = list(now)
        after[a] = REPLICATE
        steps.append(Step(Collective.ALL_GATHER, a, tuple(now), tuple(after)))
        now = after
    return steps
