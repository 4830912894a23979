"""A GEMM plan's quantities: what each site computes, reads, receives and sends, before any of it
is turned into cycles (:mod:`.cost` does that).

Which blocks the busiest site runs is :func:`~.gemm.deal`, the function place lays the program
out by; every block a site runs brings its own A rows and B columns over the NoC. Operands reach
their readers by rectangle multicast where the target has it, else by the fabric sharing
decision of :mod:`.sharing` (docs/passes.md#fuse-broadcast-or-replicate-on-the-rdu), else through
a shared cache where the target declares one.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from .dram import sustained_dram_bytes_per_cycle
from .gemm import TILE, Deal, GemmPlan, GemmShape, ceil_div, deal, slice_shape
from .sharing import Sharing, SharingDecision, flat_site_of, gemm_operand_streams, share_operand
from .spec import Target


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
    noc_b_tiles: int  # of noc_tiles, B's
    noc_tile_hops: int
    busiest_a_tiles: int  # A tiles the busiest site receives
    busiest_b_tiles: int
    busiest_c_tiles: int
    line: bool = False  # the sites are a line folded onto the mesh (multicast spans its rectangle)
    # On a fabric without multicast rectangles: how each operand's panels reach their consumers
    # (share_operand, exactly as fuse-operands decides it); None elsewhere.
    share_a: SharingDecision | None = None
    share_b: SharingDecision | None = None
    # The broadcasts' fan-outs, which overlap the DRAM time (sharing.memory_cycles), and the one
    # page of them no overlap hides (the largest fill of the operands broadcast).
    fabric_cycles: int = 0
    fabric_fill_cycles: int = 0
    # Split-K (GemmPlan.split_k): the K slices, and the partial-sum tiles (at the accumulator's
    # precision) the busiest site, one of the last slice, receives from the slice before it.
    k_slices: int = 1
    partial_tiles: int = 0
    # Bytes per cycle the plan's DRAM traffic sustains (gemm_dram_rate): peak x the chip's sustained
    # fraction x the share of channels it keeps busy (targets/dram.py).
    dram_rate: float = 0.0


# ── quantities ─────────────────────────────────────────────────────────────────────────────────────


def _row_pass_factor(target: Target, rows: int) -> float:
    """Share of a full tile's matrix-engine time a tile with ``rows`` real rows costs: whole passes of
    ``matmul_row_pass`` rows ("shorter than 8x16 ... the engine will still perform 8x16 x 16x16",
    tt-metal GEMM report). A 1-row decode tile on Tensix costs 8/32 of a tile, not 1/32."""
    rp = max(1, target.matmul_row_pass)
    if rows >= TILE:
        return 1.0
    return min(1.0, ceil_div(rows, rp) * rp / TILE)


def _dram_rate(target: Target, shape: GemmShape, sites: int) -> float:
    """The DRAM rate of a GEMM whose work is dealt over ``sites`` sites: each reads and writes
    through its own link, over the pages of the largest tensor the GEMM moves (tensors are
    interleaved from the first channel on)."""
    pages = max(
        0 if shape.a_local else shape.mt * shape.kt,
        shape.kt * shape.nt,
        0 if shape.c_local else shape.mt * shape.nt,
    )
    return sustained_dram_bytes_per_cycle(target, readers=sites, pages=pages)


def gemm_dram_rate(target: Target, shape: GemmShape, plan: GemmPlan) -> float:
    """THE bytes per cycle a GEMM plan's DRAM traffic sustains (:mod:`.dram`): the cost model
    prices the plan's DRAM time at it, and fuse-operands the copies a broadcast saves, so the two
    can never weigh a byte differently."""
    return _dram_rate(target, shape, deal(target, shape, plan).sites)


def operand_sharing(
    target: Target, shape: GemmShape, plan: GemmPlan, dram_rate: float | None = None
) -> tuple[SharingDecision | None, SharingDecision | None]:
    """What fuse-operands will decide for A and B on a fabric without multicast rectangles
    (``fabric_word_bytes`` set): :func:`share_operand` on the streams of
    :func:`gemm_operand_streams`, the sites those of the flat deal place lays out, the copies
    priced at the plan's DRAM rate (:func:`gemm_dram_rate`, computed unless given). (None, None)
    elsewhere, and None for an A already in local memory."""
    if target.multicasts_rectangles or target.fabric_word_bytes is None or plan.streaming:
        return None, None
    rate = gemm_dram_rate(target, shape, plan) if dram_rate is None else dram_rate
    pm, pn = plan.per_site_m, plan.per_site_n
    bm, bn = ceil_div(shape.mt, pm), ceil_div(shape.nt, pn)
    a, b = gemm_operand_streams(
        ("a", "b"),
        (shape.a_dram_tile_bytes(target), shape.b_tile_bytes(target)),
        (pm, pn),
        shape.kt,
        (bm, bn),
        lambda i, j: flat_site_of(plan.grid_x, plan.grid_y, bm * bn, i * bn + j),
    )
    return (
        None if shape.a_local else share_operand(a, target, rate),
        share_operand(b, target, rate),
    )


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
    fabric_fill_cycles: int = 0


@dataclass(slots=True)
class _NocTraffic:
    """Tiles landing in sites' local memory, link traversals of multicast deliveries, and the
    sites reading A and B from DRAM at the same time."""

    delivered: int
    b_delivered: int  # of which B's (priced at B's tile bytes: a Q8_0 weight's differ from A's)
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
    streaming plans and targets without multicast. The busiest site is the one running unit 0.
    A split-K plan (``split_k`` = S) is its K slice's plan (``slice_shape``) on each of S copies
    of the grid: the busiest site is one slice's; every slice reads its own K range of A and B (S
    times one slice's reads: the unsplit plan's total) and delivers as much; the result is
    written once, by the last slice, whose sites each first receive their blocks' partial sums
    from the slice before (one accumulator tile per output tile, ``partial_tiles``)."""
    s = plan.split_k
    whole = shape
    shape = slice_shape(shape, plan)
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    d = deal(target, shape, plan)
    kb = kt if plan.streaming else ceil_div(kt, plan.ibw)
    rate = _dram_rate(target, shape, d.sites * s)
    if plan.streaming:
        t = _streaming_traffic(shape, d)
    else:
        t = _blocked_traffic(target, shape, plan, d, rate)
    c_written = 0 if shape.c_local else mt * nt
    return GemmQuantities(
        sites_used=d.sites * s,
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
        tile_matmuls=mt * nt * whole.kt,
        tile_matmuls_busiest=d.out_tiles * kt,
        tile_matmuls_busiest_eff=_busiest_effective_tile_matmuls(target, shape, d),
        mcast_a=t.reads.mcast_a,
        mcast_b=t.reads.mcast_b,
        a_tiles_dram=t.dram.a * s,
        b_tiles_dram=t.dram.b * s,
        a_tiles_dram_mcast=t.reads.a_shared * s,
        b_tiles_dram_mcast=t.reads.b_shared * s,
        a_tiles_dram_replicated=t.reads.a_replicated * s,
        b_tiles_dram_replicated=t.reads.b_replicated * s,
        c_tiles_written=c_written,
        a_readers=t.noc.a_readers * s,
        b_readers=t.noc.b_readers * s,
        c_writers=0 if shape.c_local else d.sites,
        noc_tiles=t.noc.delivered * s + c_written + mt * nt * (s - 1),
        noc_b_tiles=t.noc.b_delivered * s,
        noc_tile_hops=t.noc.hops * s,
        busiest_a_tiles=d.a_tiles_per_k * kt,
        busiest_b_tiles=d.b_tiles_per_k * kt,
        busiest_c_tiles=0 if shape.c_local else d.out_tiles,
        line=plan.line and not plan.streaming,
        share_a=t.dram.share_a,
        share_b=t.dram.share_b,
        fabric_cycles=t.dram.fabric_cycles,
        fabric_fill_cycles=t.dram.fabric_fill_cycles,
        k_slices=s,
        partial_tiles=d.out_tiles if s > 1 else 0,
        dram_rate=rate,
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
            b_delivered=d.units * shape.kt,
            hops=0,
            a_readers=0 if shape.a_local else d.sites,
            b_readers=d.sites,
        ),
    )


def _blocked_traffic(
    target: Target, shape: GemmShape, plan: GemmPlan, d: Deal, rate: float
) -> _OperandTraffic:
    """A blocked plan's traffic: its multicast (or one-wave) reads, then what sharing operand panels
    over a fabric or a shared cache saves."""
    reads = _multicast_reads(target, shape, plan, d)
    shared = _reads_after_fabric_sharing(target, shape, plan, d, reads, rate)
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
    target: Target, shape: GemmShape, plan: GemmPlan, d: Deal, reads: _MulticastReads, rate: float
) -> _TileReads:
    """The plan's reads (shared where the operand really multicasts, replicated otherwise), then
    shared over the fabric: DRAM serves each panel (a whole block row of A, block column of B) the
    copies share_operand chose, one when broadcast and one per consumer block when replicated,
    exactly as the report counts them; and each broadcast panel adds its fan-out's fabric cycles,
    which the cost model overlaps with the DRAM time as share_operand weighed them
    (:func:`~.sharing.memory_cycles`: the one rule of both), with the larger of the two operands'
    fills."""
    a = reads.a_shared if reads.mcast_a else reads.a_replicated
    b = reads.b_shared if reads.mcast_b else reads.b_replicated
    share_a, share_b = operand_sharing(target, shape, plan, rate)
    if share_a is None and share_b is None:
        return _TileReads(a, b)
    a, fabric_a = _panels_read(a, d.blocks_m, plan.per_site_m * shape.kt, share_a)
    b, fabric_b = _panels_read(b, d.blocks_n, plan.per_site_n * shape.kt, share_b)
    fill = max(
        (s.fill_cycles for s in (share_a, share_b) if s and s.sharing == Sharing.BROADCAST),
        default=0,
    )
    return _TileReads(a, b, share_a, share_b, fabric_a + fabric_b, fill)


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
    if mt * kt * shape.operand_tile_bytes(target) <= half:
        a = min(a, mt * kt)
    if kt * nt * shape.b_tile_bytes(target) <= half:
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
        b_delivered=kt * nt * bm,
        hops=hops_a + hops_b,
        a_readers=0 if shape.a_local else (d.grid_y if reads.mcast_a else d.sites),
        b_readers=d.grid_x if reads.mcast_b else d.sites,
    )
