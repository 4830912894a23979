"""The GPU GEMM cost model against published cuBLAS / CUTLASS throughput.

For every row of ``targets/data/gpu_gemm_throughput.csv`` (targets/data/README.md says where each
row comes from) print the shape, dtype, the published TFLOPS, the TFLOPS the cost model predicts
for the plan the tile pass chooses (``tile.gemm.rank(...)[0]``, the plan this compiler would emit),
and the error, then a summary per role. Nothing is fitted to these rows: the targets are the
presets of ``spatial_dialect.targets`` (hardware facts with sources).

The roles: ``calibration`` rows are the ones a sustained-rate term would be set from (the largest
compute-bound square per card); ``validation`` rows are held out. Until such a term exists the two
sets are reported apart so that adding one cannot hide its fit in the summary.

What is compared: the published figure is 2 M K N / kernel time; the model's figure is 2 M K N /
``GemmCost.us`` (the whole program: compute, DRAM, write-back). The error is predicted TFLOPS over
published, minus one: positive means the model is optimistic.

Run:  .venv/bin/python bench/gpu_gemm_calibration.py [--csv PATH] [--quiet]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

from spatial_dialect.passes import tile
from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.passes.tile import gemm as tile_gemm
from spatial_dialect.targets import load_target
from spatial_dialect.targets.cost import GemmShape

DEFAULT_CSV = Path(__file__).resolve().parents[1] / "targets" / "data" / "gpu_gemm_throughput.csv"
WITHIN = 0.15  # the fidelity threshold


@dataclass(frozen=True)
class Published:
    device: str
    target: str
    m: int
    k: int
    n: int
    dtype: str
    tflops: float
    role: str
    source: str


@dataclass(frozen=True)
class Compared:
    row: Published
    predicted_tflops: float
    bound: str

    @property
    def error(self) -> float:
        return self.predicted_tflops / self.row.tflops - 1.0


def read_rows(path: Path) -> list[Published]:
    with path.open(newline="") as f:
        return [
            Published(
                r["device"],
                r["target"],
                int(r["M"]),
                int(r["K"]),
                int(r["N"]),
                r["dtype"],
                float(r["tflops"]),
                r["role"],
                r["source"],
            )
            for r in csv.DictReader(f)
        ]


def predict(row: Published) -> Compared:
    """The tile pass's chosen plan for the row's shape on its target, priced by the cost model."""
    target = load_target(row.target)
    shape = GemmShape(row.m, row.k, row.n, row.dtype, row.dtype)
    numerics = Numerics.of(target, row.dtype, row.dtype)
    ranked = tile_gemm.rank(target, shape, numerics, tile.DEFAULT_FIDELITY)
    if not ranked:
        raise ValueError(f"no legal plan for {row.m}x{row.k}x{row.n} {row.dtype} on {row.target}")
    _, cost = ranked[0]
    return Compared(row, 2 * row.m * row.k * row.n / (cost.us * 1e-6) / 1e12, cost.bound)


def summary(compared: list[Compared]) -> list[str]:
    lines = [f"{'group':<24}{'rows':>5}{'median |err|':>14}{'within 15%':>12}{'median err':>12}"]
    groups: dict[str, list[Compared]] = {}
    for c in compared:
        groups.setdefault(f"{c.row.target} {c.row.role}", []).append(c)
    groups["all validation"] = [c for c in compared if c.row.role == "validation"]
    for name, cs in groups.items():
        if not cs:
            continue
        errs = [c.error for c in cs]
        within = sum(abs(e) <= WITHIN for e in errs) / len(errs)
        lines.append(
            f"{name:<24}{len(cs):>5}{statistics.median(abs(e) for e in errs):>13.1%}"
            f"{within:>12.0%}{statistics.median(errs):>+12.1%}"
        )
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--csv", type=Path, default=DEFAULT_CSV)
    ap.add_argument("--quiet", action="store_true", help="the summary only")
    args = ap.parse_args(argv)
    try:
        rows = read_rows(args.csv)
    except (OSError, KeyError, ValueError) as e:
        print(f"gpu_gemm_calibration: cannot read {args.csv}: {e}", file=sys.stderr)
        return 1
    compared = [predict(r) for r in rows]
    if not args.quiet:
        print(
            f"{'target':<9}{'M x K x N':>20}{'dtype':>6}{'published':>11}{'predicted':>11}"
            f"{'err':>8}  bound  role"
        )
        for c in compared:
            r = c.row
            print(
                f"{r.target:<9}{f'{r.m}x{r.k}x{r.n}':>20}{r.dtype:>6}{r.tflops:>11.1f}"
                f"{c.predicted_tflops:>11.1f}{c.error:>+8.1%}  {c.bound:<6} {r.role}"
            )
        print()
    print("\n".join(summary(compared)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
