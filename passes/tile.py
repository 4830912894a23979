"""tile: each section's block plan, chosen by enumerating the legal plans and ranking them with the
cost model (DESIGN.md section 5), with the prediction and the runner-up recorded on the section.

A plan is legal when
  * its output sub-block fits the accumulator: osh x osw <= the target's accumulator tiles at the
    section's accumulation precision (`common.Numerics`);
  * its footprint fits a site's configurable budget, priced by `footprint_bytes_for_plan`, THE
    function size-buffers lays out (seed 001: the planner must price exactly what the allocator
    lays out, or it picks plans the allocator refuses);
  * its K block divides K (the inner loop walks whole blocks);
  * a register accumulator (GPU fragments, RDU registers) holds its partial sums across the K
    loop with no spill buffer, so it holds the whole block: one sub-block per block, unless
    there is one K block;
  * the work maps onto the mesh the way place deals it (`targets.gemm.deal`, the one function
    both read):
    - where the target multicasts rectangles, blocks go to sites by seed 003's 2-D map, block
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
The streaming plan (tt-metal's non-reuse matmul: each site walks single output tiles over the
whole K) is always a candidate, so where blocking does not pay the cost model picks it. Ties go to
the larger sub-block, then the wider K block, then the smaller per-site block, then the grid over
the line, multicast over unicast, so the choice is deterministic.

The search is exact and cheap: each block-and-arrangement is first priced by `gemm_cost_floor`
(what no sub-block or K block can beat), visited cheapest floor first and dropped once the floor
passes the runner-up found so far; a candidate's cycles depend on its sub-block only through the
larger side (the unpacker's reuse), so one cost evaluation serves every sub-block with that side.

Applying the plan fills in what link left symbolic: the work items and K block (`sp.work`, with
`over` the grid the blocks are dealt over when a site runs several), the plan and its numbers
(`sp.plan`, with the line and the multicast operands and what the other multicast choice would
cost), the output FIFO's depth (one page per sub-block where the output accumulates in place, at
least two otherwise, and one tile per accumulator lane where a register accumulator's lanes write
their own tiles), and the K-block spill where partial sums leave the accumulator between K blocks.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from spatial_dialect import sp
from spatial_dialect.passes.common import (
    Numerics,
    SectionGemm,
    SectionPattern,
    module_target,
    options,
    programs,
    record,
    run_sections,
)
from spatial_dialect.passes.link import ELEMENT_TYPES
from spatial_dialect.passes.plan_ops import tile_stream
from spatial_dialect.sp import AccessAttr, Phase, PlanKind, SizesAttr, loop_var
from spatial_dialect.sp.errors import InvalidTarget, NoLegalPlan
from spatial_dialect.targets import FIDELITIES, Target
from spatial_dialect.targets.cost import (
    GemmCost,
    GemmPlan,
    GemmQuantities,
    GemmShape,
    gemm_cost_floor,
)
from spatial_dialect.targets.gemm import ceil_div, deal, divisors

DEFAULT_FIDELITY = "hifi4"


def packing(target: Target) -> str:
    """How loads and the store share the movement engines: the arrangement the cost model prices
    (two engines: B's loader shares the store's engine, tt-metal's in1 + writer pairing)."""
    engines = target.movement_engines
    return "split" if engines >= 3 else "operand_with_store" if engines == 2 else "single"


def _largest_divisor(n: int, at_most: int) -> int:
    return max(d for d in range(1, min(n, at_most) + 1) if n % d == 0)


def dimension(tiles: int, sites: int) -> dict[int, list[int]]:
    """The blocks one dimension of `tiles` tiles can be cut into on `sites` sites, as
    {block: [sites it is dealt over]}: in one round (per block ceil(tiles / g), g <= sites, a
    boundary block taking what is left), or, where the block divides the tiles, in several: over
    the fewest sites that run the fewest rounds R = ceil(blocks / sites) and R + 1 each (the
    first blocks % sites ones running one round more where it does not divide), and over the
    largest divisor of the block count not above `sites` (every site as many)."""
    out: dict[int, list[int]] = {}

    def add(per: int, grid: int) -> None:
        grids = out.setdefault(per, [])
        if grid not in grids:
            grids.append(grid)

    for g in range(1, sites + 1):
        per = ceil_div(tiles, g)
        add(per, ceil_div(tiles, per))
    for per in divisors(tiles):
        blocks = tiles // per
        fewest = ceil_div(blocks, sites)
        for rounds in (fewest, fewest + 1):
            if 2 <= rounds <= blocks:
                add(per, ceil_div(blocks, rounds))
        if blocks > sites:
            add(per, _largest_divisor(blocks, sites))
    return out


FLAT_EXTRA_ROUNDS = 16
"""How many rounds beyond the fewest a flat deal may give its busiest site (over fewer sites)."""


def flat_grids(target: Target, units: int) -> list[tuple[int, int]]:
    """The rectangles of sites a flat target may deal `units` blocks over: the whole mesh; for
    each round count R from the fewest up to FLAT_EXTRA_ROUNDS more, the fewest sites that run
    at most R each, ceil(units / R) (fewer sites, fewer concurrent write-backs: what a small
    GEMM's fill and drain want); and the largest rectangle whose sites divide the blocks (every
    site as many: on a GPU, waves that line up with the blocks). A count is used where a
    rectangle of the mesh has exactly that many sites (the widest such)."""
    x, y = target.mesh_x, target.mesh_y
    shapes: dict[int, tuple[int, int]] = {}
    for gy in range(1, y + 1):
        for gx in range(1, x + 1):
            shapes.setdefault(gx * gy, (gx, gy))
            if shapes[gx * gy][0] < gx:
                shapes[gx * gy] = (gx, gy)
    grids = [(x, y)]
    fewest = ceil_div(units, x * y)
    counts = [ceil_div(units, r) for r in range(fewest, min(units, fewest + FLAT_EXTRA_ROUNDS) + 1)]
    if units > x * y:
        counts.append(max(g for g in shapes if units % g == 0))
    for g in counts:
        if g in shapes and shapes[g] not in grids:
            grids.append(shapes[g])
    return grids


def arrangements(target: Target, shape: GemmShape) -> Iterator[GemmPlan]:
    """Every block with the grid or line it is dealt over and its multicast choices, as a plan
    whose sub-block and K block are placeholders (1, 1, 1): the part the cost floor depends on."""
    mt, nt = shape.mt, shape.nt
    if target.multicast != "rectangle":
        for pm in divisors(mt):
            for pn in divisors(nt):
                for gx, gy in flat_grids(target, (mt // pm) * (nt // pn)):
                    yield GemmPlan(gx, gy, pm, pn, 1, 1, 1)
        return
    x, y = target.mesh_x, target.mesh_y
    rows, cols = dimension(mt, y), dimension(nt, x)
    for pm, row_grids in rows.items():
        for pn, col_grids in cols.items():
            for gy in row_grids:
                for gx in col_grids:
                    # Uneven rounds along one dimension only: then a site that runs fewer
                    # rounds runs a prefix of its row's (column's) blocks (sp.ItemSpace).
                    if ceil_div(mt, pm) % gy and ceil_div(nt, pn) % gx:
                        continue
                    for ma in (True, False) if gx > 1 else (True,):
                        for mb in (True, False) if gy > 1 else (True,):
                            yield GemmPlan(gx, gy, pm, pn, 1, 1, 1, mcast_a=ma, mcast_b=mb)
    # Lines longer than a mesh row: a GX x 1 line deals the block columns and shares A, a 1 x GY
    # line the block rows and shares B; every block row (column) runs on each site, so the other
    # dimension's blocks must divide it when there are several.
    for shares_a, dealt, other in ((True, nt, mt), (False, mt, nt)):
        for per, lines in dimension(dealt, x * y).items():
            for line, across, mc in itertools.product(lines, divisors(other), (True, False)):
                if line > x:
                    pm, pn = (across, per) if shares_a else (per, across)
                    gx, gy = (line, 1) if shares_a else (1, line)
                    yield GemmPlan(
                        gx,
                        gy,
                        pm,
                        pn,
                        1,
                        1,
                        1,
                        mcast_a=mc and shares_a,
                        mcast_b=mc and not shares_a,
                        line=True,
                    )


def configs(
    target: Target, shape: GemmShape, numerics: Numerics, pm: int, pn: int
) -> list[tuple[int, int, int]]:
    """The legal (osh, osw, ibw) of a pm x pn block (legality does not depend on the grid)."""
    acc_cap = target.acc_tiles(numerics.acc)
    kt = shape.kt
    out = []
    for osh in divisors(pm):
        for osw in divisors(pn):
            if osh * osw > acc_cap:
                continue
            for ibw in divisors(kt):
                if target.acc_in_registers and kt > ibw and (osh, osw) != (pm, pn):
                    continue
                # The footprint grows with the K block: past the first that does not fit, none does.
                if not numerics.fits(target, shape, GemmPlan(1, 1, pm, pn, osh, osw, ibw)):
                    break
                out.append((osh, osw, ibw))
    return out


def candidates(target: Target, shape: GemmShape, numerics: Numerics) -> Iterator[GemmPlan]:
    """Every legal plan (module docstring), streaming last."""
    legal: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    for a in arrangements(target, shape):
        block = (a.per_site_m, a.per_site_n)
        if block not in legal:
            legal[block] = configs(target, shape, numerics, *block)
        for osh, osw, ibw in legal[block]:
            yield with_config(a, osh, osw, ibw)
    streaming = GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)
    if numerics.fits(target, shape, streaming):
        yield streaming


def with_config(a: GemmPlan, osh: int, osw: int, ibw: int) -> GemmPlan:
    return GemmPlan(
        a.grid_x,
        a.grid_y,
        a.per_site_m,
        a.per_site_n,
        osh,
        osw,
        ibw,
        mcast_a=a.mcast_a,
        mcast_b=a.mcast_b,
        line=a.line,
    )


def describe(plan: GemmPlan, kt: int, target: Target | None = None) -> str:
    if plan.streaming:
        return f"streaming grid {plan.grid_x}x{plan.grid_y}"
    text = (
        f"blocked per_site {plan.per_site_m}x{plan.per_site_n} block {plan.osh}x{plan.osw} "
        f"k_block {plan.ibw} k_blocks {plan.k_blocks(kt)}"
    )
    if target is not None and target.multicast != "rectangle":
        if (plan.grid_x, plan.grid_y) != (target.mesh_x, target.mesh_y):
            text += f" grid {plan.grid_x}x{plan.grid_y}"
    elif target is not None:
        kind = "line" if plan.line else "grid"
        text += f" {kind} {plan.grid_x}x{plan.grid_y}"
        off = [n for n, m in (("a", plan.mcast_a), ("b", plan.mcast_b)) if not m]
        shared = {"a": plan.grid_x > 1, "b": plan.grid_y > 1}
        off = [n for n in off if shared[n]]
        if off:
            text += f" unicast {', '.join(off)}"
    return text


def _key(pc: tuple[GemmPlan, GemmCost]) -> tuple:
    p, c = pc
    return (
        c.total_cycles,
        -p.osh * p.osw,
        -p.ibw,
        p.per_site_m * p.per_site_n,
        p.osh,
        p.streaming,
        p.line,
        not p.mcast_a,
        not p.mcast_b,
        -p.grid_x * p.grid_y,
        p.grid_x,
    )


def rank(
    target: Target, shape: GemmShape, numerics: Numerics, fidelity: str
) -> list[tuple[GemmPlan, GemmCost]]:
    """The legal plans with their costs, best first: every candidate that can be first or second
    (the pruning, module docstring, drops only plans whose floor is above the runner-up)."""
    costed: list[tuple[GemmPlan, GemmCost]] = []
    streaming = GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)
    if numerics.fits(target, shape, streaming):
        costed.append((streaming, numerics.cost(target, shape, streaming, fidelity)))
    floors = sorted(
        (
            (gemm_cost_floor(target, shape, a, fidelity), i, a)
            for i, a in enumerate(arrangements(target, shape))
        ),
        key=lambda f: (f[0], f[1]),
    )
    legal: dict[tuple[int, int], list[tuple[int, int, int]]] = {}
    second = [c.total_cycles for _, c in costed]
    for floor, _, a in floors:
        if len(second) >= 2 and floor > second[1]:
            break
        block = (a.per_site_m, a.per_site_n)
        if block not in legal:
            legal[block] = configs(target, shape, numerics, *block)
        # The cycles depend on the sub-block only through its larger side.
        cache: dict[tuple[int, int], GemmCost] = {}
        for osh, osw, ibw in legal[block]:
            plan = with_config(a, osh, osw, ibw)
            key = (ibw, max(osh, osw))
            if key not in cache:
                cache[key] = numerics.cost(target, shape, plan, fidelity)
            costed.append((plan, cache[key]))
            second = sorted([*second, cache[key].total_cycles])[:2]
    costed.sort(key=_key)
    return costed


def fidelity_matters(target: Target, dtype: str) -> bool:
    return len({target.matmul_tile_cycles(dtype, f) for f in FIDELITIES}) > 1


@dataclass
class TileSection(SectionPattern):
    target: Target
    fidelity: str
    pass_name = "tile"
    takes_phase = Phase.LINKED

    def rewrite(self, program: sp.ProgramOp, rewriter: PatternRewriter) -> None:
        if program.one(sp.MatmulTilesOp) is None:
            # a section that is not a GEMM: its plan space is plan_ops'
            tile_stream(program, self.target, self.fidelity, rewriter)
            return
        gemm = SectionGemm.of(program)
        shape = gemm.shape()
        numerics = Numerics.of(self.target, shape.in_dtype, shape.out_dtype)
        ranked = rank(self.target, shape, numerics, self.fidelity)
        if not ranked:
            raise NoLegalPlan(
                f"section @{program.sym_name.data}: no plan of a {shape.m}x{shape.k}x{shape.n} GEMM fits "
                f"{self.target.name}'s {self.target.local_mem_max_bytes} bytes of local memory"
            )
        (plan, cost), runner = ranked[0], ranked[1] if len(ranked) > 1 else None
        apply_plan(program, gemm, plan, cost, runner, self, numerics, rewriter)


def apply_plan(
    program: sp.ProgramOp,
    gemm: SectionGemm,
    plan: GemmPlan,
    cost: GemmCost,
    runner: tuple[GemmPlan, GemmCost] | None,
    tiling: TileSection,
    numerics: Numerics,
    rewriter: PatternRewriter,
) -> None:
    target, shape = tiling.target, gemm.shape()
    kt = shape.kt
    c_name = gemm.store.tensor.root_reference.data
    block = (1, 1) if plan.streaming else (plan.per_site_m, plan.per_site_n)
    dealt = deal(target, shape, plan)
    # Several blocks a site under the 2-D map (or a line): the items are numbered site by site.
    over = None
    if dealt.kind != "flat" and dealt.per_site > 1:
        over = (dealt.grid_x, dealt.grid_y)
    work = sp.WorkOp(c_name, block, kt, plan.ibw, over)
    q = cost.quantities
    grid = (plan.grid_x, plan.grid_y) if dealt.kind == "flat" else (dealt.grid_x, dealt.grid_y)
    plan_op = sp.PlanOp(
        PlanKind.STREAMING if plan.streaming else PlanKind.BLOCKED,
        grid,
        (plan.osh, plan.osw),
        packing(target),
        cost.total_cycles,
        cost.bound,
        (describe(runner[0], kt, target), runner[1].total_cycles) if runner else None,
        line=plan.line,
        multicast=[n for n, m in (("a", q.mcast_a), ("b", q.mcast_b)) if m],
    )
    plan_op.attributes["why"] = StringAttr(cost.why)
    if (why := multicast_why(plan, q, shape, tiling, numerics)) is not None:
        plan_op.attributes["multicast_why"] = StringAttr(why)
    rewriter.insert(
        [work, plan_op],
        InsertPoint.before(
            next(op for op in program.body.block.ops if not isinstance(op, sp.TensorOp))
        ),
    )
    out = sp.buffer_of(gemm.matmul.out)
    assert isinstance(out, sp.FifoOp)
    spill = None
    if not plan.streaming:
        lanes = target.acc_in_registers and target.acc_lane_grid(plan.osh, plan.osw) is not None
        if lanes:
            # Each accumulator lane writes its own tiles through a one-tile slot (seed 001).
            out.properties["depth"] = SizesAttr.of(target.acc_lanes)
            out.properties["page"] = SizesAttr.of(1, 1)
            r0, c0, ti, tj, u, v = (loop_var(n) for n in ("r0", "c0", "ti", "tj", "u", "v"))
            gemm.store.properties["access"] = AccessAttr.of(r0 + ti + u, c0 + tj + v, 1, 1)
        elif numerics.in_place:
            out.properties["depth"] = SizesAttr.of("subs")
        else:
            out.properties["depth"] = SizesAttr.of(max(plan.sub_blocks, 2))
        if plan.k_blocks(kt) > 1 and not target.acc_in_registers:
            spill = _spill(out, numerics, target)
            rewriter.insert(spill, InsertPoint.after(out))
    m = gemm.matmul
    fidelity = tiling.fidelity if fidelity_matters(target, gemm.shape().in_dtype) else None
    rewriter.replace(
        m, sp.MatmulTilesOp(m.in0, m.in1, m.out, m.acc, spill.res if spill else None, fidelity)
    )
    program.set_phase(Phase.TILED)


def multicast_why(
    plan: GemmPlan, q: GemmQuantities, shape: GemmShape, tiling: TileSection, numerics: Numerics
) -> str | None:
    """Each operand that several sites share, multicast or read by each: the plan's choice and the
    cycles of the same plan with the other choice for that operand."""
    target = tiling.target
    if target.multicast != "rectangle" or plan.streaming:
        return None
    parts = []
    for name, on, sharers in (
        ("A", q.mcast_a, q.grid_x_used if not (plan.line and plan.grid_x == 1) else 1),
        ("B", q.mcast_b, q.grid_y_used if not (plan.line and plan.grid_y == 1) else 1),
    ):
        if sharers < 2:
            continue
        flag = "mcast_a" if name == "A" else "mcast_b"
        other = dataclasses.replace(plan, **{flag: not on})
        cycles = numerics.cost(target, shape, other, tiling.fidelity).total_cycles
        where = (
            f"the line of {sharers}"
            if plan.line
            else (f"rows of {sharers}" if name == "A" else f"columns of {sharers}")
        )
        if on:
            parts.append(f"{name} multicast over {where} (unicast: {cycles} cycles)")
        else:
            parts.append(f"{name} unicast, shared by {where} (multicast: {cycles} cycles)")
    return "; ".join(parts) or None


def _spill(out: sp.FifoOp, numerics: Numerics, target: Target) -> sp.IntermOp:
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


@dataclass(frozen=True)
class TilePass(ModulePass):
    """`tile{fidelity=hifi4}`: choose and apply every linked section's block plan."""

    name = "tile"
    fidelity: str | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.name)
        fidelity = self.fidelity or options(op).get("fidelity", DEFAULT_FIDELITY)
        if fidelity not in FIDELITIES:
            raise InvalidTarget(f"fidelity {fidelity}: use one of {', '.join(FIDELITIES)}")
        if any(p.phase_value == Phase.LINKED for p in programs(op)):
            record(op, fidelity=fidelity)
        run_sections(op, TileSection(target, fidelity))
