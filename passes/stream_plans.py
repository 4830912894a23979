"""The plan space of the stream sections (every section that is not a GEMM: maps and bridges,
row reductions, rope, flash attention, arg-max, gather, scatter): the plans, the quantities the
cost model prices, and the numbers the report prints of the plan tile chose.

The plan of a stream section is the block of tiles one work item covers (bm x bn), the sub-block
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
                       bm * kw <= the f32 accumulator (the scores of a block); sub-block as a map's;
                       a split's keys are the key tiles / splits
    attention_combine  bm = 1; bn | Nt; a K loop of one split a step; sub-block as a map's
    argmax             one result tile per item; kw | the row's tiles
    route              bm | Mt tile rows of whole rows; kw = the row's tiles (one K block)
    gather, scatter    bm = 1; bn | Nt
    causal_conv        items cut the carried state (one tile row): bm = 1, bn | its tiles;
                       kw | the time tiles (a K block of rows)
    gated_delta        items cut the carried state: bm = one head's tiles, bn | its v tiles;
                       kw | the time tiles, with kw * kw <= the f32 accumulator (the chunk's
                       C x C products): the CHUNK SIZE of the chunked delta rule, kw tile rows

Every candidate whose buffers fit a site's configurable budget (`site_footprint.buffer_bytes`, THE
function size-buffers lays out) is priced by `targets/stream_cost.py` from the quantities read off
the IR under the candidate's bindings (where none fits, the same candidates single-buffered:
one page per FIFO between DRAM and compute, priced serial); the cheapest wins, ties going to fewer items, then the
larger sub-block, then the wider K block, so the choice is deterministic. The items are dealt
out over the whole mesh by split_work_to_sites (place), so every block divides its extent: items
of one shape.

"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from xdsl.dialects.builtin import IntegerType

from spatial_dialect import sp
from spatial_dialect.passes.dram_layout import dram_tile_bytes
from spatial_dialect.passes.site_footprint import buffer_bytes, dram_fifos, memory_buffers
from spatial_dialect.sp import (
    COMPUTE_STAGES,
    AttentionCombineOp,
    AttentionOp,
    CausalConvOp,
    GatedDeltaOp,
    GatherOp,
    IndexedStage,
    MapOp,
    RowReduceOp,
    SectionKind,
)
from spatial_dialect.sp.errors import NoLegalPlan, SpatialPassError
from spatial_dialect.sp.kinds import JOIN_ATTR, RowForm, RowKindName
from spatial_dialect.targets import Target
from spatial_dialect.targets.gemm import ceil_div, divisors
from spatial_dialect.targets.spec import Multicast
from spatial_dialect.targets.stream_cost import (
    StreamCost,
    StreamQuantities,
    row_pass_fraction,
    stream_cost,
)


@dataclass(frozen=True)
class Candidate:
    bm: int
    bn: int
    sh: int
    sw: int
    kw: int
    depth: int = 2  # pages of each FIFO between DRAM and compute: 1 where no 2 fits

    def bindings(self) -> dict[str, int]:
        """The size symbols of a site running this plan (sp/attrs.py)."""
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
        single = " single-buffered" if self.depth == 1 else ""
        return f"block {self.bm}x{self.bn} sub_block {self.sh}x{self.sw} k_block {self.kw}{single}"

    def single_buffered(self) -> Candidate:
        return Candidate(self.bm, self.bn, self.sh, self.sw, self.kw, 1)


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
    """The plan space of a stream section (module docstring), by its kind."""
    stage = compute_stage(program)
    kind = program.kind
    store = program.one(sp.StoreOp)
    first_load = program.one(sp.LoadOp)
    if kind in (SectionKind.CAUSAL_CONV, SectionKind.GATED_DELTA):
        return carried_space(program, stage)
    if kind is SectionKind.SCATTER:
        assert first_load is not None
        t = _tensor(program, first_load)
        return Space(t, [1], divisors(t.tiles[1]), 1, [1], None, row_sub=True)
    assert store is not None, f"section @{program.sym_name.data} stores its result"
    out = _tensor(program, store)
    mt, nt = out.tiles
    if kind is SectionKind.GATHER:
        return Space(out, [1], divisors(nt), 1, [1], None, row_sub=True)
    if kind is SectionKind.MAP and JOIN_ATTR in program.attributes:
        # a join's part: its items cut the part it reads, stored at the part's columns of the
        # result (passes/link/heads.py)
        assert first_load is not None
        mt, nt = _tensor(program, first_load).tiles
        out = _tensor(program, first_load)
    if kind in (SectionKind.MAP, SectionKind.TILIZE, SectionKind.UNTILIZE):
        assert isinstance(stage, MapOp)
        group = stage.group if stage.group is not None else nt
        acc = _acc(target, sp.buffer_of(stage.out).elt)
        return Space(out, divisors(mt), divisors(group), 1, [1], acc)
    if kind is SectionKind.ROPE:
        assert isinstance(stage, sp.RopeOp)
        return rope_space(program, target, stage, out)
    if kind is SectionKind.ROW_REDUCE:
        assert isinstance(stage, RowReduceOp)
        return row_space(program, stage, out, first_load)
    if kind is SectionKind.ATTENTION:
        assert isinstance(stage, AttentionOp)
        return attention_space(program, target, stage, out)
    if kind is SectionKind.ATTENTION_COMBINE:
        assert isinstance(stage, AttentionCombineOp)
        return combine_space(program, target, stage, out)
    if kind is SectionKind.ARGMAX:
        assert first_load is not None
        cols = _tensor(program, first_load).tiles[1]
        return Space(out, [1], [1], cols, divisors(cols), None)
    if kind is SectionKind.ROUTE:
        # a router ranks whole rows: one K block of all the logits' tiles
        assert first_load is not None
        cols = _tensor(program, first_load).tiles[1]
        return Space(out, divisors(mt), [1], cols, [cols], None)
    raise SpatialPassError(
        f"section @{program.sym_name.data} is a {kind.value} section, not a stream section"
    )


def rope_space(program: sp.ProgramOp, target: Target, stage: sp.RopeOp, out: sp.TensorOp) -> Space:
    """A rope item holds whole heads: its width is a multiple of a head's tiles."""
    mt, nt = out.tiles
    tc = program.tile[1]
    d = stage.head_dim
    per_head = d // tc if d % tc == 0 else 1
    bns = [b for b in divisors(nt) if b % per_head == 0]
    return Space(out, divisors(mt), bns, 1, [1], target.acc_tiles("f32"))


def row_space(
    program: sp.ProgramOp, stage: RowReduceOp, out: sp.TensorOp, first_load: sp.LoadOp | None
) -> Space:
    """A whole row reduction takes the group's tiles; the blocked form's partials the block link
    fixed; its combine step a K loop over the group's blocks."""
    mt = out.tiles[0]
    tc = program.tile[1]
    group_tiles = ceil_div(stage.width, tc)
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


def attention_space(
    program: sp.ProgramOp, target: Target, stage: AttentionOp, out: sp.TensorOp
) -> Space:
    """Query blocks the f32 accumulator holds, whole heads of one kv head's group, K blocks of
    keys (of one split's keys, where the keys are split; of one query tile row's users' caches,
    where a batch's tile rows walk their own: sp.AttentionOp.user_key_tiles)."""
    mt = out.tiles[0]
    tc = program.tile[1]
    f32_acc = target.acc_tiles("f32")
    keys = ceil_div(stage.keys, program.tile[0]) // (stage.splits or 1)
    bms = [b for b in divisors(mt) if b <= f32_acc]
    ranged = stage.user_key_tiles(program.tile[0])
    if ranged is not None:  # a batch's query tile row walks its own users' caches
        keys, bms = ranged, [1]
    dvt = stage.v_head_dim // tc
    # whole heads of one kv head's group; any divisor of the group where the query page
    # follows the item's width (q and v heads of one width), else the whole group
    groups = divisors(stage.group) if stage.head_dim == stage.v_head_dim else [stage.group]
    return Space(out, bms, [g * dvt for g in groups], keys, divisors(keys), f32_acc)


def combine_space(
    program: sp.ProgramOp, target: Target, stage: AttentionCombineOp, out: sp.TensorOp
) -> Space:
    """Any columns of the one-row result (every tile merges on its own); a K loop of one split
    a step."""
    return Space(out, [1], divisors(out.tiles[1]), stage.splits, [1], target.acc_tiles("f32"))


def carried_space(program: sp.ProgramOp, stage: sp.StageOp | None) -> Space:
    """Items cut the carried state the section writes last (a head's state block of a delta
    rule, h = the head's tiles; a block of a convolution's channels), and the K loop walks the
    time tiles of the first operand it streams."""
    stores = program.ops_of(sp.StoreOp)
    state = _tensor(program, stores[-1])
    first = next(ld for ld in program.ops_of(sp.LoadOp) if "k0" in ld.access.loop_vars())
    time = _tensor(program, first).tiles[0]
    mt, nt = state.tiles
    bms = [ceil_div(stage.head_dim, program.tile[1])] if isinstance(stage, GatedDeltaOp) else [mt]
    return Space(state, bms, divisors(nt), time, divisors(time), None)


# ── Quantities ────────────────────────────────────────────────────────────────────────────────


def cost_kind(program: sp.ProgramOp, stage: sp.StageOp | None) -> str:
    """What the cost model's stream table calls the section: a map's kind, a row reduction's kind
    or form, else the section's kind."""
    if isinstance(stage, MapOp):
        return stage.kind.data
    if isinstance(stage, RowReduceOp):
        return stage.kind.data if stage.form.data == "whole" else stage.form.data
    return program.kind.value


@dataclass(frozen=True)
class Movement:
    """A stage that moves tiles between DRAM and a FIFO: its access pattern and loops, the bytes
    of one of its tiles, whether it reads, the bytes of its whole tensor (what a plan must move
    at least once; a gather or scatter moves only the rows its work names), and the real rows of
    a tile of it (fewer than a tile's in a tensor of fewer rows: a decode step's vectors)."""

    access: sp.AccessAttr
    loops: frozenset[str]
    tile_bytes: int
    reads: bool
    tensor_bytes: int | None
    real_rows: int


@dataclass(frozen=True)
class StageFacts:
    """What pricing reads off a section's compute stage beyond its movements: an attention's
    head widths and real query rows, the element type of an attention's or a delta rule's
    queries, whether it is a delta rule or a flash-decoding combine, a convolution's taps (None
    where the stage has no such field)."""

    head_dim: int | None = None
    v_head_dim: int | None = None
    queries: int | None = None
    dtype: str | None = None
    delta: bool = False
    taps: int | None = None
    combine: bool = False  # a flash-decoding combine (its pages hold two real rows)
    combine_rows: int = 2  # the real rows of a combine's page: a sum's are its Q query rows
    # a blocked softmax's combine: on a Tensix mesh its TT-Lang form gathers each page's
    # column 0 and column 1 of kw partial tiles by a product (docs/backend-ttlang.md#blocked-
    # layer_norm-and-softmax): 2 h kw ceil(kw / 32) tile-matmuls a page
    gathers: bool = False

    @staticmethod
    def of(stage: sp.StageOp | None) -> StageFacts:
        if isinstance(stage, AttentionOp):
            q = str(sp.buffer_of(stage.q).elt)
            return StageFacts(stage.head_dim, stage.v_head_dim, stage.queries, q)
        if isinstance(stage, GatedDeltaOp):
            return StageFacts(dtype=str(sp.buffer_of(stage.q).elt), delta=True)
        if isinstance(stage, CausalConvOp):
            return StageFacts(taps=stage.taps)
        if isinstance(stage, AttentionCombineOp):
            return StageFacts(combine=True, combine_rows=stage.query_rows if stage.sum else 2)
        if (
            isinstance(stage, RowReduceOp)
            and stage.form.data == RowForm.COMBINE
            and stage.kind.data == RowKindName.SOFTMAX
        ):
            return StageFacts(gathers=True)
        return StageFacts()


class StreamPlanner:
    """What tile reads off a stream section once (its kind, plan space, movements, buffers,
    stage facts) to price every candidate plan with arithmetic only. `key` is all of it: pricing
    reads nothing else of the section, so two sections with one key have one ranking (a model's
    identical layers are ranked once per pass run)."""

    def __init__(self, program: sp.ProgramOp, target: Target):
        self.target = target
        stage = compute_stage(program)
        self.space = space(program, target)
        self.kind = cost_kind(program, stage)
        self.section_kind = program.kind
        self.tile = program.tile
        self.tile_elems = program.tile[0] * program.tile[1]
        self.facts = StageFacts.of(stage)
        self.buffers = memory_buffers(program)
        self.dram_fifos = dram_fifos(program)
        self.movements: list[Movement] = []
        for s in program.stages():
            if isinstance(s, sp.LoadOp | sp.StoreOp | IndexedStage):
                t = _tensor(program, s)
                tile = dram_tile_bytes(target, t)
                whole = None if isinstance(s, IndexedStage) else t.tiles[0] * t.tiles[1] * tile
                reads = isinstance(s, sp.LoadOp | GatherOp)
                rows = min(t.shape2d[0], target.tile_rows)
                self.movements.append(
                    Movement(s.access, frozenset(s.access.loop_vars()), tile, reads, whole, rows)
                )

    def key(self) -> tuple[object, ...]:
        """Everything `legal` and `quantities` read, and the candidates (the space without its
        tensor's name)."""
        sp_ = self.space
        buffers = tuple(
            (b.depth, b.page, b.tile_bytes, b.alias is None, b in self.dram_fifos)
            for b in self.buffers
        )
        return (
            self.section_kind,
            self.kind,
            self.tile,
            self.facts,
            sp_.tensor.tiles,
            tuple(sp_.block_ms),
            tuple(sp_.block_ns),
            sp_.k_tiles,
            tuple(sp_.kws),
            sp_.acc,
            sp_.row_sub,
            tuple(self.movements),
            buffers,
        )

    def legal(self, c: Candidate) -> bool:
        f32_acc = self.target.acc_tiles("f32")
        if self.section_kind is SectionKind.ATTENTION and c.bm * c.kw > f32_acc:
            return False
        if self.section_kind is SectionKind.GATED_DELTA and c.kw * c.kw > f32_acc:
            return False
        depths = dict.fromkeys(self.dram_fifos, 1) if c.depth == 1 else None
        return buffer_bytes(self.buffers, c.bindings(), depths) <= self.target.local_mem_max_bytes

    def items(self, c: Candidate) -> int:
        mt, nt = self.space.tensor.tiles
        return ceil_div(mt, c.bm) * ceil_div(nt, c.bn)

    def tiles_per_item(self, m: Movement, c: Candidate) -> int:
        """The tiles movement `m` moves for one item of plan `c` (the one count pricing uses;
        the trace-count tests compare it per tensor)."""
        extents = {"k0": self.space.k_tiles // c.kw, "ti": c.bm // c.sh, "tj": c.bn // c.sw}
        extents.update(u=c.sh, v=c.sw)
        rows, cols = m.access.extent.resolve(c.bindings())
        return math.prod(extents[v] for v in m.loops if v in extents) * rows * cols

    def quantities(self, c: Candidate) -> StreamQuantities:
        items = self.items(c)
        extents = {"k0": self.space.k_tiles // c.kw}
        read = write = moved = tiles = compulsory = 0
        first, first_rows = None, self.tile[0]
        for m in self.movements:
            n = self.tiles_per_item(m, c)
            nbytes = n * m.tile_bytes
            tiles += n
            moved += nbytes
            if m.reads:
                read += nbytes
                if first is None:
                    first, first_rows = n, m.real_rows
            else:
                write += nbytes
            compulsory += m.tensor_bytes if m.tensor_bytes is not None else items * nbytes
        # The compute stage works on the real rows of the tiles it reads, in row passes (the
        # vector engine's row vector mode): a one-row tensor's tile is not 32 rows of work.
        fraction = row_pass_fraction(self.target, first_rows, self.tile[0])
        elements = (first or 0) * self.tile_elems * fraction
        matmuls, dtype = 0, "f32"
        f = self.facts
        if f.head_dim is not None:  # an attention
            assert f.v_head_dim and f.queries and f.dtype
            tr, tc = self.tile
            dvt = f.v_head_dim // tc
            heads = c.bn // dvt  # query heads an item serves from one read of K and V
            head_tiles = f.head_dim // tc + dvt
            # a tile of queries with fewer real rows costs only the row passes it needs, in
            # its scores' vector work as in its products
            rows = min(f.queries, c.bm * tr)
            fraction = row_pass_fraction(self.target, rows, c.bm * tr)
            elements = heads * c.bm * self.space.k_tiles * self.tile_elems * fraction
            matmuls = heads * c.bm * self.space.k_tiles * head_tiles * fraction
            dtype = f.dtype
        elif f.combine:
            # the partials hold two real rows a tile (the outputs, the statistics); a sum's
            # pages their query rows
            rows = f.combine_rows
            elements = (
                (first or 0) * self.tile_elems * row_pass_fraction(self.target, rows, self.tile[0])
            )
        elif f.delta:
            assert f.dtype
            elements, matmuls = self._delta_work(c)
            dtype = f.dtype
        elif f.taps is not None:
            elements *= f.taps  # a multiply-add per tap
        elif f.gathers and self.target.multicast is Multicast.RECTANGLE:
            pages = self.space.k_tiles // c.kw
            matmuls = 2.0 * c.bm * c.kw * ceil_div(c.kw, self.tile[1]) * pages
        return StreamQuantities(
            self.kind,
            items,
            read,
            write,
            tiles,
            moved,
            elements,
            matmuls,
            dtype,
            compulsory,
            steps=extents["k0"],
            serial=c.depth == 1,
        )

    def _delta_work(self, c: Candidate) -> tuple[int, float]:
        """(vector elements, tile-matmuls) of one item of a chunked delta rule with chunks of
        C = kw tile rows (tools/interpreters/reference.py: delta_chunk), per chunk, in tiles (dk = the head's
        tiles, w = the item's state columns):
          tile-matmuls  beta k k^T, q k^T: 2 C C dk; the triangular solve: C C C; T (beta v) and
                        the intra-chunk attention times v': 2 C C w; T (beta exp(G) k): C C dk;
                        W s, q s, k^T v': 3 C dk w
          vector        the decay mask exp(G_i - G_j): C C tiles; gating q, k and the rows of
                        v: C (2 dk + w); the state's decay exp(G_last) s: dk w
        so a wider chunk does more products per row and fewer state decays; the K loop runs
        time / C chunks."""
        chunk, dk, w = c.kw, c.bm, c.bn
        chunks = self.space.k_tiles // chunk
        matmuls = chunks * (3 * chunk * chunk * dk + chunk**3 + 2 * chunk * chunk * w)
        matmuls += chunks * 3 * chunk * dk * w
        tiles = chunk * chunk + chunk * (2 * dk + w) + dk * w
        return chunks * tiles * self.tile_elems, float(matmuls)

    def rank(self, fidelity: str) -> list[tuple[Candidate, StreamCost]]:
        """The legal plans with their costs, best first. Where no plan fits with its operand
        FIFOs double-buffered, the single-buffered plans (one page each: a block's load waits
        for the previous block's compute, priced so) are the plan space: a small local memory
        (rtx3060's 99 KiB of shared memory under an f32 attention's 128-wide heads) then runs
        the section slower rather than refusing it (docs/passes.md#tile-single-buffering-where-nothing-else-fits)."""
        legal = [c for c in self.space.candidates() if self.legal(c)]
        if not legal:
            legal = [d for c in self.space.candidates() if self.legal(d := c.single_buffered())]
        costed = [(c, stream_cost(self.target, self.quantities(c), fidelity)) for c in legal]
        costed.sort(
            key=lambda cc: (
                cc[1].total_cycles,
                -cc[0].bm * cc[0].bn,
                -cc[0].sh * cc[0].sw,
                -cc[0].kw,
            )
        )
        return costed


# ── The plan ──────────────────────────────────────────────────────────────────────────────────


def stream_packing(target: Target, program: sp.ProgramOp) -> str:
    """How a stream section's stages share the movement engines (sp.plan's vocabulary): one
    engine for everything, a flash attention's queries with the store, else loads and store apart."""
    if target.movement_engines < 2:
        return "single"
    return "operand_with_store" if program.kind is SectionKind.ATTENTION else "split"


@dataclass(frozen=True)
class StreamChoice:
    """The best plan of a stream section, its cost, the runner-up, and every legal plan ranked."""

    space: Space
    best: Candidate
    cost: StreamCost
    runner: tuple[Candidate, StreamCost] | None
    ranked: list[tuple[Candidate, StreamCost]]


StreamRanked = list[tuple[Candidate, StreamCost]]


def choose_stream_plan(
    program: sp.ProgramOp,
    target: Target,
    fidelity: str,
    ranked_before: dict[tuple[object, ...], StreamRanked] | None = None,
) -> StreamChoice:
    """The cheapest legal plan; NoLegalPlan when no block fits a site. A pass run ranks each
    distinct section once (`ranked_before`, by `StreamPlanner.key`)."""
    planner = StreamPlanner(program, target)
    memo = {} if ranked_before is None else ranked_before
    key = planner.key()
    if key not in memo:
        memo[key] = planner.rank(fidelity)
    ranked = memo[key]
    if not ranked:
        tiles = planner.space.tensor.tiles
        raise NoLegalPlan(
            f"section @{program.sym_name.data} ({program.source_op.data}): no block of "
            f"{tiles[0]}x{tiles[1]} tiles fits {target.name}'s "
            f"{target.local_mem_max_bytes} bytes of local memory"
        )
    (best, cost), runner = ranked[0], ranked[1] if len(ranked) > 1 else None
    return StreamChoice(planner.space, best, cost, runner, ranked)
