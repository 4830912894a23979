"""Seeded inputs: indices inside the range their readers accept, reproducible draws, .npz files."""

from __future__ import annotations

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

from spatial_dialect.tools.interpreters.inputs import (
    DRAWERS,
    Role,
    draw_inputs,
    float_roles,
    index_ranges,
    load_inputs,
    save_run,
)
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.spatial_run import entry_function, parse_module

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def function(src: str):
    return entry_function(parse_module(src))


def tiny(name: str):
    return function((EXAMPLES / name).read_text())


def test_ids_and_positions_are_drawn_inside_their_readers_ranges():
    fn = tiny(
        "tiny_prefill.mlir"
    )  # ids: 8 tokens of a 512-row table; pos: 8 rows of a 64-row cache
    ranges = {a.name_hint: (lo, hi) for a, (lo, hi, _) in index_ranges(fn).items()}
    assert ranges == {"ids": (0, 511), "pos": (0, 56)}
    for seed in range(20):
        drawn = draw_inputs(fn, seed)
        assert (
            drawn["ids"].dtype == np.int32 and 0 <= drawn["ids"].min() <= drawn["ids"].max() < 512
        )
        assert 0 <= int(drawn["pos"][0]) <= 56
        evaluate(fn, drawn)  # never out of range


def test_a_position_read_by_two_ops_gets_the_intersection():
    fn = function(
        "func.func @f(%c: tensor<10x4xf32>, %r: tensor<3x4xf32>, %q: tensor<6x4xf32>, %p: tensor<1xi32>)"
        " -> tensor<10x4xf32> {\n"
        "  %a = tg.set_rows %c, %r, %p : (tensor<10x4xf32>, tensor<3x4xf32>, tensor<1xi32>) -> tensor<10x4xf32>\n"
        "  %o = tg.attention %q, %a, %a, %p heads 1 kv_heads 1 head_dim 4 causal true scale 1.0"
        " : (tensor<6x4xf32>, tensor<10x4xf32>, tensor<10x4xf32>, tensor<1xi32>) -> tensor<6x4xf32>\n"
        "  func.return %a : tensor<10x4xf32>\n}"
    )
    ((lo, hi, why),) = index_ranges(fn).values()
    assert (lo, hi) == (0, 4)  # set_rows allows [0, 7], attention [0, 4]
    assert why == ["tg.set_rows pos in [0, 7]", "tg.attention pos in [0, 4]"]


def test_a_position_no_value_suits_is_refused():
    # With an explicit pos the verifier lets T > S through; no pos then fits the 2-row cache.
    fn = function(
        "func.func @f(%q: tensor<4x4xf32>, %k: tensor<2x4xf32>, %p: tensor<1xi32>) -> tensor<4x4xf32> {\n"
        "  %o = tg.attention %q, %k, %k, %p heads 1 kv_heads 1 head_dim 4 causal true scale 1.0"
        " : (tensor<4x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>, tensor<1xi32>) -> tensor<4x4xf32>\n"
        "  func.return %o : tensor<4x4xf32>\n}"
    )
    with pytest.raises(
        EvaluationError,
        match=r"no value of %p suits every op that reads it: "
        r"tg.attention pos in \[0, -2\]",
    ):
        draw_inputs(fn, 0)


def test_same_seed_same_inputs_other_seed_other_inputs():
    fn = tiny("tiny_decode.mlir")
    a, b, c = draw_inputs(fn, 3), draw_inputs(fn, 3), draw_inputs(fn, 4)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name])
    assert not np.array_equal(a["l0_wq"], c["l0_wq"])


def test_float_inputs_are_drawn_for_their_role():
    fn = tiny("tiny_prefill.mlir")
    drawn = draw_inputs(fn, 0)
    assert drawn["l0_wq"].dtype == ml_dtypes.bfloat16
    cos, sin = (drawn[n].astype(np.float32) for n in ("cos", "sin"))
    np.testing.assert_allclose(cos**2 + sin**2, 1, atol=2e-2)  # one angle, rounded to bf16
    w_down = drawn["l0_w_down"].astype(np.float32)  # 256 x 128: std 1/16
    assert 0.05 < w_down.std() < 0.075
    norm = drawn["l0_attn_norm"].astype(np.float32)
    assert 0.9 < norm.mean() < 1.1 and norm.std() < 0.2


def test_every_role_has_one_drawer():
    assert set(DRAWERS) == set(Role)


def test_a_role_is_decided_by_the_first_reader():
    t = "tensor<2x4xf32>"
    fn = function(
        f"""func.func @f(%x: {t}, %w: tensor<4x4xf32>, %g: tensor<1x4xf32>, %c: tensor<2x1xf32>)
    -> {t} {{
  %h = tg.matmul %x, %w : ({t}, tensor<4x4xf32>) -> {t}
  %n = tg.rms_norm %h, %g eps 1.0e-06 : ({t}, tensor<1x4xf32>) -> {t}
  %y = tg.matmul %c, %g : (tensor<2x1xf32>, tensor<1x4xf32>) -> {t}
  func.return %y : {t}
}}"""
    )
    roles = {arg.name_hint: role for arg, role in float_roles(fn).items()}
    assert roles == {"w": (Role.MATMUL_B, 4), "g": (Role.NORM_WEIGHT, 0)}  # %c: data


def test_npz_round_trip_keeps_bf16_exact(tmp_path):
    fn = tiny("tiny_decode.mlir")
    drawn = draw_inputs(fn, 1)
    path = tmp_path / "run.npz"
    save_run(path, drawn, {"reference": {"token": np.array([3], np.int32)}})
    with np.load(path) as data:
        assert data["l0_wq"].dtype == np.float32 and "reference/token" in data.files
    loaded = load_inputs(path, fn)
    assert set(loaded) == set(drawn)
    for name in drawn:
        assert loaded[name].dtype == drawn[name].dtype
        np.testing.assert_array_equal(loaded[name], drawn[name])


def test_npz_inputs_are_checked(tmp_path):
    fn = function(
        "func.func @f(%x: tensor<2xf32>, %i: tensor<1xi32>) -> tensor<2xf32> {\n"
        "  func.return %x : tensor<2xf32>\n}"
    )
    cases = [
        ({"y": np.zeros(2)}, "holds 'y', which is no input of @f"),
        ({"x": np.zeros(3)}, r"input 'x' has shape \(3,\); the function declares \(2,\)"),
        ({"i": np.array([1.5])}, "must hold integers"),
        ({"i": np.array([2**40])}, "values outside int32"),
    ]
    for arrays, message in cases:
        np.savez(tmp_path / "in.npz", **arrays)
        with pytest.raises(EvaluationError, match=message):
            load_inputs(tmp_path / "in.npz", fn)


def test_q8_0_weights_are_drawn_at_a_matmul_weights_spread():
    # Uniform int8 values over the quantizer's range and block scales that give the dequantized
    # weight a standard deviation of 1/sqrt(K): a product stays of the order of its input (values
    # in [-16, 16] under N(0, 1) scales made each Q8_0 product about 9.5 sqrt(K) times its input).
    fn = function(
        "func.func @f(%x: tensor<64x512xf32>, %v: tensor<512x128xi8>, %s: tensor<16x128xf16>)"
        " -> tensor<64x128xf32> {\n"
        '  %y = tg.matmul_q8_0 %x, %v, %s activation "q8_0" : (tensor<64x512xf32>,'
        " tensor<512x128xi8>, tensor<16x128xf16>) -> tensor<64x128xf32>\n"
        "  func.return %y : tensor<64x128xf32>\n}"
    )
    ((lo, hi, why),) = index_ranges(fn).values()
    assert (lo, hi, why) == (-127, 127, ["tg.matmul_q8_0 values in [-127, 127]"])
    drawn = draw_inputs(fn, 3)
    values, scales = drawn["v"], drawn["s"]
    assert values.dtype == np.int8 and values.min() < -120 and values.max() > 120
    weight = values.astype(np.float32) * np.repeat(scales.astype(np.float32), 32, axis=0)
    assert abs(weight.std() * np.sqrt(512) - 1) < 0.1
    (y,) = evaluate(fn, drawn)
    assert 0.8 < y.std() / drawn["x"].std() < 1.25


def test_a_gathered_q8_0_table_is_drawn_as_its_dequantize_reads_it():
    # A Q8_0 embedding table's rows are gathered (values and scales) before they are
    # dequantized: the table is drawn as a Q8_0 weight of fan-in d, not as a gather's table
    # (values in [-16, 16] under N(0, 1) scales made the embeddings ~9 and the residual stream
    # drown what the layers add). The tied head reads it transposed, blocks along its columns.
    fn = function(
        "func.func @f(%t: tensor<256x128xi8>, %s: tensor<256x4xf16>, %ids: tensor<8xi32>)"
        " -> (tensor<8x128xf32>, tensor<8x256xf32>) {\n"
        "  %v = tg.gather_rows %t, %ids : (tensor<256x128xi8>, tensor<8xi32>) -> tensor<8x128xi8>\n"
        "  %vs = tg.gather_rows %s, %ids : (tensor<256x4xf16>, tensor<8xi32>) -> tensor<8x4xf16>\n"
        "  %x = tg.dequantize_q8_0 %v, %vs axis 1 : (tensor<8x128xi8>, tensor<8x4xf16>)"
        " -> tensor<8x128xf32>\n"
        '  %y = tg.matmul_q8_0 %x, %t, %s activation "q8_0" transpose_b true : '
        "(tensor<8x128xf32>, tensor<256x128xi8>, tensor<256x4xf16>) -> tensor<8x256xf32>\n"
        "  func.return %x, %y : tensor<8x128xf32>, tensor<8x256xf32>\n}"
    )
    ranges = {a.name_hint: r for a, r in index_ranges(fn).items()}
    assert ranges["t"][:2] == (-127, 127)
    drawn = draw_inputs(fn, 5)
    table = drawn["t"].astype(np.float32) * np.repeat(drawn["s"].astype(np.float32), 32, axis=1)
    assert (drawn["s"] > 0).all() and abs(table.std() * np.sqrt(128) - 1) < 0.1
