"""Flash decoding as the vendors' executors run it (docs/backend-ttlang.md#flash-decoding,
docs/backend-triton.md#flash-decoding): a decode attention compiled with its keys split P ways
(`sp.attention ... splits P` and `sp.attention_combine`) runs under tt-lang-sim on both Tensix
presets and under Triton's interpreter on h100, and equals the numpy reference. The cases cover
a causal position before whole splits (they add nothing), a cache whose last key tile is
partial, items of several heads, a combine block of two tiles, and head_dim != v_head_dim; and
the count link prices by itself runs under the options spatial-run gives each backend."""

from __future__ import annotations

import numpy as np
import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)


def attention(keys: int, heads: int, kv: int, d: int, dv: int | None = None) -> str:
    """One decode query row over a causal `keys`-row cache; v's head dim `dv` (default d)."""
    dv = dv or d
    q, o = f"tensor<1x{heads * d}xbf16>", f"tensor<1x{heads * dv}xbf16>"
    k, v = f"tensor<{keys}x{kv * d}xbf16>", f"tensor<{keys}x{kv * dv}xbf16>"
    return (
        f"func.func @f(%q: {q}, %k: {k}, %v: {v}, %p: tensor<1xi32>) -> {o} {{\n"
        f"  %y = tg.attention %q, %k, %v, %p heads {heads} kv_heads {kv} head_dim {d} causal true "
        f"scale 0.125 : ({q}, {k}, {v}, tensor<1xi32>) -> {o}\n"
        f"  func.return %y : {o}\n}}"
    )


# (name, program, splits, position or None to draw one)
CASES = [
    # 128 keys in 4 splits of 32, position 5: splits 1..3 are wholly past it
    ("past_position", attention(128, 4, 2, 32), 4, 5),
    # 200 keys: seven key tiles, the last partial
    ("partial_tile", attention(200, 4, 2, 64), 7, None),
    # four query heads per kv head, v's heads twice as wide as q's and k's
    ("dv_wider", attention(128, 4, 1, 32, 64), 4, 20),
    # q's and k's heads twice as wide as v's
    ("dv_narrower", attention(128, 4, 2, 64, 32), 2, None),
    ("dv_narrower_unsplit", attention(128, 4, 2, 64, 32), 1, None),
]

RUNS = [
    ("wormhole_n150", "tt-lang-sim"),
    ("blackhole_p150", "tt-lang-sim"),
    ("h100", "triton-interpret"),
]


def run(text: str, target: str, backend: str, splits: int, position: int | None):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target, kv_splits=splits)
    combines = [op.splits for op in module.walk() if isinstance(op, sp.AttentionCombineOp)]
    assert combines == ([splits] if splits > 1 else []), combines
    inputs = draw_inputs(fn, 3)
    if position is not None:
        inputs["p"] = np.array([position], np.int32)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, backend=backend)
    return compare_outputs(fn, reference, values, got)


@pytest.mark.parametrize("target, backend", RUNS)
@pytest.mark.parametrize("name, text, splits, position", CASES, ids=[c[0] for c in CASES])
def test_split_attention_runs_to_the_reference(target, backend, name, text, splits, position):
    comparisons = run(text, target, backend, splits, position)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


@pytest.mark.parametrize("target, backend", [RUNS[0], RUNS[2]])
def test_a_combine_of_two_tile_blocks_runs_to_the_reference(target, backend):
    """32 heads of 128 over 64 sites: the combine's items are two tiles wide (TT-Lang spreads
    each tile's m and l with a [2, 2]-tile selector)."""
    text = attention(64, 32, 8, 128)
    if backend == "tt-lang-sim":
        module = compile_module(entry_function(parse_module(text)), target, kv_splits=2)
        (combine,) = [p for p in module.walk() if isinstance(p, sp.ProgramOp)][-1:]
        assert combine.kind == sp.SectionKind.ATTENTION_COMBINE
        assert combine.one(sp.WorkOp).block == (1, 2)
    comparisons = run(text, target, backend, 2, None)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


@pytest.mark.parametrize("target, backend", RUNS)
def test_the_priced_split_runs_under_the_backends_own_options(target, backend):
    """What spatial-run --backend compiles (the default options: no backend forces any) keeps
    the count link priced: a 1024-key cache over 2 kv heads splits (4 ways on every preset
    here), and the backend runs that program to the reference."""
    fn = entry_function(parse_module(attention(1024, 8, 2, 64)))
    module = compile_module(fn, target)
    combines = [op.splits for op in module.walk() if isinstance(op, sp.AttentionCombineOp)]
    assert len(combines) == 1 and combines[0] > 1, combines
    inputs = draw_inputs(fn, 5)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, backend=backend)
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
