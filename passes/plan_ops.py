"""tile, place and the report for the sections that are not GEMMs (link_ops, link_rows,
link_attention): their plan space, the quantities the cost model prices, their engines.

The plan of such a section is the block of tiles one work item covers (bm x bn), the sub-block
its compute stage holds in the accumulator at once (sh x sw), and the K block of a stage with a
K loop (kw: an attention's keys, an arg-max's columns, a blocked norm's partials). What each
section kind allows (`space`):

    map                bm | Mt; bn | Nt (| the group's tiles for a grouped norm's apply step);
                       sh x sw | bm x bn, sh * sw <= the accumulator (f32, i32 for integers)
    row_reduce whole   bm | Mt; bn = the group's tiles; sub-block a row of the group
    row_reduce partial bm | Mt; bn = the block of the blocked form (link fixed it)
    row_reduce combine bm | Mt; bn = 1; kw | the group's blocks
    rope               bm | Mt; bn | Nt a multiple of a head's tiles; sub-block as a map's
    attention          bm | Mt (query tiles); bn = whole heads of one kv head's group; kw | keys with
                       bm * kw <= the f32 accumulator (the scores of a block); sub-block as a map's
    argmax             one result tile per item; kw | the row's tiles
    gather, scatter    bm = 1; bn | Nt

Every candidate whose buffers fit a site's configurable budget (`size_buffers.buffer_bytes`, THE
function size-buffers lays out) is priced by `targets/stream_cost.py` from the quantities read off
the IR under the candidate's bindings; the cheapest wins, ties going to fewer items, then the
larger sub-block, then the wider K block, so the choice is deterministic. The items are dealt
out over the whole mesh by split_work_to_sites (place), so every block divides its extent: items
of one shape.

Engines: a compute stage on the compute engine; loads (and a gather) on movement engine 1 with
the receiver NoC, the store (and a scatter) on movement engine 0 with the writer NoC; a flash
attention's query and position loads join the store's engine, so the engine that streams K and
V never waits behind a query (`operand_with_store`). With one movement engine everything moves on
it (`single`).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import IntegerType, StringAttr
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from spatial_dialect import sp
from spatial_dialect.passes.size_buffers import buffer_bytes, memory_buffers
from spatial_dialect.sp import (
    COMPUTE_STAGES,
    ArgmaxOp,
    AttentionOp,
    EngineAttr,
    GatherOp,
    IndexedStage,
    MapOp,
    Phase,
    PlanKind,
    RopeOp,
    RowReduceOp,
    ScatterOp,
)
from spatial_dialect.sp.errors import NoLegalPlan, SpatialPassError, TooManyEngines
from spatial_dialect.targets import Target
from spatial_dialect.targets.gemm import divisors
from spatial_dialect.targets.stream_cost import (
    StreamCost,
    StreamQuantities,
    stream_cost,
    stream_roofline_cycles,
)


@dataclass(frozen=True)
class Candidate:
    bm: int
    bn: int
    sh: int
    sw: int
    kw: int

    def bindings(self) -> dict[str, int]:
        """The size symbols of a site running this plan (sp_attrs)."""
        subs = (self.bm // self.sh) * (self.bn // self.sw)
        return {
            "h": self.bm,
            "w": self.bn,
            "sh": self.sh,
            "sw": self.sw,
            "kw": self.kw,
            "subs": subs,
        }

    def text(self) -> str:
        return f"block {self.bm}x{self.bn} sub_block {self.sh}x{self.sw} k_block {self.kw}"


@dataclass(frozen=True)
class Space:
    """The plans a stream section may take: items cut `tensor` (tiles mt x nt) into blocks of
    bm x bn, a K loop of `k_tiles`, and the sub-blocks the accumulator allows."""

    tensor: sp.TensorOp
    block_ms: list[int]
    block_ns: list[int]
    k_tiles: int
    kws: list[int]
    acc: int | None  # accumulator tiles a sub-block may hold (None: the sub-block is fixed)
    row_sub: bool = False  # the sub-block is one row of the block (a whole-row reduction)

    def candidates(self) -> Iterator[Candidate]:
        for bm in self.block_ms:
            for bn in self.block_ns:
                for kw in self.kws:
                    for sh, sw in self.subs(bm, bn):
                        yield Candidate(bm, bn, sh, sw, kw)

    def subs(self, bm: int, bn: int) -> list[tuple[int, int]]:
        if self.row_sub:
            return [(1, bn)]
        if self.acc is None:
            return [(bm, bn)]
        return [(sh, sw) for sh in divisors(bm) for sw in divisors(bn) if sh * sw <= self.acc]


def compute_stage(program: sp.ProgramOp) -> sp.StageOp | None:
    """The stage that defines a stream section's kind: its compute stage, else its gather or
    scatter."""
    for s in program.stages():
        if isinstance(s, COMPUTE_STAGES):
            return s
    for s in program.stages():
        if isinstance(s, IndexedStage):
            return s
    return None


def _tensor(program: sp.ProgramOp, stage: sp.LoadOp | sp.StoreOp | IndexedStage) -> sp.TensorOp:
    return program.tensor(stage.tensor.root_reference.data)


def _acc(target: Target, elt: Any) -> int:
    return target.acc_tiles("i32" if isinstance(elt, IntegerType) else "f32")


def space(program: sp.ProgramOp, target: Target) -> Space:
    """The plan space of a stream section (module docstring)."""
    stage = compute_stage(program)
    store = program.one(sp.StoreOp)
    first_load = program.one(sp.LoadOp)
    tc = program.tile[1]
    f32_acc = target.acc_tiles("f32")
    if isinstance(stage, ScatterOp):
        assert first_load is not None
        t = _tensor(program, first_load)
        return Space(t, [1], divisors(t.tiles[1]), 1, [1], None, row_sub=True)
    assert store is not None, f"section @{program.sym_name.data} stores its result"
    out = _tensor(program, store)
    mt, nt = out.tiles
    if isinstance(stage, GatherOp):
        return Space(out, [1], divisors(nt), 1, [1], None, row_sub=True)
    if isinstance(stage, MapOp):
        group = stage.group if stage.group is not None else nt
        acc = _acc(target, sp.buffer_of(stage.out).elt)
        return Space(out, divisors(mt), divisors(group), 1, [1], acc)
    if isinstance(stage, RopeOp):
        d = stage.head_dim
        per_head = d // tc if d % tc == 0 else 1
        bns = [b for b in divisors(nt) if b % per_head == 0]
        return Space(out, divisors(mt), bns, 1, [1], f32_acc)
    if isinstance(stage, RowReduceOp):
        group_tiles = -(-stage.width // tc)
        form = stage.form.data
        if form == "whole":
            return Space(out, divisors(mt), [group_tiles], 1, [1], None, row_sub=True)
        block = (stage.block if stage.block else tc) // tc
        if form == "partial":
            assert first_load is not None
            x = _tensor(program, first_load)
            return Space(x, divisors(x.tiles[0]), [block], 1, [1], None, row_sub=True)
        blocks = group_tiles // block
        return Space(out, divisors(mt), [1], blocks, divisors(blocks), None)
    if isinstance(stage, AttentionOp):
        keys = -(-stage.keys // program.tile[0])
        bms = [b for b in divisors(mt) if b <= f32_acc]
        kws = divisors(keys)
        dvt = stage.v_head_dim // tc
        # whole heads of one kv head's group; any divisor of the group where the query page
        # follows the item's width (q and v heads of one width), else the whole group
        groups = divisors(stage.group) if stage.head_dim == stage.v_head_dim else [stage.group]
        return Space(out, bms, [g * dvt for g in groups], keys, kws, f32_acc)
    if isinstance(stage, ArgmaxOp):
        assert first_load is not None
        cols = _tensor(program, first_load).tiles[1]
        return Space(out, [1], [1], cols, divisors(cols), None)
    raise SpatialPassError(f"section @{program.sym_name.data} has no stage tile knows")


# ── Quantities ────────────────────────────────────────────────────────────────────────────────


def kind_of(stage: sp.StageOp | None) -> str:
    """The stage's kind as the cost model's table names it."""
    if isinstance(stage, MapOp):
        return stage.kind.data
    if isinstance(stage, RowReduceOp):
        return stage.kind.data if stage.form.data == "whole" else stage.form.data
    names = {RopeOp: "rope", AttentionOp: "attention", ArgmaxOp: "argmax"}
    names.update({GatherOp: "gather", ScatterOp: "scatter"})
    return names[type(stage)] if stage is not None else "copy"


@dataclass(frozen=True)
class Movement:
    """A stage that moves tiles between DRAM and a FIFO: its access pattern and loops, the bytes
    of one of its tiles, whether it reads, and the bytes of its whole tensor (what a plan must
    move at least once; a gather or scatter moves only the rows its work names)."""

    access: sp.AccessAttr
    loops: frozenset[str]
    tile_bytes: int
    reads: bool
    tensor_bytes: int | None


class StreamSection:
    """What tile reads off a stream section once (its kind, plan space, movements, buffers) to
    price every candidate plan with arithmetic only."""

    def __init__(self, program: sp.ProgramOp, target: Target):
        self.program, self.target = program, target
        self.stage = compute_stage(program)
        self.space = space(program, target)
        self.kind = kind_of(self.stage)
        self.buffers = memory_buffers(program)
        self.tile_elems = program.tile[0] * program.tile[1]
        self.movements = []
        for s in program.stages():
            if isinstance(s, sp.LoadOp | sp.StoreOp | IndexedStage):
                t = _tensor(program, s)
                tile = target.tile_bytes(t.storage)
                whole = None if isinstance(s, IndexedStage) else t.tiles[0] * t.tiles[1] * tile
                reads = isinstance(s, sp.LoadOp | GatherOp)
                self.movements.append(
                    Movement(s.access, frozenset(s.access.loop_vars()), tile, reads, whole)
                )

    def legal(self, c: Candidate) -> bool:
        if isinstance(self.stage, AttentionOp) and c.bm * c.kw > self.target.acc_tiles("f32"):
            return False
        return buffer_bytes(self.buffers, c.bindings()) <= self.target.local_mem_max_bytes

    def quantities(self, c: Candidate) -> StreamQuantities:
        b = c.bindings()
        mt, nt = self.space.tensor.tiles
        items = -(-mt // c.bm) * -(-nt // c.bn)
        extents = {"k0": self.space.k_tiles // c.kw, "ti": c.bm // c.sh, "tj": c.bn // c.sw}
        extents.update(u=c.sh, v=c.sw)
        read = write = moved = tiles = compulsory = 0
        first = None
        for m in self.movements:
            rows, cols = m.access.extent.resolve(b)
            n = math.prod(extents[v] for v in m.loops if v in extents) * rows * cols
            nbytes = n * m.tile_bytes
            tiles += n
            moved += nbytes
            if m.reads:
                read += nbytes
                first = n if first is None else first
            else:
                write += nbytes
            compulsory += m.tensor_bytes if m.tensor_bytes is not None else items * nbytes
        elements = (first or 0) * self.tile_elems
        matmuls, dtype = 0, "f32"
        if isinstance(self.stage, AttentionOp):
            tc = self.program.tile[1]
            dvt = self.stage.v_head_dim // tc
            heads = c.bn // dvt  # query heads an item serves from one read of K and V
            head_tiles = self.stage.head_dim // tc + dvt
            elements = heads * c.bm * self.space.k_tiles * self.tile_elems
            # a tile of queries with fewer real rows costs only the row passes it needs
            rows = min(self.stage.queries, c.bm * self.program.tile[0])
            passes = -(-rows // self.target.matmul_row_pass) * self.target.matmul_row_pass
            fraction = min(1.0, passes / (c.bm * self.program.tile[0]))
            matmuls = heads * c.bm * self.space.k_tiles * head_tiles * fraction
            dtype = str(sp.buffer_of(self.stage.q).elt)
        return StreamQuantities(
            self.kind, items, read, write, tiles, moved, elements, matmuls, dtype, compulsory
        )

    def rank(self, fidelity: str) -> list[tuple[Candidate, StreamCost]]:
        """The legal plans with their costs, best first."""
        costed = [
            (c, stream_cost(self.target, self.quantities(c), fidelity))
            for c in self.space.candidates()
            if self.legal(c)
        ]
        costed.sort(
            key=lambda cc: (
                cc[1].total_cycles,
                -cc[0].bm * cc[0].bn,
                -cc[0].sh * cc[0].sw,
                -cc[0].kw,
            )
        )
        return costed


# ── Engines ───────────────────────────────────────────────────────────────────────────────────


def engines(target: Target, program: sp.ProgramOp) -> dict[sp.StageOp, EngineAttr]:
    """Each stage's engine and NoC (module docstring)."""
    n = target.movement_engines
    store_engine = EngineAttr.movement(0, target.writer_noc)
    load_engine = EngineAttr.movement(1, target.receiver_noc) if n >= 2 else store_engine
    attention = program.one(AttentionOp)
    with_store = set()
    if attention is not None:
        with_store = {v for v in (attention.q, attention.pos) if v is not None}
    out: dict[sp.StageOp, EngineAttr] = {}
    for s in program.stages():
        if isinstance(s, COMPUTE_STAGES):
            out[s] = EngineAttr.compute()
        elif n == 0:
            raise TooManyEngines(s.stage_name(), "movement engine 0", 0)
        elif isinstance(s, sp.StoreOp | ScatterOp):
            out[s] = store_engine
        elif isinstance(s, sp.LoadOp) and s.dst in with_store:
            out[s] = store_engine
        else:
            out[s] = load_engine
    return out


def packing(target: Target, program: sp.ProgramOp) -> str:
    """How the stages share the movement engines (sp.plan's vocabulary)."""
    if target.movement_engines < 2:
        return "single"
    return "operand_with_store" if program.one(AttentionOp) is not None else "split"


# ── tile ──────────────────────────────────────────────────────────────────────────────────────


def tile_stream(
    program: sp.ProgramOp, target: Target, fidelity: str, rewriter: PatternRewriter
) -> None:
    """Choose and apply the plan of a stream section."""
    section = StreamSection(program, target)
    sp_, ranked = section.space, section.rank(fidelity)
    if not ranked:
        raise NoLegalPlan(
            f"section @{program.sym_name.data} ({program.source_op.data}): no block of "
            f"{sp_.tensor.tiles[0]}x{sp_.tensor.tiles[1]} tiles fits {target.name}'s "
            f"{target.local_mem_max_bytes} bytes of local memory"
        )
    (best, cost), runner = ranked[0], ranked[1] if len(ranked) > 1 else None
    work = sp.WorkOp(sp_.tensor.sym_name.data, (best.bm, best.bn), sp_.k_tiles, best.kw)
    plan = sp.PlanOp(
        PlanKind.BLOCKED,
        (target.mesh_x, target.mesh_y),
        (best.sh, best.sw),
        packing(target, program),
        cost.total_cycles,
        cost.bound,
        (runner[0].text(), runner[1].total_cycles) if runner else None,
    )
    plan.attributes["why"] = StringAttr(cost.why)
    first = next(op for op in program.body.block.ops if not isinstance(op, sp.TensorOp))
    rewriter.insert([work, plan], InsertPoint.before(first))
    program.set_phase(Phase.TILED)


def cost_of(
    program: sp.ProgramOp, target: Target, fidelity: str
) -> tuple[StreamQuantities, StreamCost]:
    """The cost model's numbers for a tiled stream section's plan, as tile priced it."""
    work, plan = program.one(sp.WorkOp), program.one(sp.PlanOp)
    assert work is not None and plan is not None
    c = Candidate(*work.block, *plan.sub_block, work.k_block)
    q = StreamSection(program, target).quantities(c)
    return q, stream_cost(target, q, fidelity)


def report_row(program: sp.ProgramOp, target: Target, fidelity: str) -> dict[str, Any]:
    """The report's numbers of a stream section (report.py prints them like a GEMM's)."""
    q, cost = cost_of(program, target, fidelity)
    clock_khz = target.clock_ghz * 1000.0
    return {
        "roofline_us": stream_roofline_cycles(target, q, fidelity) / clock_khz,
        "dram_bytes": cost.dram_bytes,
        "noc_bytes": cost.noc_bytes,
    }
