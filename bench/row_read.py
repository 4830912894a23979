"""What-if: the one-row read. A decode step's one-row GEMMs read their activation (A) one NoC
transaction per tile, 64 B of bf16 each, as the TT-Lang program does (ttl.copy: one
noc_async_read_tile a tile); tt-metal's NoC carries up to NOC_MAX_BURST_SIZE (8192 B on Wormhole,
16384 B on Blackhole) in one read, so the row segment could be one. This bench prices the whole
Llama-3.1-8B decode step (bench/model_decode.py's program, batch 1) on each card's preset and on
its `_row_bursts` what-if target (examples/targets/, `noc_burst_bytes`), and prints the step's
time on both and each weight format's time over bf16's (the Q8_0 / bf16 and bfp8_b / bf16
ratios), before and after (docs/targets.md#one-transaction-per-tile).

    .venv/bin/python bench/row_read.py            # 2 cards x 3 formats x S = 1024, 4096 (~2 CPU minutes)
    .venv/bin/python bench/row_read.py --smoke    # a 2-layer tiny model on wormhole_n150 (CI)
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import model_decode as md  # noqa: E402

WHAT_IF = Path(__file__).resolve().parents[1] / "examples" / "targets"


def what_if(card: str) -> str:
    """The pipeline's `target` option for the card's burst-reading what-if."""
    return f'"{WHAT_IF / f"{card}_row_bursts.toml"}"'


def measure_pair(program: str, model: str, card: str, weights: str, cache: int, layers: int):
    """(per-tile row, burst row) of one step."""
    tile = md.measure(program, model, card, weights, cache, layers)
    burst = md.measure(program, model, what_if(card), weights, cache, layers)
    return tile, burst


def table(pairs: dict[tuple[str, str, int], tuple]) -> list[str]:
    lines = [
        "| target | weights | cache S | per-tile ms | burst ms | change | over bf16: per-tile | "
        "over bf16: burst | predicted/roofline: per-tile | burst |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for (card, weights, cache), (tile, burst) in pairs.items():
        base = pairs.get((card, "bf16", cache))
        over = (
            ("-", "-")
            if base is None
            else (
                f"{tile.predicted_us / base[0].predicted_us:.4f}",
                f"{burst.predicted_us / base[1].predicted_us:.4f}",
            )
        )
        change = burst.predicted_us / tile.predicted_us - 1
        lines.append(
            f"| {card} | {weights} | {cache} | {tile.predicted_us / 1000:.3f} | "
            f"{burst.predicted_us / 1000:.3f} | {change:+.2%} | {over[0]} | {over[1]} | "
            f"{tile.ratio:.4f} | {burst.ratio:.4f} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="a 2-layer tiny model (CI)")
    args = parser.parse_args(argv)
    import generate

    if args.smoke:
        model, layers, plan = generate.TINY, 2, [("wormhole_n150", w, 64) for w in md.WEIGHTS]
    else:
        model, layers = generate.LLAMA31_8B, 32
        plan = [(c, w, s) for c in md.TARGETS for s in md.CACHES for w in md.WEIGHTS]
    programs = {(w, s): md.decode_step(model, s, layers, w) for _, w, s in plan}
    pairs = {}
    for card, weights, cache in plan:
        pairs[card, weights, cache] = measure_pair(
            programs[weights, cache], model.name, card, weights, cache, layers
        )
        print(f"# {card} {weights} S={cache}", file=sys.stderr)
    print(f"{model.name}: whole greedy decode step, {layers} layers, batch 1")
    print()
    print("\n".join(table(pairs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
