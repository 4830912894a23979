"""layer_norm and softmax in TT-Lang where their statistics need more than column 0 of a tile
(tools/backend/ttlang/stats.py, compute.py): a whole row that is not whole tiles (the host's
column mask) and a row wider than a site holds (blocked: partials, combine, apply, the two
statistics in columns 0 and 1 reached through the host's selector tiles), also where that row is
not whole blocks (a short last block: the mask read at each partial's own columns, the short
block's count in the combine, the apply's padding kept finite), under tt-lang-sim on both Tensix
presets, against the numpy reference.

The inputs are chosen so that a wrong form fails: rows far from zero (a mean of 50: layer_norm's
padding would be -50 once centred, and merging block variances without the means' spread is
off), logits near -300 (exp(x) of an unshifted or zero-padded maximum underflows to 0)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.numerics import value_type
from spatial_dialect.tools.interpreters.reference import (
    evaluate_values,
    input_names,
    returned_values,
)
from spatial_dialect.tools.spatial_run import entry_function, parse_module

needs_sim = pytest.mark.skipif(
    importlib.util.find_spec("ttl") is None, reason="tt-lang-sim not installed"
)
TENSIX = ["wormhole_n150", "blackhole_p150"]


def layer_norm(rows: int, cols: int, elt: str) -> str:
    x, r = f"tensor<{rows}x{cols}x{elt}>", f"tensor<1x{cols}x{elt}>"
    return f"""func.func @ln(%x: {x}, %w: {r}, %b: {r}) -> {x} {{
  %y = tg.layer_norm %x, %w, %b eps 1.0e-05 : ({x}, {r}, {r}) -> {x}
  func.return %y : {x}
}}"""


def softmax(rows: int, cols: int, elt: str) -> str:
    x = f"tensor<{rows}x{cols}x{elt}>"
    return f"""func.func @sm(%x: {x}) -> {x} {{
  %y = tg.softmax %x : ({x}) -> {x}
  func.return %y : {x}
}}"""


def softmax_rms(rows: int, cols: int, elt: str) -> str:
    """A softmax whose output's padding an rms_norm reads (its sum of squares): the apply map
    must leave that padding finite (exp(0 - max) overflows where the logits are far below 0)."""
    x, r = f"tensor<{rows}x{cols}x{elt}>", f"tensor<1x{cols}x{elt}>"
    return f"""func.func @sr(%x: {x}, %w: {r}) -> {x} {{
  %s = tg.softmax %x : ({x}) -> {x}
  %y = tg.rms_norm %s, %w eps 1.0e-05 : ({x}, {r}) -> {x}
  func.return %y : {x}
}}"""


def inputs(text: str, offset: float, scale: float) -> dict[str, np.ndarray]:
    fn = entry_function(parse_module(text))
    rng = np.random.default_rng(2)
    out = {}
    for i, (arg, name) in enumerate(zip(fn.args, input_names(fn), strict=True)):
        shape, dtype = value_type(arg)
        value = rng.standard_normal(shape) * scale + (offset if i == 0 else 0.0)
        out[name] = value.astype(np.float32).astype(dtype)
    return out


def run(text: str, target: str, values: dict[str, np.ndarray]):
    from spatial_dialect.tools.backend.ttlang.runner import emit, run_tt_lang_sim

    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    (got,) = run_tt_lang_sim(module, [values[n] for n in input_names(fn)])
    want = evaluate_values(fn, values)[returned_values(fn)[0]]
    return compare("y", want, got), emit(module)


CASES = {
    # a whole row of 72 columns: the last tile's 24 padding columns are masked
    "layer_norm 40x72": (layer_norm(40, 72, "f32"), 50.0, 3.0, ["_col_keep(72, 96)"]),
    "softmax 40x72": (softmax(40, 72, "f32"), -300.0, 4.0, ["_col_keep(72, 96)"]),
    "softmax 40x72 bf16": (softmax(40, 72, "bf16"), -300.0, 4.0, ["_col_keep(72, 96)"]),
    # 8192 columns: 64 blocks of 128 (partials, combine, apply)
    "layer_norm 4x8192": (
        layer_norm(4, 8192, "f32"),
        50.0,
        3.0,
        ["_stat_col(1, 32)", "# section @y__stats"],
    ),
    "softmax 4x8192": (
        softmax(4, 8192, "f32"),
        -300.0,
        4.0,
        ["_stat_gather(1, ", "# section @y__stats"],
    ),
    "layer_norm 40x4096 bf16": (
        layer_norm(40, 4096, "bf16"),
        50.0,
        3.0,
        ["# section @y__stats"],
    ),
    # blocked rows that are not whole blocks: the last block is short (44 of 64 columns, 18
    # of 32, 108 of 128); the partials read the column mask at their own columns, layer_norm's
    # combine the short block's count
    "layer_norm 40x300": (
        layer_norm(40, 300, "f32"),
        50.0,
        3.0,
        ["_keep_300_320[0:1, c0:c0 + 2]", "_stat_counts(5, 64, 44)"],
    ),
    "layer_norm 40x300 bf16": (
        layer_norm(40, 300, "bf16"),
        50.0,
        3.0,
        ["_keep_300_320[0:1, c0:c0 + ", "# section @y__stats"],
    ),
    "softmax 40x300": (softmax(40, 300, "f32"), -300.0, 4.0, ["_keep_300_320[0:1, c0:c0 + 2]"]),
    "softmax 5x210 bf16": (softmax(5, 210, "bf16"), -300.0, 4.0, ["_keep_210_224[0:1, c0:c0 + "]),
    "softmax 7x236": (softmax(7, 236, "f32"), -300.0, 4.0, ["_keep_236_256[0:1, c0:c0 + 4]"]),
    # the apply's padding, read by the rms_norm after it: exp(0 - max) would be inf there
    "softmax 40x300 then rms_norm": (
        softmax_rms(40, 300, "f32"),
        -300.0,
        4.0,
        ["# section @s__partials", "# section @y__partials"],
    ),
}


@needs_sim
@pytest.mark.parametrize("target", TENSIX)
@pytest.mark.parametrize("case", sorted(CASES))
def test_statistics_beyond_column_0_pass_under_the_simulator(case: str, target: str) -> None:
    text, offset, scale, printed = CASES[case]
    result, program = run(text, target, inputs(text, offset, scale))
    assert result.ok, result.line()
    for needle in printed:  # the form the case is about is the one that ran
        assert needle in program, needle


MUTATIONS = {  # what breaks -> (case, old text, new text, the section replaced in, else all)
    # the mask replaced by ones: the padding enters the variance
    "whole layer_norm mask": ("layer_norm 40x72", "k[:, :cols] = 1.0", "k[:, :] = 1.0", None),
    # the spread of the blocks' means left out of the merged variance
    "blocked layer_norm spread": (
        "layer_norm 4x8192",
        ") * ttl.block.fill(128.0, (1, 1))",
        ") * ttl.block.fill(0.0, (1, 1))",
        None,
    ),
    # the running sum not rescaled to a new maximum
    "blocked softmax rescale": (
        "softmax 4x8192",
        "t2 = t2 * ttl.math.exp(t1 - top)",
        "t2 = t2 * ttl.math.exp(t1 - t1)",
        None,
    ),
    # the short block's partial divides its sum by the block's width, not its real columns
    "short block mean": (
        "layer_norm 40x300",
        "a / n,",
        "a / ttl.block.fill(64.0, (1, 1)),",
        "@y__partials:",
    ),
    # the combine weighs the short block as a whole one
    "short block count": (
        "layer_norm 40x300",
        "n[:, 32 * (kw - 1)] = last",
        "n[:, 32 * (kw - 1)] = block",
        None,
    ),
    # the short block's padding (0) enters the maximum's sum as exp(0 - max)
    "short block softmax mask": (
        "softmax 40x300",
        "k[:, :cols] = 1.0",
        "k[:, :] = 1.0",
        None,
    ),
    # the apply's padding left unmasked: inf, which the rms_norm after it sums
    "apply padding": (
        "softmax 40x300 then rms_norm",
        ") * ttl.block.fill(1e+30, (1, 2))",
        ") * ttl.block.fill(0.0, (1, 2))",
        "@s:",
    ),
}


@needs_sim
@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_the_cases_can_fail(mutation: str, monkeypatch) -> None:
    """The printed program with one of its steps broken misses the reference on the same
    inputs: each case above checks the step."""
    from spatial_dialect.tools.backend.ttlang import runner

    case, old, new, section = MUTATIONS[mutation]
    emit = runner.emit

    def broken(module):  # noqa: ANN001, ANN202
        parts = emit(module).split("\n# section ")  # the host code, then one part a section
        hit = [i for i, p in enumerate(parts) if section is None or p.startswith(section)]
        assert any(old in parts[i] for i in hit), old
        for i in hit:
            parts[i] = parts[i].replace(old, new)
        return "\n# section ".join(parts)

    monkeypatch.setattr(runner, "emit", broken)
    text, offset, scale, _ = CASES[case]
    result, _ = run(text, "wormhole_n150", inputs(text, offset, scale))
    assert not result.ok


def rms_norm(rows: int, cols: int, elt: str) -> str:
    x, r = f"tensor<{rows}x{cols}x{elt}>", f"tensor<1x{cols}x{elt}>"
    return f"""func.func @rms(%x: {x}, %w: {r}) -> {x} {{
  %y = tg.rms_norm %x, %w eps 1.0e-05 : ({x}, {r}) -> {x}
  func.return %y : {x}
}}"""


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    op=st.sampled_from([layer_norm, softmax, rms_norm]),
    rows=st.integers(1, 70),
    cols=st.integers(1, 600),
    elt=st.sampled_from(["bf16", "f32"]),
    target=st.sampled_from(TENSIX),
)
def test_every_row_plan_the_pipeline_chooses_prints(op, rows, cols, elt, target) -> None:
    """The default pipeline's plan for a one-op row program prints with `-t ttlang`: whole or
    blocked, whole tiles or not (the compiler never refuses a plan it chose itself)."""
    from spatial_dialect.tools.backend.ttlang.runner import emit

    assert "@ttl.operation" in emit(
        compile_module(entry_function(parse_module(op(rows, cols, elt))), target)
    )


def _stats_planner(target: str):
    from spatial_dialect import sp
    from spatial_dialect.passes.stream_plans import StreamPlanner
    from spatial_dialect.targets.loader import load_target

    fn = entry_function(parse_module(softmax(4, 8192, "f32")))
    module = compile_module(fn, target)
    (stats,) = [
        p for p in module.walk() if isinstance(p, sp.ProgramOp) and p.sym_name.data == "y__stats"
    ]
    return StreamPlanner(stats, load_target(target))


def test_the_combines_gathers_are_priced_on_tensix() -> None:
    """A blocked softmax's combine on a Tensix mesh prices its two gathers: 2 h kw tile-matmuls
    a page of kw <= 32 partials (64 partials: 128 for any such kw), 2 h kw 2 for kw = 64."""
    from spatial_dialect.passes.stream_plans import Candidate

    planner = _stats_planner("wormhole_n150")
    assert planner.space.k_tiles == 64
    got = {kw: planner.quantities(Candidate(1, 1, 1, 1, kw)).tile_matmuls for kw in (16, 32, 64)}
    assert got == {16: 128.0, 32: 128.0, 64: 256.0}


def test_a_gpu_combine_prices_no_gathers() -> None:
    """Triton's combine reads the two columns by address: no product to price."""
    from spatial_dialect.passes.stream_plans import Candidate

    planner = _stats_planner("h100")
    kws = planner.space.kws
    assert kws and all(
        planner.quantities(Candidate(1, 1, 1, 1, kw)).tile_matmuls == 0 for kw in kws
    )
