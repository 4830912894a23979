"""The section-wide rules of sp, checked at every phase (docs/sp.md#verifier-rules).

Always: references resolve, stages agree with their buffers and tensors on element type and
storage format, a phase holds what it promises and nothing a later phase adds. Placed: every
work item runs on exactly one site and the range's block is the item's, every stage has an
engine the site has, no access pattern leaves its tensor. Sized: every buffer has an offset,
only an operand FIFO takes a depth of its own on a range (FixedDepthChanged), no two buffers
overlap on a site at its range's depths, every site fits its budget, and multicast group members
agree (GroupMemberMismatch). A violation is reported at the op that breaks it, with its numbers.
"""

from __future__ import annotations

import itertools
from bisect import bisect_left
from collections.abc import Callable
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import Float32Type, IntegerType
from xdsl.ir import Operation
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    BufferOp,
    IndexedStage,
    MemoryBufferOp,
    SectionOp,
    StageOp,
    buffer_of,
)
from spatial_dialect.sp.attrs import SizesAttr
from spatial_dialect.sp.buffers import AccOp, FifoOp, IntermOp
from spatial_dialect.sp.compute import (
    ArgmaxOp,
    AttentionCombineOp,
    AttentionOp,
    MapOp,
    RopeOp,
    RowReduceOp,
)
from spatial_dialect.sp.delta import CausalConvOp, GatedDeltaOp
from spatial_dialect.sp.enums import (
    Phase,
    SectionKind,
    TensorRole,
)
from spatial_dialect.sp.errors import (
    AccessOutOfBounds,
    FixedDepthChanged,
    GroupMemberMismatch,
    LocalMemExceeded,
    OverlappingOffsets,
    PhaseViolation,
    TooManyEngines,
    TypeMismatch,
    UnresolvedReference,
    WorkNotCovered,
)
from spatial_dialect.sp.item_space import ItemSpace, ItemSpaceError, ceil_div
from spatial_dialect.sp.kinds import Q8_0_FORMATS
from spatial_dialect.sp.placement import GroupOp, MeshOp, ShareOp, SitesOp
from spatial_dialect.sp.route import RouteOp
from spatial_dialect.sp.stages import (
    GatherOp,
    LoadOp,
    MatmulTilesOp,
    ScatterOp,
    StoreOp,
    partials_depth,
)
from spatial_dialect.sp.work import PlanOp, WorkOp

if TYPE_CHECKING:
    # The program op runs these rules from its verifier (program.py imports this module).
    from spatial_dialect.sp.program import ProgramOp, TensorOp

# What each optional piece of a section needs: the phase that adds it.
_ADDED_BY = {
    PlanOp: Phase.TILED,
    WorkOp: Phase.TILED,
    MeshOp: Phase.PLACED,
    SitesOp: Phase.PLACED,
    GroupOp: Phase.FUSED,
    ShareOp: Phase.FUSED,
}


# The stage that makes a section what its kind says (a bridge is a map named after it).
KIND_STAGES: dict[SectionKind, type[StageOp]] = {
    SectionKind.GEMM: MatmulTilesOp,
    SectionKind.MAP: MapOp,
    SectionKind.TILIZE: MapOp,
    SectionKind.UNTILIZE: MapOp,
    SectionKind.ROW_REDUCE: RowReduceOp,
    SectionKind.ROPE: RopeOp,
    SectionKind.ATTENTION: AttentionOp,
    SectionKind.ATTENTION_COMBINE: AttentionCombineOp,
    SectionKind.ARGMAX: ArgmaxOp,
    SectionKind.GATHER: GatherOp,
    SectionKind.SCATTER: ScatterOp,
    SectionKind.ROUTE: RouteOp,
    SectionKind.CAUSAL_CONV: CausalConvOp,
    SectionKind.GATED_DELTA: GatedDeltaOp,
}


def _check_kind(p: ProgramOp) -> None:
    stage = KIND_STAGES[p.kind]
    if not p.ops_of(stage):
        raise PhaseViolation(
            f"section @{p.sym_name.data} is a {p.kind.value} section and has no {stage.name} stage"
        )


def _at(op: Operation, check: Callable[[], None]) -> None:
    """Run `check`, reporting a violation at `op`."""
    try:
        check()
    except VerifyException as err:
        op.emit_error(str(err), err)


def verify_program(p: ProgramOp) -> None:
    phase = p.phase_value
    _at(p, lambda: _check_structure(p))
    _at(p, lambda: _check_kind(p))
    for t in p.tensors():
        _at(t, lambda t=t: _check_tensor(p, t))
    for s in p.stages():
        _at(s, lambda s=s: _check_stage(p, s))
    if phase.rank >= Phase.PLACED.rank:
        _check_placement(p)
    if phase.rank >= Phase.FUSED.rank:
        for g in p.ops_of(GroupOp):
            _at(g, lambda g=g: _check_group_family(p, g))
    if phase == Phase.SIZED:
        _check_memory(p)


# ── Structure and references ──────────────────────────────────────────────────────────────────


def _check_structure(p: ProgramOp) -> None:
    phase = p.phase_value
    for op in p.body.block.ops:
        if not isinstance(op, SectionOp):
            raise PhaseViolation(
                f"section @{p.sym_name.data} holds {op.name}, which is not an sp section op"
            )
    for kind, added in _ADDED_BY.items():
        present = p.ops_of(kind)
        if kind in (PlanOp, WorkOp, MeshOp) and len(present) > 1:
            raise PhaseViolation(
                f"section @{p.sym_name.data} has {len(present)} {kind.name} ops; it has one"
            )
        if present and phase.rank < added.rank:
            raise PhaseViolation(
                f"a {phase.value} section holds {kind.name}, which {added.value} adds"
            )
        if not present and phase.rank >= added.rank and kind not in (GroupOp, ShareOp):
            raise PhaseViolation(f"a {phase.value} section lacks {kind.name}")
    labels = [b.label.data for b in p.buffers()]
    if dup := sorted({n for n in labels if labels.count(n) > 1}):
        raise PhaseViolation(f"section @{p.sym_name.data} declares buffer {dup[0]} twice")
    if phase.rank >= Phase.TILED.rank:
        work = p.one(WorkOp)
        assert work is not None
        result = p.tensor(work.tensor.root_reference.data)
        if work.over is not None:
            try:
                work.space(result)
            except ItemSpaceError as err:
                raise WorkNotCovered(f"sp.work: {err}") from None
    if phase.rank < Phase.SIZED.rank and any(s.memory is not None for s in p.ops_of(SitesOp)):
        raise PhaseViolation(f"a {phase.value} section has a memory map, which sized adds")


def _check_tensor(p: ProgramOp, t: TensorOp) -> None:
    (rows, cols), (tr, tc) = t.shape2d, p.tile
    want = (ceil_div(rows, tr), ceil_div(cols, tc))
    if t.tiles != want:
        raise PhaseViolation(
            f"@{t.sym_name.data} is {rows}x{cols} elements, which is {want[0]}x{want[1]} tiles of "
            f"{tr}x{tc}, not {t.tiles[0]}x{t.tiles[1]}"
        )


def _agree(stage: str, t: TensorOp, b: BufferOp, converts: bool = False) -> None:
    """`converts`: a load may convert an integer tensor to the integer datatype its FIFO holds
    (the operand precision link chose from the tensor's interval, docs/passes.md#link-integer-operand-precision-from-intervals)."""
    if converts and isinstance(t.element_type, IntegerType) and isinstance(b.elt, IntegerType):
        return
    if t.element_type != b.elt or t.storage != b.storage:
        raise TypeMismatch(
            f"{stage}: @{t.sym_name.data} holds {t.element_type} stored as {t.storage} but buffer "
            f"{b.label.data} holds {b.elt} stored as {b.storage}"
        )


def _check_stage(p: ProgramOp, s: StageOp) -> None:
    phase = p.phase_value
    name = s.stage_name()
    if (s.engine is not None) != (phase.rank >= Phase.PLACED.rank):
        raise PhaseViolation(
            f"{name}: "
            + (
                "a stage of a placed section runs on an engine"
                if s.engine is None
                else f"a {phase.value} section assigns no engines, place does"
            )
        )
    if isinstance(s, LoadOp | StoreOp):
        t = p.tensor(s.tensor.root_reference.data)
        buf = buffer_of(s.dst if isinstance(s, LoadOp) else s.src)
        if not isinstance(buf, FifoOp):
            raise TypeMismatch(f"{name}: moves pages through a FIFO, not {buf.name}")
        _agree(name, t, buf, converts=isinstance(s, LoadOp))
        if isinstance(s, StoreOp) and t.role.data == TensorRole.INPUT:
            raise TypeMismatch(f"{name}: writes @{t.sym_name.data}, an input of the section")
    if isinstance(s, LoadOp) and s.index is not None:
        _check_indexed_load(p, s)
    if isinstance(s, LoadOp) and s.group is not None:
        if phase.rank < Phase.FUSED.rank:
            raise PhaseViolation(
                f"{name}: a {phase.value} section has no multicast groups, fuse-operands adds them"
            )
        g = SymbolTable.lookup_symbol(p, s.group.root_reference.data)
        if not isinstance(g, GroupOp):
            raise UnresolvedReference(
                f"{name}: section declares no group @{s.group.root_reference.data}"
            )
        if g.buffer != s.dst:
            raise UnresolvedReference(
                f"{name}: group @{g.sym_name.data} multicasts {buffer_of(g.buffer).label.data}, not its FIFO"
            )
    if isinstance(s, MatmulTilesOp):
        _check_matmul(s)
        _check_split(p, s)
    if isinstance(s, IndexedStage):
        _check_indexed(p, s)


def _check_indexed_load(p: ProgramOp, s: LoadOp) -> None:
    """An indexed load: its index is an i32 tensor of the section and its blocks of `stride`
    tile rows tile the tensor (every id in range names a whole block)."""
    index = p.tensor(s.index.root_reference.data)  # type: ignore[union-attr]
    if index.element_type != IntegerType(32):
        raise TypeMismatch(f"{s.stage_name()}: @{index.sym_name.data} is {index.type}, not i32")
    stride, rows = s.stride, p.tensor(s.tensor.root_reference.data).tiles[0]
    if stride is None or stride <= 0 or rows % stride:
        raise TypeMismatch(
            f"{s.stage_name()}: stride {stride} does not divide the tensor's {rows} tile rows"
        )


def _check_indexed(p: ProgramOp, s: IndexedStage) -> None:
    """A gather or scatter: its tensor and its index exist, the index is an i32 vector, and the
    tensor agrees with the stage's FIFO."""
    rows = p.tensor(s.tensor.root_reference.data)
    index = p.tensor(s.index.root_reference.data)
    if index.element_type != IntegerType(32) or index.shape2d[0] != 1:
        raise TypeMismatch(
            f"{s.stage_name()}: @{index.sym_name.data} is {index.type}, not an i32 vector"
        )
    buf = buffer_of(s.buffer())
    if not isinstance(buf, FifoOp):
        raise TypeMismatch(f"{s.stage_name()}: moves pages through a FIFO, not {buf.name}")
    _agree(s.stage_name(), rows, buf)
    if isinstance(s, ScatterOp) and rows.role.data == TensorRole.INPUT:
        raise TypeMismatch(
            f"{s.stage_name()}: writes @{rows.sym_name.data}, an input of the section"
        )
    # a batched write's or a paged gather's block table: one row per user
    assert isinstance(s, ScatterOp | GatherOp)
    users = s.users() if isinstance(s, GatherOp) else s.tokens and s.count // s.tokens
    if s.table is not None and users:
        table = p.tensor(s.table.root_reference.data)
        if table.element_type != IntegerType(32) or table.shape2d[0] != users:
            raise TypeMismatch(
                f"{s.stage_name()}: block table @{table.sym_name.data} is {table.type}, not "
                f"{users} rows of i32 block ids (one per user)"
            )


def _check_matmul(s: MatmulTilesOp) -> None:
    in0, in1, out, acc = (buffer_of(v) for v in (s.in0, s.in1, s.out, s.acc))
    for role, b, kind in (
        ("in0", in0, FifoOp),
        ("in1", in1, FifoOp),
        ("out", out, FifoOp),
        ("acc", acc, AccOp),
    ):
        if not isinstance(b, kind):
            raise TypeMismatch(f"matmul_tiles: {role} is {b.name}, expected {kind.name}")
    # B's page is its K x N block, or with transpose_b that block of the N x K tensor (stages.py)
    b_page = SizesAttr.of("w", "kw") if s.transposes_b else SizesAttr.of("kw", "w")
    if in1.page != b_page:
        raise TypeMismatch(
            f"matmul_tiles: in1's pages are {in1.page.text()}, but B's block is "
            f"{b_page.text()}{' (transpose_b)' if s.transposes_b else ''}"
        )
    q8 = [b.storage in Q8_0_FORMATS for b in (in0, in1)]
    if any(q8) or s.dequantize is not None:
        _check_q8_0_matmul(s, in0, in1, acc, q8)
        return
    if in0.elt != in1.elt:
        raise TypeMismatch(f"matmul_tiles: in0 holds {in0.elt} but in1 holds {in1.elt}")
    integer = isinstance(in0.elt, IntegerType)
    if isinstance(acc.elt, IntegerType) != integer or (integer and acc.elt != IntegerType(32)):
        raise TypeMismatch(
            f"matmul_tiles: {in0.elt} operands accumulate in {'i32' if integer else 'a float type'}, not {acc.elt}"
        )
    _check_spill(s, acc)


def _check_spill(s: MatmulTilesOp, acc: AccOp) -> None:
    if s.spill is not None:
        spill = buffer_of(s.spill)
        if not isinstance(spill, IntermOp) or spill.elt != acc.elt:
            raise TypeMismatch(
                f"matmul_tiles: the spill is an sp.interm at the accumulator's precision {acc.elt}"
            )


def _check_q8_0_matmul(
    s: MatmulTilesOp, in0: FifoOp, in1: FifoOp, acc: AccOp, q8: list[bool]
) -> None:
    """Q8_0 operands: with `dequantize T` every operand is Q8_0 or holds T, and the accumulator is
    a float type; without it (the int8 dot) both are Q8_0 and the accumulator is f32."""
    if s.dequantize is None:
        if not all(q8):
            raise TypeMismatch(
                f"matmul_tiles: the int8 dot takes two Q8_0 operands, got {in0.storage} and "
                f"{in1.storage} (a float operand needs `dequantize`)"
            )
        if acc.elt != Float32Type():
            raise TypeMismatch(f"matmul_tiles: the int8 dot accumulates in f32, not {acc.elt}")
        return
    if not any(q8):
        raise TypeMismatch("matmul_tiles: `dequantize` widens Q8_0 operands; it has none")
    for b, is_q8 in zip((in0, in1), q8, strict=True):
        if not is_q8 and b.elt != s.dequantize:
            raise TypeMismatch(
                f"matmul_tiles: {b.label.data} holds {b.elt}, but the Q8_0 operands are "
                f"dequantized to {s.dequantize}"
            )
    if isinstance(acc.elt, IntegerType):
        raise TypeMismatch(
            f"matmul_tiles: dequantized operands accumulate in a float type, not {acc.elt}"
        )
    _check_spill(s, acc)


def _check_split(p: ProgramOp, s: MatmulTilesOp) -> None:
    """Split-K's partial sums travel through a FIFO at the accumulator's precision, two pages per
    sub-block (those received from the slice before and those sent to the slice after); a
    matmul has one exactly when its work splits K."""
    work = p.one(WorkOp)
    slices = 1 if work is None else work.k_slices
    if (s.partials is not None) != (slices > 1):
        raise PhaseViolation(
            f"matmul_tiles: the work splits K into {slices} slice(s) "
            f"{'but' if slices > 1 else 'and'} the matmul has "
            f"{'no partials FIFO' if s.partials is None else 'a partials FIFO'}"
        )
    if s.partials is None:
        return
    partials, acc = buffer_of(s.partials), buffer_of(s.acc)
    if not isinstance(partials, FifoOp) or partials.elt != acc.elt:
        raise TypeMismatch(
            f"matmul_tiles: the partials are an sp.fifo at the accumulator's precision {acc.elt}"
        )
    if partials.page != SizesAttr.of("sh", "sw") or partials.depth != partials_depth():
        raise TypeMismatch(
            "matmul_tiles: the partials FIFO holds two [sh, sw] pages per sub-block, received "
            f"and sent (depth {partials_depth().scalar_text()}), not page {partials.page.text()} depth "
            f"{partials.depth.scalar_text()}"
        )


# ── Placement ─────────────────────────────────────────────────────────────────────────────────


def _check_placement(p: ProgramOp) -> None:
    mesh, work = p.one(MeshOp), p.one(WorkOp)
    assert mesh is not None and work is not None
    space = p.item_space()
    runs: list[tuple[int, int, SitesOp]] = []  # (first item, count, range) of every site
    site_range: dict[tuple[int, int], SitesOp] = {}
    for r in p.ops_of(SitesOp):

        def check_range(r: SitesOp = r) -> None:
            if not r.rect.within(mesh.size[0], mesh.size[1]):
                raise WorkNotCovered(
                    f"sites {r.rect.text()} reach outside the {mesh.size[0]}x{mesh.size[1]} mesh"
                )
            for x, y in r.rect.sites():
                if (x, y) in site_range:
                    raise WorkNotCovered(
                        f"site ({x}, {y}) is in two ranges, {site_range[(x, y)].rect.text()} and {r.rect.text()}"
                    )
                site_range[(x, y)] = r
                first = r.first_item(x, y)
                if first < 0 or first + r.count > space.count:
                    bad = first if first < 0 else first + r.count - 1
                    raise WorkNotCovered(
                        f"site ({x}, {y}) runs item {bad}; the section has {space.count}"
                    )
                runs.append((first, r.count, r))

        _at(r, check_range)
    ordered = sorted((run for run in runs if run[1] > 0), key=lambda run: run[0])
    for (first, n, r), (later, _, other) in zip(ordered, ordered[1:], strict=False):
        if later < first + n:
            _at(other, lambda a=r, b=other, i=later: _runs_twice(i, a, b))
    _at(work, lambda: _check_runs_cover(ordered, space.count))
    for r in p.ops_of(SitesOp):

        def check_blocks(r: SitesOp = r) -> None:
            _check_block_shapes(r, space)
            _check_bounds(p, r, space, work)
            _check_accumulation(p, r, work)

        _at(r, check_blocks)
    for s in p.stages():
        _at(s, lambda s=s: _check_engine(s, mesh))


def _runs_twice(item: int, first: SitesOp, second: SitesOp) -> None:
    raise WorkNotCovered(
        f"item {item} runs on two sites (ranges {first.rect.text()} and {second.rect.text()})"
    )


def _check_runs_cover(ordered: list[tuple[int, int, SitesOp]], count: int) -> None:
    """Every item runs on a site: the sites' runs of consecutive items, sorted by their first
    item, reach from 0 to count - 1 with no gap (one pass over the sites, not the items)."""
    expected = 0
    for first, n, _ in ordered:
        if first > expected:
            break
        expected = max(expected, first + n)
    if expected != count:
        raise WorkNotCovered(f"item {expected} of {count} runs on no site")


def _check_block_shapes(r: SitesOp, space: ItemSpace) -> None:
    """Every item of the range has the range's block: a whole block unless it is one of the
    clipped edge items, which are checked one by one (O(edge blocks), not O(items))."""
    edges = space.edge_items()
    whole = (space.block_m, space.block_n)
    for x, y in r.rect.sites():
        first = r.first_item(x, y)
        lo, hi = bisect_left(edges, first), bisect_left(edges, first + r.count)
        for item in edges[lo:hi]:
            rect = space.rect(item)
            if (rect.h, rect.w) != r.block:
                raise WorkNotCovered(
                    f"site ({x}, {y}) runs item {item}, a {rect.h}x{rect.w} block, in a range of {r.block[0]}x{r.block[1]} blocks"
                )
        if r.count > hi - lo and whole != r.block:
            item = next(i for i in range(first, first + r.count) if i not in set(edges[lo:hi]))
            raise WorkNotCovered(
                f"site ({x}, {y}) runs item {item}, a {whole[0]}x{whole[1]} block, in a range of {r.block[0]}x{r.block[1]} blocks"
            )


def _check_engine(s: StageOp, mesh: MeshOp) -> None:
    e = s.engine
    assert e is not None
    if e.is_movement and e.index.data >= mesh.movement_engines:
        raise TooManyEngines(
            s.stage_name(), f"movement engine {e.index.data}", mesh.movement_engines
        )
    noc = e.noc_index
    if noc is not None and noc >= mesh.nocs:
        raise TooManyEngines(s.stage_name(), f"NoC {noc}", mesh.nocs, "NoCs")


def _check_bounds(p: ProgramOp, r: SitesOp, space: ItemSpace, work: WorkOp) -> None:
    """No iteration of a load or store leaves its tensor (a wrong stride is a wrong answer)."""
    if r.count == 0:
        return
    bounds = [space.block_bounds(r.first_item(x, y), r.count) for x, y in r.rect.sites()]
    b = r.bindings(work.k_block)
    ranges = {
        "r0": (
            min(q[0] for q in bounds) * space.block_m,
            max(q[1] for q in bounds) * space.block_m,
        ),
        "c0": (
            min(q[2] for q in bounds) * space.block_n,
            max(q[3] for q in bounds) * space.block_n,
        ),
        "k0": (0, work.k_tiles - work.k_block),
        "ti": (0, b["h"] - b["sh"]),
        "tj": (0, b["w"] - b["sw"]),
        "u": (0, b["sh"] - 1),
        "v": (0, b["sw"] - 1),
    }

    def origins() -> list[tuple[int, int]]:
        # Only a grouped operand (a floordiv or mod of the origin) needs them, item by item.
        rects = (space.rect(i) for x, y in r.rect.sites() for i in r.items(x, y))
        return sorted({(q.r0, q.c0) for q in rects})

    for s in p.stages():
        if not isinstance(s, LoadOp | StoreOp):
            continue
        t = p.tensor(s.tensor.root_reference.data)
        # A linear origin takes its extremes at the corners of the box of loop values; one
        # with a floordiv or mod of the item's origin (a grouped operand) is bounded item by item.
        boxes = (
            [ranges]
            if s.access.linear()
            else [{**ranges, "r0": (r0, r0), "c0": (c0, c0)} for r0, c0 in origins()]
        )
        tm, tn = t.tiles
        if isinstance(s, LoadOp) and s.stride is not None:
            tm = s.stride  # an indexed load walks inside one block, whichever the id names
        if isinstance(s, LoadOp) and s.users is not None and s.capacity is not None:
            # a load of users' caches walks U x S positions, mapped to rows when it runs
            tm = ceil_div(p.tensor(s.users.root_reference.data).shape2d[1] * s.capacity, p.tile[0])
        for box in boxes:
            r_lo, r_hi, c_lo, c_hi = s.access.tile_bounds(box, b)
            for row, col in ((r_lo, c_lo), (r_hi, c_hi)):
                if not (0 <= row < tm and 0 <= col < tn):
                    raise AccessOutOfBounds(
                        f"{s.stage_name()} on sites {r.rect.text()}",
                        t.sym_name.data,
                        (row, col),
                        (tm, tn),
                    )


def _check_accumulation(p: ProgramOp, r: SitesOp, work: WorkOp) -> None:
    """Without a spill the accumulator holds the partial sums across K blocks, which it can for
    one sub-block only."""
    matmul = p.one(MatmulTilesOp)
    subs = r.bindings(work.k_block)["subs"]
    if matmul is not None and matmul.spill is None and work.k_blocks > 1 and subs > 1:
        raise PhaseViolation(
            f"sites {r.rect.text()}: {subs} sub-blocks over {work.k_blocks} K blocks need a spill for their partial sums"
        )


def _site_ranges(p: ProgramOp) -> dict[tuple[int, int], SitesOp]:
    """The range each site belongs to."""
    return {site: r for r in p.ops_of(SitesOp) for site in r.rect.sites()}


def _check_group_family(p: ProgramOp, g: GroupOp) -> None:
    """Every member runs an instance, no more items than its sender, and its t-th item reads the
    block of the operand the sender's t-th item reads (the sender serves it the pages it pops)."""
    ranges = _site_ranges(p)
    name = g.sym_name.data
    for sender, members in g.groups():
        for site in members:
            if site not in ranges:
                raise GroupMemberMismatch(
                    name, "no instance (the site runs nothing)", site, 0, sender, 1
                )
    loads = [s for s in p.ops_of(LoadOp) if s.group is not None]
    load = next((s for s in loads if s.group and s.group.root_reference.data == name), None)
    if load is None:
        return
    space = p.item_space()
    # The item's origin the load's blocks depend on: its row (r0), its column (c0), or both.
    used = sorted(load.access.loop_vars() & {"r0", "c0"})

    def block(item: int) -> tuple[int, ...]:
        rect = space.rect(item)
        return tuple(rect.r0 if v == "r0" else rect.c0 for v in used)

    def agreed(sent: range, items: range) -> int:
        """How many leading items are known to agree without looking: two whole grid-site
        deals in one grid row (for r0) or column (for c0) walk their shared rounds alike."""
        a = space.deal_of(sent.start, len(sent))
        b = space.deal_of(items.start, len(items))
        if a is None or b is None:
            return 0
        if ("r0" in used and a[1] != b[1]) or ("c0" in used and a[0] != b[0]):
            return 0
        return min(len(items), space.shared_rounds)

    for sender, members in g.groups():
        sent = ranges[sender].items(*sender)
        for site in members:
            items = ranges[site].items(*site)
            if len(items) > len(sent):
                raise GroupMemberMismatch(name, "items run", site, len(items), sender, len(sent))
            start = agreed(sent, items)
            blocks = {t: block(sent[t]) for t in range(start, len(items))}
            for t in range(start, len(items)):
                item = items[t]
                if block(item) != blocks[t]:
                    raise GroupMemberMismatch(
                        name,
                        f"as its item {t} the block at {'/'.join(used)} tile",
                        site,
                        block(item)[0],
                        sender,
                        blocks[t][0],
                    )


# ── Memory ────────────────────────────────────────────────────────────────────────────────────


def _check_memory(p: ProgramOp) -> None:
    mesh, work = p.one(MeshOp), p.one(WorkOp)
    assert mesh is not None and work is not None
    buffers = [b for b in p.buffers() if isinstance(b, MemoryBufferOp)]
    operands = {buffer_of(ld.dst) for ld in p.ops_of(LoadOp)}
    for r in p.ops_of(SitesOp):
        _at(r, lambda r=r: _check_range_memory(r, buffers, operands, mesh, work.k_block))
    for g in p.ops_of(GroupOp):
        _at(g, lambda g=g: _check_group_members(p, g, work.k_block))


def _check_range_memory(
    r: SitesOp,
    buffers: list[MemoryBufferOp],
    operands: set[BufferOp],
    mesh: MeshOp,
    k_block: int,
) -> None:
    offsets = r.offsets()
    where = r.rect.text()
    b = r.bindings(k_block)
    labels = {buf.label.data for buf in buffers}
    if set(offsets) != labels:
        missing = sorted(labels - set(offsets)) or sorted(set(offsets) - labels)
        raise PhaseViolation(
            f"sites {where}: the memory map and the buffers disagree on {missing[0]}"
        )
    depths = r.depths()
    for buf in buffers:
        label = buf.label.data
        if label in depths and buf not in operands:
            raise FixedDepthChanged(where, label, depths[label], buf.depth.resolve(b)[0])
    spans: list[tuple[int, int, str]] = []
    for buf in buffers:
        start, size = offsets[buf.label.data], r.bytes_of(buf, b)
        target = buf.alias_of
        if target is not None:
            target_size = r.bytes_of(target, b)
            if start != offsets[target.label.data] or size > target_size:
                raise OverlappingOffsets(
                    where,
                    buf.label.data,
                    (start, start + size),
                    target.label.data,
                    (offsets[target.label.data], offsets[target.label.data] + target_size),
                )
            continue
        spans.append((start, start + size, buf.label.data))
    spans.sort()
    for (s0, e0, n0), (s1, e1, n1) in itertools.pairwise(spans):
        if s1 < e0:
            raise OverlappingOffsets(where, n0, (s0, e0), n1, (s1, e1))
    used = max((e for _, e, _ in spans), default=0)
    if used > mesh.local_mem:
        x0, _, y0, _ = r.rect.bounds
        raise LocalMemExceeded((x0, y0), used, mesh.local_mem)


def _check_group_members(p: ProgramOp, g: GroupOp, k_block: int) -> None:
    ranges = _site_ranges(p)
    buf = buffer_of(g.buffer)
    assert isinstance(buf, MemoryBufferOp)
    for sender, members in g.groups():

        def facts(site: tuple[int, int]) -> dict[str, int]:
            r = ranges[site]
            b = r.bindings(k_block)
            return {
                "depth": r.depth_of(buf, b),
                "page tiles": buf.page_tiles(b),
                "offset": r.offsets()[buf.label.data],
            }

        want = facts(sender)
        for site in members:
            got = facts(site)
            for what in want:
                if got[what] != want[what]:
                    raise GroupMemberMismatch(
                        g.sym_name.data, what, site, got[what], sender, want[what]
                    )
