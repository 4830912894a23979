"""Split-K placements cover the output exactly once and reduce every K block once: for any
blocks, rounds, K slices and axis, place's site ranges (written here from docs/passes.md, not
from place) put slice s of block (row, col) on site (col % GX, row % GY) of the slice's copy of
the grid, the copies stacked along the axis; every output tile gets one item per slice, the
slices' K ranges cover every K block of it once, exactly one item (the last slice's) stores it,
and each slice hands its partial sums to the next slice's copy of the same grid site."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from spatial_dialect import sp
from spatial_dialect.passes.place import grid_ranges


@st.composite
def split_spaces(draw):
    tiles_m, tiles_n = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    block_m, block_n = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    items_m, items_n = -(-tiles_m // block_m), -(-tiles_n // block_n)
    gx, gy = draw(st.integers(1, items_n)), draw(st.integers(1, items_m))
    # Several blocks a site only where the block divides the tiles, and uneven rounds along one
    # dimension at most (docs/passes.md#tile-a-site-range-has-one-block-shape).
    if gx < items_n and tiles_n % block_n:
        gx = items_n
    if gy < items_m and tiles_m % block_m:
        gy = items_m
    if items_m % gy and items_n % gx:
        gy = items_m
    over = None if (gx, gy) == (items_n, items_m) else (gx, gy)
    slices = draw(st.integers(2, 4))
    k_block = draw(st.integers(1, 3))
    kt = slices * k_block * draw(st.integers(1, 3))
    axis = draw(st.sampled_from(["x", "y"]))
    space = sp.ItemSpace(tiles_m, tiles_n, block_m, block_n, over, slices)
    return space, kt, k_block, axis


@settings(max_examples=200, deadline=None)
@given(split_spaces())
def test_split_k_covers_the_output_once_and_reduces_every_k_block_once(case):
    space, kt, k_block, axis = case
    gx, gy = space.grid
    s_count = space.k_slices
    mesh = (gx * s_count, gy) if axis == "x" else (gx, gy * s_count)
    ranges = grid_ranges(mesh, space, (1, 1), False, axis)
    site_of: dict[int, tuple[int, int]] = {}
    for r in ranges:
        for x, y in r.rect.sites():
            for item in r.items(x, y):
                assert item not in site_of, f"item {item} runs twice"
                site_of[item] = (x, y)
    assert sorted(site_of) == list(range(space.items_m * space.items_n * s_count))

    per_slice = kt // s_count
    reduced: dict[tuple[int, int], list[int]] = {}  # output tile -> K tiles summed into it
    stored: dict[tuple[int, int], int] = {}
    for item, (x, y) in site_of.items():
        s = item // (space.items_m * space.items_n)
        row, col = space.coord(item)
        # the docs' map: block (row, col) of slice s on (col % GX, row % GY) of slice s's grid
        dx, dy = (s * gx, 0) if axis == "x" else (0, s * gy)
        assert (x, y) == (col % gx + dx, row % gy + dy), (item, s, row, col)
        rect = space.rect(item)
        k_tiles = [
            k
            for k0 in range(s * per_slice, (s + 1) * per_slice, k_block)
            for k in range(k0, k0 + k_block)
        ]
        for i in range(rect.r0, rect.r0 + rect.h):
            for j in range(rect.c0, rect.c0 + rect.w):
                reduced.setdefault((i, j), []).extend(k_tiles)
                if s == s_count - 1:
                    assert (i, j) not in stored
                    stored[(i, j)] = item
        if s < s_count - 1:
            # the partial sums go to the same grid site of the next slice's copy
            nx, ny = site_of[item + space.items_m * space.items_n]
            assert (nx - x, ny - y) == ((gx, 0) if axis == "x" else (0, gy))
    every_tile = {(i, j) for i in range(space.tiles_m) for j in range(space.tiles_n)}
    assert set(stored) == every_tile
    assert set(reduced) == every_tile
    for tile, ks in reduced.items():
        assert sorted(ks) == list(range(kt)), tile
