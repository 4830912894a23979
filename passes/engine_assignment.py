"""Which engine and NoC runs each stage of a section.

Tile's packing (`sp.plan`'s `packing`) promises how a section's data movement is spread over the
movement engines, and the cost model priced that promise; place carries it out through this one
function (`engines`), which reads only what tile recorded (the packing, the section's kind and,
for a GEMM, its B operand through `GemmView`), so the rule is written once, beside no pass.
"""

from __future__ import annotations

from spatial_dialect import sp
from spatial_dialect.passes.gemm_view import GemmView
from spatial_dialect.sp import COMPUTE_STAGES, EngineAttr, SectionKind
from spatial_dialect.sp.errors import TooManyEngines
from spatial_dialect.targets import Target


def partner_loads(program: sp.ProgramOp) -> set[sp.LoadOp]:
    """The loads the plan's packing moves off the loads' engine: a GEMM's B (tt-metal's in1,
    which pairs with the writer or has its own engine), a flash attention's queries and
    position (they join the store's engine, so the engine streaming K and V never waits)."""
    if program.kind is SectionKind.GEMM:
        return {GemmView.of(program).load_b}
    if program.kind is SectionKind.ATTENTION:
        attention = program.one(sp.AttentionOp)
        assert attention is not None
        joined = {v for v in (attention.q, attention.pos) if v is not None}
        return {ld for ld in program.ops_of(sp.LoadOp) if ld.dst in joined}
    return set()


def engines(target: Target, program: sp.ProgramOp) -> dict[sp.StageOp, EngineAttr]:
    """Each stage's engine and NoC: a compute stage on the compute engine; the store (and a
    scatter) on movement engine 0 with the writer NoC; loads (and a gather) on movement engine 1
    with the receiver NoC, except the packing's partner loads (`partner_loads`): on their own
    engine 2 under `split`, on the store's under `operand_with_store`. With one movement engine
    everything moves on it (`single`); a section that moves data on a target with none is
    refused (TooManyEngines)."""
    plan = program.one(sp.PlanOp)
    assert plan is not None
    n = target.movement_engines
    store_engine = EngineAttr.movement(0, target.writer_noc)
    load_engine = EngineAttr.movement(1, target.receiver_noc) if n >= 2 else store_engine
    partner_engine = {
        "split": EngineAttr.movement(2, target.receiver_noc),
        "operand_with_store": store_engine,
        "single": store_engine,
    }[plan.packing.data]
    partners = partner_loads(program)
    out: dict[sp.StageOp, EngineAttr] = {}
    for s in program.stages():
        if isinstance(s, (sp.MatmulTilesOp, *COMPUTE_STAGES)):
            out[s] = EngineAttr.compute()
        elif n == 0:
            raise TooManyEngines(s.stage_name(), "movement engine 0", 0)
        elif isinstance(s, sp.StoreOp | sp.ScatterOp):
            out[s] = store_engine
        else:
            out[s] = partner_engine if s in partners else load_engine
    return out
