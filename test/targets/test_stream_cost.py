"""The stream (non-GEMM) cost model, derived by hand for one small case."""

from __future__ import annotations

import dataclasses

from spatial_dialect.targets import PRESETS
from spatial_dialect.targets.stream_cost import StreamQuantities, stream_cost


def test_silu_compute_runs_at_the_targets_vector_rate():
    # 64 items of one 32x32 tile each, silu (4 vector instructions per element), on wormhole_n150
    # (64 sites, a 32-lane SFPU): one item a site, 1024 * 4 / 32 = 128 compute cycles.
    q = StreamQuantities(
        kind="silu",
        items=64,
        read_bytes=2048,
        write_bytes=2048,
        tiles_moved=2,
        moved_bytes=4096,
        elements=1024,
    )
    wormhole = PRESETS["wormhole_n150"]
    assert wormhole.vector_lanes == 32
    assert stream_cost(wormhole, q).compute_cycles == 128
    # The rate is the target's: four times the lanes, a quarter of the cycles.
    wide = dataclasses.replace(wormhole, vector_lanes=128)
    assert stream_cost(wide, q).compute_cycles == 32


def test_presets_declare_their_vector_units():
    lanes = {name: t.vector_lanes for name, t in PRESETS.items()}
    assert lanes == {
        "wormhole_n150": 32,
        "blackhole_p150": 32,
        "plasticine": 16,
        "rtx3060": 128,
        "h100": 128,
        "h200": 128,
    }


def test_an_item_walking_k_pays_a_round_trip_a_block_and_one_blocks_fill():
    # One item (a decode step's arg-max over a 1 x 32768 row: 1024 one-row tiles of 64 B) read in
    # 4 K blocks on wormhole_n150 (500-cycle DRAM round trip, 49 cycles to issue a NoC
    # transaction, 32 B/cycle links): movement max(65536 / 32, 1024 x 49) = 50176 plus 3 round
    # trips after the first block = 51676; compute 32768 elements x 2 / 32 lanes = 2048; fill one round trip and one
    # block's compute, 500 + 512. The whole item's compute in the fill would add 1536 more.
    wormhole = PRESETS["wormhole_n150"]
    assert (wormhole.dram_latency_cycles, wormhole.noc_issue_cycles) == (500, 49)
    assert wormhole.link_bytes_per_cycle == 32
    q = StreamQuantities(
        kind="argmax",
        items=1,
        read_bytes=65536,
        write_bytes=0,
        tiles_moved=1024,
        moved_bytes=65536,
        elements=32768,
        steps=4,
    )
    cost = stream_cost(wormhole, q)
    assert cost.movement_cycles == 1024 * 49 + 3 * 500
    assert cost.compute_cycles == 2048
    assert cost.fill_cycles == 500 + 512
    assert cost.total_cycles == 51676 + 1012


def test_a_single_buffered_item_pays_movement_and_compute_in_series():
    # The arg-max above, single-buffered (one page a FIFO: a block's load waits for the last
    # block's compute): the steady part is movement 51676 + compute 2048, not their maximum.
    wormhole = PRESETS["wormhole_n150"]
    q = StreamQuantities(
        kind="argmax",
        items=1,
        read_bytes=65536,
        write_bytes=0,
        tiles_moved=1024,
        moved_bytes=65536,
        elements=32768,
        steps=4,
        serial=True,
    )
    cost = stream_cost(wormhole, q)
    assert cost.total_cycles == 51676 + 2048 + 1012
    assert cost.bound == "noc"
    assert cost.why.endswith("single-buffered: movement and compute serial")
