"""Compile cost does not grow with tensor size (issue 16): plans are symbolic, so a GEMM of a
million rows per side costs about the plan evaluations, and emits the sp ops, of a 4096 one.
Bounded in counts, not seconds."""

from __future__ import annotations

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from spatial_dialect.passes.pipeline import SpatialPipelinePass, default_context
from spatial_dialect.passes.tile import gemm as tile_gemm
from spatial_dialect.targets.gemm import divisors


def gemm(n: int) -> str:
    t = f"tensor<{n}x{n}xbf16>"
    return (
        f"func.func @g(%a: {t}, %b: {t}) -> {t} {{\n"
        f"  %c = tg.matmul %a, %b : ({t}, {t}) -> {t}\n  func.return %c : {t}\n}}\n"
    )


def compile_counting(n: int, target: str, monkeypatch) -> tuple[int, int]:
    """(plan evaluations: cost floors and full costs, sp ops emitted); no verification, which
    walks the items (the verifier's own cost, not the passes')."""
    counts = {"evals": 0}
    floor = tile_gemm.gemm_cost_floor
    cost = tile_gemm.Numerics.cost

    def counting_floor(*a, **k):
        counts["evals"] += 1
        return floor(*a, **k)

    def counting_cost(self, *a, **k):
        counts["evals"] += 1
        return cost(self, *a, **k)

    monkeypatch.setattr(tile_gemm, "gemm_cost_floor", counting_floor)
    monkeypatch.setattr(tile_gemm.Numerics, "cost", counting_cost)
    ctx = default_context()
    module: ModuleOp = Parser(ctx, gemm(n)).parse_module()
    SpatialPipelinePass(target=target, dram_mem="1PB").apply(ctx, module)
    return counts["evals"], sum(1 for _ in module.walk())


@pytest.mark.parametrize("target", ["wormhole_n150", "h100"])
def test_huge_gemm_costs_what_a_small_one_does(target, monkeypatch):
    small_evals, small_ops = compile_counting(4096, target, monkeypatch)
    for n in (1 << 20, 1_000_000):
        evals, ops = compile_counting(n, target, monkeypatch)
        # The count depends on the divisors of the tile counts (31250 = 2 x 5^6 has more block
        # choices than 128), never on the tiles themselves.
        assert evals <= 10 * small_evals, (n, evals, small_evals)
        assert ops <= small_ops + 16, (n, ops, small_ops)


def test_divisors_of_a_huge_count_are_cheap():
    assert divisors(1 << 40) == [1 << i for i in range(41)]
    assert divisors(1_000_000_007) == [1, 1_000_000_007]


def test_dimension_over_many_sites_is_closed_form():
    out = tile_gemm.dimension(1 << 30, 10**8)
    assert 1 in out and len(out[1]) <= 3
    assert len(out) < 200_000


@pytest.mark.parametrize("target", ["wormhole_n150", "h100"])
def test_verifying_a_huge_gemm_reads_its_edges_not_its_items(target, monkeypatch):
    """The sp verifier checks coverage, block shapes, bounds and multicast families per site, per
    clipped edge block and per extra round: the item coordinates it computes stay within
    O(sites x rounds + edge blocks), the square root of the items, for a 10^6-cubed GEMM."""
    from spatial_dialect import sp
    from spatial_dialect.sp.item_space import ItemSpace

    counts = {"coord": 0}
    coord = ItemSpace.coord

    def counting(self, item):
        counts["coord"] += 1
        return coord(self, item)

    ctx = default_context()
    module: ModuleOp = Parser(ctx, gemm(1_000_000)).parse_module()
    SpatialPipelinePass(target=target, dram_mem="1PB").apply(ctx, module)
    monkeypatch.setattr(ItemSpace, "coord", counting)
    module.verify()
    (program,) = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    space = program.item_space()
    sites = sum(r.rect.width * r.rect.height for r in program.ops_of(sp.SitesOp))
    rounds_m, rounds_n = space.rounds
    structural = 4 * (sites * (rounds_m + rounds_n + 2) + space.items_m + space.items_n)
    assert counts["coord"] <= structural, (counts["coord"], structural)
    assert counts["coord"] * 20 < space.count, (counts["coord"], space.count)
