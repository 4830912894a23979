"""tile's plans of the stream sections: the sp.work and sp.plan of the plan chosen by
`passes/stream_plans.py` (the plan space and its pricing, shared with link, which prices the
sections of a flash-decoding split the same way), and the numbers the report prints of it."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import StringAttr

from spatial_dialect import sp
from spatial_dialect.passes.site_footprint import single_buffered
from spatial_dialect.passes.stream_plans import (
    Candidate,
    StreamChoice,
    StreamPlanner,
    stream_packing,
)
from spatial_dialect.sp import PlanKind, SectionKind
from spatial_dialect.targets import Target
from spatial_dialect.targets.stream_cost import (
    StreamCost,
    StreamQuantities,
    stream_cost,
    stream_roofline_cycles,
)


def stream_plan_ops(
    program: sp.ProgramOp, target: Target, choice: StreamChoice
) -> tuple[sp.WorkOp, sp.PlanOp]:
    """The section's sp.work and sp.plan for the chosen plan, over the whole mesh."""
    best, cost, runner = choice.best, choice.cost, choice.runner
    work = sp.WorkOp(
        choice.space.tensor.sym_name.data, (best.bm, best.bn), choice.space.k_tiles, best.kw
    )
    plan = sp.PlanOp(
        PlanKind.BLOCKED,
        (target.mesh_x, target.mesh_y),
        (best.sh, best.sw),
        stream_packing(target, program),
        cost.total_cycles,
        cost.bound,
        (runner[0].text(), runner[1].total_cycles) if runner else None,
    )
    plan.attributes["why"] = StringAttr(cost.why)
    if program.kind is SectionKind.GATED_DELTA:
        plan.attributes["chunk"] = StringAttr(chunk_why(program, target, choice))
    return work, plan


def chunk_why(program: sp.ProgramOp, target: Target, choice: StreamChoice) -> str:
    """The chunk size of a chunked delta rule and its reason: the chosen chunk (kw tile rows)
    with the cycles of its best plan, then every other chunk size: the cycles of its best plan,
    cheapest first, or why it has none (its C x C products over the f32 accumulator, or no
    block of it fitting a site's memory)."""
    rows = program.tile[0]
    best: dict[int, int] = {}
    for c, cost in choice.ranked:
        best.setdefault(c.kw, cost.total_cycles)
    text = [f"{kw * rows} rows: {cycles} cycles" for kw, cycles in best.items()]
    acc = target.acc_tiles("f32")
    for kw in choice.space.kws:
        if kw in best:
            continue
        if kw * kw > acc:
            text.append(f"{kw * rows} rows: a C x C block over the {acc}-tile f32 accumulator")
        else:
            text.append(
                f"{kw * rows} rows: no block fits {target.local_mem_max_bytes} bytes of a site"
            )
    chosen, *others = text
    return f"chunk {choice.best.kw * rows} rows ({chosen})" + (
        f"; runner-up {'; '.join(others)}" if others else "; the only chunk"
    )


def cost_of(
    program: sp.ProgramOp, target: Target, fidelity: str
) -> tuple[StreamQuantities, StreamCost]:
    """The cost model's numbers for a tiled stream section's plan, as tile priced it."""
    work, plan = program.one(sp.WorkOp), program.one(sp.PlanOp)
    assert work is not None and plan is not None
    c = Candidate(*work.block, *plan.sub_block, work.k_block, 1 if single_buffered(program) else 2)
    q = StreamPlanner(program, target).quantities(c)
    return q, stream_cost(target, q, fidelity)


def report_row(program: sp.ProgramOp, target: Target, fidelity: str) -> dict[str, Any]:
    """The report's numbers of a stream section (the report prints them like a GEMM's)."""
    q, cost = cost_of(program, target, fidelity)
    clock_khz = target.clock_ghz * 1000.0
    return {
        "roofline_us": stream_roofline_cycles(target, q, fidelity) / clock_khz,
        "dram_bytes": cost.dram_bytes,
        "noc_bytes": cost.noc_bytes,
    }
