"""The self-refusal sweep: random GEMM shapes through the default pipeline on every preset, under
both accumulations, counting how each compile ends (issue 22, item 6).

    nice .venv/bin/python bench/gemm_sweep.py                     # 500 shapes, every preset, f32 and bf16
    .venv/bin/python bench/gemm_sweep.py --shapes 30 --seed 7     # the CI size (test/bench/test_gemm_sweep.py)
    .venv/bin/python bench/gemm_sweep.py --targets blackhole_p150 --accumulate bf16

A plan the tile pass chose must be one size-buffers lays out: the footprint tile prices and the
layout size-buffers makes are one computation (targets/footprint.py, passes/size_buffers.py), so
`LocalMemExceeded` here is the compiler refusing its own plan and the sweep's headline number must
be zero. Other refusals (a shape no plan fits, a DRAM too small) are the compiler declining the
program, named and typed, and are counted apart. Shapes: the issue's two, then a third each of
uniform, log-uniform and long-K shapes in 1..16384 (`shapes`), each GEMM bf16 or f32 at random.
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections import Counter
from dataclasses import dataclass

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp.errors import LocalMemExceeded
from spatial_dialect.targets.presets import PRESETS

ACCUMULATIONS = ("f32", "bf16")
DTYPES = ("bf16", "f32")
MAX_DIM = 16384


@dataclass(frozen=True)
class Shape:
    m: int
    k: int
    n: int
    dtype: str

    def program(self) -> str:
        a, b, c = (
            f"tensor<{self.m}x{self.k}x{self.dtype}>",
            f"tensor<{self.k}x{self.n}x{self.dtype}>",
            f"tensor<{self.m}x{self.n}x{self.dtype}>",
        )
        return (
            f"func.func @gemm(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
            f"  func.return %c : {c}\n}}\n"
        )

    def __str__(self) -> str:
        return f"{self.m}x{self.k}x{self.n} {self.dtype}"


ISSUE = (Shape(1024, 8192, 1024, "bf16"), Shape(9373, 1313, 7710, "bf16"))
"""The GEMMs issue 22 found refused on blackhole_p150 (LocalMemExceeded on the plan tile chose)."""


def shapes(count: int, seed: int) -> list[Shape]:
    """The issue's shapes, then `count` seeded ones, a third from each family: every dimension
    uniform in 1..MAX_DIM; every dimension log-uniform (uniform alone almost never draws a
    decode row or a ragged small edge); and long K (M and N in 256..4096, K in 1024..16384), where
    a Tensix mesh's boundary ranges hold smaller pages than its interior: the shapes that found
    size-buffers' group padding (9 of 150 such shapes were refused on the Tensix presets before
    it was fixed, none of 500 drawn from the other two families)."""
    rng = random.Random(seed)

    def log_uniform(lo: int, hi: int) -> int:
        return max(lo, min(hi, round(math.exp(rng.uniform(math.log(lo), math.log(hi))))))

    def draw(i: int) -> Shape:
        if i % 3 == 0:
            m, k, n = (rng.randint(1, MAX_DIM) for _ in range(3))
        elif i % 3 == 1:
            m, k, n = (log_uniform(1, MAX_DIM) for _ in range(3))
        else:
            m, k, n = rng.randint(256, 4096), rng.randint(1024, MAX_DIM), rng.randint(256, 4096)
        return Shape(m, k, n, rng.choice(DTYPES))

    return [*ISSUE, *(draw(i) for i in range(count))]


@dataclass
class Result:
    counts: Counter[str]
    self_refusals: list[tuple[str, str, Shape, str]]
    seconds: float
    slowest: tuple[float, str] = (0.0, "")  # the longest compile (seconds, what it was)


def sweep(
    count: int, seed: int, targets: list[str], accumulations: list[str], verbose: bool = False
) -> Result:
    counts: Counter[str] = Counter()
    bad: list[tuple[str, str, Shape, str]] = []
    start = time.perf_counter()
    slowest = (0.0, "")
    for shape in shapes(count, seed):
        for target in targets:
            for acc in accumulations:
                began = time.perf_counter()
                try:
                    compile_module(shape.program(), target, accumulate=acc)
                    end = "ok"
                except LocalMemExceeded as exc:
                    end = "LocalMemExceeded"
                    bad.append((target, acc, shape, str(exc)))
                except Exception as exc:  # noqa: BLE001
                    end = type(exc).__name__
                counts[end] += 1
                took = time.perf_counter() - began
                slowest = max(slowest, (took, f"{shape} on {target} accumulate={acc}"))
                if verbose and end != "ok":
                    print(f"{target} {acc} {shape}: {end}", file=sys.stderr)
    return Result(counts, bad, time.perf_counter() - start, slowest)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--shapes", type=int, default=500)
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--targets", nargs="*", default=list(PRESETS))
    ap.add_argument("--accumulate", nargs="*", default=list(ACCUMULATIONS))
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    res = sweep(args.shapes, args.seed, args.targets, args.accumulate, args.verbose)
    total = sum(res.counts.values())
    print(
        f"{args.shapes} + {len(ISSUE)} shapes x {len(args.targets)} presets x {len(args.accumulate)} "
        f"accumulations = {total} compiles in {res.seconds:.0f} s"
    )
    print(f"  slowest compile: {res.slowest[0]:.1f} s ({res.slowest[1]})")
    for end, n in res.counts.most_common():
        print(f"  {end:24} {n}")
    print(f"self-refusals (LocalMemExceeded on a chosen plan): {len(res.self_refusals)}")
    for target, acc, shape, msg in res.self_refusals:
        print(f"  {target} accumulate={acc} {shape}: {msg}")
    sys.exit(1 if res.self_refusals else 0)


if __name__ == "__main__":
    main()
