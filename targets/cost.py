"""The cost model: a GEMM plan's quantities, its cycles, and the bounds it is measured against.

The quantities live in :mod:`.quantities`; this module turns them into cycles and is the
cost model's one import point (``__all__``).

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
  slower of the matrix engine (fidelity phases, plus the other instructions its thread issues) and
  the unpackers feeding it (the operand bytes its sub-block shape makes it re-read), plus the K-block
  spill when partial sums are not accumulated in place;
* movement and compute overlap through double-buffered FIFOs, so the site takes
  ``fill + (steps - 1) x max(move, compute, DRAM share) + last compute + drain`` cycles;
* the last step's results leave a page at a time, the writer waiting for each write (or, where
  the printed writer pairs them, for each pair: :func:`~.gemm.writes_in_pairs`): on Tensix
  a page is a sub-block, pushed as soon as its last K block is accumulated (the program
  tools/backend/ttlang/matmul.py prints), on a GPU the whole block after its compute
  (:func:`write_back_cycles`);
* DRAM is shared by the whole mesh: every byte the plan reads or writes at the bandwidth its
  traffic sustains (:mod:`.dram`: the chip's sustained fraction of the peak, less where the reads
  do not spread over the channels);
* a split-K plan is its K slice's plan on every slice, plus the partial sums: reloaded into the
  last slice's accumulator like a spill, sent by the earlier slices' writers, and handed slice to
  slice in the drain (docs/targets.md#split-k); on a target whose sites cannot hand them over
  (a GPU: :func:`split_sums_through_dram`) every slice writes its sums to DRAM and the last of
  a block's items to arrive reads and adds them.

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
from .gemm import Deal, GemmPlan, GemmShape, deal, slice_shape, span
from .quantities import GemmQuantities, gemm_dram_rate, gemm_quantities, operand_sharing
from .sharing import (
    OperandStream,
    Sharing,
    SharingDecision,
    dram_cycles,
    gemm_operand_streams,
    memory_cycles,
    share_operand,
)
from .spec import Target
from .tile_matmul import (
    engine_cycles_per_tile_matmul,
    issue_cycles_per_tile_matmul,
    least_issue_cycles_per_tile_matmul,
    unpack_cycles_per_tile_matmul,
)
from .write_back import page_write_cycles, write_back_cycles, write_pages

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
    "memory_cycles",
    "gemm_operand_streams",
    "operand_sharing",
    "gemm_dram_rate",
    "dram_cycles",
    "compulsory_dram_bytes",
    "dram_bytes_by_operand",
    "gemm_cost_floor",
    "Deal",
    "deal",
    "split_sums_through_dram",
    "issue_cycles_per_tile_matmul",
    "least_issue_cycles_per_tile_matmul",
]


def split_sums_through_dram(target: Target) -> bool:
    """Whether a split-K plan's slices add their partial sums through DRAM rather than over the
    NoC: on a target without multicast rectangles (no neighbouring slice to pipe them to) whose
    programs are kernel launches (it declares ``kernel_launch_cycles``: a GPU, whose programs of
    one launch count their arrivals with atomics, docs/backend-triton.md#split-k)."""
    return not target.multicasts_rectangles and target.kernel_launch_cycles is not None


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


# ── cycles ─────────────────────────────────────────────────────────────────────────────────────────


@dataclass(slots=True)
class _Compute:
    """The busiest site's compute: cycles per tile-matmul on the matrix engine (short rows paying
    whole row passes, plus its thread's other instructions) and through the unpackers, the slower
    of the two that each tile-matmul costs, and the site's total with any K-block spill."""

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
    """Every byte the plan reads or writes at the DRAM rate its traffic sustains (``rate``, bytes
    per cycle), overlapped with the fabric cycles of broadcast panels (:func:`~.sharing.memory_cycles`,
    the rule share_operand weighed them by)."""

    bytes: int
    cycles: float
    rate: float


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
    issue = issue_cycles_per_tile_matmul(target, fidelity, plan.osh, plan.osw)
    engine = engine_cycles_per_tile_matmul(target, shape, q, fidelity, issue)
    unpack = unpack_cycles_per_tile_matmul(target, shape, plan)
    per_tm = max(engine, unpack)
    cycles = q.tile_matmuls_busiest * per_tm
    if q.k_blocks > 1 and not plan.streaming and not target.acc_in_registers and not in_place:
        cycles += _k_block_spill_cycles(target, shape, q, exact=exact)
    # Split-K: the slice's sums start from the previous slice's, reloaded like a spill (through
    # DRAM the last item to arrive adds them instead: _adder_cycles).
    if not split_sums_through_dram(target):
        cycles += (
            q.partial_tiles * _split_partial_tile_bytes(target, shape, exact) / _local_rate(target)
        )
    return _Compute(engine, unpack, per_tm, cycles)


def _partial_tile_bytes(
    target: Target, shape: GemmShape, exact: bool, plain: int | None = None
) -> int:
    """Bytes of a tile of partial sums as they leave the accumulator: 32-bit when ``exact``,
    else ``plain`` (the operand format's tile for the K-block spill; split-K's partials pass the
    output's, which is then the accumulator's type)."""
    if not exact:
        return shape.operand_tile_bytes(target) if plain is None else plain
    if target.has_dtype("f32"):
        return target.tile_bytes("f32")
    return 4 * target.tile_elems


def _split_partial_tile_bytes(target: Target, shape: GemmShape, exact: bool) -> int:
    """A tile of split-K's partial sums: at the accumulator's type (the output's where not exact);
    through DRAM always the kernel's 32-bit accumulator type (f32, i32: splitk.py stores `acc`)."""
    if split_sums_through_dram(target):
        return 4 * target.tile_elems
    return _partial_tile_bytes(target, shape, exact, shape.out_tile_bytes(target))


def _local_rate(target: Target) -> float:
    """Bytes a cycle local memory feeds the accumulator through the operand path."""
    return float(target.unpack_bytes_per_cycle or target.link_bytes_per_cycle)


def _k_block_spill_cycles(
    target: Target, shape: GemmShape, q: GemmQuantities, *, exact: bool
) -> float:
    """The K-block spill: every K block after the first reloads the block's partial sums into the
    accumulator through the operand path before it can accumulate again (32-bit when ``exact``)."""
    spill_tb = _partial_tile_bytes(target, shape, exact)
    return (q.k_blocks - 1) * q.busiest_out_tiles * spill_tb / _local_rate(target)


def _split_chain_cycles(
    target: Target, shape: GemmShape, plan: GemmPlan, exact: bool, sub_tiles: int | None = None
) -> float:
    """Split-K's tail: the slices finish together, then each last sub-block's partial sums go
    slice to slice, S - 1 times: over the NoC (the sub-block's bytes at the link rate after a
    credit loop across the grid between two slices, three crossings as a multicast's) and into
    the next slice's accumulator. ``sub_tiles``: the sub-block's tiles, where not the plan's.
    Through DRAM (:func:`split_sums_through_dram`): the adder instead (:func:`_adder_cycles`)."""
    if plan.split_k == 1:
        return 0.0
    if split_sums_through_dram(target):
        return _adder_cycles(target, shape, plan, exact)
    tiles = plan.osh * plan.osw if sub_tiles is None else sub_tiles
    sub_bytes = tiles * _split_partial_tile_bytes(target, shape, exact)
    hops = plan.grid_x if plan.split_axis == "x" else plan.grid_y
    link = float(target.link_bytes_per_cycle)
    per_slice = sub_bytes / link + 3 * hops * target.hop_cycles + sub_bytes / _local_rate(target)
    return (plan.split_k - 1) * per_slice


def _split_partials_bytes(target: Target, shape: GemmShape, plan: GemmPlan) -> int:
    """Split-K's partial sums through DRAM: every slice's sums of the whole result, written by
    its items and read again by the items that add them (0 where the slices hand them over)."""
    if plan.split_k == 1 or not split_sums_through_dram(target):
        return 0
    return plan.split_k * shape.mt * shape.nt * _split_partial_tile_bytes(target, shape, True)


def _adder_cycles(target: Target, shape: GemmShape, plan: GemmPlan, exact: bool) -> float:
    """Split-K's sum through DRAM (docs/backend-triton.md#split-k): the last of a block's S items
    to count itself in (one atomic, a DRAM round trip) reads the S slices' sums of the block
    (another round trip, every byte through its link) and stores the result. Charged as if the
    busiest site added every block it runs, after its last: a bound, since which item arrives
    last is not known."""
    q = gemm_quantities(target, slice_shape(shape, plan), dataclasses.replace(plan, split_k=1))
    tiles = q.busiest_out_tiles * plan.split_k
    latency = float(target.dram_latency_cycles or 0)
    link = float(target.link_bytes_per_cycle)
    return (
        q.busiest_blocks * 2.0 * latency
        + tiles * _split_partial_tile_bytes(target, shape, exact) / link
    )


def _movement(
    target: Target, shape: GemmShape, q: GemmQuantities, n: int, partial_tb: int = 0
) -> _Movement:
    """The busiest site's movement over ``n`` steps, each engine's read and send a total over the
    steps; every term grows with ``n``.

    Each step, an operand's engine reads the block from DRAM and then, as the multicast sender of its
    row / column, sends it on: a chain, because the reader waits for the block (one DRAM round trip)
    before it can hand it on, and only then fetches the next. A block read is one NoC transaction per
    tile (interleaved tensors put neighbouring tiles in different banks), so it streams at the link's
    rate or the engine's transaction issue rate, whichever is slower (a one-row A's row segment
    is fewer transactions on a target that declares NoC bursts: GemmShape.a_read_transactions).
    DRAM as a shared resource is not in this chain: all sites' reads and writes together are the
    program's DRAM time, which the steady state also respects."""
    # A's reads move its DRAM pages (one row per tile for a one-row A); its sends pass whole tiles.
    tba, tbb, pba = (
        shape.operand_tile_bytes(target),
        shape.b_tile_bytes(target),
        shape.a_dram_tile_bytes(target),
    )
    link = float(target.link_bytes_per_cycle)
    latency = float(target.dram_latency_cycles or 0)
    issue = float(target.noc_issue_cycles or 0)
    a_tiles_step = q.busiest_a_tiles / n
    b_tiles_step = q.busiest_b_tiles / n

    def read(tiles: float, tb: int, transactions: float) -> float:
        return n * (latency + max(transactions * issue, tiles * tb / link))

    # A multicast step is a credit loop across the rectangle: the receivers' "ready" credits travel
    # back to the sender, the block streams out (its first word one hop latency per hop behind), and
    # the "valid" flag follows it: three crossings of the span, hop_cycles per hop.
    a_span = target.hop_cycles * span(target, q.grid_x_used, q.line)
    b_span = target.hop_cycles * span(target, q.grid_y_used, q.line)

    def send(tiles: float, tb: int, hops_cycles: float) -> float:
        return n * (tiles * tb / link + 3 * hops_cycles)

    if shape.a_local:
        # Already sharded in local memory: the owner of each K block multicasts it along the row.
        a_read = 0.0
        a_send = send(a_tiles_step, tba, a_span) if q.mcast_a else n * a_tiles_step * tba / link
    else:
        a_read = read(a_tiles_step, pba, shape.a_read_transactions(target, a_tiles_step))
        a_send = send(a_tiles_step, tba, a_span) if q.mcast_a else 0.0
    b_read = read(b_tiles_step, tbb, b_tiles_step)
    b_send = send(b_tiles_step, tbb, b_span) if q.mcast_b else 0.0
    # On a split-K plan a site of an earlier slice sends its partial sums where a last-slice site
    # stores its result: the writer carries the larger of the two.
    c_write = q.busiest_c_tiles * max(shape.out_dram_tile_bytes(target), partial_tb) / link
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


def dram_bytes_by_operand(
    target: Target, shape: GemmShape, q: GemmQuantities
) -> tuple[int, int, int]:
    """The DRAM bytes a plan reads of A and of B and writes of C (each tile at its DRAM page
    bytes: :meth:`~.gemm.GemmShape.a_dram_tile_bytes`)."""
    return (
        q.a_tiles_dram * shape.a_dram_tile_bytes(target),
        q.b_tiles_dram * shape.b_tile_bytes(target),
        q.c_tiles_written * shape.out_dram_tile_bytes(target),
    )


def _dram_time(target: Target, shape: GemmShape, plan: GemmPlan, q: GemmQuantities) -> _DramTime:
    """DRAM is shared by the whole mesh: the program's DRAM time, not one site's, at the rate
    its traffic sustains (``GemmQuantities.dram_rate``, :func:`~.quantities.gemm_dram_rate`).
    Split-K through DRAM: every slice's partial sums are written, and read back from DRAM
    unless they fit in half a shared cache (the rule :mod:`.quantities` keeps an operand there by)."""
    a, b, c = dram_bytes_by_operand(target, shape, q)
    partials = _split_partials_bytes(target, shape, plan)
    cached = target.l2_bytes is not None and partials <= target.l2_bytes // 2
    dram_bytes = a + b + c + (1 if cached else 2) * partials
    cycles = memory_cycles(dram_bytes / q.dram_rate, q.fabric_cycles, q.fabric_fill_cycles)
    return _DramTime(dram_bytes, cycles, q.dram_rate)


def _reads_in_flight(
    target: Target, shape: GemmShape, q: GemmQuantities, n: int, dram: _DramTime
) -> str:
    """Little's law for the plan's DRAM reads, as a clause of the reason. Each operand's reader
    keeps one step's block in flight (it waits for the block before it fetches the next, as
    :func:`_movement` charges it), so it streams the block's bytes per round trip plus transfer;
    the sites reading together stream ``sites`` times a site's rate, against the rate the DRAM
    sustains. Where the product falls short, more sites (or longer steps) pay; where it exceeds
    the DRAM, they do not. Empty on a target that declares no DRAM round trip."""
    latency = float(target.dram_latency_cycles or 0)
    if not latency:
        return ""
    tba, tbb = shape.a_dram_tile_bytes(target), shape.b_tile_bytes(target)
    issue = float(target.noc_issue_cycles or 0)
    link = float(target.link_bytes_per_cycle)
    a_tiles = 0 if shape.a_local else q.busiest_a_tiles / n
    b_tiles = q.busiest_b_tiles / n
    per_site = sum(
        t * tb / (latency + max(tx * issue, t * tb / link))
        for t, tb, tx in (
            (a_tiles, tba, shape.a_read_transactions(target, a_tiles)),
            (b_tiles, tbb, b_tiles),
        )
        if t
    )
    return (
        f"; reads {a_tiles * tba + b_tiles * tbb:.0f} B in flight a site per {latency:.0f}-cycle round"
        f" trip = {per_site:.1f} B/cycle, x {q.sites_used} sites = {per_site * q.sites_used:.0f}"
        f" of the DRAM's {dram.rate:.0f} B/cycle"
    )


def _pipeline(
    target: Target,
    shape: GemmShape,
    plan: GemmPlan,
    q: GemmQuantities,
    n: int,
    compute: float,
    move: _Movement,
    dram: float,
    exact: bool = False,
) -> _Pipeline:
    """Movement and compute overlap through double-buffered FIFOs: the site takes
    ``fill + (n - 1) x max(move, compute, DRAM share) + last compute + drain`` cycles, and never less
    than any of the three totals."""
    movement = move.cycles
    step_c, step_m, step_d = compute / n, movement / n, dram / n
    # Fill: the first step's blocks are read and then sent before any compute starts.
    fill = max((move.a_read + move.a_send) / n, (move.b_read + move.b_send) / n, step_d)
    # Drain: split-K's chain of partial sums, the last step's compute and its write-back.
    drain = _split_chain_cycles(target, shape, plan, exact)
    drain += write_back_cycles(target, shape, plan, q, step_c)
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
    partial_tb = _split_partial_tile_bytes(target, shape, exact) if q.k_slices > 1 else 0
    move = _movement(target, shape, q, n, partial_tb)
    dram = _dram_time(target, shape, plan, q)
    pipe = _pipeline(target, shape, plan, q, n, compute.cycles, move, dram.cycles, exact)
    bound = _binding(target, pipe, move)
    total_cycles = math.ceil(pipe.total)
    tba, tbb, tbo = (
        shape.operand_tile_bytes(target),
        shape.b_tile_bytes(target),
        shape.out_tile_bytes(target),
    )
    partials = shape.mt * shape.nt * (q.k_slices - 1)
    a_noc = q.noc_tiles - q.c_tiles_written - q.noc_b_tiles - partials
    noc_bytes = a_noc * tba + q.noc_b_tiles * tbb + q.c_tiles_written * tbo
    noc_bytes += partials * partial_tb
    why = (
        f"{bound}-bound: {n} steps of compute {pipe.step_compute:.0f} / movement "
        f"{pipe.step_movement:.0f} / DRAM {pipe.step_dram:.0f} cycles (tile-matmul "
        f"{compute.per_tile_matmul:.1f} cycles: engine {compute.engine:.1f}, unpack "
        f"{compute.unpack:.1f}), fill {pipe.fill:.0f}, drain {pipe.drain:.0f}"
        f"{_reads_in_flight(target, shape, q, n, dram)}"
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
    add), plus the least fill (one DRAM round trip) and the last page's write-back; the DRAM time;
    the movement with one K block per block (reads and sends only grow with the number of steps).
    A split-K plan adds its partial sums' reload and its chain of one-tile sub-blocks, at the
    smaller of the two precisions they can travel in. The tile pass prunes with it, so the
    pruning is exact under the cost model."""
    q = gemm_quantities(target, shape, plan)
    # Any sub-block: the least issue cost, a sub-block as long as the block, released once a row.
    least = least_issue_cycles_per_tile_matmul(
        target, fidelity, max(plan.per_site_m, plan.per_site_n)
    )
    compute = q.tile_matmuls_busiest * engine_cycles_per_tile_matmul(
        target, shape, q, fidelity, least
    )
    latency = float(target.dram_latency_cycles or 0)
    # after the compute, at least the last page's write: one tile where the packer pushes
    # sub-blocks (the smallest sub-block), the whole block where the sums live in registers
    drain = 0.0
    if q.busiest_c_tiles:
        page = write_pages(target, plan, q)[0] if target.acc_in_registers else 1
        drain = page_write_cycles(target, shape, q, page)
    if q.k_slices > 1:
        if not split_sums_through_dram(target):
            least = min(_split_partial_tile_bytes(target, shape, e) for e in (False, True))
            compute += q.partial_tiles * least / _local_rate(target)
        drain += min(_split_chain_cycles(target, shape, plan, e, 1) for e in (False, True))
    dram = _dram_time(target, shape, plan, q).cycles
    movement = _movement(target, shape, q, max(1, q.busiest_blocks)).cycles
    return math.floor(max(compute + latency + drain, dram, movement))


# ── bounds ─────────────────────────────────────────────────────────────────────────────────────────


def compulsory_dram_bytes(target: Target, shape: GemmShape) -> int:
    """Bytes any plan must move through DRAM: each operand tile read once (unless A is already in
    local memory) and each result tile written once (unless it stays there)."""
    a = 0 if shape.a_local else shape.mt * shape.kt * shape.a_dram_tile_bytes(target)
    b = shape.kt * shape.nt * shape.b_tile_bytes(target)
    c = 0 if shape.c_local else shape.mt * shape.nt * shape.out_dram_tile_bytes(target)
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
    format (the narrower of A's and B's, so it stays a bound); the result is in bytes, floored at
    the compulsory traffic."""
    narrowest = min(shape.operand_tile_bytes(target), shape.b_tile_bytes(target))
    elem_bytes = narrowest / target.tile_elems
    s_words = target.sites * target.local_mem_max_bytes / elem_bytes
    words = 2.0 * shape.m * shape.n * shape.k / math.sqrt(s_words) - 2.0 * s_words
    return max(compulsory_dram_bytes(target, shape), math.ceil(words * elem_bytes))


def noc_ingress_bound_cycles(target: Target, shape: GemmShape, plan: GemmPlan | None = None) -> int:
    """Cycles the busiest site needs just to receive its operands through its NoC link. With a plan:
    its A rows and B columns (``busiest_a_tiles + busiest_b_tiles``). Without one, the plan-free
    bound: spreading the M x N output evenly over every site, a site owning an a x b patch with
    ab = MN / sites receives at least K(a + b) >= 2K sqrt(MN / sites) elements."""
    tba, tbb = shape.operand_tile_bytes(target), shape.b_tile_bytes(target)
    if plan is not None:
        q = gemm_quantities(target, shape, plan)
        ingress = q.busiest_a_tiles * tba + q.busiest_b_tiles * tbb
        return math.ceil(ingress / target.link_bytes_per_cycle)
    tb = min(tba, tbb)
    elems = 2.0 * shape.k * math.sqrt(shape.m * shape.n / target.sites)
    return math.ceil(elems * tb / target.tile_elems / target.link_bytes_per_cycle)
