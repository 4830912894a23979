"""tile's plans of the stream sections: the sp.work and sp.plan of the plan chosen by
`passes/stream_plans.py` (the plan space and its pricing, shared with link, which prices the
sections of a flash-decoding split the same way), and the numbers the report prints of it."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import StringAttr

from spatial_dialect import sp
from spatial_dialect.passes.stream_plans import (
    Candidate,
    StreamChoice,
    StreamPlanner,
    stream_packing,
)
from spatial_dialect.sp import PlanKind
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
    return work, plan


def cost_of(
    program: sp.ProgramOp, target: Target, fidelity: str
) -> tuple[StreamQuantities, StreamCost]:
    """The cost model's numbers for a tiled stream section's plan, as tile priced it."""
    work, plan = program.one(sp.WorkOp), program.one(sp.PlanOp)
    assert work is not None and plan is not None
    c = Candidate(*work.block, *plan.sub_block, work.k_block)
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
