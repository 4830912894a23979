"""The bf16 tolerance catches one wrong 32x32 tile of a 1024x1024x1024 GEMM (docs/simulator.md#tolerances).

The correct result is what any f32-accumulating program computes: f32 partial sums over K blocks,
added in another order than the reference's, rounded once to bf16. Each wrong result differs from
it in one output tile only. Everything is numpy (about a second), independent of the compiler.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from spatial_dialect.tools.compare import RTOL, RTOL_16BIT_ACCUMULATOR, compare

BF16 = ml_dtypes.bfloat16
N = 1024
TILE = 32
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


@pytest.mark.parametrize("wrong", ["misplaced", "missing K tile"])
def test_a_grossly_wrong_tile_fails(gemm, wrong):
    a, b, ref, good = gemm
    rows, cols = rows_cols()
    if wrong == "misplaced":
        tile = good[rows, cols.start + TILE : cols.stop + TILE]
    else:
        tile = (a[rows, TILE:] @ b[TILE:, cols]).astype(BF16)
    verdict = compare("c", ref, with_tile(good, tile))
    assert not verdict.ok and verdict.bad <= TILE * TILE
