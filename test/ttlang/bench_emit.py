"""Emission time of -t ttlang against the pipeline's own time (Llama-3-8B decode layers).

    .venv/bin/python test/ttlang/bench_emit.py [LAYERS] [TARGET]

Compiles LAYERS stacked decode layers (bench/compile_speed.py's program) and times the printer
over every section: the ones it prints and the ones it refuses by name (counted apart).
"""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "examples"))


def main() -> None:
    import generate
    from xdsl.passes import PassPipeline

    from spatial_dialect import sp
    from spatial_dialect.passes import get_all_passes
    from spatial_dialect.tools.emit.ttlang import Lines, OperationWriter, TTLangUnsupported
    from spatial_dialect.tools.spatial_run import make_context, parse_module

    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    target = sys.argv[2] if len(sys.argv) > 2 else "wormhole_n150"
    module = parse_module(generate.stacked_layers_program(generate.LLAMA3_8B, 1, 4096, layers))
    # as spatial-run --backend tt-lang-sim compiles (tools/backends.py)
    spec = f"spatial-pipeline{{target={target} split-k=1 kv-splits=1}}"
    pipeline = PassPipeline.parse_spec(get_all_passes(), spec)
    t0 = time.perf_counter()
    pipeline.apply(make_context(), module)
    pipeline_s = time.perf_counter() - t0
    printed, refused = 0, {}
    t0 = time.perf_counter()
    for i, p in enumerate(op for op in module.walk() if isinstance(op, sp.ProgramOp)):
        try:
            OperationWriter(p, i).emit(Lines())
            printed += 1
        except TTLangUnsupported as e:
            key = re.sub(r"@\w+", "@T", e.what.split(" has no")[0])
            refused[key] = refused.get(key, 0) + 1
    emit_s = time.perf_counter() - t0
    print(
        f"{layers} layers on {target}: pipeline {pipeline_s:.2f} s, emission {emit_s:.2f} s "
        f"({emit_s / pipeline_s:.2f}x); {printed} sections printed, "
        f"{sum(refused.values())} refused: {refused}"
    )


if __name__ == "__main__":
    main()
