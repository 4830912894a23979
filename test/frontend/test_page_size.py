"""The page size of a paged KV cache, priced (targets/paging.py; spatial-import --paged auto).

The expected numbers are worked here from the presets' published facts (DRAM round trip, peak
bandwidth and its sustained fraction, clock, sites), not read back from the code under test:
per step, block runs x round trip / readers against the half block a user wastes, moved at the
sustained DRAM rate."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spatial_dialect.targets import load_target
from spatial_dialect.targets.paging import (
    KvShape,
    PagingError,
    candidate_blocks,
    choose_page_size,
)

# Llama-3.1-8B: 32 layers, 8 KV heads of 128 (one K row of a layer: 1024 elements), d 4096,
# ffn 14336, vocabulary 128256, an untied LM head.
LAYERS, KV, D, FFN, VOCAB = 32, 1024, 4096, 14336, 128256
PARAMS = 2 * VOCAB * D + LAYERS * (2 * D * D + 2 * D * KV + 3 * D * FFN)
BF16_ROW = KV * 2
BF16_WEIGHTS = PARAMS * 2
BFP8_WEIGHTS = PARAMS * 1088 // 1024  # bfp8_b: 1088 B a 32 x 32 tile


def llama(users: int, context: int, weights: int) -> KvShape:
    return KvShape(users, context, LAYERS, BF16_ROW, weights)


def test_candidates_are_whole_tiles_dividing_the_cache():
    n150 = load_target("wormhole_n150")
    assert candidate_blocks(n150, 4096) == [32, 64, 128, 256, 512, 1024, 2048, 4096]
    assert candidate_blocks(n150, 96) == [32]  # 64 does not divide 96
    assert candidate_blocks(n150, 16) == [16]  # under a tile: the one block, the cache


def test_h100_llama_8b_context_4096_picks_64_row_pages():
    # H100: 400-cycle round trip, 132 SMs x 2 readers, 3350 GB/s at 1.83 GHz, 3180 / 3350 sustained.
    choice = choose_page_size(load_target("h100"), llama(32, 4096, BF16_WEIGHTS))
    assert (choice.chosen.block, choice.runner_up.block) == (64, 128)
    caches = 32 * 2 * LAYERS
    rate = 3350 / 1.83 * (3180 / 3350)  # bytes a cycle, sustained
    for price, n in ((choice.chosen, 64), (choice.runner_up, 128)):
        runs = caches * (4096 / n + 1) / 2  # expected ceil(L / n) at L uniform over 1 .. 4096
        assert price.overhead_cycles == pytest.approx(runs * 400 / 264)
        assert price.waste_rows == (n - 1) / 2  # half a block a user
        assert price.waste_cycles == pytest.approx(caches * (n - 1) / 2 * BF16_ROW / rate)
    # 64 rows: 100,848 cycles of round trips and 76,032 of waste, against 128's 51,200 + 153,270
    assert choice.chosen.cycles == pytest.approx(176_880, rel=1e-4)
    assert choice.runner_up.cycles == pytest.approx(204_470, rel=1e-4)
    assert choice.chosen.fits  # 16 GB of weights and a 4.3 GB pool in 80 GB


def test_h100_short_context_picks_one_tile_pages():
    choice = choose_page_size(load_target("h100"), llama(32, 128, BF16_WEIGHTS))
    assert (choice.chosen.block, choice.runner_up.block) == (32, 64)


def test_n150_llama_8b_at_tt_metals_batch_and_context():
    # n150: 500-cycle round trip, 64 sites x 2 readers, 288 GB/s at 1 GHz, 267/288 sustained.
    n150 = load_target("wormhole_n150")
    choice = choose_page_size(n150, llama(32, 128, BFP8_WEIGHTS))
    assert (choice.chosen.block, choice.runner_up.block) == (32, 64)
    caches = 32 * 2 * LAYERS
    rate = 288 * 267 / 288
    expected = caches * (128 / 32 + 1) / 2 * 500 / 128 + caches * 31 / 2 * BF16_ROW / rate
    assert choice.chosen.cycles == pytest.approx(expected)
    # at 4096 rows and 8 users the round trips tip the choice to 64-row blocks, barely
    long = choose_page_size(n150, llama(8, 4096, BFP8_WEIGHTS))
    assert (long.chosen.block, long.runner_up.block) == (64, 32)
    assert long.runner_up.cycles / long.chosen.cycles == pytest.approx(1.006, abs=1e-3)


def test_a_pool_that_fits_no_page_size_is_refused_with_its_numbers():
    # 32 users of 4096 rows beside 8.5 GB of bfp8_b weights: 8.7 GB of pool in 12 GB of DRAM
    numbers = rf"{BFP8_WEIGHTS} B of weights .*\(32-row blocks.* exceed its 12884901888 B"
    with pytest.raises(PagingError, match=rf"no page size fits on wormhole_n150: {numbers}"):
        choose_page_size(load_target("wormhole_n150"), llama(32, 4096, BFP8_WEIGHTS))


# --- spatial-import --paged auto ----------------------------------------------------------------

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import write_tiny  # noqa: E402

from spatial_dialect.tools.frontend.paging import PAGE_SIZE_ATTR  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402


def imported(tmp_path, cache: int, *extra: str):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    out = tmp_path / "auto.mlir"
    args = ["--step", "decode", "--cache", str(cache), "--batch", "3", "--paged", "auto", *extra]
    assert import_main([str(model), "-o", str(out), *args]) == 0
    fn = next(iter(parse_module(out.read_text()).ops))
    return fn, out.read_text()


@pytest.mark.parametrize(
    "target, block, runner_up",
    # a K row of the tiny model is 64 f16 = 128 B. On n150 a round trip over its 128 readers is
    # 3.9 cycles and a wasted row 0.48 (267 B a cycle): 32 rows cost 2.5 x 3.9 + 15.5 x 0.48 =
    # 17.2 per cache, 64 rows 1.5 x 3.9 + 31.5 x 0.48 = 21.0. On h100 a round trip is 1.52 cycles
    # (400 / 264) and a row 0.073 (1743 B a cycle): 32 rows 4.93, 64 rows 4.59, 128 rows 6.18.
    [("wormhole_n150", 32, 64), ("h100", 64, 32)],
)
def test_a_tiny_model_pages_in_whole_tiles(tmp_path, target, block, runner_up):
    fn, text = imported(tmp_path, 128, "--target", target)
    rec = fn.attributes[PAGE_SIZE_ATTR].data
    assert (rec["block"].value.data, rec["runner_up"].value.data) == (block, runner_up)
    assert rec["target"].data == target
    # half a block of 128-byte rows a user, in 2 layers' K and V
    assert rec["waste_bytes_per_user"].value.data == round((block - 1) / 2 * 128 * 4)
    assert f"paged in blocks of {block} rows (priced on {target}: " in text.splitlines()[0]
    assert f"tensor<3x{128 // block}xi32>" in text  # the block table: a row of blocks a user


def test_a_cache_under_a_tile_is_one_block(tmp_path):
    fn, _ = imported(tmp_path, 16, "--target", "h100")
    rec = fn.attributes[PAGE_SIZE_ATTR].data
    assert rec["block"].value.data == 16 and "runner_up" not in rec


@pytest.mark.parametrize(
    "extra, message",
    [
        ((), "give --target"),
        (("--target", "n300"), "n300 is a mesh"),
    ],
)
def test_auto_without_a_chip_is_refused(tmp_path, capsys, extra, message):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    args = ["--step", "decode", "--cache", "64", "--batch", "2", "--paged", "auto", *extra]
    assert import_main([str(model), "-o", str(tmp_path / "x.mlir"), *args]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1
