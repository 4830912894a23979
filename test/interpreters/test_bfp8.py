"""bfp8_b rounding (tools/interpreters/bfp8.py) against hand-computed groups, and the packer's
rules as properties: the expected values below are worked out by hand from tt-metal's rules
(shared exponent E = the group's largest, value = m * 2^(E - 133), m rounded at bit 17 of the
shifted significand, ties to even, saturating at 127), never by the code under test."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from spatial_dialect.tools.interpreters.bfp8 import GROUP, round_bfp8_b


def group(*values: float) -> np.ndarray:
    """A group of 16: `values` then zeros."""
    g = np.zeros(GROUP, np.float32)
    g[: len(values)] = values
    return g


@pytest.mark.parametrize(
    ("x", "expected"),
    [
        (1.0, 1.0),  # m = 64 at E = 127
        (1 / 3, 21 / 64),  # 0xAAAAAB >> 2 = 0x2AAAAA: 21.33 units of 2^-6
        (-1 / 3, -21 / 64),
        (1 + 2**-7, 1.0),  # 64.5 units: a tie, to the even 64
        (1 + 3 * 2**-7, 66 / 64),  # 65.5 units: a tie, to the even 66
        (2**-7, 0.0),  # half a unit: a tie, to the even 0
        (3 * 2**-7, 2**-5),  # 1.5 units: to 2
        (2**-8, 0.0),  # a quarter unit
        (-(2**-8), 0.0),  # rounds to 0, stored without its sign
        # just above a tie, by a bit the shift drops: the packer sees the tie (to 0), where
        # rounding the exact value would give one unit
        (np.float32(2**-7) * np.float32(1 + 2**-23), 0.0),
        (1.5 * 2**-7, 2**-6),  # 0.75 units: one unit
    ],
)
def test_a_value_beside_one_takes_the_group_exponent_of_one(x: float, expected: float) -> None:
    got = round_bfp8_b(group(1.0, x))
    assert got[0] == 1.0
    assert got[1] == np.float32(expected)
    assert np.signbit(got[1]) == (expected < 0)


def test_the_largest_magnitude_saturates_at_127_units() -> None:
    """1.9999999 is 127.99 units of 2^-6: to nearest it is 128, which the exponent cannot carry,
    so m stays 127 (1.984375) and the exponent is not raised."""
    x = np.float32(2) - np.float32(2**-23)
    assert round_bfp8_b(group(x))[0] == np.float32(127 / 64)


def test_groups_are_sixteen_values_along_the_last_axis_from_index_0() -> None:
    """1/3 in the second group has an exponent of its own (125): 0xAAAAAB >> 17 = 85.33 units
    of 2^-8; in the first group beside 1.0 it keeps 21 units of 2^-6."""
    row = np.zeros((2, 32), np.float32)
    row[:, 0] = 1.0
    row[:, 16] = 1 / 3
    row[1, 1] = 1 / 3
    got = round_bfp8_b(row)
    assert got[0, 16] == np.float32(85 / 256) and got[1, 16] == np.float32(85 / 256)
    assert got[1, 1] == np.float32(21 / 64)


def test_a_row_not_a_multiple_of_sixteen_is_padded_with_zeros() -> None:
    x = np.array([[1.0, 1 / 3, 0.75]], np.float32)
    assert round_bfp8_b(x).tolist() == [[1.0, 21 / 64, 0.75]]


def test_zero_and_f32_subnormals_are_stored_as_zero() -> None:
    tiny = np.float32(1e-40)  # exponent field 0
    got = round_bfp8_b(group(tiny, 0.0, -0.0))
    assert not got.any() and not np.signbit(got).any()


finite = st.floats(
    min_value=-(2.0**60), max_value=2.0**60, allow_nan=False, allow_subnormal=False, width=32
)
rows = st.lists(finite, min_size=1, max_size=48).map(lambda v: np.array(v, np.float32))


@settings(max_examples=300, deadline=None)
@given(rows)
def test_rounding_twice_changes_nothing(x: np.ndarray) -> None:
    once = round_bfp8_b(x)
    np.testing.assert_array_equal(round_bfp8_b(once), once)


@settings(max_examples=300, deadline=None)
@given(rows)
def test_every_value_is_within_one_unit_and_bf16_holds_it(x: np.ndarray) -> None:
    """A unit is 2^(E - 133) = 2^-6 of the group's leading power of two: within half a unit
    unless it saturates (then under one unit); every result has at most 7 significant bits,
    so bf16 holds it exactly."""
    got = round_bfp8_b(x)
    assert np.array_equal(got.astype(ml_dtypes.bfloat16).astype(np.float32), got)
    padded = np.pad(x, (0, -len(x) % GROUP)).reshape(-1, GROUP)
    with np.errstate(divide="ignore"):  # an all-zero group: unit 0, and it rounds to 0
        lead = np.exp2(np.floor(np.log2(np.abs(padded.astype(np.float64)).max(axis=1))))
    unit = np.repeat(lead * 2.0**-6, GROUP)[: len(x)]
    err = np.abs(got.astype(np.float64) - x.astype(np.float64))
    assert (err <= unit).all()
    saturated = np.abs(got) == np.float32(127) * unit
    assert (err[~saturated] <= unit[~saturated] / 2 * (1 + 2.0**-16)).all()
    assert (np.sign(got) * np.sign(x) >= 0).all()


@settings(max_examples=200, deadline=None)
@given(rows, st.integers(min_value=-40, max_value=40))
def test_a_power_of_two_scale_commutes_with_rounding(x: np.ndarray, k: int) -> None:
    # away from f32's subnormals, which the packer stores as 0
    assume(((x == 0) | (np.abs(x) >= 2.0**-80)).all())
    np.testing.assert_array_equal(round_bfp8_b(x * np.float32(2.0**k)), round_bfp8_b(x) * 2.0**k)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(min_value=-127, max_value=127), min_size=16, max_size=16))
def test_seven_bit_integers_beside_the_largest_are_exact(q: list[int]) -> None:
    """A Q8_0 block's integers, times a power-of-two scale, are bfp8_b values: exact."""
    x = np.array(q, np.float32) * np.float32(2.0**-9)
    np.testing.assert_array_equal(round_bfp8_b(x), x)
