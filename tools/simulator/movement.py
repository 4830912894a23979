"""The simulator's data movement between DRAM and the sites' FIFOs: `sp.load` (plain, indexed,
multicast), `sp.store`, `sp.gather` and `sp.scatter`, one runner each (registry.py).

A load or a store walks its access pattern (machine.Pattern) per iteration, one page per block of
the padded DRAM tensor; under a K loop it walks only the K block `k0` starts (ProgramRun's
kernel order). A gather and a scatter read their index vector from DRAM when they run and
range-check every id or position before anything is read or written (`IndexOutOfRange`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp import GatherOp, IndexedStage, LoadOp, ScatterOp, StoreOp
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.tools.simulator import batched
from spatial_dialect.tools.simulator.machine import (
    AccessOutsideTensor,
    DramTensor,
    Fifo,
    IndexOutOfRange,
    NotSimulated,
    Process,
    Q8Block,
    SimulationError,
    SiteRun,
    UnwrittenRead,
    give,
    take,
)
from spatial_dialect.tools.simulator.registry import runs

if TYPE_CHECKING:
    from spatial_dialect.tools.simulator.program import ProgramRun


# ── Load and store ────────────────────────────────────────────────────────────────────────────


@runs(LoadOp)
def run_load(sec: ProgramRun, op: LoadOp, run: SiteRun, item: int, k0: int | None) -> Process:
    dst = load_targets(sec, op, run, item - run.items.start)
    if not dst:
        return  # a member of a multicast group: the sender fills its FIFO
    tensor = sec.dram[op.tensor.root_reference.data]
    pattern = sec.pattern(op, run)
    rect = sec.space.rect(item)
    offset = block_offset(sec, op, run, item)
    users = _user_cache(sec, op, tensor, f"{run.where(op.stage_name())} (item {item})")
    for env in pattern.iterations(rect.r0, rect.c0, k0):
        who = f"{run.where(op.stage_name())} (item {item}, {pattern.describe(env)})"
        row, col = pattern.tile(env)
        if users is not None:
            block = users.page(who, *sec.tile, row, col, *pattern.extent)
        else:
            block = tensor.read(who, row + offset, col, *pattern.extent)
        yield from give(dst, block, who)


def _user_cache(
    sec: ProgramRun, op: LoadOp, tensor: DramTensor, who: str
) -> batched.UserCache | None:
    """A load of users' caches: the positions and block table it reads first (sp.LoadOp)."""
    if op.users is None:
        return None
    pos = batched.read_i32(sec.dram[op.users.root_reference.data], who)[0]
    table = None
    if op.table is not None:
        table = batched.read_i32(sec.dram[op.table.root_reference.data], who)
    return batched.UserCache(who, tensor, pos, table, op)


def block_offset(sec: ProgramRun, op: LoadOp, run: SiteRun, item: int) -> int:
    """The first tile row of an indexed load's block (sp.LoadOp): id * stride, the id read
    from DRAM and range-checked before anything is read; 0 for a plain load."""
    if op.index is None or op.stride is None:
        return 0
    who = f"{run.where(op.stage_name())} (item {item})"
    index = sec.dram[op.index.root_reference.data]
    if not index.written[0, 0]:
        raise UnwrittenRead(who, index.name, (0, 0), 1)
    blocks = sec.dram[op.tensor.root_reference.data].tiles[0] // op.stride
    e = int(index.data[0, 0])
    if not 0 <= e < blocks:
        raise IndexOutOfRange(
            f"{who}: id {e} in @{index.name} outside [0, {blocks}) blocks of {op.stride} "
            f"tile rows of @{op.tensor.root_reference.data}"
        )
    return e * op.stride


def load_targets(sec: ProgramRun, op: LoadOp, run: SiteRun, t: int) -> tuple[Fifo, ...]:
    """The FIFOs this site's instance of a load pushes to for the site's t-th item: its own;
    for a multicast group's sender, those of every member that runs a t-th item (sp.group);
    none for a member that is not the sender. A site outside every group of the family loads
    for itself."""
    dst = sp.buffer_of(op.dst)
    if op.group is None:
        return (run.buffers[dst],)
    name = op.group.root_reference.data
    if name not in sec.groups:
        raise SimulationError(f"section @{sec.name}: no multicast group @{name}")
    for sender, members in sec.groups[name].groups():
        if run.site not in members:
            continue
        if sender != run.site:
            return ()
        absent = [m for m in members if m not in sec.runs]
        if absent:
            raise SimulationError(
                f"{run.where(op.stage_name())} multicasts to site "
                f"{absent[0]}, which runs no instance of {dst.label.data}"
            )
        return tuple(sec.runs[m].buffers[dst] for m in members if len(sec.runs[m].items) > t)
    return (run.buffers[dst],)


@runs(StoreOp)
def run_store(sec: ProgramRun, op: StoreOp, run: SiteRun, item: int, k0: int | None) -> Process:
    if not sec.stores(item):
        return
    tensor = sec.dram[op.tensor.root_reference.data]
    src = run.buffers[sp.buffer_of(op.src)]
    pattern = sec.pattern(op, run)
    rect = sec.space.rect(item)
    for env in pattern.iterations(rect.r0, rect.c0, k0):
        who = f"{run.where(op.stage_name())} (item {item}, {pattern.describe(env)})"
        block = yield from take(src, pattern.extent, who)
        tensor.write(who, *pattern.tile(env), *pattern.extent, block)


# ── Gather and scatter ────────────────────────────────────────────────────────────────────────


def _index(sec: ProgramRun, stage: IndexedStage, who: str) -> np.ndarray:
    """The index vector a gather or scatter reads from DRAM (every element it holds written)."""
    t = sec.dram[stage.index.root_reference.data]
    if not t.written.all():
        raise UnwrittenRead(who, t.name, (0, 0), int(np.count_nonzero(~t.written)))
    return t.data[0, : t.cols].astype(np.int64)


def _blocks(
    sec: ProgramRun, op: IndexedStage, run: SiteRun, item: int
) -> Iterator[tuple[str, DramTensor, int, int, int, int]]:
    """Each iteration of a gather's or scatter's access pattern for one item: who it is, the
    tensor it indexes, the block's origin tile (r, c) and extent (er, ec); a block whose columns
    leave the tensor is AccessOutsideTensor."""
    tensor = sec.dram[op.tensor.root_reference.data]
    pattern = sec.pattern(op, run)  # type: ignore[arg-type]
    rect = sec.space.rect(item)
    for env in pattern.iterations(rect.r0, rect.c0, None):
        who = f"{run.where(op.stage_name())} (item {item})"
        (r, c), (er, ec) = pattern.tile(env), pattern.extent
        if c < 0 or c + ec > tensor.tiles[1]:
            raise AccessOutsideTensor(who, tensor.name, (0, c), (1, ec), tensor.tiles)
        yield who, tensor, r, c, er, ec


@runs(GatherOp)
def run_gather(sec: ProgramRun, op: GatherOp, run: SiteRun, item: int, k0: int | None) -> Process:
    th, tw = sec.tile
    out = run.buffers[sp.buffer_of(op.dst)]
    count = op.count
    for who, table, r, c, er, ec in _blocks(sec, op, run, item):
        if op.table is not None:  # the users' paged caches laid contiguously (sp.GatherOp)
            pos = _index(sec, op, who)[: op.users()]
            blocks = batched.read_i32(sec.dram[op.table.root_reference.data], who)
            users = batched.UserCache(who, table, pos, blocks, op)
            yield from give((out,), users.page(who, th, tw, r, c, er, ec), who)
            continue
        ids = _index(sec, op, who)
        page = np.zeros((er * th, ec * tw), table.dtype)
        # A Q8_0 table blocked along its rows: each row's scales come with its values.
        if table.scales is not None and table.q8_axis != 1:
            raise NotSimulated(f"{who}: rows of a Q8_0 table blocked down its columns")
        blocks = slice(c * tw // Q8_0_BLOCK, (c + ec) * tw // Q8_0_BLOCK)
        scales = None
        if table.scales is not None:
            scales = np.zeros((er * th, blocks.stop - blocks.start), np.float16)
        for i in range(min(er * th, count - r * th)):
            row = r * th + i
            tid = int(ids[row])
            if not 0 <= tid < table.rows:
                raise IndexOutOfRange(
                    f"{who}: id {tid} at ids[{row}] outside [0, {table.rows}) of @{table.name}"
                )
            if not table.written[tid // th, c : c + ec].all():
                raise UnwrittenRead(who, table.name, (tid, c * tw), 1)
            page[i] = table.data[tid, c * tw : (c + ec) * tw]
            if scales is not None:
                scales[i] = table.scales[tid, blocks]  # type: ignore[index]
        yield from give((out,), page if scales is None else Q8Block(page, scales, 1), who)


@runs(ScatterOp)
def run_scatter(sec: ProgramRun, op: ScatterOp, run: SiteRun, item: int, k0: int | None) -> Process:
    th, tw = sec.tile
    src = run.buffers[sp.buffer_of(op.src)]
    count = op.count
    for who, cache, r, c, er, ec in _blocks(sec, op, run, item):
        page = yield from take(src, (er, ec), who)
        rows = _scatter_rows(sec, op, cache, who)
        width = min(ec * tw, cache.cols - c * tw)
        for i in range(min(er * th, count - r * th)):
            row = rows[r * th + i]
            if row is None:
                continue  # an idle user's row
            cache.data[row, c * tw : c * tw + width] = page[i, :width]
            cache.written[row // th, c : c + ec] = True


def _scatter_rows(sec: ProgramRun, op: ScatterOp, cache: DramTensor, who: str) -> list[int | None]:
    """The cache row of each row written (None: not written), every position checked first."""
    pos = _index(sec, op, who)
    if op.tokens is None:
        p, count = int(pos[0]), op.count
        if not 0 <= p <= cache.rows - count:
            raise IndexOutOfRange(
                f"{who}: position {p} outside [0, {cache.rows - count}] ({count} rows into "
                f"@{cache.name}, which has {cache.rows})"
            )
        return list(range(p, p + count))
    table = None
    if op.table is not None:
        table = batched.read_i32(sec.dram[op.table.root_reference.data], who)
    slots = batched.user_slots(who, cache, pos, op.tokens, table, op.block_size, prefix=False)
    batched.check_distinct(who, slots)
    return [None if s is None else int(s[i]) for s in slots for i in range(op.tokens)]
