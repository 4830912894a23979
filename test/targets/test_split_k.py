"""Split-K in the cost model and the footprint, against hand derivations written out here."""

import pytest

from spatial_dialect.targets import PRESETS, TargetError, target_from_mapping
from spatial_dialect.targets.cost import (
    GemmPlan,
    GemmShape,
    footprint_parts,
    gemm_cost,
    gemm_cost_floor,
    gemm_quantities,
)


def toy():
    """The 2x2 chip of test_targets_cost: 32 B/cycle links, 64 B/cycle DRAM, no latencies."""
    return target_from_mapping(
        dict(
            name="toy",
            mesh_x=2,
            mesh_y=2,
            local_mem_bytes=1 << 20,
            movement_engines=2,
            acc_in_registers=False,
            multicast="rectangle",
            link_bytes_per_cycle=32,
            hop_cycles=0,
            clock_ghz=1.0,
            dram_gbps=64.0,
            dram_channels=1,
            acc_tiles={"bf16": 8, "f32": 4},
            tile_bytes={"bf16": 2048, "f32": 4096},
            matmul={"bf16": {"lofi": 16, "hifi2": 32, "hifi3": 48, "hifi4": 64}},
        ),
        where="toy",
    )


# 32 x 128 x 64: 1 x 4 x 2 tiles. Two K slices of 2 tiles stacked along y, each on a 2x1 grid of
# 1x1 blocks (both block columns on the two sites of a row), one K block of 2 tiles an item.
SHAPE = GemmShape(32, 128, 64)
PLAN = GemmPlan(2, 1, 1, 1, 1, 1, 2, split_k=2, split_axis="y")


def test_split_quantities():
    # A slice: A's row of 2 K tiles read once and multicast along the row (2 tiles), B read by each
    # site for itself (its 2 x 1 column: 2 x 2 = 4 tiles). Two slices: A 4 tiles (all of A once),
    # B 8 (all of B once). The output, 2 tiles, written once, by the last slice. 1 x 2 x 4 = 8
    # tile-matmuls in all, 2 on the busiest site (1 output tile x its slice's 2 K tiles), which
    # first receives 1 tile of partial sums.
    q = gemm_quantities(toy(), SHAPE, PLAN)
    assert (q.a_tiles_dram, q.b_tiles_dram, q.c_tiles_written) == (4, 8, 2)
    assert (q.tile_matmuls, q.tile_matmuls_busiest) == (8, 2)
    assert (q.sites_used, q.k_slices, q.partial_tiles, q.k_blocks) == (4, 2, 1, 1)


def test_split_cost_hand_derivation():
    # HiFi2, in place (bf16 partial sums: 2048-byte tiles), one step.
    # compute: 2 tile-matmuls x 32 = 64, plus the partial tile reloaded at the link rate (no unpack
    #   rate declared): 2048 / 32 = 64  -> 128.
    # A engine: read 2 tiles = 128, multicast them = 128 -> 256, the critical path.
    # B engine: read 2 tiles = 128, plus the store (or the partials sent on): 1 x 2048 / 32 = 64.
    # DRAM: (4 + 8 + 2) x 2048 / 64 = 448.
    # fill = max(256, 128, 448) = 448; steady 0; drain = last compute 128 + the chain (one hand-over:
    #   the 1-tile sub-block over the link 64 and into the accumulator 64, no hop latency) 128 +
    #   the write-back max(2048 / 32 = 64, 2 sites x 2048 / 64 = 64) = 64  -> 320.
    # total = max(448 + 320, 128, 448, 256) = 768.
    c = gemm_cost(toy(), SHAPE, PLAN, "hifi2", in_place=True)
    assert c.compute_cycles == 128
    assert c.movement_cycles == 256
    assert c.dram_cycles == 448
    assert (c.fill_cycles, c.steady_cycles, c.drain_cycles) == (448, 0, 320)
    assert c.total_cycles == 768
    # f32 partial sums (exact): 4096-byte tiles, so the reload and the chain each take 128.
    exact = gemm_cost(toy(), SHAPE, PLAN, "hifi2", exact=True)
    assert exact.compute_cycles == 64 + 128
    assert exact.drain_cycles == 192 + (128 + 128) + 64


def test_split_floor_is_a_floor():
    for fidelity in ("lofi", "hifi4"):
        floor = gemm_cost_floor(toy(), SHAPE, PLAN, fidelity)
        assert floor <= gemm_cost(toy(), SHAPE, PLAN, fidelity, in_place=True).total_cycles


def test_split_footprint():
    # Operands: 2 pages of 1 x 2 tiles each = 4 x 2048 = 8192 bytes, A and B alike. Output in
    # place: 1 page of 1 tile (one sub-block). No spill (one K block). Partials: 1 page per
    # sub-block at the accumulator's type, bf16 2048 in place, f32 4096 exact.
    parts = footprint_parts(toy(), SHAPE, PLAN, in_place=True)
    assert (parts.in0, parts.in1, parts.out, parts.interm, parts.partials) == (
        8192,
        8192,
        2048,
        0,
        2048,
    )
    assert footprint_parts(toy(), SHAPE, PLAN, exact=True).partials == 4096
    unsplit = GemmPlan(2, 1, 1, 1, 1, 1, 2)
    assert footprint_parts(toy(), SHAPE, unsplit, in_place=True).partials == 0


def test_split_plan_is_checked():
    with pytest.raises(TargetError, match="split-K slices a blocked grid plan"):
        GemmPlan(1, 1, 1, 1, 1, 1, 1, streaming=True, split_k=2)
    with pytest.raises(TargetError, match="split_axis is x or y"):
        GemmPlan(1, 1, 1, 1, 1, 1, 1, split_k=2, split_axis="z")
    assert PLAN.mesh_extent == (2, 2)
    assert GemmPlan(2, 1, 1, 1, 1, 1, 2, split_k=2, split_axis="x").mesh_extent == (4, 1)


def test_split_k_fills_blackhole_where_the_grid_does_not_divide():
    # 2048^3 bf16 on blackhole_p150 (13x10): 64 tiles do not spread over 13 columns. Two K slices
    # of 13x5 sites give each site 13 x 5 x 32 = 2080 tile-matmuls, against 7 x 5 x 64 = 2240 for
    # one 7x5 block a site on the whole mesh: the even share is 64^3 / 130 = 2016.
    bh = PRESETS["blackhole_p150"]
    shape = GemmShape(2048, 2048, 2048)
    split = gemm_quantities(bh, shape, GemmPlan(13, 5, 13, 5, 1, 1, 1, split_k=2))
    whole = gemm_quantities(bh, shape, GemmPlan(13, 10, 7, 5, 7, 1, 1))
    assert (split.tile_matmuls_busiest, whole.tile_matmuls_busiest) == (2080, 2240)
    assert split.sites_used == 130
