"""Split-K before and after: each GEMM's predicted time over its roofline with K never split
(`tile{split-k=1}`, the plan space before split-K) and with the tile pass's default, in one run.

    .venv/bin/python bench/split_k.py                       # the 31-shape suite and squares 256..8192
    .venv/bin/python bench/split_k.py --targets blackhole_p150
    .venv/bin/python bench/split_k.py --accumulate bf16     # the 16-bit accumulator's plans

Shapes: the developers' 31-shape suite of bench/plan_quality.py (squares 256..16384 among them)
and the two medium GEMMs issue 15 names (1024x8192x1024, 640x832x832), on
blackhole_p150 (13x10: the mesh whose grids do not divide) and wormhole_n150 (8x8), bf16 at the
tile pass's default fidelity and accumulation (f32 partial sums; `--accumulate bf16` for the fast
mode's bf16 ones). Every number is a prediction of ``spatial_dialect.targets.cost``.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from plan_quality import FIDELITY, Case, plan_text, suite  # noqa: E402

from spatial_dialect.passes.numerics import ACCUMULATE, Numerics  # noqa: E402
from spatial_dialect.passes.tile import gemm as tile_gemm  # noqa: E402
from spatial_dialect.targets import load_target  # noqa: E402
from spatial_dialect.targets.cost import GemmShape, roofline_cycles  # noqa: E402

SQUARES = tuple(2**e for e in range(8, 14))  # 256 .. 8192
ISSUE = ((1024, 8192, 1024), (640, 832, 832))  # the medium GEMMs issue 15 names on blackhole


def cases() -> list[Case]:
    """The suite (which holds the squares 256..16384), any square 256..8192 it lacks, then the
    issue's shapes."""
    shapes = suite()
    seen = {(c.m, c.k, c.n) for c in shapes}
    extra = [(s, s, s) for s in SQUARES] + list(ISSUE)
    return shapes + [Case("extra", *mkn) for mkn in extra if mkn not in seen]


def row(target_name: str, case: Case, accumulate: str) -> tuple[str, float, float, str]:
    """(shape, unsplit / roofline, default / roofline, the default's plan)."""
    target = load_target(target_name)
    shape = GemmShape(case.m, case.k, case.n)
    numerics = Numerics.of(target, "bf16", "bf16", accumulate)
    roof = roofline_cycles(target, shape, FIDELITY)
    before = tile_gemm.rank(target, shape, numerics, FIDELITY, max_split=1)[0][1]
    plan, after = tile_gemm.rank(target, shape, numerics, FIDELITY)[0]
    mesh = (target.mesh_x, target.mesh_y)
    return (
        case.mkn,
        before.total_cycles / roof,
        after.total_cycles / roof,
        plan_text(plan, shape.kt, mesh),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--targets", nargs="+", default=["blackhole_p150", "wormhole_n150"])
    ap.add_argument("--accumulate", choices=ACCUMULATE, default=ACCUMULATE[0])
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    for target_name in args.targets:
        rows = [row(target_name, c, args.accumulate) for c in cases()]
        print(
            f"\n{target_name}, accumulate={args.accumulate}: predicted / roofline, "
            "K unsplit -> default (split-K allowed)"
        )
        print(f"{'M x K x N':>20} {'unsplit':>8} {'split-K':>8}  plan")
        for mkn, before, after, plan in rows:
            mark = " *" if after < before else ""
            print(f"{mkn:>20} {before:8.3f} {after:8.3f}  {plan}{mark}")
        suite_rows = rows[: len(suite())]
        better = sum(a < b for _, b, a, _ in rows)
        print(
            f"suite median {statistics.median(b for _, b, _, _ in suite_rows):.3f} -> "
            f"{statistics.median(a for _, _, a, _ in suite_rows):.3f}; "
            f"split-K chosen for {better} of {len(rows)} shapes (*)"
        )
    print(f"\n{time.perf_counter() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
