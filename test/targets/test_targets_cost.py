"""Each cost formula against a hand derivation written out here (never against the code's own output)."""

import math

import pytest

from spatial_dialect.targets import PRESETS, TargetError, target_from_mapping
from spatial_dialect.targets.cost import (
    GemmPlan,
    GemmShape,
    OperandStream,
    Sharing,
    capacity_bound_bytes,
    dram_bytes_by_operand,
    footprint_bytes_for_plan,
    footprint_parts,
    gemm_cost,
    gemm_cost_floor,
    gemm_quantities,
    noc_ingress_bound_cycles,
    page_bytes,
    plan_fits,
    roofline_cycles,
    share_operand,
)

WH = PRESETS["wormhole_n150"]
BH = PRESETS["blackhole_p150"]


def toy(**overrides):
    """A 2x2 chip with round numbers: 32 B/cycle links, 64 B/cycle DRAM (64 GB/s at 1 GHz), no
    latencies, no unpacker limit, so every cycle count below is arithmetic on the shape."""
    fields = dict(
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
    )
    fields.update(overrides)
    return target_from_mapping(fields, where="toy")


# ── quantities ───────────────────────────────────────────────────────────────────────────────────


def test_quantities_small_case():
    # 128 x 64 x 128: mt = 4, kt = 2, nt = 4. Plan: 2x2 grid, 2x2 tiles per site, ibw 1.
    # Blocks: 2 x 2, one round each way. K blocks: 2. Steps on the busiest site: 1 block x 2 = 2.
    # A with multicast: each block row read once per round of columns: 4*2*1 = 8 tiles; replicated:
    # once per column block: 4*2*2 = 16. B likewise 8 / 16. C: 16 tiles.
    # Tile-matmuls: 4*4*2 = 32 in all, 2*2*2 = 8 on the busiest site.
    # Multicast link traversals: 8 A tiles x 1 link + 8 B tiles x 1 link = 16.
    # Deliveries: A 4*2*2 + B 2*4*2 = 32, plus 16 output tiles = 48.
    q = gemm_quantities(toy(), GemmShape(128, 64, 128), GemmPlan(2, 2, 2, 2, 2, 2, 1))
    assert (q.blocks_m, q.blocks_n, q.k_blocks, q.busiest_steps) == (2, 2, 2, 2)
    assert (q.a_tiles_dram_mcast, q.a_tiles_dram_replicated) == (8, 16)
    assert (q.b_tiles_dram_mcast, q.b_tiles_dram_replicated) == (8, 16)
    assert (q.a_tiles_dram, q.b_tiles_dram) == (8, 8)  # the plan multicasts
    assert q.c_tiles_written == 16
    assert (q.tile_matmuls, q.tile_matmuls_busiest) == (32, 8)
    assert q.noc_tile_hops == 16
    assert q.noc_tiles == 48


def test_quantities_without_multicast_and_with_rounds():
    # 256 x 64 x 64 on a 1x1 grid with 2x2 blocks: mt = 8, kt = 2, nt = 2; blocks 4 x 1, all on the one
    # site: 4 rounds of M. A read once (4 block rows x 1 column block): 8*2 = 16; B read once per block
    # row: 2*2*4 = 16. Busiest site: all 8 x 2 output tiles, 4 blocks x 2 K blocks = 8 steps.
    q = gemm_quantities(
        toy(), GemmShape(256, 64, 64), GemmPlan(1, 1, 2, 2, 2, 2, 1, mcast_a=False, mcast_b=False)
    )
    assert (q.a_tiles_dram, q.b_tiles_dram) == (16, 16)
    assert (q.busiest_rows, q.busiest_cols, q.busiest_blocks, q.busiest_steps) == (8, 2, 4, 8)
    assert not q.mcast_a and not q.mcast_b


def test_a_site_receives_its_operands_once_per_block():
    # 256 x 64 x 256 (8 x 2 x 8 tiles) in 2x2 blocks on the 2x2 grid: 4 x 4 blocks, so site (0, 0)
    # runs 2 x 2 rounds, blocks (0, 0), (0, 2), (2, 0), (2, 2): 4 blocks, 16 output tiles. Every block
    # brings its own A rows and B columns (the FIFO streams them, nothing is kept between blocks):
    # A 4 blocks x 2 rows x 2 K tiles = 16 tiles, B likewise 16; a row of sites still reads each
    # block row from DRAM once per round of column blocks: 8 x 2 x 2 = 32 tiles of A.
    q = gemm_quantities(toy(), GemmShape(256, 64, 256), GemmPlan(2, 2, 2, 2, 2, 2, 1))
    assert (q.busiest_blocks, q.busiest_out_tiles) == (4, 16)
    assert (q.busiest_a_tiles, q.busiest_b_tiles) == (16, 16)
    assert q.a_tiles_dram == 32


def test_a_flat_target_is_priced_as_split_work_deals_it():
    # No multicast: 128 x 64 x 384 (4 x 2 x 12 tiles) in 2x3 blocks: 2 x 4 = 8 blocks dealt by
    # split_work_to_sites over the 4 sites, 2 each; site 0 runs items 0 and 1, blocks (0, 0) and
    # (0, 1): 12 output tiles, A 2 blocks x 2 rows x 2 K = 8 tiles, B 2 x 3 x 2 = 12. (The 2-D map
    # over a 2x2 grid would have given it 1 x 2 blocks too, but over the 4 x 1 line of a GPU it
    # would have put every block row on one site.)
    t = toy(multicast="none", mesh_x=4, mesh_y=1)
    q = gemm_quantities(t, GemmShape(128, 64, 384), GemmPlan(4, 1, 2, 3, 1, 1, 1))
    assert (q.sites_used, q.busiest_blocks, q.busiest_out_tiles) == (4, 2, 12)
    assert (q.busiest_a_tiles, q.busiest_b_tiles) == (8, 12)


def test_streaming_quantities():
    # 64 x 96 x 64: 2 x 3 x 2 tiles; 4 output tiles over 4 sites, one each; each reads its K row of A
    # (3 tiles) and K column of B (3 tiles): 12 + 12 tiles from DRAM, nothing shared.
    q = gemm_quantities(toy(), GemmShape(64, 96, 64), GemmPlan.streaming_plan(2, 2))
    assert (q.a_tiles_dram, q.b_tiles_dram, q.c_tiles_written) == (12, 12, 4)
    assert q.tile_matmuls_busiest == 3 and q.busiest_steps == 3


# ── cycles ───────────────────────────────────────────────────────────────────────────────────────


def test_gemm_cost_hand_derivation():
    # Same case as test_quantities_small_case, HiFi2 (32 cycles per tile-matmul), in place (no spill).
    # Steps n = 2.  compute = 8 tile-matmuls x 32 = 256  -> 128 per step.
    # A engine: reads 2 tiles per step at 32 B/cycle = 128 per step, then multicasts them: 128 per step.
    #   over 2 steps: read 256, send 256.
    # B engine (shares the store engine): read 256, send 256, plus the busiest site's 4 output tiles
    #   at 32 B/cycle = 256  -> read 256 + out 512 = 768 in all: the critical engine; 384 per step.
    # DRAM: (8 + 8 + 16) tiles x 2048 B / 64 B/cycle = 1024  -> 512 per step.
    # fill = max(A 512/2, B 512/2, DRAM step 512) = 512; steady = (2 - 1) x max(128, 384, 512) = 512;
    # drain = last compute 128 + max(4 tiles / link = 256, all 4 sites' last blocks through DRAM
    #   = 4 x 4 x 2048 / 64 = 512) = 640.
    # total = 512 + 512 + 640 = 1664; the last tile-matmul retires at 512 + 512 + 128 = 1152.
    c = gemm_cost(
        toy(), GemmShape(128, 64, 128), GemmPlan(2, 2, 2, 2, 2, 2, 1), "hifi2", in_place=True
    )
    assert c.compute_cycles == 256
    assert c.movement_cycles == 768
    assert c.dram_cycles == 1024
    assert (c.fill_cycles, c.steady_cycles, c.drain_cycles) == (512, 512, 640)
    assert c.total_cycles == 1664
    assert c.compute_done_cycles == 1152
    assert c.bound == "dram"
    assert c.us == pytest.approx(1.664)


def test_spill_reloads_partials_when_not_in_place():
    # Without in-place accumulation the second K block first reloads the 2x2 partial tiles:
    # (2 - 1) x 4 tiles x 2048 B at the link rate (the toy declares no unpacker) = 256 cycles more.
    t = toy()
    shape, plan = GemmShape(128, 64, 128), GemmPlan(2, 2, 2, 2, 2, 2, 1)
    assert (
        gemm_cost(t, shape, plan, "hifi2").compute_cycles
        - gemm_cost(t, shape, plan, "hifi2", in_place=True).compute_cycles
        == 256
    )


def test_fidelity_scales_compute():
    # 32 x 32 x 32 on one site: one tile-matmul; 16 / 32 / 48 / 64 cycles.
    t = toy(mesh_x=1, mesh_y=1)
    got = [
        gemm_cost(t, GemmShape(32, 32, 32), GemmPlan(1, 1, 1, 1, 1, 1, 1), f).compute_cycles
        for f in ("lofi", "hifi2", "hifi3", "hifi4")
    ]
    assert got == [16, 32, 48, 64]


def test_short_rows_pay_whole_eight_row_passes():
    # One tile-matmul at LoFi (16 cycles for 32 rows = 4 passes of 8 rows): M = 1 costs one pass (4),
    # M = 9 two passes (8), M = 32 four (16).
    t = toy(mesh_x=1, mesh_y=1)
    plan = GemmPlan(1, 1, 1, 1, 1, 1, 1)
    assert [
        gemm_cost(t, GemmShape(m, 32, 32), plan, "lofi").compute_cycles for m in (1, 8, 9, 32)
    ] == [4, 4, 8, 16]


def test_unpacker_limits_a_one_by_one_sub_block():
    # Wormhole, bf16, 1x1 sub-block, LoFi: the engine needs 16 + 2 + 1 (issue, release) = 19
    # cycles, but the unpackers must read 2 tiles = 4096 B per tile-matmul at 64 B/cycle together
    # (both at x4 get x2 each) = 64 cycles.
    t = WH.with_grid(1, 1)
    c = gemm_cost(t, GemmShape(32, 32, 32), GemmPlan(1, 1, 1, 1, 1, 1, 1), "lofi")
    assert c.compute_cycles == pytest.approx(4096 / 64)
    # A 1x8 sub-block: per tile-matmul 2048 B streamed plus 2048 / 8 held, 2304 B at 64 B/cycle
    # together = 36 cycles, over the engine's 16 + 2 + 1/8.
    c8 = gemm_cost(t, GemmShape(32, 32, 256), GemmPlan(1, 1, 1, 8, 1, 8, 1), "lofi")
    assert c8.compute_cycles == pytest.approx(8 * 36)
    # Blackhole's two unpackers reach 80 B/cycle together (2304 / 80 = 28.8), so the streamed
    # operand's one unpacker binds: 2048 B at 64 B/cycle = 32.
    b8 = gemm_cost(
        BH.with_grid(1, 1), GemmShape(32, 32, 256), GemmPlan(1, 1, 1, 8, 1, 8, 1), "lofi"
    )
    assert b8.compute_cycles == pytest.approx(8 * 32)


@pytest.mark.parametrize(
    "target, m, n, osh, osw, fidelity, per_tile_matmul",
    [
        # tt-llk's matmul, per tile-matmul: a SETC16 and the MOP expander's one-cycle transition
        # (2), the MOP's closing SETRWC at more than one fidelity phase (1), the SETRWC releasing a
        # source bank (1): once per row of the reuse (1 / the longer side) ...
        ("wh", 32, 256, 1, 8, "lofi", 16 + 2 + 1 / 8),
        ("bh", 128, 64, 4, 2, "lofi", 16 + 2 + 1 / 4),
        ("bh", 32, 256, 1, 8, "hifi4", 64 + 2 + 1 + 1 / 8),
        # ... but on Wormhole after every tile-matmul where the sub-block is at least 2x2.
        ("wh", 128, 64, 4, 2, "lofi", 16 + 2 + 1),
        ("wh", 128, 64, 4, 2, "hifi2", 32 + 2 + 1 + 1),
    ],
)
def test_engine_pays_its_threads_other_instructions(
    target, m, n, osh, osw, fidelity, per_tile_matmul
):
    # bfp4_b operands, so the unpackers (576 B a tile) never bind; 8 tile-matmuls, one K block.
    t = (WH if target == "wh" else BH).with_grid(1, 1)
    shape = GemmShape(m, 32, n, out_dtype="bfp4_b", fmt="bfp4_b")
    c = gemm_cost(t, shape, GemmPlan(1, 1, m // 32, n // 32, osh, osw, 1), fidelity)
    assert c.compute_cycles == pytest.approx(8 * per_tile_matmul)


def test_block_float_moves_fewer_bytes():
    # The same plan in bfp4_b moves 576 / 2048 of the DRAM bytes of bf16.
    t = WH
    plan = GemmPlan(8, 8, 4, 4, 2, 4, 4)
    a = gemm_cost(t, GemmShape(1024, 1024, 1024), plan, "lofi")
    b = gemm_cost(t, GemmShape(1024, 1024, 1024, out_dtype="bfp4_b", fmt="bfp4_b"), plan, "lofi")
    assert b.dram_bytes * 2048 == a.dram_bytes * 576


# ── bounds ───────────────────────────────────────────────────────────────────────────────────────


def test_roofline_wormhole_2048_cubed():
    # FLOPs 2 x 2048^3 = 17,179,869,184 over 64 cores x 2 x 32^3 / 32 (HiFi2) = 131,072 FLOP/cycle
    # -> 131,072 cycles. Bytes: three 2048 x 2048 bf16 matrices = 3 x 64 x 64 x 2048 B = 25,165,824
    # over 288 B/cycle = 87,381.3 cycles. The roofline is the larger: 131,072.
    assert roofline_cycles(WH, GemmShape(2048, 2048, 2048), "hifi2") == 131_072
    # At LoFi compute halves to 65,536 and the memory term (87,382 rounded up) binds.
    assert roofline_cycles(WH, GemmShape(2048, 2048, 2048), "lofi") == 87_382


def test_capacity_bound_smith_2017():
    # Toy chip: 4 sites x 1 MiB = 4 MiB of bf16 = 2,097,152 words = S.
    # M = N = K = 8192: 2 * 8192^3 / sqrt(S) - 2S = 1,099,511,627,776 / 1448.15... - 4,194,304 words.
    s = 4 * (1 << 20) / 2
    words = 2 * 8192**3 / math.sqrt(s) - 2 * s
    assert capacity_bound_bytes(toy(), GemmShape(8192, 8192, 8192)) == math.ceil(words * 2)
    # Small problems fall back to the compulsory traffic: 3 x 64 x 64 tiles... here 3 tiles x 2048 B.
    assert capacity_bound_bytes(toy(), GemmShape(32, 32, 32)) == 3 * 2048


def test_noc_ingress_bound():
    # Plan-free: 4 sites, M = N = 256, K = 128: a site owning a 128 x 128 patch receives
    # 2 x 128 x 128 = 32,768 elements = 65,536 B at 32 B/cycle = 2048 cycles.
    assert noc_ingress_bound_cycles(toy(), GemmShape(256, 128, 256)) == 2048
    # With the 2x2 plan of 4x4-tile blocks: 4 x 4 A tiles + 4 x 4 B tiles = 32 tiles x 2048 / 32.
    assert (
        noc_ingress_bound_cycles(toy(), GemmShape(256, 128, 256), GemmPlan(2, 2, 4, 4, 2, 4, 4))
        == 2048
    )


# ── footprint (docs/targets.md#footprint) ─────────────────────────────────────────────────────────────────────────


def test_footprint_tensix_block():
    # Wormhole, 2048^3 bf16, 8x8 tiles per site, sub-block 4x2, ibw 2 -> 32 K blocks.
    # in0 = 2 pages x 8x2 tiles x 2048 = 65,536; in1 the same; sub-blocks (8/4) x (8/2) = 8, output
    # ring max(8, 2) x 8 tiles x 2048 = 131,072; spill 8 x 8 tiles x 2048 = 131,072. Sum 393,216.
    shape, plan = GemmShape(2048, 2048, 2048), GemmPlan(8, 8, 8, 8, 4, 2, 2)
    assert footprint_bytes_for_plan(WH, shape, plan) == 393_216
    # Accumulated in place: the output holds 8 x 8 tiles and there is no spill: 65,536 x 2 + 131,072.
    assert footprint_bytes_for_plan(WH, shape, plan, in_place=True) == 262_144
    # Exact numerics spill in fp32: 64 tiles x 4096 instead of x 2048.
    assert footprint_bytes_for_plan(WH, shape, plan, exact=True) == 393_216 + 64 * 2048
    # One K block: no spill.
    assert (
        footprint_bytes_for_plan(WH, GemmShape(256, 64, 256), GemmPlan(8, 8, 8, 8, 4, 2, 2))
        == 262_144
    )


def test_footprint_streaming_and_block_float():
    # Streaming: 2 + 2 + 2 single tiles.
    assert (
        footprint_bytes_for_plan(WH, GemmShape(64, 64, 64), GemmPlan.streaming_plan(2, 2))
        == 6 * 2048
    )
    # bfp8_b operands, bf16 result, in place: 2 x 4 x 1088 + 2 x 4 x 1088 + 4 x 2048.
    shape = GemmShape(64, 64, 64, fmt="bfp8_b")
    assert (
        footprint_bytes_for_plan(WH, shape, GemmPlan(1, 1, 2, 2, 2, 2, 2), in_place=True)
        == 8 * 1088 + 8 * 1088 + 4 * 2048
    )


def test_footprint_register_accumulator():
    # RTX 3060: 4 accumulator lanes tile a 2x2 sub-block, so the epilogue is one tile per lane
    # (4 x 2048) and partial sums never spill: 2 x 4 x 4 x 2048 + 2 x 4 x 4 x 2048 + 4 x 2048.
    g = PRESETS["rtx3060"]
    plan = GemmPlan(28, 1, 4, 4, 2, 2, 4)
    assert (
        footprint_bytes_for_plan(g, GemmShape(4096, 4096, 4096), plan)
        == 32 * 2048 + 32 * 2048 + 4 * 2048
    )
    # A 1x3 sub-block the lanes cannot tile goes through an output ring: max(4 x 1, 2) x 3 tiles.
    plan13 = GemmPlan(28, 1, 4, 3, 1, 3, 4)
    assert footprint_bytes_for_plan(g, GemmShape(4096, 4096, 4096), plan13) == (
        2 * 16 * 2048 + 2 * 12 * 2048 + 4 * 3 * 2048
    )


def test_a_tile_of_a_row_major_tensor_moves_its_rows():
    """Target.dram_tile_bytes: whole tiles of a tiled tensor, and of a row-major one only the rows
    it has (a bf16 row of a tile is 32 x 2 B; a bfp8_b tile of 1088 B holds 34 B a row)."""
    assert WH.dram_tile_bytes("bf16") == 2048
    assert WH.dram_tile_bytes("bf16", rows=1) == 64
    assert WH.dram_tile_bytes("bf16", rows=8) == 512
    assert WH.dram_tile_bytes("bfp8_b", rows=1) == 34
    assert WH.dram_tile_bytes("f32", rows=32) == WH.dram_tile_bytes("f32", rows=100) == 4096


def test_page_bytes_and_fit():
    assert page_bytes(WH, "bfp8_b", 3) == 3 * 1088
    shape, plan = GemmShape(2048, 2048, 2048), GemmPlan(8, 8, 8, 8, 4, 2, 2)
    assert plan_fits(WH, shape, plan)
    assert not plan_fits(WH.with_local_mem(393_215), shape, plan)


# ── share_operand (docs/targets.md#sharing) ─────────────────────────────────────────────────────────────────────


def test_share_operand_hand_derivation():
    # A 640 x 640 fp32 panel (1,638,400 B) wanted by 8 PCUs, 4 hops away, on Plasticine (49 GB/s at
    # 1 GHz = 49 B/cycle, of which it sustains 0.9: 44.1 B/cycle; 64-byte fabric word).
    # saved = ceil(1,638,400 x 7 / 44.1) = ceil(260,063.49) = 260,064 DRAM cycles;
    # added = 1,638,400 / 64 words + 4 - 1 hops = 25,600 + 3 = 25,603 fabric cycles -> broadcast.
    d = share_operand(OperandStream("a", 640 * 640 * 4, 8, 4), PRESETS["plasticine"])
    assert d.sharing is Sharing.BROADCAST and d.sharing == "broadcast"
    assert (d.dram_cycles_saved, d.fabric_cycles_added, d.copies) == (260_064, 25_603, 1)
    assert "260064" in d.why and "25603" in d.why


def test_share_operand_store_and_forward_would_have_flipped_it():
    # The bug this prevents: charging words x hops. 256 B over 2 consumers and 64 hops on Plasticine:
    # (44.1 B/cycle sustained) saved = ceil(256 / 44.1) = 6; pipelined added = 4 words + 63 = 67 ->
    # replicated, as it should be; a short hop: 16 KiB panel, 2 consumers, 8 hops:
    # saved = ceil(16,384 / 44.1) = 372,
    # pipelined 256 + 7 = 263 -> broadcast (store-and-forward would have said 256 x 8 = 2048).
    p = PRESETS["plasticine"]
    assert share_operand(OperandStream("b", 256, 2, 64), p).sharing is Sharing.REPLICATED
    d = share_operand(OperandStream("b", 16 * 1024, 2, 8), p)
    assert (d.dram_cycles_saved, d.fabric_cycles_added, d.sharing) == (372, 263, Sharing.BROADCAST)


def test_share_operand_one_consumer():
    d = share_operand(OperandStream("c", 4096, 1, 3), PRESETS["plasticine"])
    assert d.sharing is Sharing.REPLICATED and d.copies == 1 and d.dram_cycles_saved == 0
    assert "nothing to share" in d.why


def test_cost_prices_the_fabric_broadcast_fuse_operands_decides():
    # A 2x2 toy without multicast rectangles but with a 64-byte fabric word, 32 B/cycle of DRAM
    # (32 GB/s at 1 GHz). 64 x 64 x 64 bf16: mt = kt = nt = 2, 2048-byte tiles. Plan: 2x2 grid,
    # 1x1 blocks, ibw 1: 4 blocks dealt flat, one a site: block (0, 0) on (0, 0), (0, 1) on (1, 0),
    # (1, 0) on (0, 1).
    # A panel: 1 x 2 tiles = 4096 B, 2 consumers (block row 0), 1 hop ((0, 0) -> (1, 0)), pages of
    # one K tile = 2048 B; B the same (block column 0, (0, 0) -> (0, 1)).
    # share_operand: saved = ceil(4096 x 1 / 32) = 128 DRAM cycles; added = 4096 / 64 = 64 words
    # + 1 - 1 = 64 fabric cycles; the fan-out overlaps the panel's one copy (4096 / 32 = 128 DRAM
    # cycles), so it adds max(128, 64) - 128 = 0 beyond it plus one page's fill, the shorter of its
    # read (2048 / 32 = 64) and its fan-out (32 words + 0): 32 exposed -> broadcast, copies 1.
    # DRAM: 2 A panels (block rows) x 1 copy x 2 tiles = 4 tiles (not 8 replicated), B 4, C 4:
    # 12 x 2048 = 24,576 B, 24,576 / 32 = 768 cycles; the fan-outs, (2 A panels + 2 B panels) x 64 =
    # 256 fabric cycles, run under them: memory time max(768, 256) + 32 = 800 (adding them would say
    # 1024; replicated would be 20 x 2048 / 32 = 1280).
    # Movement: 2 steps (1 block x 2 K blocks), 1 A and 1 B tile a step: A read 2 x 2048 / 32 = 128;
    # B read 128 plus the C write 2048 / 32 = 64 on B's engine: the critical path, 192.
    t = toy(multicast="none", fabric_word_bytes=64, dram_gbps=32.0)
    shape, plan = GemmShape(64, 64, 64), GemmPlan(2, 2, 1, 1, 1, 1, 1)
    q = gemm_quantities(t, shape, plan)
    assert q.share_a is not None and q.share_b is not None
    a = q.share_a
    assert (a.sharing, a.dram_cycles_saved, a.fabric_cycles_added) == (Sharing.BROADCAST, 128, 64)
    assert (a.fill_cycles, a.fabric_cycles_exposed) == (32, 32)
    assert q.share_b.sharing is Sharing.BROADCAST and q.share_b.copies == 1
    assert (q.a_tiles_dram, q.b_tiles_dram, q.c_tiles_written) == (4, 4, 4)
    c = gemm_cost(t, shape, plan)
    assert (q.fabric_cycles, q.fabric_fill_cycles) == (256, 32)
    assert c.dram_bytes == 24_576 and c.dram_cycles == 768 + 32
    assert c.movement_cycles == 192
    # At 256 B/cycle a copy of the panel takes 4096 / 256 = 16 DRAM cycles, and the broadcast saves
    # those 16: its fan-out (64) outlasts its one copy's read by 64 - 16 = 48, plus the fill
    # min(2048 / 256, 32) = 8: 56 exposed, more than 16, so replicated: 2 copies of each panel,
    # A and B 8 tiles each, and no fabric cycles.
    q = gemm_quantities(toy(multicast="none", fabric_word_bytes=64, dram_gbps=256.0), shape, plan)
    assert q.share_a is not None and q.share_a.sharing is Sharing.REPLICATED
    assert (q.share_a.dram_cycles_saved, q.share_a.fabric_cycles_exposed) == (16, 56)
    assert q.share_a.copies == 2
    assert (q.a_tiles_dram, q.b_tiles_dram, q.fabric_cycles) == (8, 8, 0)
    # No fabric (a GPU-like chip): no sharing decision, every block reads its own.
    q = gemm_quantities(toy(multicast="none", dram_gbps=32.0), shape, plan)
    assert q.share_a is None and q.share_b is None and (q.a_tiles_dram, q.b_tiles_dram) == (8, 8)


def test_cost_and_fuse_operands_build_the_same_streams():
    # The planner's streams for test/tile/plasticine.mlir's plan (1024^3 f32, 1x1 blocks, 8x4 sites,
    # 32 blocks each) are fuse-operands' `sp.share` numbers there: 32 consumers, 131,072 B each;
    # A's block row 0 (units 0..31) all on site (0, 0): 0 hops, 2048 words; B's block column 0
    # (units 0, 32, ..., 992) one block on each of sites 0..31, x fastest over the 8x4 grid:
    # site 31 = (7, 3) is 10 hops from (0, 0), so 2048 + 10 - 1 = 2057.
    # The plan's DRAM rate: 32 sites' 64 B/cycle links and 1024-page tensors keep all 4 channels
    # busy, so 49 x 0.9 = 44.1 B/cycle; saved = ceil(131,072 x 31 / 44.1) = ceil(92,136.96) = 92,137.
    from spatial_dialect.targets.cost import operand_sharing

    p = PRESETS["plasticine"]
    shape = GemmShape(1024, 1024, 1024, in_dtype="f32", out_dtype="f32", fmt="f32")
    a, b = operand_sharing(p, shape, GemmPlan(8, 4, 1, 1, 1, 1, 1))
    assert a is not None and b is not None
    assert (a.dram_cycles_saved, a.fabric_cycles_added) == (92_137, 2048)
    assert (b.dram_cycles_saved, b.fabric_cycles_added) == (92_137, 2057)


# ── split-K ──────────────────────────────────────────────────────────────────────────────────────

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
    # place: 1 page of 1 tile (one sub-block). No spill (one K block). Partials: 2 pages per
    # sub-block (received, sent) at the accumulator's type, bf16 2 x 2048 in place, f32 2 x 4096
    # exact.
    parts = footprint_parts(toy(), SHAPE, PLAN, in_place=True)
    assert (parts.in0, parts.in1, parts.out, parts.interm, parts.partials) == (
        8192,
        8192,
        2048,
        0,
        4096,
    )
    assert footprint_parts(toy(), SHAPE, PLAN, exact=True).partials == 8192
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


def test_a_gpu_split_adds_its_sums_through_dram():
    # 32x4096x128 bf16 on h200, K (128 tiles) in 4 slices of 4 SMs, one 1x1 block a site, K block
    # 16: no slice can pipe its sums to the next, so every item writes its f32 sums and the last
    # to arrive adds them (docs/targets.md#split-k).
    h200 = PRESETS["h200"]
    shape = GemmShape(32, 4096, 128)
    plan = GemmPlan(4, 1, 1, 1, 1, 1, 16, split_k=4, split_axis="x")
    c = gemm_cost(h200, shape, plan, "hifi4")
    a, b, out = dram_bytes_by_operand(h200, shape, c.quantities)
    # DRAM: A, B and C as unsplit, plus 4 slices x 4 tiles x 4096 f32 bytes of partial sums,
    # written once: 64 KiB fits in half the 50 MB L2, so they are read back from there.
    assert (a, b, out) == (32 * 4096 * 2, 4096 * 128 * 2, 32 * 128 * 2)
    assert c.dram_bytes == a + b + out + 4 * 4 * 4096
    # No reload into the accumulator: 32 tile-matmuls of 20 cycles (the sustained rate,
    # targets/presets.py [MAMF]), in 2 steps.
    assert (c.compute_cycles, c.step_compute) == (640, 320)
    # drain = last step 320 + the adder (two 400-cycle round trips, then 4 partial tiles of
    # 4096 bytes over the 64 B/cycle link: 1056) + the write-back (one 2048-byte tile over the
    # link, 32, above the 4 writers' DRAM burst, then the 400-cycle round trip: 432).
    assert c.drain_cycles == 320 + (2 * 400 + 4 * 4096 / 64) + (2048 / 64 + 400)
    assert gemm_cost_floor(h200, shape, plan, "hifi4") <= c.total_cycles
