"""The integer maps (`sp.map requant`, `clamp`) in Triton: exact on inputs chosen where f32
arithmetic would not be (i32 values above 2^24, products that tie at .5), under Triton's
interpreter, and natively where a CUDA GPU is present (SPATIAL_TRITON_NATIVE=1).

The expected values are numpy's (numerics.int_requant is the sp semantics, written apart from
the printer), and a few are spelled out by hand so that the test cannot agree with itself."""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("triton")
pytest.importorskip("torch")

from spatial_dialect.passes.pipeline import compile_module  # noqa: E402
from spatial_dialect.tools.backend.triton.runner import (  # noqa: E402
    run_interpreted,
    run_native,
)
from spatial_dialect.tools.interpreters.numerics import int_requant  # noqa: E402
from spatial_dialect.tools.spatial_run import entry_function, parse_module  # noqa: E402

RUN = run_native if os.environ.get("SPATIAL_TRITON_NATIVE") == "1" else run_interpreted
SCALE = 2.0**-24  # exact in f32: x * scale is x's value shifted, so ties sit at x = (2k+1) 2^23


def requant_program(scale: float, zp: int) -> str:
    x, y = "tensor<40x72xi32>", "tensor<40x72xi8>"
    return f"""func.func @f(%x: {x}) -> {y} {{
  %y = tg.int_requant %x scale {scale!r} zero_point {zp} : ({x}) -> {y}
  func.return %y : {y}
}}"""


def clamp_program(elt: str, lo: int, hi: int) -> str:
    x = f"tensor<40x72x{elt}>"
    return f"""func.func @f(%x: {x}) -> {x} {{
  %y = tg.int_clamp %x lo {lo} hi {hi} : ({x}) -> {x}
  func.return %y : {x}
}}"""


def run(text: str, x: np.ndarray, target: str = "h100") -> np.ndarray:
    fn = entry_function(parse_module(text))
    (y,) = RUN(compile_module(fn, target), [x])
    return np.asarray(y)


# hand-checked rows: x, and round_half_even(x * 2^-24) - 3 saturated to i8
BY_HAND = [
    (41943040, -1),  # 2.5 -> 2 (tie to even)
    (41943041, 0),  # 2.50000006 -> 3; f32 holds 41943040 here and would give 2
    (58720256, 1),  # 3.5 -> 4
    (-41943040, -5),  # -2.5 -> -2
    (2147483647, 125),  # 127.99999994 -> 128, -3
    (-2147483648, -128),  # -128 - 3 saturates
]


@pytest.mark.parametrize("target", ["h100", "rtx3060"])
def test_requant_is_exact_where_f32_is_not(target: str) -> None:
    rng = np.random.default_rng(5)
    x = rng.integers(-(2**31), 2**31, size=(40, 72), dtype=np.int64).astype(np.int32)
    for i, (v, _) in enumerate(BY_HAND):
        x[i, 0] = v
    got = run(requant_program(SCALE, -3), x, target)
    want = int_requant(x, SCALE, -3)
    assert got.dtype == np.int8
    assert np.array_equal(got, want), np.argwhere(got != want)[:5]
    assert got[: len(BY_HAND), 0].tolist() == [w for _, w in BY_HAND]
    # the test can fail: f32 products round 41943041 to the tie and give another answer
    f32 = np.clip(np.rint(x.astype(np.float32) * np.float32(SCALE)) - 3, -128, 127)
    assert not np.array_equal(f32.astype(np.int8), want)


def test_requant_with_a_scale_that_is_not_a_power_of_two() -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-3000, 3000, size=(40, 72), dtype=np.int32)
    got = run(requant_program(0.0371, 5), x)
    assert np.array_equal(got, int_requant(x, 0.0371, 5))


@pytest.mark.parametrize("elt, lo, hi", [("i32", -(2**30) - 1, 2**30 + 3), ("i8", -100, 50)])
def test_clamp_is_exact_in_the_operand_type(elt: str, lo: int, hi: int) -> None:
    rng = np.random.default_rng(3)
    info = np.iinfo(np.int32 if elt == "i32" else np.int8)
    x = rng.integers(info.min, info.max, size=(40, 72), endpoint=True, dtype=np.int64)
    x = x.astype(info.dtype)
    got = run(clamp_program(elt, lo, hi), x)
    want = np.clip(x.astype(np.int64), lo, hi)
    assert np.array_equal(got.astype(np.int64), want)
    assert got.min() == lo and got.max() == hi  # both bounds bite (2^30 + 3 is not an f32)
