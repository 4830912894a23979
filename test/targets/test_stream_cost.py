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
