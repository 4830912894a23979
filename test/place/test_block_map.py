"""place's block-to-site map against the formula of docs/passes.md#place-the-2-d-map-where-multicast-exists, written here from the docs, not from place:
on a multicast mesh block (row, col) runs on site (col % X, row % Y) of the grid the plan deals
over (a line of sites being that grid folded onto the mesh row by row), every site's items are
consecutive, and a site runs its blocks in rounds; elsewhere items go by split_work_to_sites."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.passes.place import split_work_to_sites
from spatial_dialect.targets import load_target


def gemm_source(m: int, k: int, n: int, dtype: str = "bf16") -> str:
    a, b, c = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    return (
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n}}\n"
    )


def placed(target: str, m: int, k: int, n: int, **options: object) -> sp.ProgramOp:
    module = compile_module(gemm_source(m, k, n), target=target, **options)
    return next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


def site_of_item(program: sp.ProgramOp) -> dict[int, tuple[int, int]]:
    out: dict[int, tuple[int, int]] = {}
    for r in program.ops_of(sp.SitesOp):
        for x, y in r.rect.sites():
            for item in r.items(x, y):
                assert item not in out, f"item {item} on two sites"
                out[item] = (x, y)
    return out


def check_block_map(program: sp.ProgramOp, mesh_x: int) -> None:
    plan, space, work = program.one(sp.PlanOp), program.item_space(), program.one(sp.WorkOp)
    assert plan is not None and work is not None
    gx, gy = space.grid
    where = site_of_item(program)
    assert sorted(where) == list(range(space.count))
    by_site: dict[tuple[int, int], list[int]] = {}
    for item, site in where.items():
        row, col = space.coord(item)
        # block (row, col) on site (col % grid_x, row % grid_y), over the plan's grid; split-K's
        # slice k on the grid's k-th copy along the split axis
        x, y = col % gx, row % gy
        if plan.is_line:
            s = y * gx + x
            x, y = s % mesh_x, s // mesh_x
        k = space.k_slice(item)
        x, y = (x + k * gx, y) if work.split_axis == "x" else (x, y + k * gy)
        assert site == (x, y), (item, row, col, site, (x, y))
        by_site.setdefault(site, []).append(item)
    for site, items in by_site.items():
        items.sort()
        assert items == list(range(items[0], items[0] + len(items))), f"{site}: not consecutive"
        # rounds: the site's blocks are (r0 + i GY, c0 + j GX), rows and columns each a run
        rows = sorted({space.coord(i)[0] for i in items})
        cols = sorted({space.coord(i)[1] for i in items})
        assert len(rows) * len(cols) == len(items)
        assert all(b - a == gy for a, b in zip(rows, rows[1:], strict=False))
        assert all(b - a == gx for a, b in zip(cols, cols[1:], strict=False))


CASES = [
    ("wormhole_n150", (8192, 512, 8192), {}),  # several rounds both ways
    ("wormhole_n150", (2048, 512, 2048), {}),
    ("blackhole_p150", (4096, 256, 4096), {}),  # uneven rounds along N, boundary rows
    ("blackhole_p150", (544, 64, 2080), {}),
    ("wormhole_n150", (160, 64, 2080), {}),  # a line of 33 sites, uneven
    ("wormhole_n150", (4096, 256, 128), {}),  # a line sharing B
    ("wormhole_n150", (384, 512, 384), {"grid": "4x4"}),
    ("wormhole_n150", (1024, 64, 544), {"grid": "3x5"}),
]


@pytest.mark.parametrize("target, mkn, options", CASES)
def test_place_deals_blocks_by_the_block_map(target, mkn, options):
    program = placed(target, *mkn, **options)
    plan = program.one(sp.PlanOp)
    assert plan is not None and not plan.streaming
    check_block_map(program, load_target(target).mesh_x)


def test_the_cases_cover_several_rounds_uneven_rounds_and_lines():
    """The table above exercises what it says (so the block-map check is not vacuous)."""
    kinds = set()
    for target, mkn, options in CASES:
        program = placed(target, *mkn, **options)
        space, plan = program.item_space(), program.one(sp.PlanOp)
        counts = {r.count for r in program.ops_of(sp.SitesOp)}
        kinds |= {"rounds"} if max(counts) > 1 else set()
        kinds |= {"uneven"} if len(counts) > 1 else set()
        kinds |= {"line"} if plan.is_line else set()
        kinds |= {"boundary"} if len({r.block for r in program.ops_of(sp.SitesOp)}) > 1 else set()
        assert space.over is None or max(counts) > 1
    assert kinds == {"rounds", "uneven", "line", "boundary"}


@pytest.mark.parametrize("target", ["h200", "rtx3060", "plasticine"])
def test_a_flat_target_deals_by_split_work_over_the_plans_grid(target):
    dtype = "f32" if target == "plasticine" else "bf16"
    module = compile_module(gemm_source(512, 256, 1024, dtype), target=target)
    program = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    plan, space = program.one(sp.PlanOp), program.item_space()
    assert plan is not None and space.over is None
    where = site_of_item(program)
    expected = {}
    for site, first, count in split_work_to_sites(*plan.grid, space.count):
        for item in range(first, first + count):
            expected[item] = site
    assert where == expected


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 2048),
    k=st.integers(1, 512),
    n=st.integers(1, 4096),
    target=st.sampled_from(["wormhole_n150", "blackhole_p150"]),
)
def test_any_gemm_is_placed_by_the_block_map(m, k, n, target):
    program = placed(target, m, k, n)
    if not program.one(sp.PlanOp).streaming:  # type: ignore[union-attr]
        check_block_map(program, load_target(target).mesh_x)
