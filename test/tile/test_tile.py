"""tile's choice against an enumeration written independently of it, and the numbers it records
against the cost model's functions of the plan it recorded."""

from __future__ import annotations

import itertools

import pytest

from spatial_dialect import sp
from spatial_dialect.passes.gemm_view import GemmView, gemm_plan
from spatial_dialect.passes.numerics import Numerics, section_cost
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.passes.site_footprint import operand_fifos, site_bytes
from spatial_dialect.passes.target_choice import module_target
from spatial_dialect.passes.tile import gemm as tile_gemm
from spatial_dialect.targets import load_target
from spatial_dialect.targets.cost import (
    GemmPlan,
    GemmShape,
    footprint_bytes_for_plan,
    gemm_cost,
    plan_fits,
)
from spatial_dialect.targets.gemm import ceil_div

SHAPES = [
    (96, 200, 160),
    (1, 256, 512),
    (32, 32, 1024),
    (256, 512, 320),
    (320, 64, 64),
    # several blocks a site (in even and uneven rounds), lines, multicast off
    (1024, 64, 512),
    (64, 128, 3072),
    (3072, 64, 96),
    (544, 64, 544),
]
TARGETS = ["wormhole_n150", "blackhole_p150", "rtx3060", "plasticine"]


def gemm_source(m: int, k: int, n: int, dtype: str) -> str:
    a, b, c = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    return (
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n}}\n"
    )


def compiled(target: str, shape: tuple[int, int, int], **options: object):
    dtype = "f32" if target == "plasticine" else "bf16"
    module = compile_module(gemm_source(*shape, dtype), target=target, **options)
    program = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return module, program


def _grids(tiles: int, per: int, sites: int) -> set[int]:
    """The sites tile may deal one dimension's blocks over (its docstring): all of them in one
    round when they fit, and, when the block divides the tiles, the fewest sites running the
    fewest rounds R = ceil(blocks / sites) or R + 1 (at least two rounds), and the largest
    divisor of the block count not above `sites`."""
    blocks = ceil_div(tiles, per)
    out = {blocks} if blocks <= sites else set()
    if tiles % per == 0:
        fewest = ceil_div(blocks, sites)
        out |= {ceil_div(blocks, r) for r in (fewest, fewest + 1) if 2 <= r <= blocks}
        if blocks > sites:
            out.add(max(d for d in range(1, sites + 1) if blocks % d == 0))
    return out


def every_plan(target, shape, numerics):
    """All plans of the rules in tile's docstring, by brute force over every per-site block: on a
    multicast mesh the 2-D map over a grid (at most one dimension dealt unevenly), lines longer
    than a mesh row sharing A or B (the other dimension's blocks dividing it or one), multicast on
    or off per shared operand; on a flat target blocks dividing the tiles over the mesh or a
    rectangle of it with the fewest sites for the fewest rounds up to 16 more, or the most sites
    dividing the blocks. Any sub-block dividing the block within the accumulator, any K block
    dividing K; and streaming."""
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    x, y = target.mesh_x, target.mesh_y
    rect = target.multicast == "rectangle"
    acc = target.acc_tiles(numerics.acc)
    for pm, pn in itertools.product(range(1, mt + 1), range(1, nt + 1)):
        bm, bn = ceil_div(mt, pm), ceil_div(nt, pn)
        layouts = []  # (grid_x, grid_y, mcast_a, mcast_b, line)
        if rect:
            for gx, gy in itertools.product(_grids(nt, pn, x), _grids(mt, pm, y)):
                if bm % gy and bn % gx:
                    continue
                for ma in (True, False) if gx > 1 else (True,):
                    for mb in (True, False) if gy > 1 else (True,):
                        layouts.append((gx, gy, ma, mb, False))
            if bm == 1 or mt % pm == 0:
                for line in _grids(nt, pn, x * y):
                    if line > x:
                        layouts += [(line, 1, ma, False, True) for ma in (True, False)]
            if bn == 1 or nt % pn == 0:
                for line in _grids(mt, pm, x * y):
                    if line > x:
                        layouts += [(1, line, False, mb, True) for mb in (True, False)]
        elif mt % pm == 0 and nt % pn == 0:
            units = bm * bn
            widest = {}  # sites -> the widest rectangle of the mesh with that many
            for gx, gy in itertools.product(range(1, x + 1), range(1, y + 1)):
                if gx > widest.get(gx * gy, (0, 0))[0]:
                    widest[gx * gy] = (gx, gy)
            counts = {x * y}
            fewest = ceil_div(units, x * y)
            counts |= {ceil_div(units, r) for r in range(fewest, min(units, fewest + 16) + 1)}
            if units > x * y:
                counts.add(max(g for g in widest if units % g == 0))
            grids = {widest[g] for g in counts if g in widest} | {(x, y)}
            layouts += [(gx, gy, True, True, False) for gx, gy in grids]
        for (gx, gy, ma, mb, line), osh, osw, ibw in itertools.product(
            layouts, range(1, pm + 1), range(1, pn + 1), range(1, kt + 1)
        ):
            if pm % osh or pn % osw or kt % ibw or osh * osw > acc:
                continue
            if target.acc_in_registers and ibw < kt and (osh, osw) != (pm, pn):
                continue
            plan = GemmPlan(gx, gy, pm, pn, osh, osw, ibw, mcast_a=ma, mcast_b=mb, line=line)
            if plan_fits(target, shape, plan, in_place=numerics.in_place, exact=numerics.exact):
                yield plan
    yield GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_no_legal_plan_is_cheaper(target: str, shape: tuple[int, int, int]) -> None:
    # every_plan is the unsplit plan space (split-K is tested in test_targets_cost.py and
    # test/tile/split_k.mlir); with split-K allowed the plan can only be cheaper still.
    _, default = compiled(target, shape)
    module, program = compiled(target, shape, split_k=1)
    t = module_target(module, "test")
    gemm_shape = GemmView.of(program).shape()
    numerics = Numerics.of(t, gemm_shape.in_dtype, gemm_shape.out_dtype)
    best = min(
        gemm_cost(
            t, gemm_shape, p, "hifi4", in_place=numerics.in_place, exact=numerics.exact
        ).total_cycles
        for p in every_plan(t, gemm_shape, numerics)
    )
    plan = program.one(sp.PlanOp)
    assert plan is not None
    assert plan.predicted_cycles == best
    assert plan.runner_up_cycles is None or plan.runner_up_cycles >= best
    assert default.one(sp.PlanOp).predicted_cycles <= best  # type: ignore[union-attr]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", [(1024, 64, 512), (64, 128, 3072), (544, 64, 544)])
def test_the_pruned_ranking_keeps_the_cheapest_two(
    target: str, shape: tuple[int, int, int]
) -> None:
    """rank() prices only what its floor cannot rule out; its first two are the cheapest two of
    every candidate tile enumerates (`tile_gemm.candidates`, unpruned)."""
    t = load_target(target)
    dtype = "f32" if target == "plasticine" else "bf16"
    gemm_shape = GemmShape(*shape, dtype, dtype)
    numerics = Numerics.of(t, dtype, dtype)
    ranked = tile_gemm.rank(t, gemm_shape, numerics, "hifi4")
    every = sorted(
        numerics.cost(t, gemm_shape, p, "hifi4").total_cycles
        for p in tile_gemm.candidates(t, gemm_shape, numerics)
    )
    assert [c.total_cycles for _, c in ranked[:2]] == every[:2]


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_recorded_numbers_are_the_recorded_plans(target: str, shape: tuple[int, int, int]) -> None:
    module, program = compiled(target, shape)
    t = module_target(module, "test")
    plan = program.one(sp.PlanOp)
    assert plan is not None
    cost = section_cost(program, t, "hifi4")
    assert (plan.predicted_cycles, plan.bound.data) == (cost.total_cycles, cost.bound)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_the_allocator_lays_out_what_the_planner_priced(
    target: str, shape: tuple[int, int, int]
) -> None:
    """docs/passes.md#tile-one-footprint-function: the footprint tile filters with is, byte for byte, what size-buffers lays out on a
    site covering the nominal block (operand FIFOs at the legality depth of 2)."""
    module, program = compiled(target, shape)
    t = module_target(module, "test")
    gemm_shape = GemmView.of(program).shape()
    numerics = Numerics.of(t, gemm_shape.in_dtype, gemm_shape.out_dtype)
    plan = gemm_plan(program)
    work = program.one(sp.WorkOp)
    assert work is not None
    nominal = [
        r
        for r in program.ops_of(sp.SitesOp)
        if r.block == work.block and r.sub_block == (plan.osh, plan.osw)
    ]
    assert nominal, "the nominal block runs somewhere"
    at_two = {f: 2 for f in operand_fifos(program)}
    priced = footprint_bytes_for_plan(
        t, gemm_shape, plan, in_place=numerics.in_place, exact=numerics.exact
    )
    assert site_bytes(program, nominal[0], at_two) == priced


def test_a_gpu_splits_k_where_few_blocks_leave_sms_idle():
    # attention's PV at decode, 32x4096x128: 4 output tiles. Unsplit, 4 SMs walk all 128 K
    # tiles; split 4 ways, 16 walk 32 each, and the adds cost less than what that saves.
    h200 = load_target("h200")
    shape = GemmShape(32, 4096, 128)
    numerics = Numerics.of(h200, "bf16", "bf16")
    ranked = tile_gemm.rank(h200, shape, numerics, "hifi4")
    best = ranked[0][0]
    unsplit = next(c for p, c in ranked if p.split_k == 1)
    assert (best.split_k, best.split_axis) == (4, "x")
    assert ranked[0][1].total_cycles < unsplit.total_cycles
    # a target with no way to hand sums over gets no split candidate: the RDU
    rdu = load_target("plasticine")
    f32 = GemmShape(32, 4096, 128, "f32", "f32")
    plans = tile_gemm.rank(rdu, f32, Numerics.of(rdu, "f32", "f32"), "hifi4")
    assert all(p.split_k == 1 for p, _ in plans)
