"""Emission time of -t ttlang against the pipeline's own time (Llama-3-8B decode layers).

    .venv/bin/python bench/ttlang_emit.py [LAYERS] [TARGET]

Compiles LAYERS stacked decode layers (bench/compile_speed.py's program), then times the
printer: the whole program (`print_ttlang`, what `-t ttlang` runs) when every section prints,
else each section alone, the ones it prints and the ones it refuses by name counted apart.
CPU seconds (process time), so other processes on the machine do not count.
"""

from __future__ import annotations

import io
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))


def main() -> None:
    import generate
    from xdsl.passes import PassPipeline

    from spatial_dialect import sp
    from spatial_dialect.passes import get_all_passes
    from spatial_dialect.passes.pipeline import default_context
    from spatial_dialect.tools.backend.ttlang.printer import (
        Lines,
        OperationWriter,
        TTLangUnsupported,
        print_ttlang,
    )
    from spatial_dialect.tools.spatial_run import parse_module

    layers = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    target = sys.argv[2] if len(sys.argv) > 2 else "wormhole_n150"
    module = parse_module(generate.stacked_layers_program(generate.LLAMA3_8B, 1, 4096, layers))
    # as spatial-run --backend tt-lang-sim compiles (the default options); dram-mem: the 32
    # layers' 15 GB of weights exceed one wormhole_n150's DRAM (as bench/compile_speed.py does
    # for its 70B step), and the time is what is measured
    spec = f"spatial-pipeline{{target={target} dram-mem=400GB}}"
    pipeline = PassPipeline.parse_spec(get_all_passes(), spec)
    t0 = time.process_time()
    pipeline.apply(default_context(), module)
    pipeline_s = time.process_time() - t0
    programs = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    printed, refused = 0, {}
    t0 = time.process_time()
    for i, p in enumerate(programs):
        try:
            OperationWriter(p, i).emit(Lines())
            printed += 1
        except TTLangUnsupported as e:
            key = re.sub(r"@\w+", "@T", e.what.split(" has no")[0])
            refused[key] = refused.get(key, 0) + 1
    emit_s = time.process_time() - t0
    what = "sections alone"
    if not refused:
        text = io.StringIO()
        t0 = time.process_time()
        print_ttlang(module, text)
        emit_s = time.process_time() - t0
        what = f"whole program, {len(text.getvalue().splitlines())} lines"
    print(
        f"{layers} layers on {target}: pipeline {pipeline_s:.2f} s, emission {emit_s:.2f} s "
        f"({what}; {emit_s / pipeline_s:.2f}x); {printed} sections printed, "
        f"{sum(refused.values())} refused: {refused}"
    )


if __name__ == "__main__":
    main()
