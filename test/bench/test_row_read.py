"""bench/row_read.py: a smoke pair on the 2-layer tiny decode step (the Llama-3.1-8B table takes
minutes and is recorded in bench/README.md#the-one-row-read)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

rr = load("row_read")


def test_the_what_if_compiles_and_never_costs_more():
    import generate

    program = rr.md.decode_step(generate.TINY, 64, 2)
    tile, burst = rr.measure_pair(program, "tiny", "wormhole_n150", "bf16", 64, 2)
    # Same program, same sections, same DRAM bytes: bursts change only the transactions issued.
    assert (tile.sections, tile.dram_bytes) == (burst.sections, burst.dram_bytes)
    assert 0 < burst.predicted_us <= tile.predicted_us
    lines = rr.table({("wormhole_n150", "bf16", 64): (tile, burst)})
    assert len(lines) == 3 and lines[-1].startswith("| wormhole_n150 | bf16 | 64 |")
