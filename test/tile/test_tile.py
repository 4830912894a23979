"""tile's choice against an enumeration written independently of it, and the numbers it records
against the cost model's functions of the plan it recorded."""

from __future__ import annotations

import itertools

import pytest

from spatial_dialect import sp
from spatial_dialect.passes.common import (
    Numerics,
    SectionGemm,
    gemm_plan,
    module_target,
    section_cost,
)
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.passes.size_buffers import operand_fifos, site_bytes
from spatial_dialect.targets.cost import GemmPlan, footprint_bytes_for_plan, gemm_cost, plan_fits
from spatial_dialect.targets.gemm import ceil_div

SHAPES = [(96, 200, 160), (1, 256, 512), (32, 32, 1024), (256, 512, 320), (320, 64, 64)]
TARGETS = ["wormhole_n150", "blackhole_p150", "rtx3060", "plasticine"]


def gemm_source(m: int, k: int, n: int, dtype: str) -> str:
    a, b, c = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    return (
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n}}\n"
    )


def compiled(target: str, shape: tuple[int, int, int]):
    dtype = "f32" if target == "plasticine" else "bf16"
    module = compile_module(gemm_source(*shape, dtype), target=target)
    program = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return module, program


def every_plan(target, shape, numerics):
    """All plans of the rules in tile's docstring, by brute force: any per-site block whose block
    grid fits the mesh (multicast) or that divides the tiles (flat), any sub-block dividing it
    within the accumulator, any K block dividing K; and streaming."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    rect = target.multicast == "rectangle"
    acc = target.acc_tiles(numerics.acc)
    for pm, pn in itertools.product(range(1, mt + 1), range(1, nt + 1)):
        bm, bn = ceil_div(mt, pm), ceil_div(nt, pn)
        if rect and (bm > target.mesh_y or bn > target.mesh_x):
            continue
        if not rect and (mt % pm or nt % pn):
            continue
        grid = (bn, bm) if rect else (target.mesh_x, target.mesh_y)
        for osh, osw, ibw in itertools.product(
            range(1, pm + 1), range(1, pn + 1), range(1, kt + 1)
        ):
            if pm % osh or pn % osw or kt % ibw or osh * osw > acc:
                continue
            if target.acc_in_registers and ibw < kt and (osh, osw) != (pm, pn):
                continue
            plan = GemmPlan(*grid, pm, pn, osh, osw, ibw)
            if plan_fits(target, shape, plan, in_place=numerics.in_place, exact=numerics.exact):
                yield plan
    yield GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_no_legal_plan_is_cheaper(target: str, shape: tuple[int, int, int]) -> None:
    module, program = compiled(target, shape)
    t = module_target(module, "test")
    gemm_shape = SectionGemm.of(program).shape()
    numerics = Numerics.of(t, gemm_shape.in_dtype, gemm_shape.out_dtype)
    best = min(
        gemm_cost(
            t, gemm_shape, p, "hifi4", in_place=numerics.in_place, exact=numerics.exact
        ).total_cycles
        for p in every_plan(t, gemm_shape, numerics)
    )
    plan = program.one(sp.PlanOp)
    assert plan is not None
    assert plan.predicted_cycles.data == best
    assert plan.runner_up_cycles is None or plan.runner_up_cycles.data >= best


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_recorded_numbers_are_the_recorded_plans(target: str, shape: tuple[int, int, int]) -> None:
    module, program = compiled(target, shape)
    t = module_target(module, "test")
    plan = program.one(sp.PlanOp)
    assert plan is not None
    cost = section_cost(program, t, "hifi4")
    assert (plan.predicted_cycles.data, plan.bound.data) == (cost.total_cycles, cost.bound)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_allocator_lays_out_what_the_planner_priced(
    target: str, shape: tuple[int, int, int]
) -> None:
    """Seed 001: the footprint tile filters with is, byte for byte, what size-buffers lays out on a
    site covering the nominal block (operand FIFOs at the legality depth of 2)."""
    module, program = compiled(target, shape)
    t = module_target(module, "test")
    gemm_shape = SectionGemm.of(program).shape()
    numerics = Numerics.of(t, gemm_shape.in_dtype, gemm_shape.out_dtype)
    plan = gemm_plan(program)
    work = program.one(sp.WorkOp)
    assert work is not None
    nominal = [
        r
        for r in program.ops_of(sp.SitesOp)
        if r.block == (work.block_m.data, work.block_n.data) and r.sub_block == (plan.osh, plan.osw)
    ]
    assert nominal, "the nominal block runs somewhere"
    at_two = {f: 2 for f in operand_fifos(program)}
    priced = footprint_bytes_for_plan(
        t, gemm_shape, plan, in_place=numerics.in_place, exact=numerics.exact
    )
    assert site_bytes(program, nominal[0], at_two) == priced
