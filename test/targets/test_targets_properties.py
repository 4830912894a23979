"""Properties of the cost model that must hold for every target, shape and plan."""

import dataclasses

from hypothesis import given, settings
from hypothesis import strategies as st

from spatial_dialect.targets import PRESETS
from spatial_dialect.targets.cost import (
    GemmPlan,
    GemmShape,
    OperandStream,
    Sharing,
    dram_cycles,
    gemm_cost,
    gemm_cost_floor,
    plan_fits,
    roofline_cycles,
    share_operand,
)

FIDELITIES = st.sampled_from(["lofi", "hifi2", "hifi3", "hifi4"])


@st.composite
def cases(draw):
    """A preset, a shape in a datatype it can matmul, and any plan on (a sub-grid of) its mesh."""
    t = PRESETS[draw(st.sampled_from(sorted(PRESETS)))]
    dtype = draw(st.sampled_from([d for d in ("bf16", "f32") if t.has_dtype(d)]))
    fmt = None
    if dtype == "bf16" and t.has_dtype("bfp8_b"):
        fmt = draw(st.sampled_from([None, "bfp8_b", "bfp4_b"]))
    dims = st.integers(1, 4096)
    shape = GemmShape(
        draw(dims),
        draw(dims),
        draw(dims),
        in_dtype=dtype,
        out_dtype=dtype,
        fmt=fmt,
        a_local=draw(st.booleans()),
        c_local=draw(st.booleans()),
    )
    gx, gy = draw(st.integers(1, t.mesh_x)), draw(st.integers(1, t.mesh_y))
    if draw(st.integers(0, 5)) == 0:
        plan = GemmPlan.streaming_plan(gx, gy)
    else:
        small = st.integers(1, 16)
        plan = GemmPlan(
            gx,
            gy,
            draw(small),
            draw(small),
            draw(st.integers(1, 4)),
            draw(st.integers(1, 4)),
            draw(small),
            mcast_a=draw(st.booleans()),
            mcast_b=draw(st.booleans()),
        )
    return t, shape, plan


@settings(max_examples=300, deadline=None)
@given(cases(), FIDELITIES, st.floats(1.01, 100.0), st.booleans())
def test_more_dram_bandwidth_is_never_slower(case, fidelity, factor, in_place):
    t, shape, plan = case
    slow = gemm_cost(t, shape, plan, fidelity, in_place=in_place)
    fast = gemm_cost(
        t.with_dram_gbps(t.dram_gbps * factor), shape, plan, fidelity, in_place=in_place
    )
    assert fast.total_cycles <= slow.total_cycles
    assert fast.compute_done_cycles <= slow.compute_done_cycles


@settings(max_examples=300, deadline=None)
@given(cases(), st.integers(1, 1 << 22), st.booleans())
def test_more_local_memory_never_makes_a_legal_plan_illegal(case, extra, in_place):
    t, shape, plan = case
    if plan_fits(t, shape, plan, in_place=in_place):
        bigger = t.with_local_mem(t.local_mem_max_bytes + extra)
        assert plan_fits(bigger, shape, plan, in_place=in_place)


@settings(max_examples=300, deadline=None)
@given(cases(), FIDELITIES, st.booleans())
def test_roofline_never_exceeds_a_plan(case, fidelity, in_place):
    t, shape, plan = case
    cost = gemm_cost(t, shape, plan, fidelity, in_place=in_place)
    assert roofline_cycles(t, shape, fidelity) <= cost.total_cycles


@settings(max_examples=300, deadline=None)
@given(cases(), FIDELITIES, st.booleans(), st.booleans(), st.booleans())
def test_the_floor_tile_prunes_with_is_below_every_config(case, fidelity, in_place, exact, line):
    """gemm_cost_floor(plan) bounds the plan's total whatever its sub-block and K block: tile drops
    a block and grid once its floor passes the runner-up, so this is what keeps its choice exact."""
    t, shape, plan = case
    if line and not plan.streaming:
        plan = dataclasses.replace(plan, grid_x=plan.grid_x * plan.grid_y, grid_y=1, line=True)
    floor = gemm_cost_floor(t, shape, plan, fidelity)
    for osh, osw, ibw in ((1, 1, 1), (plan.osh, plan.osw, plan.ibw), (2, 1, shape.kt)):
        if plan.streaming and (osh, osw, ibw) != (1, 1, 1):
            continue
        other = dataclasses.replace(plan, osh=osh, osw=osw, ibw=ibw)
        cost = gemm_cost(t, shape, other, fidelity, in_place=in_place, exact=exact)
        assert floor <= cost.total_cycles


STREAMS = st.builds(
    OperandStream,
    name=st.just("a"),
    bytes=st.integers(1, 1 << 26),
    consumers=st.integers(2, 256),
    broadcast_hops=st.integers(1, 64),
)


@settings(max_examples=300, deadline=None)
@given(STREAMS, st.sampled_from(sorted(PRESETS)))
def test_share_operand_reaches_both_by_dram_bandwidth_alone(stream, name):
    t = PRESETS[name]
    # Starved memory: a copy costs more than any fan-out. Abundant memory: a copy costs (rounded up)
    # one cycle, all a broadcast saves, and the fan-out (words + hops - 1 >= 1) outlasts that one
    # copy's read by words + hops - 2 and then adds a fill of at least one cycle: never less.
    assert share_operand(stream, t.with_dram_gbps(1e-6)).sharing is Sharing.BROADCAST
    assert share_operand(stream, t.with_dram_gbps(1e15)).sharing is Sharing.REPLICATED


@settings(max_examples=300, deadline=None)
@given(st.integers(210, 1 << 26), st.integers(2, 256))
def test_share_operand_reaches_both_by_hop_count_alone(nbytes, consumers):
    # Plasticine moves 64 B per fabric cycle and 44.1 B per DRAM cycle (49 GB/s at 0.9). Over one
    # hop the fan-out (ceil(B / 64) cycles) runs under the panel's own read (ceil(B / 44.1)), so a
    # broadcast exposes only the fill, one page's fan-out (the whole panel here: ceil(B / 64)), and
    # saves at least ceil(B / 44.1), which is more once B (1/44.1 - 1/64) > 1, i.e. B > 157.
    # A fan-out longer than every copy's DRAM time together never pays.
    t = PRESETS["plasticine"]
    near = share_operand(OperandStream("a", nbytes, consumers, 1), t)
    assert near.sharing is Sharing.BROADCAST
    every_copy = dram_cycles(t, nbytes * consumers)
    far = share_operand(OperandStream("a", nbytes, consumers, every_copy + 1), t)
    assert far.sharing is Sharing.REPLICATED
    assert far.copies == consumers and near.copies == 1
