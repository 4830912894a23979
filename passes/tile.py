"""tile: each section's block plan, chosen by enumerating the legal plans and ranking them with the
cost model (DESIGN.md section 5), with the prediction and the runner-up recorded on the section.

A plan is legal when
  * its output sub-block fits the accumulator: osh x osw <= the target's accumulator tiles at the
    section's accumulation precision (`common.Numerics`);
  * its footprint fits a site's configurable budget, priced by `footprint_bytes_for_plan`, THE
    function size-buffers lays out (seed 001: the planner must price exactly what the allocator
    lays out, or it picks plans the allocator refuses);
  * its K block divides K (the inner loop walks whole blocks);
  * the work maps onto the mesh: where the target multicasts, blocks go to sites by the 2-D map
    (seed 003), so there are at most as many block rows as site rows and block columns as site
    columns, and per_site_m = ceil(Mt / rows used) (a boundary site covers what is left); on a
    flat target (no multicast) the blocks are dealt out by split_work_to_sites, several to a
    site, so they all have one shape: per_site_m divides Mt and per_site_n divides Nt;
  * a register accumulator (GPU fragments, RDU registers) holds its partial sums across the K
    loop with no spill buffer, so it holds the whole block: one sub-block per block, unless
    there is one K block.
The streaming plan (tt-metal's non-reuse matmul: each site walks single output tiles over the
whole K) is always a candidate, so where blocking does not pay (M = 1 decode, skinny shapes) the
cost model picks it. Ties go to the larger sub-block, then the wider K block, then the smaller
per-site block, so the choice is deterministic.

Applying the plan fills in what link left symbolic: the work items and K block (`sp.work`), the
plan and its numbers (`sp.plan`), the output FIFO's depth (one page per sub-block where the
output accumulates in place, at least two otherwise, and one tile per accumulator lane where a
register accumulator's lanes write their own tiles), and the K-block spill where partial sums
leave the accumulator between K blocks.
"""

from __future__ import annotations

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
from spatial_dialect.sp_attrs import AccessAttr, Phase, PlanKind, SizesAttr, loop_var
from spatial_dialect.sp_errors import InvalidTarget, NoLegalPlan
from spatial_dialect.targets import FIDELITIES, Target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape
from spatial_dialect.targets.gemm import ceil_div

DEFAULT_FIDELITY = "hifi4"


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def packing(target: Target) -> str:
    """How loads and the store share the movement engines: the arrangement the cost model prices
    (two engines: B's loader shares the store's engine, tt-metal's in1 + writer pairing)."""
    engines = target.movement_engines
    return "split" if engines >= 3 else "operand_with_store" if engines == 2 else "single"


def candidates(target: Target, shape: GemmShape, numerics: Numerics) -> Iterator[GemmPlan]:
    """Every legal plan (module docstring), streaming last."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    acc_cap = target.acc_tiles(numerics.acc)
    if target.multicast == "rectangle":
        pms = sorted({ceil_div(mt, g) for g in range(1, target.mesh_y + 1)})
        pns = sorted({ceil_div(nt, g) for g in range(1, target.mesh_x + 1)})
    else:
        pms, pns = divisors(mt), divisors(nt)
    for pm in pms:
        for pn in pns:
            if target.multicast == "rectangle":
                grid = (ceil_div(nt, pn), ceil_div(mt, pm))
            else:
                grid = (target.mesh_x, target.mesh_y)
            for osh in divisors(pm):
                for osw in divisors(pn):
                    if osh * osw > acc_cap:
                        continue
                    for ibw in divisors(kt):
                        if target.acc_in_registers and kt > ibw and (osh, osw) != (pm, pn):
                            continue
                        plan = GemmPlan(grid[0], grid[1], pm, pn, osh, osw, ibw)
                        # The footprint grows with the K block: past the first that does not
                        # fit, none does.
                        if not numerics.fits(target, shape, plan):
                            break
                        yield plan
    streaming = GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)
    if numerics.fits(target, shape, streaming):
        yield streaming


def describe(plan: GemmPlan, kt: int) -> str:
    if plan.streaming:
        return f"streaming grid {plan.grid_x}x{plan.grid_y}"
    return (
        f"blocked per_site {plan.per_site_m}x{plan.per_site_n} block {plan.osh}x{plan.osw} "
        f"k_block {plan.ibw} k_blocks {plan.k_blocks(kt)}"
    )


def rank(
    target: Target, shape: GemmShape, numerics: Numerics, fidelity: str
) -> list[tuple[GemmPlan, GemmCost]]:
    """The legal plans with their costs, best first."""
    costed = [
        (p, numerics.cost(target, shape, p, fidelity)) for p in candidates(target, shape, numerics)
    ]
    costed.sort(
        key=lambda pc: (
            pc[1].total_cycles,
            -pc[0].osh * pc[0].osw,
            -pc[0].ibw,
            pc[0].per_site_m * pc[0].per_site_n,
            pc[0].osh,
            pc[0].streaming,
        )
    )
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
    target, kt = tiling.target, gemm.shape().kt
    c_name = gemm.store.tensor.root_reference.data
    block = (1, 1) if plan.streaming else (plan.per_site_m, plan.per_site_n)
    work = sp.WorkOp(c_name, block, kt, plan.ibw)
    plan_op = sp.PlanOp(
        PlanKind.STREAMING if plan.streaming else PlanKind.BLOCKED,
        (plan.grid_x, plan.grid_y),
        (plan.osh, plan.osw),
        packing(target),
        cost.total_cycles,
        cost.bound,
        (describe(runner[0], kt), runner[1].total_cycles) if runner else None,
    )
    plan_op.attributes["why"] = StringAttr(cost.why)
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


def _spill(out: sp.FifoOp, numerics: Numerics, target: Target) -> sp.IntermOp:
    """The K-block spill: one page per sub-block, in the output FIFO itself where the output is
    accumulated in place, else its own buffer at the accumulator's precision."""
    page = SizesAttr.of("sh", "sw")
    if numerics.in_place:
        fmt = out.format.data if out.format else None
        spill = sp.IntermOp(
            "spill", SizesAttr.of("subs"), page, out.elt, out.tile_bytes.data, fmt, out.res
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
