"""split_work_to_sites against a transcription of tt-metal's split_work_to_cores written from its
description, not from the code under test.

tt-metal, split_work_to_cores(grid, units, row_wise=false): use n = min(units, cores) cores, taken
in column-major order (x outer, y inner); the first units % n of them (core group 1) take
units // n + 1 units each, the rest (group 2) units // n. Each group is a CoreRangeSet built by
num_cores_to_corerangeset: the cores of one column are one range, except that consecutive FULL
columns merge into one rectangle. The host walks the ranges in order and each range's cores row by
row, x fastest (docs/passes.md#place-split-work-linearly-where-adjacency-means-nothing), handing out consecutive units.
"""

from __future__ import annotations

import itertools

import pytest

from spatial_dialect.passes.place import split_work_to_sites


def _ranges(cores: list[tuple[int, int]], ny: int) -> list[tuple[int, int, int, int]]:
    """A CoreRangeSet of column-major cores: one rectangle per partial column, one per run of
    consecutive full columns."""
    columns: list[tuple[int, list[int]]] = []
    for x, ys in itertools.groupby(cores, key=lambda c: c[0]):
        columns.append((x, [y for _, y in ys]))
    rects: list[tuple[int, int, int, int]] = []
    for x, ys in columns:
        full = len(ys) == ny
        prev = rects[-1] if rects else None
        if full and prev is not None and prev[2] == 0 and prev[3] == ny - 1 and prev[1] == x - 1:
            rects[-1] = (prev[0], x, 0, ny - 1)
        else:
            rects.append((x, x, ys[0], ys[-1]))
    return rects


def oracle(nx: int, ny: int, units: int) -> list[tuple[tuple[int, int], int, int]]:
    if units == 0:
        return []
    n = min(units, nx * ny)
    order = [(x, y) for x in range(nx) for y in range(ny)][:n]
    extra, per = units % n, units // n
    groups = [(order[:extra], per + 1), (order[extra:], per)] if extra else [(order, per)]
    out, offset = [], 0
    for cores, count in groups:
        for x0, x1, y0, y1 in _ranges(cores, ny):
            for y in range(y0, y1 + 1):
                for x in range(x0, x1 + 1):
                    out.append(((x, y), offset, count))
                    offset += count
    return out


MESHES = [
    (1, 1),
    (1, 7),
    (7, 1),
    (2, 3),
    (8, 8),
    (13, 10),
    (11, 10),
    (28, 1),
    (132, 1),
    (8, 4),
    (5, 9),
]
UNITS = [
    0,
    1,
    2,
    3,
    7,
    8,
    9,
    10,
    13,
    63,
    64,
    65,
    71,
    100,
    127,
    128,
    129,
    130,
    131,
    250,
    1000,
    1024,
    4097,
    16384,
]


@pytest.mark.parametrize("mesh", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
def test_matches_the_tt_metal_transcription(mesh: tuple[int, int]) -> None:
    nx, ny = mesh
    for units in UNITS + list(range(nx * ny - 3, nx * ny + 4)):
        if units >= 0:
            assert split_work_to_sites(nx, ny, units) == oracle(nx, ny, units), (mesh, units)


def test_small_meshes_exhaustively() -> None:
    for nx, ny in itertools.product(range(1, 6), range(1, 6)):
        for units in range(0, 3 * nx * ny + 2):
            assert split_work_to_sites(nx, ny, units) == oracle(nx, ny, units), (nx, ny, units)


@pytest.mark.parametrize("mesh", MESHES, ids=lambda m: f"{m[0]}x{m[1]}")
def test_every_unit_once_and_balanced(mesh: tuple[int, int]) -> None:
    nx, ny = mesh
    for units in UNITS:
        split = split_work_to_sites(nx, ny, units)
        covered = [u for _, first, count in split for u in range(first, first + count)]
        assert covered == list(range(units))
        assert len({site for site, _, _ in split}) == len(split) == min(units, nx * ny)
        counts = {count for _, _, count in split}
        assert not counts or max(counts) - min(counts) <= 1


def test_known_case_from_the_seed() -> None:
    # 10 units on a 4x3 grid: 10 cores, one unit each, columns 0..2 full then (3, 0): the full
    # columns are one range walked x fastest, then the partial column.
    assert split_work_to_sites(4, 3, 10) == [
        ((0, 0), 0, 1),
        ((1, 0), 1, 1),
        ((2, 0), 2, 1),
        ((0, 1), 3, 1),
        ((1, 1), 4, 1),
        ((2, 1), 5, 1),
        ((0, 2), 6, 1),
        ((1, 2), 7, 1),
        ((2, 2), 8, 1),
        ((3, 0), 9, 1),
    ]
    # 14 units on 4x3: 12 cores; the first two (column 0, rows 0-1) take 2 units, then group 2
    # starts at (0, 2): the rest of column 0, then full columns 1..3.
    assert split_work_to_sites(4, 3, 14) == [
        ((0, 0), 0, 2),
        ((0, 1), 2, 2),
        ((0, 2), 4, 1),
        ((1, 0), 5, 1),
        ((2, 0), 6, 1),
        ((3, 0), 7, 1),
        ((1, 1), 8, 1),
        ((2, 1), 9, 1),
        ((3, 1), 10, 1),
        ((1, 2), 11, 1),
        ((2, 2), 12, 1),
        ((3, 2), 13, 1),
    ]
