"""Traces against prices, per section of a Llama-3-8B decode step: what the cost model prices for
each section's plan (DRAM bytes, tile-matmuls, vector work) beside what tt-lang-sim's trace of the
printed TT-Lang program did (docs/backend-ttlang.md, "Traces against prices").

    .venv/bin/python bench/trace_table.py [--target wormhole_n150|blackhole_p150] [--kv-splits P]

The real step (examples/llama3_8b_decode.mlir: 4096 wide, 14336 FFN, a 128256-row vocabulary, a
4096-row cache) is too big to simulate, so the table traces THE SAME LAYER SCALED DOWN: head_dim
128 and GQA 4:1 kept (8 query heads over 2 kv heads), hidden 1024, FFN 3584 (Llama's 3.5x), a
2048-row vocabulary and a 128-row KV cache, one layer; one token. Every section kind of the
decode step is in it (rms_norm, the GEMMs, rope, attention, the residual adds, swiglu, the LM
head, arg-max; the gather and the cache scatters are host steps, ttnn ops, not traced), with the
plans the default pipeline chooses (split-K where it pays); `--kv-splits P` forces flash
decoding (the planner splits no 128-row cache), so the table shows `attention` (the splits) and
`attention_combine` rows.

Columns: DRAM KiB priced / traced (the plan's tensors; constant tables the printer reads are
`const`, unpriced), tile-matmuls priced (whole tiles) / traced on the plan's operands / traced
with a constant table (selectors: unpriced), pipe tiles priced / traced per family (`partials`:
split-K's hand-over), vector work priced (VECTOR_OPS x whole tiles) / traced tile operations
(block-expression results: a different unit, see the docs).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from spatial_dialect import sp
from spatial_dialect.passes.dram_layout import dram_tile_bytes
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.passes.target_choice import recorded_target
from spatial_dialect.tools.backend.ttlang.runner import run_traced
from spatial_dialect.tools.frontend.layers import ExampleNames, Model, step_function
from spatial_dialect.tools.frontend.tg_builder import print_functions
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import input_names
from spatial_dialect.tools.spatial_run import entry_function, parse_module

ROOT = Path(__file__).resolve().parents[1]
# the counting code of the trace-count tests (one definition of what is compared)
sys.path.insert(0, str(ROOT / "test" / "backend" / "ttlang"))
from trace_counts import (  # noqa: E402
    counted,
    differences,
    partials_pipes,
    price,
    traced_sections,
)

SCALED = Model("llama3_8b_scaled", 1024, 8, 2, 128, 3584, 1e-5, qk_norm=False, vocab=2048)
CACHE = 128


def program() -> str:
    return print_functions([step_function(SCALED, ExampleNames(), 1, CACHE, 1, "llama3_8b_step")])


def kib(module, sec: sp.ProgramOp, tiles: dict[str, int]) -> float:  # noqa: ANN001
    target = recorded_target(module, "trace table")
    by = {t.sym_name.data: t for t in sec.ops_of(sp.TensorOp)}
    return sum(n * dram_tile_bytes(target, by[t]) for t, n in tiles.items() if t in by) / 1024


def pipes(tiles: dict[str, int]) -> str:
    return ", ".join(f"{f} {n}" for f, n in sorted(tiles.items())) or "0"


def table(target: str, kv_splits: int | None = None) -> list[str]:
    fn = entry_function(parse_module(program()))
    options = {} if kv_splits is None else {"kv_splits": kv_splits}
    module = compile_module(fn, target, **options)
    inputs = draw_inputs(fn, 0)
    start = time.perf_counter()
    traced = run_traced(module, [inputs[x] for x in input_names(fn)])
    took = time.perf_counter() - start
    rows = [
        f"{target}: scaled Llama-3-8B decode step (hidden 1024, 8/2 heads of 128, FFN 3584, "
        f"vocab 2048, cache {CACHE}{f', kv-splits {kv_splits}' if kv_splits else ''}); "
        f"traced in {took:.0f} s",
        "",
        "| section | kind | DRAM KiB priced / traced (+ const) | tile-matmuls priced / traced "
        "(+ selectors) | pipe tiles priced / traced | vector priced / tile ops traced | "
        "differences |",
        "|---|---|---|---|---|---|---|",
    ]
    for sec, op, events in traced_sections(module, traced):
        if op is None:
            rows.append(
                f"| @{sec.sym_name.data} | {sec.kind.value} | host step (a ttnn op between the "
                "operations): not traced | | | | |"
            )
            continue
        p, c = price(module, sec), counted(events, partials_pipes(sec))
        kind = p.kind
        if (slices := sec.one(sp.WorkOp).k_slices) > 1:
            kind += f" split-K {slices} along {sec.one(sp.WorkOp).split_axis}"
        priced = kib(module, sec, p.dram_read) + kib(module, sec, p.dram_written)
        got = kib(module, sec, c.dram_read) + kib(module, sec, c.dram_written)
        const = sum(c.constants.values())
        diffs = differences(traced, sec, op, events, p)
        rows.append(
            f"| @{sec.sym_name.data} | {kind} | {priced:.0f} / {got:.0f}"
            f"{f' (+{const} tiles)' if const else ''} | {p.tile_matmuls:.0f} / {c.tile_matmuls}"
            f"{f' (+{c.selector_matmuls})' if c.selector_matmuls else ''} | "
            f"{pipes(p.pipe_received)} / {pipes(c.pipe_received)} | "
            f"{p.vector_tiles:.0f} / {c.tile_ops} | {'; '.join(diffs) or 'stated forms only'} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", choices=["wormhole_n150", "blackhole_p150"], action="append")
    parser.add_argument("--kv-splits", type=int, help="force flash decoding with P splits")
    args = parser.parse_args()
    for target in args.target or ["wormhole_n150", "blackhole_p150"]:
        print("\n".join(table(target, args.kv_splits)))
        print()


if __name__ == "__main__":
    main()
