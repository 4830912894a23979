"""The one-row read (docs/targets.md#one-transaction-per-tile): a one-row GEMM's A block is one
contiguous segment of its one row. A target that declares `noc_burst_bytes` reads it in
ceil(bytes / burst) NoC transactions; every other target, the presets included (the TT-Lang printer
reads tile by tile), one a tile. Expected values are derived by hand here."""

from pathlib import Path

import pytest

from spatial_dialect.targets import PRESETS, TargetError, load_target, target_from_mapping
from spatial_dialect.targets.cost import GemmPlan, GemmShape, gemm_quantities
from spatial_dialect.targets.cost import _movement as movement

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "targets"


def toy(**overrides):
    """One site, 32 B/cycle links, 49 cycles to issue a NoC read, no latencies: each read below is
    max(transactions x 49, bytes / 32) cycles."""
    fields = dict(
        name="toy",
        mesh_x=1,
        mesh_y=1,
        local_mem_bytes=1 << 20,
        movement_engines=2,
        acc_in_registers=False,
        multicast="rectangle",
        link_bytes_per_cycle=32,
        hop_cycles=0,
        clock_ghz=1.0,
        dram_gbps=64.0,
        dram_channels=1,
        noc_issue_cycles=49,
        acc_tiles={"bf16": 8, "f32": 4},
        tile_bytes={"bf16": 2048, "f32": 4096},
        matmul={"bf16": {"lofi": 16, "hifi2": 32, "hifi3": 48, "hifi4": 64}},
    )
    fields.update(overrides)
    return target_from_mapping(fields, where="toy")


# 1 x 1024 x 32 in one step: A is 32 tiles of one bf16 row (64 B each, 2048 B in all), B 32 tiles.
ONE_ROW, ONE_STEP = GemmShape(1, 1024, 32), GemmPlan(1, 1, 1, 1, 1, 1, 32)


def a_read(target, shape=ONE_ROW, plan=ONE_STEP) -> float:
    return movement(target, shape, gemm_quantities(target, shape, plan), 1).a_read


def test_without_bursts_a_one_row_read_is_one_transaction_a_tile():
    # 32 transactions x 49 = 1568 cycles, above the 2048 B / 32 = 64 of the link.
    assert a_read(toy()) == 1568


def test_a_burst_reads_the_row_segment_as_one_transaction():
    # 2048 B in one 8192 B burst: max(1 x 49, 64) = 64, the link's time.
    assert a_read(toy(noc_burst_bytes=8192)) == 64
    # 512 B bursts: ceil(2048 / 512) = 4 transactions, 4 x 49 = 196 > 64.
    assert a_read(toy(noc_burst_bytes=512)) == 196


def test_a_tiled_a_is_read_a_tile_a_transaction_whatever_the_burst():
    # 64 x 1024 x 32: A is 2 x 32 whole tiles (tiled, interleaved), 64 x 49 = 3136 cycles of issue
    # against 64 x 2048 / 32 = 4096 of link at 49; at 100 a transaction, 6400 of issue.
    shape, plan = GemmShape(64, 1024, 32), GemmPlan(1, 1, 2, 1, 1, 1, 32)
    for bursts in ({}, {"noc_burst_bytes": 8192}):
        assert a_read(toy(**bursts), shape, plan) == 4096
        assert a_read(toy(**bursts, noc_issue_cycles=100), shape, plan) == 6400


def test_the_presets_read_tile_by_tile_as_the_ttlang_printer_does():
    # ttl.copy lowers to one noc_async_read_tile a tile: no preset may price fewer transactions.
    assert all(t.noc_burst_bytes is None for t in PRESETS.values())


def test_the_what_if_targets_carry_tt_metals_burst():
    # NOC_MAX_BURST_SIZE = 256 NoC words: 32 B on Wormhole, 64 B on Blackhole.
    for name, word in (("wormhole_n150", 32), ("blackhole_p150", 64)):
        t = load_target(str(EXAMPLES / f"{name}_row_bursts.toml"))
        base = PRESETS[name]
        assert t.noc_burst_bytes == 256 * word
        differ = {f for f in t.__dataclass_fields__ if getattr(t, f) != getattr(base, f)}
        assert differ == {"name", "noc_burst_bytes"}


@pytest.mark.parametrize("bad", [0, 16, -8192])
def test_a_burst_below_a_noc_word_is_refused(bad):
    with pytest.raises(TargetError, match="noc_burst_bytes"):
        toy(noc_burst_bytes=bad)
