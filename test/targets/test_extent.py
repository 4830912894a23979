"""The closed form of the tiles a dealt dimension covers equals walking its blocks (a loop
written here, as the docstring of `_extent` states the rule)."""

from spatial_dialect.targets.gemm import _extent


def walked(tiles: int, per_block: int, stride: int) -> int:
    blocks = -(-tiles // per_block)
    return sum(min(per_block, tiles - b * per_block) for b in range(0, blocks, stride))


def test_extent_equals_the_walk_over_its_blocks():
    for tiles in range(1, 70):
        for per_block in range(1, 11):
            for stride in range(1, 13):
                assert _extent(tiles, per_block, stride) == walked(tiles, per_block, stride)


def test_extent_of_a_huge_dimension_is_immediate():
    # 10^12 tiles in blocks of 4: 2.5e11 blocks, every 8th visited: 31,250,000,000 whole blocks.
    assert _extent(10**12, 4, 8) == 125_000_000_000
    # One more tile: a last block of 1 tile, block 2.5e11 is visited (2.5e11 % 8 == 0).
    assert _extent(10**12 + 1, 4, 8) == 125_000_000_000 + 1
