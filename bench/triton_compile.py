"""Compiles every Triton kernel of a program for the preset's GPU architecture, without a GPU.

    python bench/triton_compile.py [FILE.mlir ...] [--target h100] [--smoke] [--json OUT]

For each section of the sized program (`spatial-pipeline{target=T}`, as the Triton backends
compile it: flash decoding and split-K as planned) the kernel `-t triton`
prints is compiled by `triton.compile(ASTSource(fn, signature), target=GPUTarget("cuda", CC, 32))`
(sm_86 for rtx3060, sm_90 for h100 and h200), and the bench prints, side by side:

- `shared`: the shared memory Triton allocated (`metadata.shared`, bytes),
- `regs`: registers per thread (from the cubin, where the installed ptxas reports them; `-`
  otherwise),
- `ours`: the local bytes our size-buffers laid out on the section's busiest site,
- the preset's shared-memory budget (the opt-in maximum, `local_mem_max_bytes`), and whether the
  kernel fits it,
- `why` where the two figures differ by more than 2x.

Default program: examples/llama3_8b_decode.mlir on h100. `--smoke`: examples/tiny_decode.mlir,
for CI. Exit status 1 when a kernel does not compile or exceeds the budget.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "0"  # compile: triton must be imported in compiling mode
os.environ.setdefault("TRITON_DEFAULT_FP_FUSION", "1")
if "TRITON_CACHE_DIR" not in os.environ:  # cold compiles: the times are what a fresh machine pays
    import tempfile

    os.environ["TRITON_CACHE_DIR"] = tempfile.mkdtemp(
        prefix="triton-cache-"
    )  # Triton 3.9's default, without its warning

ROOT = Path(__file__).resolve().parent.parent

ARCH = {"rtx3060": 86, "h100": 90, "h200": 90}
"""Preset -> CUDA compute capability."""

TRITON_TYPES = {"bf16": "*bf16", "f16": "*fp16", "f32": "*fp32", "i8": "*i8", "i32": "*i32"}


def sized(path: Path, target: str):
    from xdsl.context import Context
    from xdsl.dialects import arith, builtin, func
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    from spatial_dialect.passes import get_all_passes
    from spatial_dialect.sp import SP
    from spatial_dialect.tg import TG

    ctx = Context()
    for dialect in (builtin.Builtin, func.Func, arith.Arith, TG, SP):
        ctx.load_dialect(dialect)
    module = Parser(ctx, path.read_text()).parse_module()
    spec = f"spatial-pipeline{{target={target}}}"  # as spatial-run --backend triton compiles
    PassPipeline.parse_spec(get_all_passes(), spec).apply(ctx, module)
    return module


WHY = {
    "gemm": "out FIFO in registers",
    "stream": "no staging: blocks load to registers",
    "more": "tl.dot staging beyond our pages",
}
"""Why Triton's shared memory and our laid-out bytes differ by more than 2x (bench/README.md
explains each)."""


def why(kind: str, shared: int, ours: int) -> str:
    if ours == 0 or 0.5 <= shared / max(ours, 1) <= 2:
        return ""
    if shared > ours:
        return WHY["more"]
    return WHY["gemm"] if kind == "gemm" else WHY["stream"]


def registers(compiled) -> int | None:
    """Registers per thread, read from the cubin by the cuobjdump Triton bundles (None where it
    is missing)."""
    import re
    import subprocess
    import tempfile

    import triton

    tool = Path(triton.__file__).parent / "backends" / "nvidia" / "bin" / "cuobjdump"
    cubin = compiled.asm.get("cubin")
    if not tool.exists() or not cubin:
        return None
    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "k.cubin"
        path.write_bytes(cubin)
        proc = subprocess.run(
            [str(tool), "--dump-resource-usage", str(path)],
            capture_output=True,
            text=True,
            check=False,
        )
    found = re.search(r"REG:(\d+)", proc.stdout)
    return int(found.group(1)) if found else None


def compile_program(path: Path, target: str) -> tuple[list[dict], float]:
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    from spatial_dialect import sp
    from spatial_dialect.passes.site_footprint import site_bytes
    from spatial_dialect.passes.target_choice import recorded_target
    from spatial_dialect.tools.backend.triton.printer import emit_module
    from spatial_dialect.tools.backend.triton.runner import load_emitted

    module = sized(path, target)
    budget = recorded_target(module, "triton").local_mem_max_bytes
    emitted = emit_module(module)
    mod = load_emitted(emitted)
    rows = []
    total = 0.0
    gpu = GPUTarget("cuda", ARCH[target], 32)
    for s in emitted.sections:
        fn = getattr(mod, f"{s.fn}_kernel")
        signature = {arg: TRITON_TYPES[elt] for _, arg, elt in s.params()}
        signature.update(SITES="*i32", ITEMS="*i32")
        start = time.perf_counter()
        compiled = triton.compile(
            ASTSource(fn=fn, signature=signature, constexprs={}),
            target=gpu,
            options={"num_warps": 4, "num_stages": s.num_stages},
        )
        seconds = time.perf_counter() - start
        total += seconds
        shared = int(compiled.metadata.shared)
        regs = registers(compiled)
        ours = max(site_bytes(s.program, r) for r in s.program.ops_of(sp.SitesOp))
        rows.append(
            {
                "section": s.name,
                "kind": s.program.kind.value,
                "sm": ARCH[target],
                "shared": shared,
                "regs": regs,
                "ours": ours,
                "budget": budget,
                "fits": shared <= budget,
                "num_stages": s.num_stages,
                "seconds": round(seconds, 3),
                "why": why(s.program.kind.value, shared, ours),
            }
        )
    return rows, total


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*", type=Path)
    ap.add_argument(
        "--target", default=None, help="rtx3060, h100 or h200 (default: h100; --smoke: all three)"
    )
    ap.add_argument("--smoke", action="store_true", help="the tiny decode step only (CI)")
    ap.add_argument("--json", type=Path, help="write the rows as JSON")
    args = ap.parse_args(argv)
    files = args.files or [
        ROOT / "examples" / ("tiny_decode.mlir" if args.smoke else "llama3_8b_decode.mlir")
    ]
    targets = [args.target] if args.target else (["rtx3060", "h100"] if args.smoke else ["h100"])
    everything = []
    bad = 0
    for path in files:
        for target in targets:
            rows, total = compile_program(path, target)
            print(
                f"{path.name} on {target} (sm_{ARCH[target]}): {len(rows)} kernels compiled in {total:.1f} s"
            )
            print(
                f"  {'section':18s} {'kind':10s} {'shared':>8s} {'regs':>5s} {'ours':>8s} {'budget':>8s} fits"
            )
            for r in rows:
                regs = "-" if r["regs"] is None else str(r["regs"])
                print(
                    f"  {r['section']:18s} {r['kind']:10s} {r['shared']:8d} {regs:>5s} {r['ours']:8d} "
                    f"{r['budget']:8d} {'yes' if r['fits'] else 'NO'}"
                    + (f"  ({r['why']})" if r["why"] else "")
                )
                bad += not r["fits"]
            everything.append(
                {"file": path.name, "target": target, "seconds": total, "kernels": rows}
            )
    if args.json:
        args.json.write_text(json.dumps(everything, indent=1))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
