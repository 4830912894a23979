"""Q8_0 in the cost model and the targets: 34 bytes per 32 elements on every chip, B priced at
its own tiles, and each target's compute decided once (targets/quant.py)."""

from __future__ import annotations

import dataclasses

import pytest

from spatial_dialect.targets import PRESETS, TargetError
from spatial_dialect.targets.cost import compulsory_dram_bytes, gemm_cost
from spatial_dialect.targets.gemm import GemmPlan, GemmShape
from spatial_dialect.targets.quant import DEQUANTIZE, INT8_DOT, q8_0_compute
from spatial_dialect.targets.spec import q8_0_bytes


def test_q8_0_is_34_bytes_per_32_elements():
    assert q8_0_bytes(32) == 34
    assert q8_0_bytes(4096 * 1024) == 4096 * 1024 // 32 * 34


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_chip_stores_q8_0_tiles_at_1088_bytes(name):
    t = PRESETS[name]
    assert t.tile_bytes("q8_0") == t.tile_bytes("q8_0_kn") == 1088


def test_a_q8_0_weight_is_priced_at_its_own_tiles():
    """A decode GEMV over a 4096x4096 weight: B's compulsory bytes are 34/64 of bf16's."""
    t = PRESETS["wormhole_n150"]
    bf16 = GemmShape(1, 4096, 4096, "bf16", "bf16")
    q8 = GemmShape(1, 4096, 4096, "bf16", "bf16", b_fmt="q8_0_kn")
    # A and C are one row (laid out as rows): each of their 128 tiles moves one row, 32 x 2 B
    a_and_c = 128 * 64 + 128 * 64
    assert compulsory_dram_bytes(t, bf16) - a_and_c == 128 * 128 * 2048
    assert compulsory_dram_bytes(t, q8) - a_and_c == 128 * 128 * 1088
    plan = GemmPlan(8, 8, 1, 2, 1, 2, 4)
    assert gemm_cost(t, q8, plan).dram_bytes < gemm_cost(t, bf16, plan).dram_bytes


@pytest.mark.parametrize(
    ("name", "activation", "dtype", "path", "computes"),
    [
        ("wormhole_n150", "q8_0", "bf16", DEQUANTIZE, "bf16"),
        ("blackhole_p150", "q8_0", "f32", DEQUANTIZE, "f32"),
        ("plasticine", "q8_0", "f32", DEQUANTIZE, "f32"),
        ("plasticine", "float", "bf16", DEQUANTIZE, "f32"),
        ("rtx3060", "q8_0", "bf16", INT8_DOT, "i8"),
        ("h100", "q8_0", "bf16", INT8_DOT, "i8"),
        ("h200", "float", "bf16", DEQUANTIZE, "bf16"),
    ],
)
def test_each_target_computes_q8_0_in_a_datatype_it_has(name, activation, dtype, path, computes):
    choice = q8_0_compute(PRESETS[name], activation, dtype)
    assert (choice.path, choice.dtype) == (path, computes)
    # the int8 dot names what came second; a plain widening has no rival; Tensix names the
    # format it stores the weight in (Target.q8_0_storage)
    assert ("runner-up" in choice.why) == (path == INT8_DOT)
    assert ("stored as bfp8_b" in choice.why) == name.endswith("150")


def test_a_chip_that_multiplies_no_float_is_refused_by_name():
    ints_only = dataclasses.replace(
        PRESETS["plasticine"],
        name="ints_only",
        matmul_cycles=tuple((d, c) for d, c in PRESETS["plasticine"].matmul_cycles if d == "i32"),
    )
    with pytest.raises(TargetError, match="ints_only multiplies neither bf16 nor f32"):
        q8_0_compute(ints_only, "q8_0", "bf16")


def test_a_q8_0_view_of_one_row_moves_34_bytes_a_tile():
    """The activation's Q8_0 view of a decode GEMV is one row: a block of 32 values and its f16
    scale per tile, 34 bytes, where a tile of a multi-row view (tiled) moves 32 such rows."""
    t = PRESETS["blackhole_p150"]
    one = GemmShape(1, 4096, 1024, "bf16", "bf16", fmt="q8_0", b_fmt="q8_0_kn")
    two = dataclasses.replace(one, m=2)
    b = 128 * 32 * 1088
    assert compulsory_dram_bytes(t, one) == 128 * 34 + b + 32 * 64
    assert compulsory_dram_bytes(t, two) == 128 * 1088 + b + 32 * 2048
