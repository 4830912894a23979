"""The cost model: a GEMM plan's quantities, its cycles, and the bounds it is measured against.

Pure functions of (target, shape, plan). Nothing here is fitted to a measurement: every rate is a
field of the :class:`~.spec.Target` with its public source in :mod:`.presets`, and the structure is
the structure of the program the compiler emits (tt-metal's 2-D multicast matmul):

* each site runs its blocks as a sequence of *steps*, one K block of one output block per step;
* per step, each operand's movement engine reads the block from DRAM (one round trip, since the reader
  waits for the block before it hands it on; one NoC transaction per tile, so the read streams at the
  link rate or the transaction issue rate) and then, as the multicast sender of its row / column,
  sends it through a credit loop across the rectangle; result tiles leave on the engine that also
  loads B (the operand-with-store packing, docs/passes.md#place-engines-and-nocs);
* the compute engine runs ``per_site_m x per_site_n x ibw`` tile-matmuls per step, each costing the
  slower of the matrix engine (fidelity phases, plus the bank handover) and the unpackers feeding it
  (the operand bytes its sub-block shape makes it re-read), plus the K-block spill when partial sums
  are not accumulated in place;
* movement and compute overlap through double-buffered FIFOs, so the site takes
  ``fill + (steps - 1) x max(move, compute, DRAM share) + last compute + drain`` cycles;
* DRAM is shared by the whole mesh: every byte the plan reads or writes at the chip's bandwidth.

The program takes as long as its busiest site: the one that runs the first work unit. Which blocks
it runs is :func:`~.gemm.deal`, the function the place pass lays the program out by: under the 2-D
map (docs/passes.md#place-the-2-d-map-where-multicast-exists) site (0, 0) gets the first block of every round and is the multicast sender of its row
and column (of the whole line for a line plan); under split_work_to_cores (streaming plans, targets
without multicast) the first site gets the most units. Every block a site runs brings its own A rows
and B columns over the NoC, so a site running several blocks of one block row receives that row's A
once per block.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .footprint import (
    FootprintParts,
    footprint_bytes_for_plan,
    footprint_parts,
    page_bytes,
    plan_fits,
)
from .gemm import TILE, Deal, GemmPlan, GemmShape, ceil_div, deal, span
from .sharing import (
    OperandStream,
    Sharing,
    SharingDecision,
    dram_cycles,
    flat_site_of,
    gemm_operand_streams,
    share_operand,
)
from .spec import Target

__all__ = [
    "GemmShape",
    "GemmPlan",
    "GemmQuantities",
    "GemmCost",
    "gemm_quantities",
    "gemm_cost",
    "roofline_cycles",
    "capacity_bound_bytes",
    "noc_ingress_bound_cycles",
    "footprint_bytes_for_plan",
    "footprint_parts",
    "FootprintParts",
    "plan_fits",
    "page_bytes",
    "OperandStream",
    "Sharing",
    "SharingDecision",
    "share_operand",
    "gemm_operand_streams",
    "operand_sharing",
    "dram_cycles",
    "compulsory_dram_bytes",
    "gemm_cost_floor",
    "Deal",
    "deal",
]


@dataclass(frozen=True)
class GemmQuantities:
    """What a plan moves and computes, in tiles (no time in here).

    DRAM reads are given three ways: under the plan (``a_tiles_dram``), with multicast (a row of sites
    reads each A block once per round and shares it; on a target without multicast, what one wave of
    the flat deal shares through a cache) and replicated (every block reads its own).
    ``noc_tiles`` counts tiles landing in (or leaving) sites' local memory; ``noc_tile_hops`` the link
    traversals of multicast deliveries (a multicast occupies each link of its path once)."""

    sites_used: int
    grid_x_used: int
    grid_y_used: int
    blocks_m: int
    blocks_n: int
    k_blocks: int
    # busiest site: the one running unit 0 (gemm.deal)
    busiest_rows: int  # M tiles it computes
    busiest_cols: int  # N tiles it computes
    busiest_blocks: int
    busiest_steps: int  # blocks x K blocks (streaming: output tiles x K tiles)
    busiest_out_tiles: int  # output tiles it computes (its blocks' areas summed)
    tile_matmuls: int  # whole program, padded tiles
    tile_matmuls_busiest: int
    # effective tile-matmuls of the busiest site once short rows pay whole row passes only
    tile_matmuls_busiest_eff: float
    mcast_a: bool  # multicast really used (plan asks, target has it, more than one site shares)
    mcast_b: bool
    a_tiles_dram: int
    b_tiles_dram: int
    a_tiles_dram_mcast: int
    b_tiles_dram_mcast: int
    a_tiles_dram_replicated: int
    b_tiles_dram_replicated: int
    c_tiles_written: int
    a_readers: int  # sites reading A from DRAM at the same time
    b_readers: int
    c_writers: int
    noc_tiles: int
    noc_tile_hops: int
    busiest_a_tiles: int  # A tiles the busiest site receives
    busiest_b_tiles: int
    busiest_c_tiles: int
    line: bool = False  # the sites are a line folded onto the mesh (multicast spans its rectangle)
    # On a fabric without multicast rectangles: how each operand's panels reach their consumers
    # (share_operand, exactly as fuse-operands decides it); None elsewhere.
    share_a: SharingDecision | None = None
    share_b: SharingDecision | None = None
    fabric_cycles: int = 0  # the broadcasts' fan-outs, charged with the DRAM time they replace


@dataclass(frozen=True)
class GemmCost:
    """Cycles of a plan. ``compute_cycles``, ``movement_cycles`` are the busiest site's totals;
    ``dram_cycles`` is the program's DRAM time (the DRAM is shared by all sites). ``total_cycles`` is
    the program: the busiest site's pipeline of steps plus fill and drain, never less than any of the
    three. ``bound`` names which of compute / dram / noc binds. ``why`` is one line for an IR
    attribute or a report."""

    compute_cycles: float
    movement_cycles: float
    dram_cycles: float
    step_compute: float
    step_movement: float
    step_dram: float
    fill_cycles: float
    drain_cycles: float
    steady_cycles: float
    # When the last tile-matmul retires (the compute engine's kernel time, what tt-metal's device
    # profiler reports as the TRISC1 duration); total_cycles adds the final write-back.
    compute_done_cycles: int
    total_cycles: int
    bound: str
    us: float
    dram_bytes: int
    noc_bytes: int
    quantities: GemmQuantities
    why: str


# ── quantities ─────────────────────────────────────────────────────────────────────────────────────


def _row_pass_factor(target: Target, rows: int) -> float:
    """Share of a full tile's matrix-engine time a tile with ``rows`` real rows costs: whole passes of
    ``matmul_row_pass`` rows ("shorter than 8x16 ... the engine will still perform 8x16 x 16x16",
    tt-metal GEMM report). A 1-row decode tile on Tensix costs 8/32 of a tile, not 1/32."""
    rp = max(1, target.matmul_row_pass)
    if rows >= TILE:
        return 1.0
    return min(1.0, ceil_div(rows, rp) * rp / TILE)


def operand_sharing(
    target: Target, shape: GemmShape, plan: GemmPlan
) -> tuple[SharingDecision | None, SharingDecision | None]:
    """What fuse-operands will decide for A and B on a fabric without multicast rectangles
    (``fabric_word_bytes`` set): :func:`share_operand` on the streams of
    :func:`gemm_operand_streams`, the sites those of the flat deal place lays out. (None, None)
    elsewhere, and None for an A already in local memory."""
    if target.multicasts_rectangles or target.fabric_word_bytes is None or plan.streaming:
        return None, None
    pm, pn = plan.per_site_m, plan.per_site_n
    bm, bn = ceil_div(shape.mt, pm), ceil_div(shape.nt, pn)
    tb = shape.operand_tile_bytes(target)
    a, b = gemm_operand_streams(
        ("a", "b"),
        (tb, tb),
        (pm, pn),
        shape.kt,
        (bm, bn),
        lambda i, j: flat_site_of(plan.grid_x, plan.grid_y, bm * bn, i * bn + j),
    )
    return (None if shape.a_local else share_operand(a, target)), share_operand(b, target)


@dataclass(slots=True)
class _MulticastReads:
    """A and B's DRAM tile reads two ways, and which operands the plan really multicasts (the plan
    asks, the target has rectangles, more than one site shares)."""

    mcast_a: bool
    mcast_b: bool
    # A row of sites reads each A block once per round and shares it (on a target without
    # multicast rectangles: what one wave of the flat deal shares through a cache); B symmetrically.
    a_shared: int
    b_shared: int
    # Every block reads its own.
    a_replicated: int
    b_replicated: int


@dataclass(slots=True)
class _TileReads:
    """Tiles of A and of B read from DRAM under the plan, and the fabric cycles of the broadcasts
    that replace some of them (share_operand's decisions, None where it does not decide)."""

    a: int
    b: int
    share_a: SharingDecision | None = None
    share_b: SharingDecision | None = None
    fabric_cycles: int = 0


@dataclass(slots=True)
class _NocTraffic:
    """Tiles landing in sites' local memory, link traversals of multicast deliveries, and the
    sites reading A and B from DRAM at the same time."""

    delivered: int
    hops: int
    a_readers: int
    b_readers: int


@dataclass(slots=True)
class _OperandTraffic:
    """Everything a plan moves of A and B: its multicast reads, what it reads from DRAM once operand
    sharing is applied, and what the NoC delivers."""

    reads: _MulticastReads
    dram: _TileReads
    noc: _NocTraffic


def gemm_quantities(target: Target, shape: GemmShape, plan: GemmPlan) -> GemmQuantities:
    """Tiles read from DRAM per operand (with and without multicast), tiles moved on the NoC and
    hops crossed, tile-matmuls (total and on the busiest site), output tiles written.

    Which site runs what is :func:`~.gemm.deal`, the function place lays the program out by: the 2-D
    map (or a line folded onto the mesh) where the target multicasts, split_work_to_cores for
    streaming plans and targets without multicast. The busiest site is the one running unit 0."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    d = deal(target, shape, plan)
    kb = kt if plan.streaming else plan.k_blocks(kt)
    if plan.streaming:
        t = _streaming_traffic(shape, d)
    else:
        t = _blocked_traffic(target, shape, plan, d)
    c_written = 0 if shape.c_local else mt * nt
    return GemmQuantities(
        sites_used=d.sites,
        grid_x_used=d.grid_x,
        grid_y_used=d.grid_y,
        blocks_m=d.blocks_m,
        blocks_n=d.blocks_n,
        k_blocks=kb,
        busiest_rows=d.rows,
        busiest_cols=d.cols,
        busiest_blocks=d.per_site,
        busiest_steps=d.per_site * kb,
        busiest_out_tiles=d.out_tiles,
        tile_matmuls=mt * nt * kt,
        tile_matmuls_busiest=d.out_tiles * kt,
        tile_matmuls_busiest_eff=_busiest_effective_tile_matmuls(target, shape, d),
        mcast_a=t.reads.mcast_a,
        mcast_b=t.reads.mcast_b,
        a_tiles_dram=t.dram.a,
        b_tiles_dram=t.dram.b,
        a_tiles_dram_mcast=t.reads.a_shared,
        b_tiles_dram_mcast=t.reads.b_shared,
        a_tiles_dram_replicated=t.reads.a_replicated,
        b_tiles_dram_replicated=t.reads.b_replicated,
        c_tiles_written=c_written,
        a_readers=t.noc.a_readers,
        b_readers=t.noc.b_readers,
        c_writers=0 if shape.c_local else d.sites,
        noc_tiles=t.noc.delivered + c_written,
        noc_tile_hops=t.noc.hops,
        busiest_a_tiles=d.a_tiles_per_k * kt,
        busiest_b_tiles=d.b_tiles_per_k * kt,
        busiest_c_tiles=0 if shape.c_local else d.out_tiles,
        line=plan.line and not plan.streaming,
        share_a=t.dram.share_a,
        share_b=t.dram.share_b,
        fabric_cycles=t.dram.fabric_cycles,
    )


def _busiest_effective_tile_matmuls(target: Target, shape: GemmShape, d: Deal) -> float:
    """The busiest site's tile-matmuls once short rows pay whole row passes only: the tiles of the
    last M tile row (a 1-row decode tile on Tensix costs 8/32 of a tile). A streaming site is charged
    full tiles unless every tile is short."""
    last_rows = shape.m - TILE * (shape.mt - 1)
    return (d.out_tiles - d.last_row_tiles * (1.0 - _row_pass_factor(target, last_rows))) * shape.kt


def _streaming_traffic(shape: GemmShape, d: Deal) -> _OperandTraffic:
    """tt-metal's non-reuse matmul: each output tile reads its own K row of A and K column of B;
    no multicast, nothing shared."""
    a = 0 if shape.a_local else d.units * shape.kt
    b = d.units * shape.kt
    return _OperandTraffic(
        reads=_MulticastReads(False, False, a, b, a, b),
        dram=_TileReads(a, b),
        noc=_NocTraffic(
            delivered=2 * d.units * shape.kt,
            hops=0,
            a_readers=0 if shape.a_local else d.sites,
            b_readers=d.sites,
        ),
    )


def _blocked_traffic(target: Target, shape: GemmShape, plan: GemmPlan, d: Deal) -> _OperandTraffic:
    """A blocked plan's traffic: its multicast (or one-wave) reads, then what sharing operand panels
    over a fabric or a shared cache saves."""
    reads = _multicast_reads(target, shape, plan, d)
    shared = _reads_after_fabric_sharing(target, shape, plan, d, reads)
    return _OperandTraffic(
        reads=reads,
        dram=_reads_after_shared_cache(target, shape, shared, reads),
        noc=_blocked_noc_traffic(shape, d, reads),
    )


def _multicast_reads(target: Target, shape: GemmShape, plan: GemmPlan, d: Deal) -> _MulticastReads:
    """A and B's DRAM reads replicated (every block its own) and shared (by the multicast of a row or
    column of sites, or one wave of the flat deal); nothing of an A already in local memory."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    bm, bn = d.blocks_m, d.blocks_n
    a_rep, b_rep = mt * kt * bn, kt * nt * bm
    if target.multicasts_rectangles:
        mcast_a = plan.mcast_a and d.grid_x > 1
        mcast_b = plan.mcast_b and d.grid_y > 1
        # A block row is read once per round of column blocks when the sites sharing it take
        # it from one multicast, once per column block otherwise; B symmetrically.
        a_shared, b_shared = mt * kt * ceil_div(bn, d.grid_x), kt * nt * ceil_div(bm, d.grid_y)
    else:
        mcast_a = mcast_b = False
        a_shared, b_shared = _one_wave_reads(shape, plan, d, a_rep, b_rep)
    if shape.a_local:
        a_shared = a_rep = 0
    return _MulticastReads(mcast_a, mcast_b, a_shared, b_shared, a_rep, b_rep)


def _one_wave_reads(
    shape: GemmShape, plan: GemmPlan, d: Deal, a_rep: int, b_rep: int
) -> tuple[int, int]:
    """What one wave of the flat deal (every site's t-th block at once) shares: the block rows and
    columns its blocks touch, each once; never more than the replicated reads."""
    used, per = d.sites, d.per_site
    cols_wave = min(d.blocks_n, used, d.blocks_n // math.gcd(per, d.blocks_n))
    rows = min(shape.mt, min(d.blocks_m, used) * plan.per_site_m)
    cols = min(shape.nt, cols_wave * plan.per_site_n)
    return min(a_rep, per * rows * shape.kt), min(b_rep, per * cols * shape.kt)


def _reads_after_fabric_sharing(
    target: Target, shape: GemmShape, plan: GemmPlan, d: Deal, reads: _MulticastReads
) -> _TileReads:
    """The plan's reads (shared where the operand really multicasts, replicated otherwise), then
    shared over the fabric: DRAM serves each panel (a whole block row of A, block column of B) the
    copies share_operand chose, one when broadcast and one per consumer block when replicated,
    exactly as the report counts them; and each broadcast panel adds the fabric cycles share_operand
    weighed against the DRAM cycles it saves (same currency, so the plan's memory time is the least
    of the two arrangements, as the pass picks it)."""
    a = reads.a_shared if reads.mcast_a else reads.a_replicated
    b = reads.b_shared if reads.mcast_b else reads.b_replicated
    share_a, share_b = operand_sharing(target, shape, plan)
    if share_a is None and share_b is None:
        return _TileReads(a, b)
    a, fabric_a = _panels_read(a, d.blocks_m, plan.per_site_m * shape.kt, share_a)
    b, fabric_b = _panels_read(b, d.blocks_n, plan.per_site_n * shape.kt, share_b)
    return _TileReads(a, b, share_a, share_b, fabric_a + fabric_b)


def _panels_read(
    planned: int, panels: int, panel_tiles: int, decision: SharingDecision | None
) -> tuple[int, int]:
    """(tiles read, fabric cycles) of one operand's ``panels`` under share_operand's ``decision``;
    the plan's own reads where there is none."""
    if decision is None:
        return planned, 0
    fabric = panels * decision.fabric_cycles_added if decision.sharing == Sharing.BROADCAST else 0
    return panels * panel_tiles * decision.copies, fabric


def _reads_after_shared_cache(
    target: Target, shape: GemmShape, dram: _TileReads, reads: _MulticastReads
) -> _TileReads:
    """A shared last-level cache (a GPU's L2) stands in for multicast: the sites running one wave
    read each panel they share from DRAM once; and a whole operand that fits in half the cache stays
    there across waves, so DRAM serves it once. Sites still pull every tile from L2 over their link,
    which the movement model charges."""
    if not target.l2_bytes or target.multicasts_rectangles:
        return dram
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    a, b = min(dram.a, reads.a_shared), min(dram.b, reads.b_shared)
    half = target.l2_bytes // 2
    tb = shape.operand_tile_bytes(target)
    if mt * kt * tb <= half:
        a = min(a, mt * kt)
    if kt * nt * tb <= half:
        b = min(b, kt * nt)
    return dataclasses.replace(dram, a=a, b=b)


def _blocked_noc_traffic(shape: GemmShape, d: Deal, reads: _MulticastReads) -> _NocTraffic:
    """Every site receives every A tile of its block rows and B tile of its block columns, shared or
    not; multicast saves DRAM reads and link occupancy, not deliveries. A multicast occupies each
    link of its row (column) once per block it sends."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    bm, bn = d.blocks_m, d.blocks_n
    hops_a = mt * kt * ceil_div(bn, d.grid_x) * (d.grid_x - 1) if reads.mcast_a else 0
    hops_b = kt * nt * ceil_div(bm, d.grid_y) * (d.grid_y - 1) if reads.mcast_b else 0
    return _NocTraffic(
        delivered=mt * kt * bn + kt * nt * bm,
        hops=hops_a + hops_b,
        a_readers=0 if shape.a_local else (d.grid_y if reads.mcast_a else d.sites),
        b_readers=d.grid_x if reads.mcast_b else d.sites,
    )


# ── cycles ─────────────────────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Compute:
    """The busiest site's compute: cycles per tile-matmul on the matrix engine (short rows paying
    whole row passes, plus the bank handover) and through the unpackers, the slower of the two that
    each tile-matmul costs, and the site's total with any K-block spill."""

    engine: float
    unpack: float
    per_tile_matmul: float
    cycles: float


@dataclass(slots=True)
class _Movement:
    """The busiest site's movement engines over the steps: A's and B's DRAM reads and sends on to
    other sites, and the critical engine's (the one busiest with the loads and the store it carries)."""

    a_read: float
    a_send: float
    b_read: float
    b_send: float
    critical_read: float
    critical_send: float

    @property
    def cycles(self) -> float:
        return self.critical_read + self.critical_send


@dataclass(slots=True)
class _DramTime:
    """Every byte the plan reads or writes at the chip's DRAM bandwidth, plus the fabric cycles of
    broadcast panels (share_operand weighed them against the DRAM time they replace)."""

    bytes: int
    cycles: float


@dataclass(slots=True)
class _Pipeline:
    """Per-step times and the busiest site's pipeline of ``n`` steps: fill, steady state, drain."""

    step_compute: float
    step_movement: float
    step_dram: float
    fill: float
    drain: float
    steady: float
    compute_done: float
    total: float


def _engine_cycles_per_tile_matmul(
    target: Target, shape: GemmShape, q: GemmQuantities, fidelity: str
) -> float:
    """The matrix engine's cycles per tile-matmul of the busiest site at ``fidelity``: short rows pay
    whole row passes, and each tile-matmul loses the bank handover."""
    fid = float(target.matmul_tile_cycles(shape.in_dtype, fidelity))
    eff_ratio = q.tile_matmuls_busiest_eff / max(1, q.tile_matmuls_busiest)
    return fid * eff_ratio + target.matmul_handover_cycles


def _unpack_cycles_per_tile_matmul(target: Target, shape: GemmShape, plan: GemmPlan) -> float:
    """Unpacker cycles per tile-matmul (0 where the target declares no unpack rate).

    The unpackers feed the engine's two source registers from local memory. For a sub-block of
    osh x osw tiles the matmul LLK (tt-llk ``_llk_unpack_AB_matmul_``: ``reuse_a = ct_dim >= rt_dim``)
    holds one tile of one operand while it streams the other operand's tiles past it: per K tile,
    min(osh, osw) x (1 + max(osh, osw)) tile unpacks for osh x osw tile-matmuls. The streamed operand
    (one tile per tile-matmul) goes through one unpacker at ``unpack_bytes_per_cycle``; both together
    are capped at ``unpack_joint_bytes_per_cycle`` (they share L1 ports). On Tensix this is what makes a
    1x1 sub-block, or bf16 at LoFi, slower than the fidelity alone says."""
    if not target.unpack_bytes_per_cycle:
        return 0.0
    tb = shape.operand_tile_bytes(target)
    big = max(plan.osh, plan.osw)
    streamed = tb / target.unpack_bytes_per_cycle
    joint_rate = target.unpack_joint_bytes_per_cycle or target.unpack_bytes_per_cycle
    both = tb * (1.0 + 1.0 / big) / joint_rate
    return max(streamed, both)


def _busiest_compute(
    target: Target,
    shape: GemmShape,
    plan: GemmPlan,
    q: GemmQuantities,
    fidelity: str,
    *,
    in_place: bool,
    exact: bool,
) -> _Compute:
    """Every tile-matmul of the busiest site at the slower of engine and unpacker (short rows pay
    whole row passes on the engine; the unpacker still reads whole, padded tiles), plus the spill."""
    engine = _engine_cycles_per_tile_matmul(target, shape, q, fidelity)
    unpack = _unpack_cycles_per_tile_matmul(target, shape, plan)
    per_tm = max(engine, unpack)
    cycles = q.tile_matmuls_busiest * per_tm
    if q.k_blocks > 1 and not plan.streaming and not target.acc_in_registers and not in_place:
        cycles += _k_block_spill_cycles(target, shape, q, exact=exact)
    return _Compute(engine, unpack, per_tm, cycles)


def _k_block_spill_cycles(
    target: Target, shape: GemmShape, q: GemmQuantities, *, exact: bool
) -> float:
    """The K-block spill: every K block after the first reloads the block's partial sums into the
    accumulator through the operand path before it can accumulate again (32-bit when ``exact``)."""
    if not exact:
        spill_tb = shape.operand_tile_bytes(target)
    elif target.has_dtype("f32"):
        spill_tb = target.tile_bytes("f32")
    else:
        spill_tb = 4 * target.tile_elems
    local_rate = float(target.unpack_bytes_per_cycle or target.link_bytes_per_cycle)
    return (q.k_blocks - 1) * q.busiest_out_tiles * spill_tb / local_rate


def _movement(target: Target, shape: GemmShape, q: GemmQuantities, n: int) -> _Movement:
    """The busiest site's movement over ``n`` steps, each engine's read and send a total over the
    steps; every term grows with ``n``.

    Each step, an operand's engine reads the block from DRAM and then, as the multicast sender of its
    row / column, sends it on: a chain, because the reader waits for the block (one DRAM round trip)
    before it can hand it on, and only then fetches the next. A block read is one NoC transaction per
    tile (interleaved tensors put neighbouring tiles in different banks), so it streams at the link's
    rate or the engine's transaction issue rate, whichever is slower. DRAM as a shared resource is
    not in this chain: all sites' reads and writes together are the program's DRAM time, which the
    steady state also respects."""
    tb = shape.operand_tile_bytes(target)
    link = float(target.link_bytes_per_cycle)
    latency = float(target.dram_latency_cycles or 0)
    issue = float(target.noc_issue_cycles or 0)
    a_tiles_step = q.busiest_a_tiles / n
    b_tiles_step = q.busiest_b_tiles / n

    def read(tiles: float) -> float:
        return n * (latency + max(tiles * issue, tiles * tb / link))

    # A multicast step is a credit loop across the rectangle: the receivers' "ready" credits travel
    # back to the sender, the block streams out (its first word one hop latency per hop behind), and
    # the "valid" flag follows it: three crossings of the span, hop_cycles per hop.
    a_span = target.hop_cycles * span(target, q.grid_x_used, q.line)
    b_span = target.hop_cycles * span(target, q.grid_y_used, q.line)

    def send(tiles: float, hops_cycles: float) -> float:
        return n * (tiles * tb / link + 3 * hops_cycles)

    if shape.a_local:
        # Already sharded in local memory: the owner of each K block multicasts it along the row.
        a_read = 0.0
        a_send = send(a_tiles_step, a_span) if q.mcast_a else n * a_tiles_step * tb / link
    else:
        a_read = read(a_tiles_step)
        a_send = send(a_tiles_step, a_span) if q.mcast_a else 0.0
    b_read = read(b_tiles_step)
    b_send = send(b_tiles_step, b_span) if q.mcast_b else 0.0
    c_write = q.busiest_c_tiles * shape.out_tile_bytes(target) / link
    paths = _engine_paths(target, (a_read, a_send), (b_read, b_send), c_write)
    return _Movement(a_read, a_send, b_read, b_send, *max(paths, key=sum))


def _engine_paths(
    target: Target, a: tuple[float, float], b: tuple[float, float], c_write: float
) -> list[tuple[float, float]]:
    """(read, send) of each movement engine once A's and B's loads (each a (read, send) pair) and the
    result store are packed onto the target's engines."""
    engines = max(1, target.movement_engines)
    if engines >= 3:
        return [a, b, (0.0, c_write)]
    if engines == 2:
        # Loads on one engine, stores on the other; B's loader shares the store engine (docs/passes.md#place-engines-and-nocs:
        # operand-with-store packing), which is how tt-metal pairs in1 with the writer.
        return [a, (b[0], b[1] + c_write)]
    return [(a[0] + b[0], a[1] + b[1] + c_write)]


def _dram_time(target: Target, shape: GemmShape, q: GemmQuantities) -> _DramTime:
    """DRAM is shared by the whole mesh: the program's DRAM time, not one site's."""
    tb, tbo = shape.operand_tile_bytes(target), shape.out_tile_bytes(target)
    dram_bytes = (q.a_tiles_dram + q.b_tiles_dram) * tb + q.c_tiles_written * tbo
    return _DramTime(dram_bytes, dram_bytes / target.dram_bytes_per_cycle + q.fabric_cycles)


def _write_back_cycles(
    target: Target, shape: GemmShape, plan: GemmPlan, q: GemmQuantities
) -> float:
    """After the last compute, the last blocks' results written back: every site writes its last
    block at once, through its link and, together, through DRAM; then the write round trip."""
    if not q.busiest_c_tiles:
        return 0.0
    last_block_tiles = min(q.busiest_c_tiles, plan.per_site_m * plan.per_site_n)
    tbo = shape.out_tile_bytes(target)
    burst = last_block_tiles * tbo * q.c_writers / target.dram_bytes_per_cycle
    link = float(target.link_bytes_per_cycle)
    return max(last_block_tiles * tbo / link, burst) + float(target.dram_latency_cycles or 0)


def _pipeline(
    target: Target,
    shape: GemmShape,
    plan: GemmPlan,
    q: GemmQuantities,
    n: int,
    compute: float,
    move: _Movement,
    dram: float,
) -> _Pipeline:
    """Movement and compute overlap through double-buffered FIFOs: the site takes
    ``fill + (n - 1) x max(move, compute, DRAM share) + last compute + drain`` cycles, and never less
    than any of the three totals."""
    movement = move.cycles
    step_c, step_m, step_d = compute / n, movement / n, dram / n
    # Fill: the first step's blocks are read and then sent before any compute starts.
    fill = max((move.a_read + move.a_send) / n, (move.b_read + move.b_send) / n, step_d)
    # Drain: the last step's compute, then the write-back.
    drain = step_c + _write_back_cycles(target, shape, plan, q)
    steady = (n - 1) * max(step_c, step_m, step_d)
    return _Pipeline(
        step_compute=step_c,
        step_movement=step_m,
        step_dram=step_d,
        fill=fill,
        drain=drain,
        steady=steady,
        compute_done=max(fill + steady + step_c, compute),
        total=max(fill + steady + drain, compute, dram, movement),
    )


def _binding(target: Target, pipe: _Pipeline, move: _Movement) -> str:
    """What binds: the compute engine; DRAM (its bandwidth, or the round trips of a reader that waits
    on it); or the on-chip network (multicast sends, link rates, and on a chip without declared DRAM
    latency, e.g. a GPU reading through its L2, the link reads too)."""
    step_c, step_m, step_d = pipe.step_compute, pipe.step_movement, pipe.step_dram
    if step_c >= max(step_m, step_d):
        return "compute"
    if step_d >= step_m or (
        move.critical_read >= move.critical_send and target.dram_latency_cycles
    ):
        return "dram"
    return "noc"


def gemm_cost(
    target: Target,
    shape: GemmShape,
    plan: GemmPlan,
    fidelity: str = "hifi4",
    *,
    in_place: bool = False,
    exact: bool = False,
) -> GemmCost:
    """Predicted cycles of ``plan`` for ``shape`` on ``target`` at ``fidelity``; see the module text
    for the structure. ``in_place``: partial sums accumulate in the output buffer (tt-metal's packer
    L1 accumulation), so no K-block spill is reloaded; ``exact``: the spill is 32-bit."""
    q = gemm_quantities(target, shape, plan)
    n = max(1, q.busiest_steps)
    compute = _busiest_compute(target, shape, plan, q, fidelity, in_place=in_place, exact=exact)
    move = _movement(target, shape, q, n)
    dram = _dram_time(target, shape, q)
    pipe = _pipeline(target, shape, plan, q, n, compute.cycles, move, dram.cycles)
    bound = _binding(target, pipe, move)
    total_cycles = math.ceil(pipe.total)
    tb, tbo = shape.operand_tile_bytes(target), shape.out_tile_bytes(target)
    noc_bytes = (q.noc_tiles - q.c_tiles_written) * tb + q.c_tiles_written * tbo
    why = (
        f"{bound}-bound: {n} steps of compute {pipe.step_compute:.0f} / movement "
        f"{pipe.step_movement:.0f} / DRAM {pipe.step_dram:.0f} cycles (tile-matmul "
        f"{compute.per_tile_matmul:.1f} cycles: engine {compute.engine:.1f}, unpack "
        f"{compute.unpack:.1f}), fill {pipe.fill:.0f}, drain {pipe.drain:.0f}"
    )
    return GemmCost(
        compute_cycles=compute.cycles,
        movement_cycles=move.cycles,
        dram_cycles=dram.cycles,
        step_compute=pipe.step_compute,
        step_movement=pipe.step_movement,
        step_dram=pipe.step_dram,
        fill_cycles=pipe.fill,
        drain_cycles=pipe.drain,
        steady_cycles=pipe.steady,
        compute_done_cycles=math.ceil(pipe.compute_done),
        total_cycles=total_cycles,
        bound=bound,
        us=total_cycles / (target.clock_ghz * 1000.0),
        dram_bytes=int(dram.bytes),
        noc_bytes=int(noc_bytes),
        quantities=q,
        why=why,
    )


def gemm_cost_floor(
    target: Target,
    shape: GemmShape,
    plan: GemmPlan,
    fidelity: str = "hifi4",
) -> int:
    """Cycles no plan with ``plan``'s block, grid, arrangement and multicast can go below, whatever
    its sub-block and K block: the parts of :func:`gemm_cost`'s total that do not depend on them,
    each at its least. Compute at the matrix engine's rate (the unpacker and the K-block spill only
    add), plus the least fill (one DRAM round trip) and the last block's write-back; the DRAM time;
    the movement with one K block per block (reads and sends only grow with the number of steps).
    The tile pass prunes with it, so the pruning is exact under the cost model."""
    q = gemm_quantities(target, shape, plan)
    compute = q.tile_matmuls_busiest * _engine_cycles_per_tile_matmul(target, shape, q, fidelity)
    latency = float(target.dram_latency_cycles or 0)
    drain = _write_back_cycles(target, shape, plan, q)
    dram = _dram_time(target, shape, q).cycles
    movement = _movement(target, shape, q, max(1, q.busiest_blocks)).cycles
    return math.floor(max(compute + latency + drain, dram, movement))


# ── bounds ─────────────────────────────────────────────────────────────────────────────────────────


def compulsory_dram_bytes(target: Target, shape: GemmShape) -> int:
    """Bytes any plan must move through DRAM: each operand tile read once (unless A is already in
    local memory) and each result tile written once (unless it stays there)."""
    tb = shape.operand_tile_bytes(target)
    a = 0 if shape.a_local else shape.mt * shape.kt * tb
    b = shape.kt * shape.nt * tb
    c = 0 if shape.c_local else shape.mt * shape.nt * shape.out_tile_bytes(target)
    return a + b + c


def roofline_cycles(target: Target, shape: GemmShape, fidelity: str = "hifi4") -> int:
    """max(FLOPs / peak FLOP rate of the whole mesh, compulsory DRAM bytes / DRAM bandwidth), in
    cycles. Every plan's :func:`gemm_cost` total is at least this (its busiest site computes at least
    an even share of the padded tile-matmuls, and it reads at least the compulsory bytes)."""
    compute = shape.flops / target.peak_flops_per_cycle(shape.in_dtype, fidelity)
    memory = compulsory_dram_bytes(target, shape) / target.dram_bytes_per_cycle
    return math.ceil(max(compute, memory))


def capacity_bound_bytes(target: Target, shape: GemmShape) -> int:
    """Smith et al. 2017 ("A Tight I/O Lower Bound for Matrix Multiplication"): a machine holding S
    words at once must move at least 2MNK / sqrt(S) - 2S words between its memory and DRAM. S is the
    whole mesh's local memory (sites x configurable budget), counted in elements of the operand
    format; the result is in bytes, floored at the compulsory traffic."""
    elem_bytes = shape.operand_tile_bytes(target) / target.tile_elems
    s_words = target.sites * target.local_mem_max_bytes / elem_bytes
    words = 2.0 * shape.m * shape.n * shape.k / math.sqrt(s_words) - 2.0 * s_words
    return max(compulsory_dram_bytes(target, shape), math.ceil(words * elem_bytes))


def noc_ingress_bound_cycles(target: Target, shape: GemmShape, plan: GemmPlan | None = None) -> int:
    """Cycles the busiest site needs just to receive its operands through its NoC link. With a plan:
    its A rows and B columns (``busiest_a_tiles + busiest_b_tiles``). Without one, the plan-free
    bound: spreading the M x N output evenly over every site, a site owning an a x b patch with
    ab = MN / sites receives at least K(a + b) >= 2K sqrt(MN / sites) elements."""
    tb = shape.operand_tile_bytes(target)
    if plan is not None:
        q = gemm_quantities(target, shape, plan)
        return math.ceil((q.busiest_a_tiles + q.busiest_b_tiles) * tb / target.link_bytes_per_cycle)
    elems = 2.0 * shape.k * math.sqrt(shape.m * shape.n / target.sites)
    return math.ceil(elems * tb / target.tile_elems / target.link_bytes_per_cycle)
