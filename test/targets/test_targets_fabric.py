"""The fabric fan-out overlaps the DRAM reads (targets/sharing.py, `memory_cycles`): a broadcast
panel's fan-out runs while the DRAM serves the next page, so memory time is max(DRAM, fabric) plus
one page's fill, never their sum. Every expected number here is worked by hand from the plasticine
preset's fields (docs/targets.md), not read from the code under test."""

from __future__ import annotations

import math

from spatial_dialect.targets import PRESETS
from spatial_dialect.targets.cost import (
    GemmPlan,
    GemmShape,
    OperandStream,
    Sharing,
    gemm_cost,
    share_operand,
)

P = PRESETS["plasticine"]


def test_broadcast_heavy_gemm_prices_max_of_dram_and_fabric_plus_one_fill():
    # 128 x 4096 x 4096 f32 (the T = 128 projections): mt = 4, kt = 128, nt = 128 tiles of 4096 B.
    # Plan: 8x1 sites, 1x1 blocks, K blocks of one tile. The 512 blocks are dealt flat, 64 a site,
    # site s taking units 64 s .. 64 s + 63: A's block row 0 (units 0..127) spans sites 0 and 1
    # (1 hop); B's block column 0 (units 0, 128, 256, 384) sites 0, 2, 4, 6 (6 hops).
    shape = GemmShape(128, 4096, 4096, in_dtype="f32", out_dtype="f32", fmt="f32")
    plan = GemmPlan(8, 1, 1, 1, 1, 1, 1)
    tile = P.tile_bytes("f32")
    word = P.fabric_word_bytes
    assert (tile, word) == (4096, 64)
    # DRAM at the sustained rate: 49 GB/s x 0.9 at 1 GHz = 44.1 B/cycle (8 sites' links and
    # 16,384-page tensors keep all 4 channels busy).
    rate = P.dram_gbps * P.dram_efficiency / P.clock_ghz
    assert math.isclose(rate, 44.1)
    # Both operands broadcast (A: 128 consumers; B: 4 consumers, saving 3 copies of 512 KiB =
    # 35,666 DRAM cycles for at most a page's fill): each panel read once. A 4 x 128 tiles, B
    # 128 x 128, C 4 x 128: 17,408 tiles = 71,303,168 B, 1,616,852 DRAM cycles.
    dram_bytes = (4 * 128 + 128 * 128 + 4 * 128) * tile
    dram = dram_bytes / rate
    assert dram_bytes == 71_303_168 and round(dram) == 1_616_852
    # Fan-outs: a panel of 128 tiles is 8192 words; A's 4 panels cross 1 hop (8192 + 0), B's 128
    # panels 6 hops (8192 + 5): 1,081,984 fabric cycles, fewer than the DRAM's.
    panel_words = 128 * tile // word
    fabric = 4 * (panel_words + 1 - 1) + 128 * (panel_words + 6 - 1)
    assert fabric == 1_081_984
    # One fill: a one-tile page's fan-out (64 words + 5 hops = 69 for B, 64 for A) or its read
    # (ceil(4096 / 44.1) = 93), the shorter, the larger of the two operands': 69.
    fill = max(min(math.ceil(tile / rate), tile // word + hops - 1) for hops in (1, 6))
    assert fill == 69
    c = gemm_cost(P, shape, plan)
    q = c.quantities
    assert q.share_a is not None and q.share_b is not None
    assert (q.share_a.sharing, q.share_b.sharing) == (Sharing.BROADCAST, Sharing.BROADCAST)
    assert c.dram_bytes == dram_bytes
    assert math.isclose(c.dram_cycles, max(dram, fabric) + fill)
    # Added, as the model once priced it, the fan-outs would make it 2,698,836: 1.85x the roofline.
    assert c.dram_cycles < dram + fabric - 1_000_000


def test_fabric_bound_panel_exposes_the_fan_out_beyond_its_read():
    # Where the fan-out outlasts the copy's read, the broadcast exposes the difference plus the fill.
    # Plasticine with 128 GB/s of DRAM: 128 x 0.9 = 115.2 B/cycle. A 128 KiB panel (32 one-tile
    # pages) for 8 consumers, 1 hop: fan-out 131,072 / 64 = 2048 cycles; its copy's read
    # ceil(131,072 / 115.2) = 1138; fill min(ceil(4096 / 115.2) = 36, 64 + 0) = 36;
    # exposed 2048 - 1138 + 36 = 946 against ceil(7 x 131,072 / 115.2) = 7965 saved: broadcast.
    t = P.with_dram_gbps(128.0)
    d = share_operand(OperandStream("b", 131_072, 8, 1, 4096), t)
    assert (d.dram_cycles_saved, d.fabric_cycles_added) == (7965, 2048)
    assert (d.fill_cycles, d.fabric_cycles_exposed) == (36, 946)
    assert d.sharing is Sharing.BROADCAST and d.copies == 1
    assert "exposes 946" in d.why
