"""The bf16 tolerance catches one wrong 32x32 tile of a 1024x1024x1024 GEMM (docs/simulator.md#tolerances).

The correct result is what any f32-accumulating program computes: f32 partial sums over K blocks,
added in another order than the reference's, rounded once to bf16. Each wrong result differs from
it in one output tile only. Everything is numpy (about a second), independent of the compiler.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.interpreters.bfp8 import round_bfp8_b
from spatial_dialect.tools.interpreters.compare import (
    BFP8_B_STORAGE,
    Q8_0_LEVEL,
    RTOL,
    RTOL_16BIT_ACCUMULATOR,
    compare,
    q8_0_downstream,
    quantized_downstream,
    rtol,
)
from spatial_dialect.tools.interpreters.q8_0 import dequantize, matmul_q8_0, quantize
from spatial_dialect.tools.interpreters.reference import output_names, returned_values
from spatial_dialect.tools.spatial_run import entry_function, parse_module

BF16 = ml_dtypes.bfloat16
N = 1024
WRONG = (20, 9)  # the wrong tile's row and column, in tiles


@pytest.fixture(scope="module")
def gemm() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """a, b (in f32, bf16 values), the reference and a correct f32-accumulated result."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((N, N), dtype=np.float32).astype(BF16).astype(np.float32)
    b = (rng.standard_normal((N, N), dtype=np.float32) / np.sqrt(N)).astype(BF16)
    b = b.astype(np.float32)
    ref = (a @ b).astype(BF16)
    acc = np.zeros((N, N), np.float32)
    for k in reversed(range(0, N, 4 * TILE)):  # K blocks of 4 tiles, the last one first
        acc += a[:, k : k + 4 * TILE] @ b[k : k + 4 * TILE]
    return a, b, ref, acc.astype(BF16)


def with_tile(result: np.ndarray, tile: np.ndarray) -> np.ndarray:
    r, c = WRONG
    out = result.copy()
    out[r * TILE : (r + 1) * TILE, c * TILE : (c + 1) * TILE] = tile
    return out


def rows_cols() -> tuple[slice, slice]:
    r, c = WRONG
    return slice(r * TILE, (r + 1) * TILE), slice(c * TILE, (c + 1) * TILE)


def test_the_tolerance_is_sixteen_units_of_bf16_rounding():
    assert RTOL["bf16"] == 16 * 2.0**-8
    assert RTOL_16BIT_ACCUMULATOR["bf16"] == 2.0**-3


def test_an_f32_accumulated_result_passes(gemm):
    _, _, ref, good = gemm
    verdict = compare("c", ref, good)
    assert verdict.ok and verdict.max_rel <= 2 * 2.0**-8  # within one ulp


def test_a_tile_that_drops_one_of_its_1024_products_fails(gemm):
    """An off-by-one at the end of K: the old 32-unit tolerance (2^-3) let this tile through."""
    a, b, ref, good = gemm
    rows, cols = rows_cols()
    short = (a[rows, : N - 1] @ b[: N - 1, cols]).astype(BF16)
    wrong = with_tile(good, short)
    verdict = compare("c", ref, wrong)
    assert not verdict.ok and verdict.bad <= TILE * TILE
    assert verdict.first_bad is not None and verdict.first_bad[0] // TILE == WRONG[0]
    assert compare("c", ref, wrong, accumulate="bf16").ok


@pytest.mark.parametrize("quantized", [False, True], ids=["", "after a Q8_0 activation"])
@pytest.mark.parametrize("wrong", ["misplaced", "missing K tile"])
def test_a_grossly_wrong_tile_fails(gemm, wrong, quantized):
    a, b, ref, good = gemm
    rows, cols = rows_cols()
    if wrong == "misplaced":
        tile = good[rows, cols.start + TILE : cols.stop + TILE]
    else:
        tile = (a[rows, TILE:] @ b[TILE:, cols]).astype(BF16)
    verdict = compare("c", ref, with_tile(good, tile), quantized=quantized)
    assert not verdict.ok and verdict.bad <= TILE * TILE


# ── Downstream of a quantized activation (docs/simulator.md#tolerances) ────────────────────────


def test_one_q8_0_level_is_at_most_sqrt_32_over_127_of_the_block_rms():
    """The term's bound, on the block that reaches it (all its energy in one element) and on
    random ones."""
    rng = np.random.default_rng(0)
    blocks = np.vstack([np.eye(32, dtype=np.float32)[:1], rng.standard_normal((999, 32))])
    _, scales = quantize(blocks.astype(np.float32), axis=1)
    rms = np.sqrt(np.mean(blocks.astype(np.float64) ** 2, axis=1))
    level = scales[:, 0].astype(np.float64) / rms
    assert level.max() <= Q8_0_LEVEL * (1 + 2.0**-10)  # the f16 scale rounds up by < 2^-11
    assert level[0] == pytest.approx(Q8_0_LEVEL, rel=2.0**-10)


def test_a_level_more_passes_only_after_a_quantized_activation():
    """rtol and one level of room: an element that far off passes downstream of a quantized
    activation (the note says why), and nowhere else."""
    rng = np.random.default_rng(1)
    ref = rng.standard_normal((32, 64)).astype(BF16)
    rms = float(np.sqrt(np.mean(ref.astype(np.float64) ** 2)))
    off = ref.copy()
    off[7, 9] = ref[7, 9] + 0.95 * (RTOL["bf16"] + Q8_0_LEVEL) * (abs(ref[7, 9]) + rms)
    assert not compare("y", ref, off).ok
    verdict = compare("y", ref, off, quantized=True)
    assert verdict.ok and "Q8_0 level" in verdict.line()


def test_a_wrong_value_after_a_quantized_activation_fails():
    """Twice the term's room off, or a sign lost, is outside."""
    rng = np.random.default_rng(2)
    ref = rng.standard_normal((32, 64)).astype(BF16)
    rms = float(np.sqrt(np.mean(ref.astype(np.float64) ** 2)))
    for value in (ref[3, 4] + 2 * (RTOL["bf16"] + Q8_0_LEVEL) * (abs(ref[3, 4]) + rms), -ref[3, 4]):
        wrong = ref.copy()
        wrong[3, 4] = value
        verdict = compare("y", ref, wrong, quantized=True)
        assert not verdict.ok and verdict.first_bad == (3, 4)


DOWNSTREAM = """
func.func @f(%x: tensor<8x64xbf16>, %wv: tensor<64x64xi8>, %ws: tensor<2x64xf16>, %c: tensor<8x64xbf16>) -> (tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>) {
  %q = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0" : (tensor<8x64xbf16>, tensor<64x64xi8>, tensor<2x64xf16>) -> tensor<8x64xbf16>
  %f = tg.matmul_q8_0 %x, %wv, %ws activation "float" : (tensor<8x64xbf16>, tensor<64x64xi8>, tensor<2x64xf16>) -> tensor<8x64xbf16>
  %s = tg.add %q, %f : (tensor<8x64xbf16>, tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %e = tg.add %c, %x : (tensor<8x64xbf16>, tensor<8x64xbf16>) -> tensor<8x64xbf16>
  func.return %q, %f, %s, %e : tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x64xbf16>
}
"""


@pytest.mark.parametrize(
    "fed, want", [((), ["q", "s"]), (("c",), ["e", "q", "s"])], ids=["alone", "c fed"]
)
def test_the_program_says_which_outputs_are_downstream(fed, want):
    """A product that quantizes its activation and what reads it, not a product that reads its
    activation as it is; an input an earlier chained function's such output feeds."""
    fn = entry_function(parse_module(DOWNSTREAM))
    downstream = quantized_downstream(fn, fed)
    names = {v: n for n, v in zip(output_names(fn), returned_values(fn), strict=True)}
    assert sorted(names[v] for v in downstream if v in names) == want


def test_the_program_says_which_outputs_read_a_q8_0_tensor():
    """Every Q8_0 product, whichever way it reads its activation, and what reads it."""
    fn = entry_function(parse_module(DOWNSTREAM))
    names = {v: n for n, v in zip(output_names(fn), returned_values(fn), strict=True)}
    assert sorted(names[v] for v in q8_0_downstream(fn) if v in names) == ["f", "q", "s"]


# ── Downstream of a Q8_0 tensor stored as bfp8_b (compare.py: BFP8_B_STORAGE) ──────────────────


def test_the_bfp8_b_term_is_two_operands_of_2_to_the_minus_5_of_a_group_rms():
    """Half a unit, 2^-7 of a group's leading power of two, times max|x| <= sqrt(16) rms, per
    operand; a float output after a quantizing product over a bfp8_b weight has all three terms."""
    assert BFP8_B_STORAGE == 2 * (2.0**-7 * np.sqrt(16))
    assert rtol(np.dtype(BF16), quantized=True, bfp8_b=True) == RTOL["bf16"] + Q8_0_LEVEL + 2**-4
    assert rtol(np.dtype(np.int32), quantized=True, bfp8_b=True) == 0


@pytest.fixture(scope="module")
def q8_0_product() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The docstring's largest case: 32x4096x1024, Student-t(3) weights, seed 2. The reference
    (ggml: Q8_0 view, int8 dot), the chip's result (both operands bfp8_b, f32 sums, bf16), the
    result without the conversion (the view and the weight exact), and a, w as the chip holds them."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((32, 4096)).astype(BF16).astype(np.float32)
    w = (rng.standard_t(3, (4096, 1024)) * 0.02).astype(np.float32)
    values, scales = quantize(w, axis=0)
    ref = matmul_q8_0(a, values, scales, "q8_0").astype(BF16)
    qa, da = quantize(a, axis=1)
    wd = dequantize(values, scales, axis=0)
    exact = (dequantize(qa, da, axis=1) @ wd).astype(BF16)
    ab, wb = round_bfp8_b(a), round_bfp8_b(wd)
    return ref, (ab @ wb).astype(BF16), exact, (ab, wb)


def test_a_q8_0_product_as_a_chip_holds_it_passes_with_the_term(q8_0_product):
    """The conversion costs (its error is about twice that of the exact view and weight), and
    the measured 0.056 is within rtol + one level + the term."""
    ref, chip, exact, _ = q8_0_product
    verdict = compare("y", ref, chip, quantized=True, bfp8_b=True)
    assert verdict.ok and "+bfp8_b storage" in verdict.line()
    assert verdict.max_rel > 2 * compare("y", ref, exact, quantized=True).max_rel
    assert verdict.max_rel == pytest.approx(0.056, abs=0.001)


def test_a_q8_0_product_missing_a_k_tile_fails_with_the_term(q8_0_product):
    ref, chip, _, (ab, wb) = q8_0_product
    rows, cols = slice(0, TILE), slice(5 * TILE, 6 * TILE)
    wrong = chip.copy()
    wrong[rows, cols] = (ab[rows, TILE:] @ wb[TILE:, cols]).astype(BF16)
    verdict = compare("y", ref, wrong, quantized=True, bfp8_b=True)
    assert not verdict.ok and verdict.bad <= TILE * TILE
