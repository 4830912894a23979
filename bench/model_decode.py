"""Predicted tokens per second of a whole greedy decode step of Llama-3.1-8B.

    .venv/bin/python bench/model_decode.py            # the table (a few minutes on 2 cores)
    .venv/bin/python bench/model_decode.py --smoke    # a 2-layer tiny model on one target (CI)

One decode step is the whole program `examples/generate.py` writes for it: the embedding gather,
32 decoder layers (each with its own weights and a KV cache of S rows), the final norm, the LM
head and the greedy arg-max, batch 1. Each row compiles it with `spatial-pipeline{target=T
format=F}` and reads the `-t report` numbers: the step's predicted time is the sum of its
sections' predicted times (sections run one after another), its roofline the sum of their
rooflines (max(FLOPs / peak, compulsory DRAM bytes / peak DRAM bandwidth) each; every section of
a decode step is DRAM-bound, so this is the step's compulsory bytes at the DRAM's peak).
Tokens per second is 1 / step time.

Beside each row, tt-metal's published decode rate for Llama 3.1 8B on the same card (tt-metal
models/tt_transformers README: 26.0 tokens/s/user on n150, 33.1 on p150). Those run batch 32,
weights in bfp8_b (attention) and bfp4_b (MLP), with host dispatch and every gap between ops;
what differs is in bench/README.md#whole-model-decode.

A row's weights are one of:
- `bf16`;
- `bfp8_b`: `format=bfp8_b` stores every bf16 tensor (weights, KV cache and activations alike) as
  bfp8_b; the row to hold against tt-metal's bfp8/bfp4 weights;
- `q8_0`: the projections and the LM head as a Q8_0 checkpoint holds them (34 bytes per 32
  elements, tg.matmul_q8_0), activations and KV cache bf16; the embedding table stays bf16 (a
  decode step reads one row of it).
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))

TARGETS = ("wormhole_n150", "blackhole_p150")
WEIGHTS = ("bf16", "bfp8_b", "q8_0")
CACHES = (1024, 4096)
# tt-metal models/tt_transformers README, Llama 3.1 8B: tokens/s/user at batch 32 (bfp8_b
# attention weights, bfp4_b MLP weights).
TT_METAL_TOKENS_PER_S_USER = {"wormhole_n150": 26.0, "blackhole_p150": 33.1}


@dataclass(frozen=True)
class Row:
    target: str
    weights: str
    cache: int
    layers: int
    sections: int
    predicted_us: float
    roofline_us: float
    dram_bytes: int
    compile_s: float
    # The device memory the program needs where it exceeds the card's ("16.4 GB"): the row is then
    # a what-if compiled with dram-mem; None where it fits.
    needs: str | None = None

    @property
    def tokens_per_s(self) -> float:
        return 1e6 / self.predicted_us

    @property
    def roofline_tokens_per_s(self) -> float:
        return 1e6 / self.roofline_us

    @property
    def ratio(self) -> float:
        return self.predicted_us / self.roofline_us


def decode_step(model, cache: int, layers: int, weights: str = "bf16") -> str:
    import generate

    if weights == "q8_0":
        model = replace(model, q8_0=True)
    return generate.decode_step_program(model, 1, cache, layers)


def storage_format(weights: str) -> str:
    """The pipeline's `format` for a row: bfp8_b stores every bf16 tensor so; Q8_0 weights are
    Q8_0 in the program itself and leave the rest bf16."""
    return "bfp8_b" if weights == "bfp8_b" else "bf16"


def compile_step(tool, program: str, options: str):
    """Parse ``program`` and run `spatial-pipeline{options}` on it, in spatial-opt's context."""
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    module = Parser(tool.ctx, program).parse_module()
    module.verify()
    spec = f"spatial-pipeline{{{options}}}"
    PassPipeline.parse_spec(tool.available_passes, spec).apply(tool.ctx, module)
    return module


def measure(program: str, target: str, weights: str, cache: int, layers: int) -> Row:
    """Compile ``program`` (written with ``weights``) through the pipeline and total its report."""
    from spatial_dialect.passes.dram_layout import DramExceeded
    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    tool = SpatialOptMain(args=[])
    t0 = time.process_time()
    needs = None
    fmt = storage_format(weights)
    try:
        module = compile_step(tool, program, f"target={target} format={fmt}")
    except DramExceeded as e:
        # The weights do not fit the card (bf16 Llama-3.1-8B is 16 GB, an n150 has 12): price
        # the step as a what-if with room for them, and say so in the row.
        needs = str(e).split("needs ", 1)[1].split(",", 1)[0]
        module = compile_step(tool, program, f"target={target} format={fmt} dram-mem=1TB")
    r = report(module)
    return Row(
        target=target,
        weights=weights,
        cache=cache,
        layers=layers,
        sections=len(r["sections"]),
        predicted_us=r["total"]["predicted_us"],
        roofline_us=r["total"]["roofline_us"],
        dram_bytes=sum(s["dram_bytes"] for s in r["sections"]),
        compile_s=time.process_time() - t0,
        needs=needs,
    )


def table(rows: list[Row]) -> list[str]:
    lines = [
        "| target | weights | cache S | predicted ms | tokens/s | roofline ms | tokens/s at roofline "
        "| predicted/roofline | DRAM GB moved | tt-metal tokens/s/user (batch 32, bfp8/bfp4) |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        published = TT_METAL_TOKENS_PER_S_USER.get(r.target)
        weights = r.weights if r.needs is None else f"{r.weights} (needs {r.needs}: what-if)"
        lines.append(
            f"| {r.target} | {weights} | {r.cache} | {r.predicted_us / 1000:.2f} | "
            f"{r.tokens_per_s:.1f} | {r.roofline_us / 1000:.2f} | {r.roofline_tokens_per_s:.1f} | "
            f"{r.ratio:.3f} | {r.dram_bytes / 1e9:.2f} | "
            f"{'-' if published is None else f'{published:.1f}'} |"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--smoke", action="store_true", help="a 2-layer tiny model on wormhole_n150 (CI)"
    )
    args = parser.parse_args(argv)
    import generate

    if args.smoke:
        model, layers, plan = generate.TINY, 2, [("wormhole_n150", "bf16", 64)]
    else:
        model, layers = generate.LLAMA31_8B, 32
        plan = [(t, w, s) for t in TARGETS for w in WEIGHTS for s in CACHES]
    programs = {(w, s): decode_step(model, s, layers, w) for w, s in {(w, s) for _, w, s in plan}}
    rows = []
    for target, weights, cache in plan:
        rows.append(measure(programs[weights, cache], target, weights, cache, layers))
        print(
            f"# {target} {weights} S={cache}: {rows[-1].sections} sections, compiled in "
            f"{rows[-1].compile_s:.1f} CPU s",
            file=sys.stderr,
        )
    print(f"{model.name}: whole greedy decode step, {layers} layers, batch 1")
    print()
    print("\n".join(table(rows)))
    print()
    for r in rows:
        print(f"{r.target} {r.weights} S={r.cache}: whole step predicted/roofline {r.ratio:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
