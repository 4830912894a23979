"""The plan-quality bench: a smoke run per target, the lattice search against brute force, and the
ttnn default policy against configs worked out by hand from create_simple_matmul_program_config."""

import itertools
import sys
from pathlib import Path

import pytest

from spatial_dialect.passes import tile
from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.passes.tile import gemm as tile_gemm
from spatial_dialect.targets import load_target
from spatial_dialect.targets.cost import GemmPlan, GemmShape, roofline_cycles

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

pq = load("plan_quality")
td = sys.modules["ttnn_default"]


def test_suite_has_the_shapes_the_issue_asks_for():
    cases = pq.suite()
    assert len(cases) >= 30
    assert len({(c.m, c.k, c.n) for c in cases}) == len(cases)
    shapes = {(c.m, c.k, c.n) for c in cases}
    assert {(s, s, s) for s in (256, 16384)} <= shapes
    assert (32, 128, 4096) in shapes  # attention-shaped
    assert {(1, 4096, 128256), (128, 4096, 151936), (1, 4096, 14336), (128, 12288, 4096)} <= shapes
    assert pq.smallest(cases) == pq.Case("Llama-3-8B k/v T=1, Qwen3-8B k/v T=1", 1, 4096, 1024)


@pytest.mark.parametrize("target", sorted(pq.TARGETS))
def test_smoke_smallest_shape(target):
    row = pq.evaluate(target, pq.smallest(pq.suite()))
    assert row.ours is not None and row.best is not None
    ours, best = row.ours[1].total_cycles, row.best[1].total_cycles
    assert row.roofline <= best <= ours  # the roofline bounds every plan; best contains ours
    if target in ("wormhole_n150", "blackhole_p150"):
        assert row.default is not None and row.default[0].legal
    else:
        assert row.default is None and row.default_na == "n/a"
    lines = pq.table([row])
    assert len(lines) == 5 and row.case.mkn in lines[-1]
    assert target in pq.summary([row])


def test_latency_floor_from_the_target_fields():
    # wormhole_n150 (presets): DRAM round trip 500 cycles, 32 B/cycle links, 2048-byte bf16 tiles,
    # 64 cycles a tile-matmul at HiFi4 on 64 sites, DRAM 288 B/cycle. 256^3: the read 500 + 64,
    # one tile-matmul 64, the write 64 + 500: latency 1192. Compute 2 * 256^3 / (64 * 1024) = 512
    # cycles with read and write 1640; the compulsory 3 * 64 tiles * 2048 B / 288 = 1365.3 with
    # the write 1929.3: the floor. The roofline 1366 is under 2 x 1192: latency-dominated.
    fl = pq.latency_floor
    n150 = load_target("wormhole_n150")
    f = fl(n150, GemmShape(256, 256, 256), tile.DEFAULT_FIDELITY)
    assert (f.latency, f.cycles, f.dominated) == (1192, 1929, True)
    # 512^3: roofline 4 x 1365.3 = 5462 cycles, over 2 x 1192: measured against the roofline.
    assert not fl(n150, GemmShape(512, 512, 512), tile.DEFAULT_FIDELITY).dominated


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150", "h200", "plasticine"])
@pytest.mark.parametrize("mkn", [(256, 256, 256), (32, 4096, 128), (1, 4096, 1024)])
def test_no_plan_under_the_floor(target, mkn):
    t = load_target(target)
    dtype = pq.TARGETS[target]
    shape = GemmShape(*mkn, dtype, dtype)
    ranked = tile_gemm.rank(t, shape, Numerics.of(t, dtype, dtype), tile.DEFAULT_FIDELITY)
    floor = pq.latency_floor(t, shape, tile.DEFAULT_FIDELITY)
    assert roofline_cycles(t, shape, tile.DEFAULT_FIDELITY) <= floor.cycles
    assert floor.cycles <= min(c.total_cycles for _, c in ranked)


def test_shapes_option():
    assert [c.m for c in pq.shapes_option("squares")] == [256, 512, 1024, 2048, 4096, 8192]
    assert pq.shapes_option("32x4096x128") == [pq.Case("shape", 32, 4096, 128)]
    with pytest.raises(pq.argparse.ArgumentTypeError, match="MxKxN"):
        pq.shapes_option("32x4096")


def brute_force(target, shape, numerics):
    """Every plan of the lattice, no pruning at all: the grid over the whole mesh."""
    search = pq.Search(target, shape, numerics, tile.DEFAULT_FIDELITY)
    best = None
    plans = [
        GemmPlan.streaming_plan(gx, gy)
        for gx in range(1, target.mesh_x + 1)
        for gy in range(1, target.mesh_y + 1)
    ]
    sites = target.mesh_x * target.mesh_y
    grids = [
        (gx, gy, False) for gx in range(1, target.mesh_x + 1) for gy in range(1, target.mesh_y + 1)
    ]
    if target.multicast == "rectangle":  # lines longer than a mesh row
        grids += [(n, 1, True) for n in range(target.mesh_x + 1, sites + 1)]
        grids += [(1, n, True) for n in range(target.mesh_x + 1, sites + 1)]
    for pm, pn, (gx, gy, line), ma, mb in itertools.product(
        range(1, shape.mt + 1),
        range(1, shape.nt + 1),
        grids,
        (True, False),
        (True, False),
    ):
        for ibw in pq.divisors(shape.kt):
            for osh in pq.divisors(pm):
                for osw in pq.divisors(pn):
                    plans.append(
                        GemmPlan(gx, gy, pm, pn, osh, osw, ibw, mcast_a=ma, mcast_b=mb, line=line)
                    )
    for plan in plans:
        if search.legal(plan):
            total = numerics.cost(target, shape, plan, tile.DEFAULT_FIDELITY).total_cycles
            best = total if best is None else min(best, total)
    return best


@pytest.mark.parametrize(
    "name, grid, mkn, dtype",
    [
        ("wormhole_n150", (3, 2), (128, 256, 160), "bf16"),
        ("blackhole_p150", (2, 3), (96, 192, 64), "bf16"),
        ("h200", (3, 1), (96, 128, 64), "bf16"),
        ("plasticine", (2, 2), (64, 128, 96), "f32"),
        # one block row: the tile pass's best is a line of 5 sites folded onto the 3x2 mesh
        ("wormhole_n150", (3, 2), (32, 128, 320), "bf16"),
    ],
)
def test_pruned_search_finds_the_brute_force_minimum(name, grid, mkn, dtype):
    target = load_target(name).with_grid(*grid)
    shape = GemmShape(*mkn, dtype, dtype)
    numerics = Numerics.of(target, dtype, dtype)
    ranked = tile_gemm.rank(target, shape, numerics, tile.DEFAULT_FIDELITY)
    search = pq.Search(target, shape, numerics, tile.DEFAULT_FIDELITY)
    assert all(search.legal(p) for p, _ in ranked)  # the lattice contains the tile candidates
    _, cost = search.best(ranked[0])
    assert cost.total_cycles == brute_force(target, shape, numerics)


# ── ttnn's default policy, configs worked out by hand from the source ─────────────────────────


def default(name, m, k, n):
    """ttnn's default config for a bf16 GEMM under ttnn's default compute config (dest in its
    16-bit mode, fp32_dest_acc_en off): the transcription these tests check."""
    target = load_target(name)
    return td.ttnn_default(target, GemmShape(m, k, n), Numerics.of(target, "bf16", "bf16", "bf16"))


def test_subblock_choices_in_ttnn_order():
    assert td.SUBBLOCK_HW_CHOICES[:4] == ((4, 2), (2, 4), (8, 1), (1, 8))
    assert len(td.SUBBLOCK_HW_CHOICES) == 20 and td.SUBBLOCK_HW_CHOICES[-1] == (1, 1)
    assert td.subblock(8, 8, fp32_dest_acc=True) == (2, 2)  # areas over 4 skipped


def test_is_narrow_divides_as_integers():
    assert not td.is_narrow(4096, 512)
    assert not td.is_narrow(4096, 480)  # 4096 // 480 = 8: not over the threshold, though 8.5 is
    assert td.is_narrow(4096, 448)  # 4096 // 448 = 9
    assert td.is_narrow(32, 4096) and td.is_narrow(4096, 32)  # a side of one tile, all in DRAM


def test_ttnn_2d_fits_as_computed():
    # WH 1024^3: factor 16 -> 2x2 blocks -> 2-D; in0_block_w = 32 / 8 = 4; per_core 4x4 fits
    # (2*4*4*2048 * 2 + 16*2048 * 2 = 196608 < 1395424); sub-block (4, 2) is the first choice.
    c = default("wormhole_n150", 1024, 1024, 1024)
    assert (c.kind, c.grid, c.per_core) == ("2d", (8, 8), (4, 4))
    assert (c.out_block, c.out_subblock) == ((4, 4), (4, 2))
    assert c.plan == GemmPlan(8, 8, 4, 4, 4, 2, 4)


def test_ttnn_2d_shrinks_the_out_block_k_first():
    # WH 4096^3: per_core 16x16 at in0_block_w 16 does not fit; at k = 16 the products 256 (16x16)
    # and 128 (8x16: the later of two pairs equally far from square) do not either, 64 (8x8) does:
    # 8*16*2*2048 * 2 + 64*2048 * 2 = 1310720 < 1395424.
    c = default("wormhole_n150", 4096, 4096, 4096)
    assert (c.per_core, c.out_block, c.in0_block_w) == ((16, 16), (8, 8), 16)
    assert c.plan == GemmPlan(8, 8, 8, 8, 4, 2, 16)  # multi-round: 2 x 2 out blocks per core


def test_ttnn_2d_on_blackhole_k_block_one_when_13_does_not_divide_k():
    # (4,2) (2,4) ... (3,2) do not divide the 4x3 out block; (2,3) does.
    c = default("blackhole_p150", 1024, 1024, 1024)
    assert (c.kind, c.in0_block_w, c.per_core, c.out_subblock) == ("2d", 1, (4, 3), (2, 3))


def test_ttnn_1d_mcast_in0_for_decode():
    # M = 1: a side of one tile -> narrow, wider than tall -> 1-D multicasting in0 over 64 cores:
    # per_core_N = ceil(ceil(4096 / 64) / 32) = 2, in0_block_w 2, sub-block (1, 2).
    c = default("wormhole_n150", 1, 4096, 4096)
    assert (c.kind, c.per_core, c.in0_block_w) == ("1d_mcast_in0", (1, 2), 2)
    assert c.plan == GemmPlan(64, 1, 1, 2, 1, 2, 2, mcast_a=True, mcast_b=False)
    # The line is priced with the rectangle's span: 14 hops of 9 cycles over 63 = 2 per hop.
    assert c.priced_on.hop_cycles == pytest.approx(2.0)


def test_ttnn_1d_mcast_in1_for_tall():
    # 16384 / 128 = 128 > 8 -> narrow and tall -> 1-D multicasting in1:
    # per_core_M = ceil(ceil(16384 / 64) / 32) = 8, per_core_N = Nt = 4, sub-block (4, 2).
    c = default("wormhole_n150", 16384, 1024, 128)
    assert (c.kind, c.per_core, c.out_subblock) == ("1d_mcast_in1", (8, 4), (4, 2))
    assert c.plan == GemmPlan(1, 64, 8, 4, 4, 2, 2, mcast_a=False, mcast_b=True)


def test_ttnn_one_block_row_takes_1d_even_when_not_narrow():
    # 128 x 1024: 1024 // 128 = 8, not narrow; but the 16-tile blocks make 1 row x 2 columns ->
    # core range y = 1 -> 1-D. (128 x 512 is a single block: core range (0, 0) -> 2-D.)
    assert default("wormhole_n150", 128, 1024, 1024).kind == "1d_mcast_in0"
    assert default("wormhole_n150", 128, 1024, 512).kind == "2d"


def test_ttnn_default_not_applicable_off_tensix():
    for name in ("plasticine", "h200"):
        with pytest.raises(td.NotApplicable):
            default(name, 256, 256, 256)


def test_roofline_bounds_the_default_too():
    target = load_target("blackhole_p150")
    shape = GemmShape(4096, 4096, 4096)
    numerics = Numerics.of(target, "bf16", "bf16")
    c = td.ttnn_default(target, shape, numerics)
    assert c.cost(shape, numerics, "hifi4").total_cycles >= roofline_cycles(target, shape, "hifi4")
