"""targets/dram.py: the DRAM rate a plan's traffic sustains, worked out by hand from the presets'
numbers (docs/targets.md#achievable-dram-bandwidth)."""

import math

from hypothesis import given
from hypothesis import strategies as st

from spatial_dialect.targets import PRESETS
from spatial_dialect.targets.cost import GemmPlan, GemmShape, gemm_cost, roofline_cycles
from spatial_dialect.targets.dram import (
    dram_cycles,
    dram_transfer_cycles,
    site_ingest_bytes_per_cycle,
    sustained_dram_bytes_per_cycle,
)

WH, BH, H100 = PRESETS["wormhole_n150"], PRESETS["blackhole_p150"], PRESETS["h100"]


def test_spread_traffic_runs_at_the_sustained_fraction():
    # Wormhole: 288 GB/s at 1 GHz, 267 of it sustained [DRAM-WH]; Blackhole 512 GB/s at 1.35 GHz
    # = 379.26 B/cycle, 500 of it sustained: 370.37.
    assert math.isclose(sustained_dram_bytes_per_cycle(WH), 267.0)
    assert math.isclose(sustained_dram_bytes_per_cycle(BH), 500 / 1.35)
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, readers=64, pages=10_000), 267.0)


def test_one_banks_pages():
    # 3 pages interleaved over Wormhole's 12 channels keep 3 busy: a quarter of 267.
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, pages=3), 267.0 * 3 / 12)
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, pages=12), 267.0)


def test_few_sites_reading():
    # One Wormhole site takes DRAM data through 2 movement engines' 32 B/cycle links: 64 B/cycle,
    # of which the DRAM sustains 92.7%: 59.33. Four sites: 256 x 0.927 = 237.33. Five: all 288.
    assert site_ingest_bytes_per_cycle(WH) == 64.0
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, readers=1), 64 * 267 / 288)
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, readers=4), 256 * 267 / 288)
    assert math.isclose(sustained_dram_bytes_per_cycle(WH, readers=5), 267.0)


def test_cycles():
    # 267,000 bytes at 267 B/cycle: 1000 cycles; 100 bytes: 0.3745 -> 1 whole cycle.
    assert math.isclose(dram_transfer_cycles(WH, 267_000), 1000.0)
    assert dram_cycles(WH, 100) == 1 and dram_cycles(WH, 0) == 0
    assert dram_cycles(WH, 1000, rate=10.0) == 100


@given(st.integers(1, 200), st.integers(1, 200), st.integers(1, 200), st.integers(1, 200))
def test_more_readers_or_pages_never_slow_it(r1, r2, p1, p2):
    for t in (WH, BH, H100, PRESETS["plasticine"]):
        lo = sustained_dram_bytes_per_cycle(t, min(r1, r2), min(p1, p2))
        hi = sustained_dram_bytes_per_cycle(t, max(r1, r2), max(p1, p2))
        assert lo <= hi <= t.dram_bytes_per_cycle * t.dram_efficiency


def test_the_roofline_keeps_the_peak():
    # A decode GEMV reads 32 MiB of weights: its roofline is at 288 B/cycle, its plans at most 267.
    shape = GemmShape(1, 4096, 4096)
    roof = roofline_cycles(WH, shape)
    # B's 128 x 128 tiles, and A's and C's 128 tiles of one row each (64 B of bf16)
    assert roof == math.ceil((128 * 128 * 2048 + (128 + 128) * 64) / 288)
    plan = GemmPlan(32, 1, 1, 4, 1, 4, 1, mcast_b=False, line=True)
    assert gemm_cost(WH, shape, plan).total_cycles >= roof * 288 / 267
