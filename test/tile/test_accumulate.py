"""f32 accumulation by contract and the accumulate=bf16 fast mode
(docs/passes.md#tile-f32-accumulation-by-contract): which accumulator each GEMM gets, what the
planner may use under it, what it costs, and what the simulator computes with it."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatial_dialect import sp
from spatial_dialect.passes.numerics import Numerics, section_cost
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.passes.tile import gemm as tile_gemm
from spatial_dialect.targets import load_target
from spatial_dialect.targets.cost import GemmShape, footprint_parts
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.numerics import matmul
from spatial_dialect.tools.simulator.program import simulate

BF16 = ml_dtypes.bfloat16


def gemm_source(m: int, k: int, n: int, dtype: str = "bf16") -> str:
    a, b, c = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    return (
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n}}\n"
    )


def section(module) -> sp.ProgramOp:
    return next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


@pytest.mark.parametrize(
    ("target", "in_dtype", "out_dtype", "accumulate", "acc", "in_place"),
    [
        # the contract: f32 wherever a float GEMM runs, by default
        ("wormhole_n150", "bf16", "bf16", "f32", "f32", False),
        ("blackhole_p150", "f16", "f16", "f32", "f32", False),
        ("wormhole_n150", "bf16", "f32", "f32", "f32", True),
        ("h100", "bf16", "bf16", "f32", "f32", False),
        # the fast mode: Tensix dest in its 16-bit mode, in the operands' type
        ("wormhole_n150", "bf16", "bf16", "bf16", "bf16", True),
        ("blackhole_p150", "f16", "f16", "bf16", "f16", True),
        # ... but never where the GEMM touches f32 or the accumulator is registers
        ("wormhole_n150", "bf16", "f32", "bf16", "f32", True),
        ("wormhole_n150", "f32", "f32", "bf16", "f32", True),
        ("h100", "bf16", "bf16", "bf16", "f32", False),
        # integers accumulate exactly in either mode
        ("wormhole_n150", "i8", "i32", "bf16", "i32", True),
    ],
)
def test_the_accumulator_of_each_gemm(target, in_dtype, out_dtype, accumulate, acc, in_place):
    numerics = Numerics.of(load_target(target), in_dtype, out_dtype, accumulate)
    assert (numerics.acc, numerics.in_place) == (acc, in_place)


@pytest.mark.parametrize("accumulate", ["f32", "bf16"])
def test_the_section_records_its_accumulation(accumulate):
    """The accumulator, the spill and the reason on sp.plan say the same thing, and the numbers
    recorded are the cost model's at the numerics the section records."""
    module = compile_module(
        gemm_source(64, 2048, 256), target="wormhole_n150", accumulate=accumulate
    )
    program = section(module)
    acc = next(b for b in program.buffers() if isinstance(b, sp.AccOp))
    plan = program.one(sp.PlanOp)
    assert plan is not None and str(acc.elt) == accumulate
    reason = plan.attributes["accumulate"].data  # type: ignore[attr-defined]
    assert reason.startswith(f"{accumulate}: ")
    sub = plan.sub_block[0] * plan.sub_block[1]
    assert sub <= {"f32": 4, "bf16": 8}[accumulate]
    spills = [b for b in program.buffers() if isinstance(b, sp.IntermOp)]
    for spill in spills:  # f32 partial sums of their own, or bf16 ones in the output FIFO
        assert str(spill.elt) == accumulate and (spill.alias_of is None) == (accumulate == "f32")
    # 2 block rows on the 8x8 mesh: K splits, and split-K's partial sums are the accumulator's.
    partials = sp.buffer_of(program.one(sp.MatmulTilesOp).partials)
    assert isinstance(partials, sp.FifoOp) and str(partials.elt) == accumulate
    assert reason.endswith(f"split-K passes {accumulate} partial sums slice to slice")
    target = load_target("wormhole_n150")
    assert plan.predicted_cycles == section_cost(program, target, "hifi4").total_cycles


def test_the_f32_spill_is_in_the_footprint():
    """An f32 spill: one 4096-byte tile per accumulator tile of every sub-block, in local memory
    of its own; the fast mode spills into the output FIFO."""
    target = load_target("wormhole_n150")
    shape = GemmShape(64, 2048, 256, "bf16", "bf16")
    plan = tile_gemm.GemmPlan(8, 2, 1, 4, 1, 2, 4)  # 1x4-tile blocks: 2 sub-blocks of 1x2
    for accumulate, spill in (("f32", 2 * 2 * 4096), ("bf16", 0)):
        numerics = Numerics.of(target, "bf16", "bf16", accumulate)
        parts = footprint_parts(
            target, shape, plan, in_place=numerics.in_place, exact=numerics.exact
        )
        assert parts.interm == spill


@settings(max_examples=12, deadline=None)
@given(
    m=st.sampled_from([1, 32, 100, 256, 512]),
    k=st.sampled_from([64, 700, 2048, 4096]),
    n=st.sampled_from([64, 500, 1024, 4096]),
    target=st.sampled_from(["wormhole_n150", "blackhole_p150"]),
)
def test_the_contract_never_costs_less_than_the_fast_mode(m, k, n, target):
    """Every plan legal under f32 accumulation is legal under the 16-bit mode (a smaller
    sub-block, a larger footprint) and costs at least as much there (its spill is reloaded at
    twice the bytes, or not at all), so the best f32 plan is never cheaper."""
    t = load_target(target)
    shape = GemmShape(m, k, n, "bf16", "bf16")
    best = {
        a: tile_gemm.rank(t, shape, Numerics.of(t, "bf16", "bf16", a), "hifi4")[0][1].total_cycles
        for a in ("f32", "bf16")
    }
    assert best["f32"] >= best["bf16"]


def test_the_simulator_computes_with_the_chosen_accumulation():
    """32x4096x64 bf16 on wormhole_n150: f32 partial sums land within one ulp of the reference
    (2^-7); the 16-bit accumulator's 128 roundings leave it several units of rounding off."""
    m, k, n = 32, 4096, 64
    rng = np.random.default_rng(1)
    a = rng.standard_normal((m, k), dtype=np.float32).astype(BF16)
    b = (rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(k)).astype(BF16)
    ref = matmul(a, b).astype(BF16)
    errors = {}
    for accumulate in ("f32", "bf16"):
        module = compile_module(gemm_source(m, k, n), target="wormhole_n150", accumulate=accumulate)
        (out,) = simulate(module, [a, b])
        errors[accumulate] = compare("c", ref, out).max_rel
    assert errors["f32"] <= 2.0**-7
    assert errors["bf16"] > 2.0**-6
