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
- **A layout may have a second part over other axes** (``also``): a 2-D matmul's weight is split
  on K over one axis and on N over the other, its result a partial sum over the first and split on
  N over the second (tt-metal's Galaxy layout, [K/4, N/8] a chip). A conversion is worked out per
  mesh axis (:func:`conversion`): partial sums are reduced first (on the smaller shard), then
  shards gathered minor axis first; a dim keeps the major part of its split (a gather of the
  minor axis alone leaves the split over the major one), never the minor part alone.
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
    also: Layout | None = None
    """A second part over other mesh axes (a 2-D plan: ``P`` or ``S`` over ``axes``, and this
    ``S`` over its own); None for a layout over one group."""

    def parts(self) -> list[Layout]:
        return [self] if self.also is None else [self, *self.also.parts()]

    @property
    def has_partial(self) -> bool:
        return any(p.kind == P for p in self.parts())

    def placements(self, rank: int) -> list[str]:
        out = [REPLICATE] * rank
        for part in self.parts():
            entry = {R: REPLICATE, S: shard_entry(part.dim), P: partial_entry()}[part.kind]
            for a in part.axes:
                out[a] = entry
        return out

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
        for part in self.parts():
            if part.kind == S:
                out[part.dim] //= part.blocks(sizes)
        return out

    def describe(self) -> str:
        if self.also is not None:
            first = Layout(self.kind, self.dim, self.axes, self.repeat, self.stacked)
            return f"{first.describe()} and {self.also.describe()}"
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


def shard(
    dim: int, axes: tuple[int, ...], repeat: int = 1, stacked: int = 1, also: Layout | None = None
) -> Layout:
    return Layout(S, dim, axes, repeat, stacked, also)


def partial(axes: tuple[int, ...], also: Layout | None = None) -> Layout:
    return Layout(P, -1, axes, also=also)


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


def _owner(lay: Layout, axis: int) -> Layout | None:
    return next((p for p in lay.parts() if axis in p.axes), None)


def conversion(src: Layout, dst: Layout, rank: int, scatter: bool = False) -> list[Step] | None:
    """The collectives that turn ``src`` into ``dst`` (none when equal), or None when no gather
    does (``R -> S``, a repeated or blocked part that would change, a dim kept over its minor
    axis alone). Per mesh axis: a partial sum that ``dst`` replicates is all-reduced (first, on
    the smaller shard), a shard it replicates all-gathered (minor axis first); every other axis
    must already lie as ``dst`` has it. ``scatter``: a (one-part) partial sum may also become a
    plain shard over its own axes, a reduce_scatter per axis (the distributed norm's residual
    stream, tensor_parallel/norm.py; off unless its mode is on, so that no other decision
    changes)."""
    if src == dst:
        return []
    if scatter and src.kind == P and dst.kind == S and dst.axes == src.axes:
        if dst.repeat == 1 and dst.stacked == 1 and src.also is None and dst.also is None:
            return partial_scatter_gather(src, dst.dim, rank)[: len(src.axes)]
    before, after = src.placements(rank), dst.placements(rank)
    reduce, gather = [], []
    for a in range(rank):
        if before[a] == after[a]:
            continue
        part = _owner(src, a)
        if after[a] != REPLICATE or part is None or part.repeat != 1 or part.stacked != 1:
            return None
        (reduce if part.kind == P else gather).append(a)
    for a in range(rank):
        mine, theirs = _owner(src, a), _owner(dst, a)
        if theirs is None:
            continue
        # what stays keeps its repeat and blocks, and a dim split over several axes keeps the
        # major part of its split (gathering the minor axis alone), never the minor part alone
        kept = tuple(b for b in mine.axes if b not in gather and b not in reduce)
        if (mine.repeat, mine.stacked, kept) != (theirs.repeat, theirs.stacked, theirs.axes):
            return None
        if mine.kind == S and kept != mine.axes[: len(kept)]:
            return None
    steps = []
    now = list(before)
    for kind, axes in ((Collective.ALL_REDUCE, reduce), (Collective.ALL_GATHER, gather[::-1])):
        for a in axes:
            nxt = list(now)
            nxt[a] = REPLICATE
            steps.append(Step(kind, a, tuple(now), tuple(nxt)))
            now = nxt
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
