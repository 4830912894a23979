"""Presets: the numbers each must carry, checked against the public figures they cite."""

import dataclasses

import pytest

from spatial_dialect.targets import PRESETS, Target, TargetError, load_target, normalize_dtype

NAMES = ["wormhole_n150", "blackhole_p150", "plasticine", "rtx3060", "h100", "h200"]


def test_the_six_presets_exist():
    assert sorted(PRESETS) == sorted(NAMES)
    for name in NAMES:
        assert isinstance(PRESETS[name], Target)
        assert PRESETS[name].name == name
        assert load_target(name) is PRESETS[name]


@pytest.mark.parametrize("name", NAMES)
def test_every_preset_is_sane_and_hashable(name):
    t = PRESETS[name]
    assert t.mesh_x > 0 and t.mesh_y > 0
    assert 0 < t.local_mem_bytes <= t.local_mem_max_bytes
    assert t.clock_ghz > 0 and t.dram_gbps > 0 and t.dram_channels > 0
    assert t.multicast in ("rectangle", "none")
    assert (t.tile_rows, t.tile_cols) == (32, 32)
    hash(t)  # frozen and hashable: usable as a cache key
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.mesh_x = 1  # type: ignore[misc]


def test_tensix_tile_bytes():
    # bf16 1024 x 2 B; f32 1024 x 4 B; bfp8_b 1024 mantissa bytes + 64 shared-exponent bytes (one per
    # 16 datums); bfp4_b 512 + 64.
    for name in ("wormhole_n150", "blackhole_p150"):
        t = PRESETS[name]
        assert t.tile_bytes("bf16") == 1024 * 2
        assert t.tile_bytes("f32") == 1024 * 4
        assert t.tile_bytes("bfp8_b") == 1024 + 64
        assert t.tile_bytes("bfp4_b") == 512 + 64
        assert t.tile_bytes("BFLOAT8_B") == 1088  # tt-metal's spelling
        assert t.has_dtype("i8") and t.has_dtype("i32")


def test_tensix_matmul_cycles_by_fidelity():
    # 16 MVMULs of 8x16 @ 16x16 per 32x32x32 tile, one per fidelity phase.
    t = PRESETS["wormhole_n150"]
    assert [t.matmul_tile_cycles("bf16", f) for f in ("lofi", "hifi2", "hifi3", "hifi4")] == [
        16,
        32,
        48,
        64,
    ]
    assert t.matmul_tile_cycles("bfp8_b", "HiFi2") == 32
    # 4096 FLOP per cycle per core at LoFi: 2 * 32^3 / 16.
    assert t.peak_flops_per_cycle("bf16", "lofi") == 64 * 4096


def test_accumulator_tiles():
    t = PRESETS["wormhole_n150"]
    assert t.acc_tiles("bf16") == 8  # half-sync dest
    assert t.acc_tiles("f32") == 4  # fp32 accumulation halves it
    assert t.acc_tiles("bfp8_b") == 8  # block-float accumulates in the 16-bit dest
    assert not t.acc_in_registers
    g = PRESETS["rtx3060"]
    assert g.acc_in_registers and g.acc_lanes == 4


def test_dram_bytes_per_cycle():
    assert PRESETS["wormhole_n150"].dram_bytes_per_cycle == pytest.approx(288 / 1.0)
    assert PRESETS["blackhole_p150"].dram_bytes_per_cycle == pytest.approx(512 / 1.35)


def test_local_memory_layout():
    wh = PRESETS["wormhole_n150"]
    assert wh.local_mem_base + wh.local_mem_max_bytes == 1464 * 1024
    bh = PRESETS["blackhole_p150"]
    assert bh.local_mem_end == 1536 * 1024
    gpu = PRESETS["rtx3060"]
    assert (gpu.local_mem_bytes, gpu.local_mem_max_bytes) == (48 * 1024, 99 * 1024)


def test_plasticine_fabric_word_and_gpu_lines():
    p = PRESETS["plasticine"]
    assert p.fabric_word_bytes == 4 * 16
    assert p.multicast == "none"
    for name in ("rtx3060", "h100", "h200"):
        assert PRESETS[name].mesh_y == 1 and PRESETS[name].multicast == "none"
    assert PRESETS["h100"].mesh_x == 132 and PRESETS["rtx3060"].mesh_x == 28


def test_fidelity_is_ignored_where_there_are_no_phases():
    h = PRESETS["h100"]  # 20 cycles a tile: the sustained rate (targets/presets.py [MAMF])
    assert {h.matmul_tile_cycles("bf16", f) for f in ("lofi", "hifi2", "hifi3", "hifi4")} == {20}


def test_missing_datatype_is_refused_by_name():
    with pytest.raises(TargetError) as e:
        PRESETS["plasticine"].tile_bytes("bf16")
    assert "plasticine" in str(e.value) and "bf16" in str(e.value)
    with pytest.raises(TargetError) as e:
        PRESETS["h100"].matmul_tile_cycles("bfp8_b", "lofi")
    assert "h100" in str(e.value) and "bfp8_b" in str(e.value)
    with pytest.raises(TargetError) as e:
        PRESETS["wormhole_n150"].matmul_tile_cycles("bf16", "hifi9")
    assert "hifi9" in str(e.value)
    assert not PRESETS["plasticine"].has_dtype("bf16")


def test_with_grid_and_with_local_mem():
    t = PRESETS["blackhole_p150"].with_grid(11, 10)
    assert (t.mesh_x, t.mesh_y, t.sites) == (11, 10, 110)
    assert PRESETS["blackhole_p150"].mesh_x == 13  # the preset is untouched
    with pytest.raises(TargetError, match="14x10"):
        PRESETS["blackhole_p150"].with_grid(14, 10)
    with pytest.raises(TargetError):
        PRESETS["blackhole_p150"].with_grid(0, 10)
    m = PRESETS["rtx3060"].with_local_mem(64 * 1024)
    assert m.local_mem_bytes == m.local_mem_max_bytes == 64 * 1024
    with pytest.raises(TargetError):
        PRESETS["rtx3060"].with_local_mem(0)


def test_acc_lane_grid():
    g = PRESETS["rtx3060"]  # 4 lanes
    assert g.acc_lane_grid(2, 2) == (2, 2)
    assert g.acc_lane_grid(4, 1) == (4, 1)
    assert g.acc_lane_grid(1, 3) is None


def test_normalize_dtype():
    assert normalize_dtype("BFLOAT16") == "bf16"
    assert normalize_dtype("DataType.BFLOAT4_B") == "bfp4_b"
    assert normalize_dtype("float32") == "f32"
