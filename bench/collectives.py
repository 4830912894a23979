"""Our collective prices (targets/collectives.py) against tt-metal's CCL report.

    .venv/bin/python bench/collectives.py

Three comparisons, each printed as our time / theirs per size, for 2 and 8 chips:

1. **Wormhole all_reduce on a line, the report's fitted kernel time** as issue 23 quotes it:
   9.07 us + 5.82 us x (N-1) + 2(N-1)/N x bytes / 10.9 GB/s. The stored copies of the report we could
   read (tt-metal tech_reports/CCLs/CCL_bandwidth.md) list the Wormhole fits as "pending", so these
   constants are the issue's. The acceptance: within 15% at every size from 4 KiB to 1 GiB.
2. **Blackhole, the report's fitted kernel times** (every collective, line and ring; the report at
   commit 5ac66c4a, "Kernel time"), on a Galaxy axis of 2 links per direction (the report's
   SUMMARY_blackhole table: linkbw = busbw / 2).
3. **Wormhole, the report's measured kernel times** (results/FULL_wormhole_b0_bfloat16_6144.md, a
   LoudBox, 1 link per direction; lines of 2 and 8 chips and the ring of 8), for every collective.

Our model is not fitted to any of these: its constants are the report's line rate, payload
efficiency and step-by-step per-invocation costs (targets/mesh.py). docs/targets.md#collective-prices
says what this measured.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from spatial_dialect.targets import MESH_PRESETS, Axis, Mesh, Topology  # noqa: E402
from spatial_dialect.targets.collectives import price  # noqa: E402

TOLERANCE = 0.15
SIZES = [4 << 10 << (2 * i) for i in range(10)]  # 4 KiB, 16 KiB, ..., 1 GiB
LINE, RING = Topology.LINE, Topology.RING


def axis_of(mesh: str, n: int, topology: Topology, links: int) -> Mesh:
    return dataclasses.replace(MESH_PRESETS[mesh], axes=(Axis(n, topology, links),))


def wh_fit_all_reduce_line(n: int, nbytes: int) -> float:
    """us: the Wormhole line all_reduce fit issue 23 quotes from the CCL report."""
    return 9.07 + 5.82 * (n - 1) + 2 * (n - 1) / n * nbytes / 10.9e3


# (collective, topology) -> (base us, us per hop unit, bytes / GB/s rate); the hop unit is N-1 on a
# line, N/2 on a ring. The report writes the bytes per device passed in: all_gather's (N-1) x input
# is (N-1)/N x T, the others' factors apply to T (all_to_all: to B).
BH_FITS = {
    ("all_gather", LINE): (3.7, 1.3, 48),
    ("all_gather", RING): (3.7, 1.6, 95),
    ("reduce_scatter", LINE): (1.3, 3.0, 40),
    ("reduce_scatter", RING): (1.3, 2.1, 82),
    ("all_reduce", LINE): (4.4, 4.4, 44),
    ("all_reduce", RING): (4.4, 3.9, 86),
    ("all_to_all", LINE): (1.8, 1.4, 33),
    ("all_to_all", RING): (1.8, 2.2, 68),
}


def bh_fit(kind: str, topology: Topology, n: int, nbytes: int) -> float:
    base, per, rate = BH_FITS[(kind, topology)]
    unit = n - 1 if topology is LINE else n / 2
    if kind == "all_to_all":
        factor = (n // 2) * ((n + 1) // 2) / n
    else:
        factor = (2 if kind == "all_reduce" else 1) * (n - 1) / n
    return base + per * unit + factor * nbytes / (rate * 1e3)


# (topology, chips, collective) -> {bytes: measured us}, from results/FULL_wormhole_b0_bfloat16_6144.md.
_MEASURED_SIZES = (65536, 524288, 4194304, 33554432, 268435456)
WH_MEASURED = {
    (LINE, 2, "all_reduce"): (24.44, 90.43, 603.63, 4550.12, 36184.58),
    (LINE, 2, "all_gather"): (12.20, 48.31, 336.09, 2646.21, 21124.23),
    (LINE, 2, "reduce_scatter"): (12.88, 43.64, 268.46, 1905.26, 15057.83),
    (LINE, 2, "all_to_all"): (9.47, 46.06, 334.51, 2641.49, 21389.25),
    (LINE, 8, "all_reduce"): (65.31, 136.25, 715.62, 5378.04, 44756.05),
    (LINE, 8, "all_gather"): (24.98, 59.46, 331.93, 2516.23, 19996.94),
    (LINE, 8, "reduce_scatter"): (37.89, 71.30, 372.76, 2722.10, 21211.41),
    (LINE, 8, "all_to_all"): (27.58, 139.78, 1114.27, 8967.67, 71770.15),
    (RING, 8, "all_reduce"): (44.73, 151.45, 443.11, 3233.07, 25694.01),
    (RING, 8, "all_gather"): (20.36, 44.73, 199.16, 1432.40, 11310.31),
    (RING, 8, "reduce_scatter"): (24.70, 102.82, 239.75, 1781.40, 14137.43),
    (RING, 8, "all_to_all"): (27.02, 79.54, 521.21, 4090.92, 32602.88),
}


def size_label(nbytes: int) -> str:
    for unit, shift in (("GiB", 30), ("MiB", 20), ("KiB", 10)):
        if nbytes >= 1 << shift:
            return f"{nbytes >> shift}{unit}"
    return f"{nbytes}B"


def ratios_row(label: str, pairs: list[tuple[int, float, float]]) -> float:
    """Print one row of ours / theirs per size; return the worst |ratio - 1|."""
    cells = " ".join(f"{size_label(b):>6}:{ours / theirs:5.2f}" for b, ours, theirs in pairs)
    worst = max(abs(ours / theirs - 1) for _, ours, theirs in pairs)
    print(f"  {label:<28} worst {worst:5.1%}  {cells}")
    return worst


def us(kind: str, mesh: Mesh, nbytes: int) -> float:
    return price(kind, mesh, nbytes).time_s * 1e6


def main() -> int:
    print("1. Wormhole all_reduce, line, 1 link: ours / the report's fit (issue 23's constants)")
    worst_wh = 0.0
    for n in (2, 8):
        mesh = axis_of("n300", n, LINE, 1)
        pairs = [(b, us("all_reduce", mesh, b), wh_fit_all_reduce_line(n, b)) for b in SIZES]
        worst_wh = max(worst_wh, ratios_row(f"all_reduce n={n}", pairs))
    verdict = "PASS" if worst_wh <= TOLERANCE else "FAIL"
    print(
        f"  acceptance (within {TOLERANCE:.0%} for 2 and 8 chips, 4 KiB..1 GiB): {verdict}, worst {worst_wh:.1%}"
    )

    print("\n2. Blackhole, 2 links per direction: ours / the report's fits")
    # The report fits the four CCL ops; argmax_gather (our MAXLOC pick) is priced as an
    # all_gather of its pairs, which row all_gather already checks.
    for kind in dict.fromkeys(k for k, _ in BH_FITS):
        for topology, chips in ((LINE, (2, 8)), (RING, (8,))):
            for n in chips:
                mesh = axis_of("p150x4", n, topology, 2)
                pairs = [(b, us(kind, mesh, b), bh_fit(kind, topology, n, b)) for b in SIZES]
                ratios_row(f"{kind} {topology.value} n={n}", pairs)

    print("\n3. Wormhole LoudBox, 1 link: ours / the report's measured times")
    for (topology, n, kind), times in WH_MEASURED.items():
        mesh = axis_of("n300", n, topology, 1)
        pairs = [(b, us(kind, mesh, b), t) for b, t in zip(_MEASURED_SIZES, times, strict=True)]
        ratios_row(f"{kind} {topology.value} n={n}", pairs)
    return 0 if worst_wh <= TOLERANCE else 1


if __name__ == "__main__":
    sys.exit(main())
