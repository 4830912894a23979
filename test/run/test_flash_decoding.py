"""Flash decoding (docs/passes.md#link-flash-decoding-splits-the-keys): the log-sum-exp merge of
split partials is the softmax over every key; split programs simulate to the reference for any
count of splits and cache length; link's count is the cheapest of the counts it could force;
and decode attention at S = 4096 (Llama-3-8B) is within 1.3x of its DRAM roofline on the Tensix
presets."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.targets import PRESETS
from spatial_dialect.targets.gemm import TILE, ceil_div, divisors
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.simulator.stages import merge_partials, split_partials
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)


def attention(keys: int, heads: int, kv: int, d: int, elt: str = "bf16") -> str:
    q, k = f"tensor<1x{heads * d}x{elt}>", f"tensor<{keys}x{kv * d}x{elt}>"
    return (
        f"func.func @f(%q: {q}, %k: {k}, %v: {k}, %p: tensor<1xi32>) -> {q} {{\n"
        f"  %y = tg.attention %q, %k, %v, %p heads {heads} kv_heads {kv} head_dim {d} causal true "
        f"scale 0.125 : ({q}, {k}, {k}, tensor<1xi32>) -> {q}\n"
        f"  func.return %y : {q}\n}}"
    )


# ── The merge ─────────────────────────────────────────────────────────────────────────────────


def test_merge_of_split_partials_is_the_softmax_over_every_key():
    """Two heads of 64 over 96 keys in three splits of 32; the last split is wholly masked (a
    causal position before it): it adds nothing, and the merge is softmax(s) v over the rest."""
    rng = np.random.default_rng(7)
    heads, dv, splits, per = 2, 64, 3, 32
    scores = rng.normal(size=(heads, splits * per)).astype(np.float32) * 4
    values = rng.normal(size=(splits * per, heads * dv)).astype(np.float32)
    visible = np.arange(splits * per) < 2 * per
    state = np.zeros((TILE, heads * dv), np.float32)
    state[1, 0::TILE] = -np.inf
    for p in range(splits):
        keys = slice(p * per, (p + 1) * per)
        o = np.zeros((TILE, heads * dv), np.float32)
        ml = np.zeros((TILE, heads * TILE), np.float32)
        for j in range(heads):
            live = visible[keys]
            s = scores[j, keys]
            m = s[live].max() if live.any() else -np.inf
            e = np.where(live, np.exp(s - (m if live.any() else 0)), 0)
            o[0, j * dv : (j + 1) * dv] = e @ values[keys, j * dv : (j + 1) * dv]
            ml[0, j * TILE], ml[0, j * TILE + 1] = m, e.sum()
        state = merge_partials(state, split_partials(o, ml, dv, TILE), TILE)
    merged = state[0] / np.repeat(state[1, 1::TILE], TILE)
    for j in range(heads):
        s = scores[j, visible]
        weights = np.exp(s - s.max()) / np.exp(s - s.max()).sum()
        expected = weights @ values[visible, j * dv : (j + 1) * dv]
        np.testing.assert_allclose(merged[j * dv : (j + 1) * dv], expected, rtol=1e-5, atol=1e-6)


# ── The simulator ─────────────────────────────────────────────────────────────────────────────


def run_split(text: str, target: str, splits: int, seed: int):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target, kv_splits=splits)
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    simulated = simulated_outputs(fn, module, inputs)
    return module, compare_outputs(fn, reference, values, simulated)


@pytest.mark.parametrize(
    "target, elt", [("wormhole_n150", "bf16"), ("blackhole_p150", "bf16"), ("h100", "f32")]
)
def test_split_attention_simulates_to_the_reference(target, elt):
    module, comparisons = run_split(attention(200, 4, 2, 64, elt), target, 7, 3)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    kinds = [p.kind for p in module.walk() if isinstance(p, sp.ProgramOp)]
    assert kinds == [sp.SectionKind.ATTENTION, sp.SectionKind.ATTENTION_COMBINE]


@st.composite
def split_cases(draw) -> tuple[str, int, int]:
    keys = draw(st.integers(1, 300))
    kv = draw(st.integers(1, 2))
    heads = kv * draw(st.integers(1, 2))
    splits = draw(st.sampled_from(divisors(ceil_div(keys, TILE))))
    return attention(keys, heads, kv, 32), splits, draw(st.integers(0, 1000))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=split_cases(), target=st.sampled_from(["wormhole_n150", "blackhole_p150"]))
def test_any_split_count_of_any_cache_simulates_to_the_reference(case, target):
    """Every count of splits that divides the key tiles, every cache length (a partial last
    tile), every position (splits past it wholly masked) computes the reference's attention."""
    text, splits, seed = case
    module, comparisons = run_split(text, target, splits, seed)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    combines = [op for op in module.walk() if isinstance(op, sp.AttentionCombineOp)]
    assert [c.splits for c in combines] == ([splits] if splits > 1 else [])


# ── The decision ──────────────────────────────────────────────────────────────────────────────


LLAMA = attention(4096, 32, 8, 128)


def predicted(module) -> int:
    return sum(p.predicted_cycles for p in module.walk() if isinstance(p, sp.PlanOp))


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150"])
def test_the_chosen_count_is_the_cheapest_forced_one(target):
    chosen = compile_module(LLAMA, target=target)
    (combine,) = [op for op in chosen.walk() if isinstance(op, sp.AttentionCombineOp)]
    forced = {p: predicted(compile_module(LLAMA, target=target, kv_splits=p)) for p in (1, 4, 64)}
    forced[combine.splits] = predicted(chosen)
    assert min(forced, key=lambda p: (forced[p], p)) == combine.splits


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150"])
def test_decode_attention_is_within_1_3x_of_its_dram_roofline(target):
    """The roofline is the op's own bytes (K and V, the query, the result) at the DRAM peak."""
    chip = PRESETS[target]
    module = compile_module(LLAMA, target=target)
    us = predicted(module) / (chip.clock_ghz * 1e3)
    bytes_ = 2 * 4096 * 1024 * 2 + 2 * 4096 * 2 + 4
    roofline_us = bytes_ / (chip.dram_gbps * 1e3)
    assert us <= 1.3 * roofline_us, (us, roofline_us)
