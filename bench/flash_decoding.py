"""Flash decoding: Llama-3-8B's decode attention (32 heads of 128 over 8 kv heads, a 4096-key
cache, examples/llama3_8b_decode.mlir) against its DRAM roofline, unsplit and split.

    .venv/bin/python bench/flash_decoding.py

For wormhole_n150 and blackhole_p150, one run of the pipeline with `kv-splits=1` (one flash
section: the plan before flash decoding) and one with the count link prices
(docs/passes.md#link-flash-decoding-splits-the-keys). Each prints the predicted microseconds of
the attention's sections (the `-t report` numbers), and the ratio to the roofline of the op
itself: its compulsory bytes (K, V, the query, the result) at the DRAM peak, which is the
unsplit section's roofline (the split's partials are traffic of the plan, not of the op).
"""

from __future__ import annotations

from pathlib import Path

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.emit.report import report

ROOT = Path(__file__).resolve().parents[1]
PROGRAM = ROOT / "examples" / "llama3_8b_decode.mlir"
TARGETS = ("wormhole_n150", "blackhole_p150")


def attention_rows(target: str, **options: int) -> list[dict]:
    module = compile_module(PROGRAM.read_text(), target=target, **options)
    return [s for s in report(module)["sections"] if s["op"] == "tg.attention"]


def main() -> None:
    print("| target | plan | sections | predicted us | roofline us | predicted / roofline |")
    print("|---|---|---|---:|---:|---:|")
    for target in TARGETS:
        (unsplit,) = attention_rows(target, kv_splits=1)
        roofline = unsplit["roofline_us"]
        split = attention_rows(target)
        for plan, rows in (("unsplit (kv-splits=1)", [unsplit]), ("flash decoding", split)):
            us = sum(r["predicted_us"] for r in rows)
            names = ", ".join(f"@{r['name']} {r['predicted_us']:.1f}" for r in rows)
            print(
                f"| {target} | {plan} | {names} | {us:.1f} | {roofline:.1f} | {us / roofline:.2f}x |"
            )


if __name__ == "__main__":
    main()
