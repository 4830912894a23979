"""tile: each section's block plan, chosen by enumerating the legal plans and ranking them with the
cost model (docs/passes.md#tile), with the prediction and the runner-up recorded on the section.

A plan is legal when
  * its output sub-block fits the accumulator: osh x osw <= the target's accumulator tiles at the
    section's accumulation precision (`numerics.Numerics`);
  * its footprint fits a site's configurable budget, priced by `footprint_bytes_for_plan`, THE
    function size-buffers lays out (docs/passes.md#tile-one-footprint-function: the planner must price exactly what the allocator
    lays out, or it picks plans the allocator refuses);
  * its K block divides K (the inner loop walks whole blocks);
  * a register accumulator (GPU fragments, RDU registers) holds its partial sums across the K
    loop with no spill buffer, so it holds the whole block: one sub-block per block, unless
    there is one K block;
  * the work maps onto the mesh the way place deals it (`targets.gemm.deal`, the one function
    both read):
    - where the target multicasts rectangles, blocks go to sites by the 2-D map (docs/passes.md#tile-one-dealing-function), block
      (r, c) on site (c % GX, r % GY), several blocks to a site in rounds. Along each dimension
      the blocks either take one round (at most as many block rows as site rows: per_site_m =
      ceil(Mt / g) for g <= mesh rows, and a boundary block covers what is left) or several:
      then the block divides the tiles, so all of a site's blocks have one shape (a site range
      has one block), and the grid is the fewest sites running the fewest rounds (or one more),
      or the largest divisor of the block count not above the mesh (`dimension`). Where the
      rounds do not divide evenly the first sites run one more, along one dimension only: a site
      with fewer rounds then walks a prefix of the blocks of A (B) its row's (column's) sender
      multicasts (sp.ItemSpace, sp.group);
    - on such a mesh, also a LINE of L sites folded onto it row by row (L > mesh columns; the
      line's L is chosen like a dimension's grid, over the mesh's X x Y sites): tt-metal's 1-D
      multicast matmul. A line shares A (the block columns dealt over it, every block row on each
      site, in rounds where the block divides M) or B (the block rows dealt, every block column on
      each site);
    - each operand that a row, a column or the line of sites shares is multicast or read by every
      site for itself (`mcast_a`, `mcast_b`): both are candidates wherever the sharing sites are
      more than one;
    - on a flat target (no multicast) the blocks are dealt out by split_work_to_sites, several to
      a site in one range shape, so they all have one shape: per_site_m divides Mt and per_site_n
      divides Nt; over the whole mesh or a rectangle of it: the fewest sites for a few round
      counts, or the largest whose sites divide the blocks (`flat_grids`).
On such a mesh every grid plan is also priced with K split into S slices (split-K, S up to the
`split-k` option's bound, dividing the K tiles): the slices run the plan on S copies of its grid
stacked along x or y, each over K / S tiles, and pass each block's partial sums slice to slice
(docs/passes.md#tile-split-k-where-the-grid-does-not-fill); a GPU's flat plans are priced split
too, their sums added through DRAM by the last item to arrive (split_sums_through_dram); the
plan records `split_why`, its
cycles against the best plan of the other kind. The streaming plan (tt-metal's non-reuse matmul:
each site walks single output tiles over the whole K) is always a candidate, so where blocking does not pay the cost model picks it. Ties go to
the larger sub-block, then the wider K block, then the smaller per-site block, then the grid over
the line, multicast over unicast, so the choice is deterministic.

The search is exact and cheap: each block-and-arrangement is first priced by `gemm_cost_floor`
(what no sub-block or K block can beat), visited cheapest floor first and dropped once the floor
passes the runner-up found so far; a candidate's cycles depend on its sub-block only through the
larger side (the unpacker's reuse) and its tiles (the write-back's page and split-K's hand-over),
so one cost evaluation serves every sub-block with that side and area.

Applying the plan fills in what link left symbolic: the work items and K block (`sp.work`, with
`over` the grid the blocks are dealt over when a site runs several, `split` the K slices), the
plan and its numbers
(`sp.plan`, with the line and the multicast operands and what the other multicast choice would
cost), the output FIFO's depth (one page per sub-block where the output accumulates in place, at
least two otherwise, and one tile per accumulator lane where a register accumulator's lanes write
their own tiles), the K-block spill where partial sums leave the accumulator between K blocks, and
split-K's partials FIFO.

Source: the GEMM plan space and its ranking are tile/gemm.py, the stream sections' (every other
kind: maps, row reductions, rope, attention, arg-max, gather, scatter) passes/stream_plans.py
(shared with link) and tile/stream.py; this module
walks the linked sections, reads each one's kind (recorded by link) and builds its plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spatial_dialect import sp
from spatial_dialect.passes.gemm_view import GemmView
from spatial_dialect.passes.numerics import ACCUMULATE, ELEMENT_TYPES, Numerics
from spatial_dialect.passes.phases import refusals_at, sections_taken
from spatial_dialect.passes.site_footprint import dram_fifos
from spatial_dialect.passes.stream_plans import StreamRanked, choose_stream_plan
from spatial_dialect.passes.target_choice import module_target, options, record
from spatial_dialect.passes.tile.gemm import (
    MAX_K_SLICES,
    Ranking,
    describe,
    fidelity_matters,
    gemm_packing,
    multicast_why,
    ranking,
)
from spatial_dialect.passes.tile.stream import stream_plan_ops
from spatial_dialect.sp import AccessAttr, Phase, PlanKind, SizesAttr, loop_var
from spatial_dialect.sp.errors import InvalidTarget, NoLegalPlan
from spatial_dialect.targets import DEFAULT_FIDELITY, FIDELITIES, Target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape, split_sums_through_dram
from spatial_dialect.targets.gemm import deal

# ── GEMM sections: choose, then build ─────────────────────────────────────────────────────────


@dataclass(frozen=True)
class GemmChoice:
    """The best plan of a GEMM section with its cost and runner-up, and what it was ranked for."""

    view: GemmView
    shape: GemmShape
    numerics: Numerics
    plan: GemmPlan
    cost: GemmCost
    runner: tuple[GemmPlan, GemmCost] | None
    # The other kind of plan (split-K where the plan is unsplit, and the reverse), where the
    # target has both: the least cycles any of them takes, and the plan that takes them when it
    # was priced (else the pruning's floor is the bound). What `split_why` records.
    other_least: int | None = None
    other_best: tuple[GemmPlan, GemmCost] | None = None


Ranked = Ranking


def choose_gemm_plan(
    program: sp.ProgramOp,
    target: Target,
    fidelity: str,
    ranked_before: dict[tuple[GemmShape, Numerics], Ranked] | None = None,
    accumulate: str = "f32",
    max_split: int = MAX_K_SLICES,
) -> GemmChoice:
    """The cheapest legal plan (module docstring) at the `accumulate` mode's numerics;
    NoLegalPlan when none fits a site.

    A plan is a function of the target, the fidelity and the GEMM's shape and numerics only, so
    a pass run ranks each distinct GEMM once (`ranked_before`): a model's 32 identical layers
    cost one ranking per projection, not 32."""
    view = GemmView.of(program)
    shape = view.shape()
    numerics = Numerics.of(target, shape.in_dtype, shape.out_dtype, accumulate)
    memo = {} if ranked_before is None else ranked_before
    if (shape, numerics) not in memo:
        memo[shape, numerics] = ranking(target, shape, numerics, fidelity, max_split)
    ranked, least = memo[shape, numerics].plans, memo[shape, numerics].least
    if not ranked:
        raise NoLegalPlan(
            f"section @{program.sym_name.data}: no plan of a {shape.m}x{shape.k}x{shape.n} GEMM fits "
            f"{target.name}'s {target.local_mem_max_bytes} bytes of local memory"
        )
    (plan, cost), runner = ranked[0], ranked[1] if len(ranked) > 1 else None
    other = plan.split_k == 1
    best = next(((p, c) for p, c in ranked if (p.split_k > 1) == other), None)
    if best is not None and best[1].total_cycles != least.get(other):
        best = None  # a dropped plan of that kind may be cheaper: only its floor is known
    return GemmChoice(view, shape, numerics, plan, cost, runner, least.get(other), best)


@dataclass(frozen=True)
class GemmPlanOps:
    """The section's work items and plan, as sp ops."""

    work: sp.WorkOp
    plan: sp.PlanOp


def gemm_plan_ops(choice: GemmChoice, target: Target, fidelity: str) -> GemmPlanOps:
    """sp.work (with `over` where a site runs several blocks under the 2-D map or a line: the
    items are numbered site by site) and sp.plan with its numbers and reasons."""
    plan, cost, runner, kt = choice.plan, choice.cost, choice.runner, choice.shape.kt
    block = (1, 1) if plan.streaming else (plan.per_site_m, plan.per_site_n)
    dealt = deal(target, choice.shape, plan)
    over = None
    if dealt.kind != "flat" and dealt.per_site > 1:
        over = (dealt.grid_x, dealt.grid_y)
    c_name = choice.view.store.tensor.root_reference.data
    split = (plan.split_k, plan.split_axis) if plan.split_k > 1 else None
    work = sp.WorkOp(c_name, block, kt, plan.ibw, over, split)
    q = cost.quantities
    grid = (plan.grid_x, plan.grid_y) if dealt.kind == "flat" else (dealt.grid_x, dealt.grid_y)
    plan_op = sp.PlanOp(
        PlanKind.STREAMING if plan.streaming else PlanKind.BLOCKED,
        grid,
        (plan.osh, plan.osw),
        gemm_packing(target),
        cost.total_cycles,
        cost.bound,
        (describe(runner[0], kt, target), runner[1].total_cycles) if runner else None,
        line=plan.line,
        multicast=[n for n, m in (("a", q.mcast_a), ("b", q.mcast_b)) if m],
    )
    plan_op.attributes["why"] = StringAttr(cost.why)
    plan_op.attributes["accumulate"] = StringAttr(accumulation_why(target, choice))
    why = multicast_why(target, fidelity, plan, q, choice.shape, choice.numerics)
    if why is not None:
        plan_op.attributes["multicast_why"] = StringAttr(why)
    if choice.other_least is not None:
        plan_op.attributes["split_why"] = StringAttr(split_why(choice, target))
    return GemmPlanOps(work, plan_op)


def accumulation_why(target: Target, choice: GemmChoice) -> str:
    """The accumulator's precision and why (docs/passes.md#tile-f32-accumulation-by-contract):
    what it holds and where the partial sums go between K blocks and, under split-K, between
    slices (at the accumulator's precision, like the partials FIFO)."""
    numerics, shape = choice.numerics, choice.shape
    acc = numerics.acc
    if acc == "i32":
        why = "integer products accumulate exactly"
    elif numerics.narrow:
        why = "the 16-bit accumulator (accumulate=bf16), rounded after every tile-matmul"
    elif target.acc_in_registers:
        why = "the tg contract; a register accumulator"
    else:
        why = "the tg contract"
    holds = f"{target.acc_tiles(acc)} tiles a sub-block"
    if choice.plan.streaming or choice.plan.k_blocks(shape.kt) == 1 or target.acc_in_registers:
        partials = "partial sums stay in the accumulator"
    elif numerics.in_place:
        partials = f"partial sums in the {shape.out_dtype} output"
    else:
        partials = f"{acc} partial sums in local memory"
    if choice.plan.split_k > 1 and split_sums_through_dram(target):
        partials += f"; split-K adds {acc} partial sums through DRAM"
    elif choice.plan.split_k > 1:
        partials += f"; split-K passes {acc} partial sums slice to slice"
    return f"{acc}: {why}; {holds}; {partials}"


def split_why(choice: GemmChoice, target: Target) -> str:
    """The split-K decision with its numbers: the chosen plan's K slices and cycles against the
    best plan of the other kind, or where the pruning never priced it, the least any of them can
    take (docs/passes.md#tile-split-k-where-the-grid-does-not-fill)."""
    plan, cycles = choice.plan, choice.cost.total_cycles
    if plan.split_k > 1:
        head, other = f"K split {plan.split_k} along {plan.split_axis} ({cycles} cycles)", "unsplit"
    else:
        head, other = f"K not split ({cycles} cycles)", "split-K"
    if choice.other_best is not None:
        best, best_cost = choice.other_best
        text = f"{describe(best, choice.shape.kt, target)} ({best_cost.total_cycles} cycles)"
        return f"{head}; best {other}: {text}"
    return f"{head}; every {other} plan takes at least {choice.other_least} cycles"


@dataclass(frozen=True)
class OutputBuffering:
    """How the output FIFO is buffered under the plan: its depth and page, the store's access
    pattern, and the K-block spill (None where partial sums never leave the accumulator)."""

    depth: SizesAttr
    page: SizesAttr
    store_access: AccessAttr
    spill: bool


def output_buffering(choice: GemmChoice, target: Target, out: sp.FifoOp) -> OutputBuffering:
    """One page per sub-block where the output accumulates in place, at least two otherwise, and
    one tile per accumulator lane where a register accumulator's lanes write their own tiles."""
    plan, numerics = choice.plan, choice.numerics
    access = choice.view.store.access
    if plan.streaming:
        return OutputBuffering(out.depth, out.page, access, False)
    spill = plan.k_blocks(choice.shape.kt) > 1 and not target.acc_in_registers
    if target.acc_in_registers and target.acc_lane_grid(plan.osh, plan.osw) is not None:
        # Each accumulator lane writes its own tiles through a one-tile slot (docs/passes.md#tile-a-register-accumulator-holds-its-whole-block).
        r0, c0, ti, tj, u, v = (loop_var(n) for n in ("r0", "c0", "ti", "tj", "u", "v"))
        lane_access = AccessAttr.of(r0 + ti + u, c0 + tj + v, 1, 1)
        return OutputBuffering(
            SizesAttr.of(target.acc_lanes), SizesAttr.of(1, 1), lane_access, spill
        )
    depth = SizesAttr.of("subs") if numerics.in_place else SizesAttr.of(max(plan.sub_blocks, 2))
    return OutputBuffering(depth, out.page, access, spill)


def rebuilt_fifo(out: sp.FifoOp, depth: SizesAttr, page: SizesAttr) -> sp.FifoOp:
    """The output FIFO with the plan's depth and page (everything else as link made it)."""
    fifo = sp.FifoOp(
        out.label.data,
        depth,
        page,
        out.elt,
        out.tile_bytes,
        out.format.data if out.format else None,
    )
    fifo.attributes.update(out.attributes)
    fifo.res.name_hint = out.res.name_hint
    return fifo


def spill_buffer(out: sp.FifoOp, numerics: Numerics, target: Target) -> sp.IntermOp:
    """The K-block spill: one page per sub-block, in the output FIFO itself where the output is
    accumulated in place, else its own buffer at the accumulator's precision."""
    page = SizesAttr.of("sh", "sw")
    if numerics.in_place:
        fmt = out.format.data if out.format else None
        spill = sp.IntermOp(
            "spill", SizesAttr.of("subs"), page, out.elt, out.tile_bytes, fmt, out.res
        )
    else:
        spill = sp.IntermOp(
            "spill",
            SizesAttr.of("subs"),
            page,
            ELEMENT_TYPES[numerics.acc],
            target.tile_bytes(numerics.acc),
        )
    spill.res.name_hint = "spill"
    return spill


def apply_gemm_plan(
    program: sp.ProgramOp, choice: GemmChoice, target: Target, fidelity: str, rewriter: Rewriter
) -> None:
    """Insert the work and the plan, rebuild the output FIFO and the store with the plan's
    buffering, add the spill, and give the matmul its spill and fidelity."""
    ops = gemm_plan_ops(choice, target, fidelity)
    first = next(op for op in program.body.block.ops if not isinstance(op, sp.TensorOp))
    rewriter.insert_op([ops.work, ops.plan], InsertPoint.before(first))
    m, store = choice.view.matmul, choice.view.store
    out = sp.buffer_of(m.out)
    assert isinstance(out, sp.FifoOp)
    buffering = output_buffering(choice, target, out)
    if (buffering.depth, buffering.page) != (out.depth, out.page):
        fifo = rebuilt_fifo(out, buffering.depth, buffering.page)
        rewriter.replace_op(out, fifo)
        out = fifo
    if buffering.store_access != store.access:
        rewriter.replace_op(
            store, sp.StoreOp(store.src, store.tensor.root_reference.data, buffering.store_access)
        )
    spill = spill_buffer(out, choice.numerics, target) if buffering.spill else None
    if spill is not None:
        rewriter.insert_op(spill, InsertPoint.after(out))
    acc = sp.buffer_of(m.acc)
    assert isinstance(acc, sp.AccOp)
    if choice.numerics.narrow:
        # link writes the contract's 32-bit accumulator; accumulate=bf16 narrows it here. Only
        # narrows: the int8 dot of Q8_0 blocks, ranked as integer products (i32), keeps link's
        # f32 (the blocks' scaled i32 sums added in f32, as ggml does).
        narrowed = sp.AccOp(acc.label.data, acc.page, ELEMENT_TYPES[choice.numerics.acc])
        narrowed.res.name_hint = acc.res.name_hint
        rewriter.replace_op(acc, narrowed)
    partials = partials_fifo(choice.numerics, target) if choice.plan.split_k > 1 else None
    if partials is not None:
        rewriter.insert_op(partials, InsertPoint.after(spill or out))
    kept = fidelity if fidelity_matters(target, choice.shape.in_dtype) else None
    rewriter.replace_op(
        m,
        sp.MatmulTilesOp(
            m.in0,
            m.in1,
            m.out,
            m.acc,
            spill.res if spill else None,
            kept,
            dequantize=m.dequantize,
            partials=partials.res if partials else None,
            transpose_b=m.transposes_b,
        ),
    )


def partials_fifo(numerics: Numerics, target: Target) -> sp.FifoOp:
    """Split-K's partial sums at the accumulator's precision, two pages per sub-block (the
    footprint function's `partials`): the `subs` pages received from the slice before and the
    `subs` pages sent to the slice after. A middle slice does both, and the two halves cannot be
    one ring: the received pages are filled by the movement kernel, the sent ones by the compute
    (one producer per ring), so the IR prices and lays out both halves here."""
    fifo = sp.FifoOp(
        "partials",
        sp.partials_depth(),
        SizesAttr.of("sh", "sw"),
        ELEMENT_TYPES[numerics.acc],
        target.tile_bytes(numerics.acc),
    )
    fifo.res.name_hint = "partials"
    return fifo


@dataclass
class RankedBefore:
    """The rankings a pass run has made: GEMMs by shape and numerics, stream sections by
    `StreamPlanner.key`."""

    gemms: dict[tuple[GemmShape, Numerics], Ranked] = field(default_factory=dict)
    streams: dict[tuple[object, ...], StreamRanked] = field(default_factory=dict)


# ── The pass ──────────────────────────────────────────────────────────────────────────────────


def tile_section(
    program: sp.ProgramOp,
    target: Target,
    fidelity: str,
    rewriter: Rewriter,
    ranked_before: RankedBefore | None = None,
    accumulate: str = "f32",
    max_split: int = MAX_K_SLICES,
) -> None:
    """Choose and apply one linked section's plan, by the kind link recorded (`ranked_before`:
    the rankings of this pass run so far, so each distinct section is ranked once)."""
    memo = ranked_before or RankedBefore()
    if program.kind.is_gemm:
        choice = choose_gemm_plan(program, target, fidelity, memo.gemms, accumulate, max_split)
        apply_gemm_plan(program, choice, target, fidelity, rewriter)
    else:
        choice = choose_stream_plan(program, target, fidelity, memo.streams)
        work, plan = stream_plan_ops(program, target, choice)
        first = next(op for op in program.body.block.ops if not isinstance(op, sp.TensorOp))
        rewriter.insert_op([work, plan], InsertPoint.before(first))
        if choice.best.depth == 1:  # single-buffered: each FIFO to or from DRAM holds one page
            for fifo in dram_fifos(program):
                rewriter.replace_op(fifo, rebuilt_fifo(fifo, SizesAttr.of(1), fifo.page))
    program.set_phase(Phase.TILED)


@dataclass(frozen=True)
class TilePass(ModulePass):
    """`tile{fidelity=hifi4 accumulate=f32 split-k=4}`: choose and apply every linked section's
    block plan (a walk over the linked sections: each plan is a whole-section decision).
    `accumulate=bf16` plans GEMMs for a 16-bit accumulator where the chip has one (the fast mode,
    docs/passes.md#tile-f32-accumulation-by-contract). `split-k` is the most K slices a GEMM plan
    may use (1: K is never split)."""

    name = "tile"
    fidelity: str | None = None
    accumulate: str | None = None
    split_k: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.name)
        fidelity = self.fidelity or options(op).get("fidelity", DEFAULT_FIDELITY)
        if fidelity not in FIDELITIES:
            raise InvalidTarget(f"fidelity {fidelity}: use one of {', '.join(FIDELITIES)}")
        accumulate = self.accumulate or options(op).get("accumulate", ACCUMULATE[0])
        if accumulate not in ACCUMULATE:
            raise InvalidTarget(f"accumulate {accumulate}: use one of {', '.join(ACCUMULATE)}")
        recorded = options(op).get("split_k")
        max_split = self.split_k if self.split_k is not None else int(recorded or MAX_K_SLICES)
        if max_split < 1:
            raise InvalidTarget(
                f"split-k {max_split}: the most K slices is at least 1 (1: no split)"
            )
        sections = sections_taken(op, self.name, Phase.LINKED)
        if sections:
            record(op, fidelity=fidelity, accumulate=accumulate)
            if self.split_k is not None:
                record(op, split_k=str(self.split_k))
        rewriter = Rewriter()
        ranked_before = RankedBefore()
        for program in sections:
            with refusals_at(program):
                tile_section(
                    program, target, fidelity, rewriter, ranked_before, accumulate, max_split
                )
