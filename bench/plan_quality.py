"""Plan quality: the tile pass's GEMM plans against the roofline, an exhaustive search, and ttnn's default.

    .venv/bin/python bench/plan_quality.py            # the whole suite -> bench/results/plan_quality.md
    .venv/bin/python bench/plan_quality.py --smoke    # the smallest shape per target (CI, seconds)
    .venv/bin/python bench/plan_quality.py --shapes squares --target blackhole_p150   # or MxKxN,...

For every shape of the suite (square 256..16384, tall and skinny, attention-shaped, the
projections and LM heads of Llama-3-8B and Qwen3-8B at T = 1 and T = 128) on wormhole_n150,
blackhole_p150, plasticine (f32: it has no bf16) and h200, all at the tile pass's default fidelity:

* **ours**: the plan the tile pass chooses (``tile.gemm.rank(...)[0]``), its predicted time and the
  ratio to the roofline (``roofline_cycles``: max(FLOPs / peak, compulsory DRAM bytes / bandwidth));
* **best**: the cheapest plan of an exhaustive lattice of legal plans (below), and ours / best;
* **floor**: the least time any plan can take under the cost model, from the target's fields
  (``latency_floor``): the roofline's work plus what no plan overlaps with it -- the first operand
  tile's DRAM round trip before compute, and the last result tile's write and write round trip
  after it. A shape is *latency-dominated* where its roofline is under twice its pure latency
  (one read round trip, one tile-matmul, one write-back; on a GPU at least one kernel launch,
  ``kernel_launch_cycles``); those are measured against the floor (on a GPU, against max(floor,
  one launch): a kernel that ends within a launch interval waits for the next launch anyway);
* **ttnn default**: the config ttnn's ``create_simple_matmul_program_config`` picks
  (``ttnn_default.py``), priced by the same cost model with the same numerics, and ours / default
  (Tensix targets only: the heuristic has no meaning on a mesh without multicast or on a GPU).

Every number is a prediction of ``spatial_dialect.targets.cost``; nothing runs on a device.

The lattice. Legality is the tile pass's: the sub-block divides the block and fits the
accumulator, the K block divides K, the footprint (``Numerics.fits``, THE footprint function) fits
the site, and a register accumulator holds the whole block unless there is one K block. Within
that, every per-site block 1..Mt x 1..Nt (so multi-round plans on any grid, boundary blocks in
several rounds and rounds uneven along both dimensions, which the tile pass does not generate on a
multicast mesh, and blocks not dividing M or N on a flat target), every sub-block, every K block,
every grid gx x gy up to the mesh, on a multicast mesh every line longer than a mesh row sharing A
or B, multicast of each shared operand on or off, and the streaming plan on every grid. The tile
pass's own candidates are added as they are, so the lattice contains them. Pruning is exact under
the cost model, never a guess:

* a block needs at least its two operand pages at K block 1 (and, off registers, its output pages)
  in local memory, which grows with the block, so the walk over blocks stops where that exceeds
  the budget;
* a grid wider than the block columns (taller than the block rows) costs exactly what the grid of
  the block columns (rows) costs, so grids stop there (lines likewise);
* a plan's total is at least its busiest site's tile-matmuls at the engine's rate and at least its
  DRAM bytes at the DRAM bandwidth (both parts of ``gemm_cost``, computed from ``gemm_quantities``
  before any sub-block or K block is chosen; a block's bound is the least of its full-mesh grid's and
  longest lines', which bound every grid and line of it); blocks and grids are visited cheapest bound
  first and dropped once the bound reaches the best total found, starting from ours.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from latency_floor import GOAL_WORST, Floor, latency_floor  # noqa: E402
from ttnn_default import NotApplicable, TtnnConfig, ttnn_default  # noqa: E402

from spatial_dialect.passes import tile  # noqa: E402
from spatial_dialect.passes.numerics import Numerics  # noqa: E402
from spatial_dialect.passes.tile import gemm as tile_gemm  # noqa: E402
from spatial_dialect.targets import Target, load_target  # noqa: E402
from spatial_dialect.targets.cost import (  # noqa: E402
    GemmCost,
    GemmPlan,
    GemmQuantities,
    GemmShape,
    compulsory_dram_bytes,
    gemm_quantities,
    least_issue_cycles_per_tile_matmul,
    page_bytes,
    roofline_cycles,
)
from spatial_dialect.targets.footprint import FOOTPRINT_DEPTH  # noqa: E402
from spatial_dialect.targets.gemm import ceil_div, deal, divisors  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "plan_quality.md"
FIDELITY = tile.DEFAULT_FIDELITY
TARGETS: dict[str, str] = {  # target -> operand and result dtype
    "wormhole_n150": "bf16",
    "blackhole_p150": "bf16",
    "plasticine": "f32",
    "h200": "bf16",
    "h100": "bf16",
}
GOAL_ROOFLINE = 1.15  # median ours / roofline per target
GOAL_BEST = 1.02  # ours / best on every shape
MODELS = {
    # d_model, query heads, kv heads, head dim, FFN width, vocabulary (the models' config.json)
    "Llama-3-8B": (4096, 32, 8, 128, 14336, 128256),
    "Qwen3-8B": (4096, 32, 8, 128, 12288, 151936),
}


# ── the suite ──────────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class Case:
    name: str  # every role the shape plays, comma-separated
    m: int
    k: int
    n: int

    @property
    def mkn(self) -> str:
        return f"{self.m}x{self.k}x{self.n}"


def suite() -> list[Case]:
    """The shapes, each once, named by every role it plays, in first-seen order."""
    named: dict[tuple[int, int, int], list[str]] = {}

    def add(name: str, m: int, k: int, n: int) -> None:
        named.setdefault((m, k, n), []).append(name)

    for s in (256, 512, 1024, 2048, 4096, 8192, 16384):
        add("square", s, s, s)
    for m, k, n in ((16384, 1024, 128), (65536, 256, 64), (32768, 512, 256), (8192, 8192, 32)):
        add("tall-skinny", m, k, n)
    add("attn QK^T decode (32 q x 4096 keys)", 32, 128, 4096)
    add("attn PV decode", 32, 4096, 128)
    add("attn QK^T prefill", 4096, 128, 4096)
    add("attn PV prefill", 4096, 4096, 128)
    for t in (1, 128):
        for model, (d, heads, kv, hd, ffn, vocab) in MODELS.items():
            add(f"{model} q/o T={t}", t, d, heads * hd)
            add(f"{model} k/v T={t}", t, d, kv * hd)
            add(f"{model} gate/up T={t}", t, d, ffn)
            add(f"{model} down T={t}", t, ffn, d)
            add(f"{model} LM head T={t}", t, d, vocab)
    return [Case(", ".join(v), *mkn) for mkn, v in named.items()]


def smallest(cases: list[Case]) -> Case:
    return min(cases, key=lambda c: (c.m * c.k * c.n, c.m))


SQUARES = (256, 512, 1024, 2048, 4096, 8192)


def shapes_option(text: str) -> list[Case]:
    """`--shapes`: "suite" (the default), "squares" (256..8192), or MxKxN[,MxKxN...]."""
    if text == "suite":
        return suite()
    if text == "squares":
        return [Case("square", s, s, s) for s in SQUARES]
    try:
        return [Case("shape", *(int(v) for v in mkn.split("x", 2))) for mkn in text.split(",")]
    except (TypeError, ValueError):
        raise argparse.ArgumentTypeError(
            f"--shapes: expected suite, squares or MxKxN[,...], got {text!r}"
        ) from None


# ── the exhaustive lattice ─────────────────────────────────────────────────────────────────────


@dataclass
class Search:
    """Exhaustive search for the cheapest legal plan of one shape on one target."""

    target: Target
    shape: GemmShape
    numerics: Numerics
    fidelity: str
    evaluated: int = 0

    def __post_init__(self) -> None:
        t, s = self.target, self.shape
        self.acc_cap = t.acc_tiles(self.numerics.acc)
        self.engine = t.matmul_tile_cycles(s.in_dtype, self.fidelity)
        # DRAM bytes a tile moves (a one-row A and C move one row a tile: Target.dram_tile_bytes)
        self.tba, self.tbb = s.a_dram_tile_bytes(t), s.b_tile_bytes(t)
        self.tbo = s.out_dram_tile_bytes(t)
        self.rect = t.multicasts_rectangles

    # Legality, the tile pass's rules (module text).
    def legal(self, plan: GemmPlan) -> bool:
        s = self.shape
        if plan.streaming:
            return self.numerics.fits(self.target, s, plan)
        if (
            plan.osh * plan.osw > self.acc_cap
            or plan.per_site_m % plan.osh
            or plan.per_site_n % plan.osw
        ):
            return False
        if s.kt % plan.ibw:
            return False
        if (
            self.target.acc_in_registers
            and s.kt > plan.ibw
            and (plan.osh, plan.osw) != (plan.per_site_m, plan.per_site_n)
        ):
            return False
        return self.numerics.fits(self.target, s, plan)

    def may_fit(self, pm: int, pn: int) -> bool:
        """A necessary condition for any legal plan with a pm x pn block, growing with both."""
        t, s = self.target, self.shape
        budget = t.local_mem_max_bytes
        operands = FOOTPRINT_DEPTH * page_bytes(t, s.operand_format, pm + pn)  # K block 1
        if t.acc_in_registers:
            whole = pm * pn <= self.acc_cap and operands <= budget
            return whole or s.kt * operands <= budget  # or one K block
        return operands + page_bytes(t, s.out_dtype, pm * pn) <= budget

    def bound(self, q: GemmQuantities) -> float:
        """Cycles no plan with these quantities can beat (parts of gemm_cost's total)."""
        t = self.target
        eff = q.tile_matmuls_busiest_eff / max(1, q.tile_matmuls_busiest)
        issue = least_issue_cycles_per_tile_matmul(t, self.fidelity)
        compute = q.tile_matmuls_busiest * (self.engine * eff + issue)
        dram = (
            q.a_tiles_dram * self.tba + q.b_tiles_dram * self.tbb + q.c_tiles_written * self.tbo
        ) / t.dram_bytes_per_cycle
        return max(compute, dram)

    def configs(self, pm: int, pn: int) -> list[tuple[int, int, int]]:
        """The legal (osh, osw, ibw) of a pm x pn block (legality does not depend on the grid)."""
        out = []
        for ibw in divisors(self.shape.kt):
            for osh in divisors(pm):
                for osw in divisors(pn):
                    if self.legal(GemmPlan(1, 1, pm, pn, osh, osw, ibw)):
                        out.append((osh, osw, ibw))
        # Among plans of one total the first priced is kept: larger sub-blocks, then wider K blocks
        # first (the tile pass's tie-break order), so the best shown is the one it would prefer.
        return sorted(out, key=lambda c: (-c[0] * c[1], -c[2], c[0]))

    def grids(self, pm: int, pn: int) -> Iterator[tuple[int, int, bool, bool, bool]]:
        """(grid_x, grid_y, mcast_a, mcast_b, line): every grid up to the mesh and, on a multicast
        mesh, every line longer than a mesh row (a line no longer than a row is the grid gx x 1)."""
        t = self.target
        bm, bn = ceil_div(self.shape.mt, pm), ceil_div(self.shape.nt, pn)
        for gx in range(1, min(t.mesh_x, bn) + 1):
            for gy in range(1, min(t.mesh_y, bm) + 1):
                for ma in (True, False) if self.rect and gx > 1 else (True,):
                    for mb in (True, False) if self.rect and gy > 1 else (True,):
                        yield gx, gy, ma, mb, False
        if not self.rect:
            return
        sites = t.mesh_x * t.mesh_y
        for n in range(t.mesh_x + 1, min(sites, bn) + 1):
            for ma in (True, False):
                yield n, 1, ma, False, True
        for n in range(t.mesh_x + 1, min(sites, bm) + 1):
            for mb in (True, False):
                yield 1, n, False, mb, True

    def full(self, pm: int, pn: int) -> list[GemmPlan]:
        """The plans whose bound is at most that of any grid or line of a pm x pn block: the full
        mesh and the longest lines, with multicast (the fewest rounds on the busiest site, the
        fewest DRAM reads)."""
        t, s = self.target, self.shape
        bm, bn = ceil_div(s.mt, pm), ceil_div(s.nt, pn)
        plans = [GemmPlan(min(t.mesh_x, bn), min(t.mesh_y, bm), pm, pn, 1, 1, 1)]
        sites = t.mesh_x * t.mesh_y
        if self.rect and bn > t.mesh_x:
            plans.append(GemmPlan(min(sites, bn), 1, pm, pn, 1, 1, 1, mcast_b=False, line=True))
        if self.rect and bm > t.mesh_x:
            plans.append(GemmPlan(1, min(sites, bm), pm, pn, 1, 1, 1, mcast_a=False, line=True))
        return plans

    def best(self, incumbent: tuple[GemmPlan, GemmCost]) -> tuple[GemmPlan, GemmCost]:
        t, s = self.target, self.shape
        best_plan, best_cost = incumbent

        def consider(plan: GemmPlan) -> None:
            nonlocal best_plan, best_cost
            cost = self.numerics.cost(t, s, plan, self.fidelity)
            self.evaluated += 1
            if cost.total_cycles < best_cost.total_cycles:
                best_plan, best_cost = plan, cost

        for gx in range(1, t.mesh_x + 1):
            for gy in range(1, t.mesh_y + 1):
                plan = GemmPlan.streaming_plan(gx, gy)
                if self.legal(plan):
                    consider(plan)
        # Blocks, cheapest bound first; the full-mesh grid with multicast bounds every grid of a block
        # (the fewest rounds: the fewest tile-matmuls on the busiest site and DRAM reads).
        blocks = []
        for pm in range(1, s.mt + 1):
            if not self.may_fit(pm, 1):
                break
            for pn in range(1, s.nt + 1):
                if not self.may_fit(pm, pn):
                    break
                lower = min(self.bound(gemm_quantities(t, s, p)) for p in self.full(pm, pn))
                blocks.append((lower, pm, pn))
        blocks.sort()
        for lower, pm, pn in blocks:
            if lower >= best_cost.total_cycles:
                break
            configs = self.configs(pm, pn)
            if not configs:
                continue
            grids = []
            for gx, gy, ma, mb, line in self.grids(pm, pn):
                plan = GemmPlan(gx, gy, pm, pn, 1, 1, 1, mcast_a=ma, mcast_b=mb, line=line)
                grids.append((self.bound(gemm_quantities(t, s, plan)), gx, gy, ma, mb, line))
            grids.sort()
            for lower_g, gx, gy, ma, mb, line in grids:
                if lower_g >= best_cost.total_cycles:
                    break
                for osh, osw, ibw in configs:
                    consider(
                        GemmPlan(gx, gy, pm, pn, osh, osw, ibw, mcast_a=ma, mcast_b=mb, line=line)
                    )
        return best_plan, best_cost


# ── one row ────────────────────────────────────────────────────────────────────────────────────


@dataclass
class Row:
    target: str
    case: Case
    roofline: int  # cycles
    clock_ghz: float
    ours: tuple[GemmPlan, GemmCost] | None
    best: tuple[GemmPlan, GemmCost] | None
    evaluated: int
    default: tuple[TtnnConfig, GemmCost] | None
    default_na: str
    compulsory: int
    seconds: float
    floor: Floor

    @property
    def ours_floor(self) -> float | None:
        return self.ours[1].total_cycles / self.floor.measure if self.ours else None

    @property
    def worst_ok(self) -> bool:
        """The acceptance's "no shape worse than 2x": of the roofline, or of the floor where
        latency dominates."""
        r = self.ours_floor if self.floor.dominated else self.ours_roof
        return r is None or r <= GOAL_WORST

    def us(self, cycles: float) -> float:
        return cycles / (self.clock_ghz * 1000.0)

    @property
    def ours_roof(self) -> float | None:
        return self.ours[1].total_cycles / self.roofline if self.ours else None

    @property
    def ours_best(self) -> float | None:
        return (
            self.ours[1].total_cycles / self.best[1].total_cycles
            if self.ours and self.best
            else None
        )

    @property
    def ours_default(self) -> float | None:
        if self.ours and self.default:
            return self.ours[1].total_cycles / self.default[1].total_cycles
        return None


def evaluate(target_name: str, case: Case) -> Row:
    t0 = time.perf_counter()
    target = load_target(target_name)
    dtype = TARGETS[target_name]
    shape = GemmShape(case.m, case.k, case.n, dtype, dtype)
    numerics = Numerics.of(target, dtype, dtype)
    ranked = tile_gemm.rank(target, shape, numerics, FIDELITY)
    ours = ranked[0] if ranked else None
    search = Search(target, shape, numerics, FIDELITY)
    # The lattice contains every tile candidate: each is legal by the lattice's rules.
    outside = [p for p, _ in ranked if not search.legal(p)]
    assert not outside, f"tile candidates outside the lattice's legality: {outside[:3]}"
    best = search.best(min(ranked, key=lambda pc: pc[1].total_cycles)) if ranked else None
    floor = latency_floor(target, shape, FIDELITY)
    least = min([c.total_cycles for _, c in ranked] + ([best[1].total_cycles] if best else []))
    assert floor.cycles <= least, f"{target_name} {case.mkn}: a plan under the floor {floor}"
    default, na = None, ""
    try:
        cfg = ttnn_default(target, shape, numerics)
        default = (cfg, cfg.cost(shape, numerics, FIDELITY))
    except NotApplicable:
        na = "n/a"
    return Row(
        target_name,
        case,
        roofline_cycles(target, shape, FIDELITY),
        target.clock_ghz,
        ours,
        best,
        search.evaluated + len(ranked),
        default,
        na,
        compulsory_dram_bytes(target, shape),
        time.perf_counter() - t0,
        floor,
    )


# ── reporting ──────────────────────────────────────────────────────────────────────────────────


def plan_text(plan: GemmPlan, kt: int, mesh: tuple[int, int] | None = None) -> str:
    if plan.streaming:
        return f"stream {plan.grid_x}x{plan.grid_y}"
    mc = ""
    if mesh is not None:  # a multicast mesh: say which shared operands are not multicast
        shared = (("A", plan.mcast_a, plan.grid_x > 1), ("B", plan.mcast_b, plan.grid_y > 1))
        off = [n for n, on, many in shared if many and not on]
        mc = f" no-mcast {'+'.join(off)}" if off else ""
    line = "line " if plan.line else ""
    split = f" split {plan.split_k}{plan.split_axis}" if plan.split_k > 1 else ""
    return (
        f"{line}{plan.grid_x}x{plan.grid_y} blk {plan.per_site_m}x{plan.per_site_n} sub {plan.osh}x{plan.osw} "
        f"k {plan.ibw}/{plan.k_slice_tiles(kt)}{mc}{split}"
    )


def _dimension_rule(name: str, tiles: int, per: int, used: int, sites: int) -> list[str]:
    """Why dealing one dimension's blocks over `used` sites is outside tile.gemm.dimension (or nothing)."""
    if used in tile_gemm.dimension(tiles, sites).get(per, []):
        return []
    blocks = ceil_div(tiles, per)
    if tiles % per:
        return [f"several rounds of a block not dividing {name}"]
    return [f"{name} blocks on {used} sites ({ceil_div(blocks, used)} rounds)"]


def outside_tile_space(plan: GemmPlan, shape: GemmShape, target: Target) -> list[str]:
    """Which rules of the tile pass's candidate space a plan breaks (its legality it keeps)."""
    if plan.streaming:
        return (
            []
            if (plan.grid_x, plan.grid_y) == (target.mesh_x, target.mesh_y)
            else ["sub-grid streaming"]
        )
    why = []
    mt, nt = shape.mt, shape.nt
    pm, pn = plan.per_site_m, plan.per_site_n
    bm, bn = ceil_div(mt, pm), ceil_div(nt, pn)
    if target.multicasts_rectangles:
        d = deal(target, shape, plan)
        x, y = target.mesh_x, target.mesh_y
        # split-K's slices each deal over their share of the mesh along the split axis
        if plan.split_axis == "x":
            x //= plan.split_k
        else:
            y //= plan.split_k
        if not plan.line:
            why += _dimension_rule("M", mt, pm, d.grid_y, y)
            why += _dimension_rule("N", nt, pn, d.grid_x, x)
            if bm % d.grid_y and bn % d.grid_x:
                why.append("uneven rounds along both M and N")
        elif plan.grid_y == 1:
            # a line sharing A: the block columns dealt, every block row on each site
            why += _dimension_rule("N", nt, pn, d.grid_x, x * y)
            if bm > 1 and mt % pm:
                why.append("a line running block rows not dividing M")
        else:
            why += _dimension_rule("M", mt, pm, d.grid_y, x * y)
            if bn > 1 and nt % pn:
                why.append("a line running block columns not dividing N")
    else:
        if mt % pm or nt % pn:
            why.append("block not dividing M or N")
        elif (plan.grid_x, plan.grid_y) not in tile_gemm.flat_grids(
            target,
            bm * bn,
            (target.mesh_x // plan.split_k, target.mesh_y)
            if plan.split_axis == "x"
            else (target.mesh_x, target.mesh_y // plan.split_k),
        ):
            if bm * bn > plan.grid_x * plan.grid_y:
                why.append("sub-grid")
    return why


def bound_reason(row: Row, target: Target) -> str:
    """Why ours sits above the roofline: what binds, in the cost model's terms, and the share of
    the pipeline's fill (first blocks read) and drain (last compute and write-back) when large."""
    assert row.ours
    _, cost = row.ours
    q = cost.quantities
    if cost.bound == "compute":
        even = q.tile_matmuls / max(1, target.sites)
        per_tm = cost.compute_cycles / max(1, q.tile_matmuls_busiest)
        why = (
            f"compute: busiest site {q.tile_matmuls_busiest / even:.2f}x an even share, "
            f"{per_tm:.0f} cycles per tile-matmul"
        )
    elif cost.bound == "dram" and cost.step_dram >= cost.step_movement:
        why = (
            f"DRAM bandwidth: {cost.dram_bytes / max(1, row.compulsory):.1f}x the compulsory bytes"
        )
    else:
        kind = "DRAM reads" if cost.bound == "dram" else "NoC"
        why = (
            f"{kind}: {q.busiest_steps} steps of {cost.step_movement:.0f} movement cycles "
            f"(read round trip and per-tile issue, then any multicast send; "
            f"DRAM share {cost.step_dram:.0f}, compute {cost.step_compute:.0f})"
        )
    edges = (cost.fill_cycles + cost.drain_cycles) / max(1, cost.total_cycles)
    if edges >= 0.1:
        why += f"; fill+drain {edges:.0%} of the total"
    return why


def ratio(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def table(rows: list[Row]) -> list[str]:
    target = load_target(rows[0].target)
    mesh = (target.mesh_x, target.mesh_y) if target.multicasts_rectangles else None
    dtype = TARGETS[rows[0].target]
    fid = f", {FIDELITY}" if tile_gemm.fidelity_matters(target, dtype) else ""
    lines = [
        f"### {target.name} ({target.mesh_x}x{target.mesh_y}, {dtype}{fid})",
        "",
        "| shape | M x K x N | ours (tile pass) | ours us | roofline us | ours/roof | latency us "
        "| floor us | ours/floor | best us | ours/best | ttnn default | default us | ours/default "
        "| bound | misses |",
        "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---|",
    ]
    for r in rows:
        shape = GemmShape(r.case.m, r.case.k, r.case.n, dtype, dtype)
        if r.ours is None:
            lines.append(
                f"| {r.case.name} | {r.case.mkn} | no legal plan | | {r.us(r.roofline):.2f} | | | | | | | | | | | |"
            )
            continue
        plan, cost = r.ours
        misses = []
        if r.ours_roof is not None and r.ours_roof > GOAL_ROOFLINE:
            misses.append(f"roofline: {bound_reason(r, target)}")
        if not r.worst_ok:
            misses.insert(
                0,
                f"over {GOAL_WORST:g}x the floor, latency-dominated"
                if r.floor.dominated
                else f"over {GOAL_WORST:g}x the roofline, not latency-dominated",
            )
        if r.ours_best is not None and r.ours_best > GOAL_BEST:
            bp, bc = r.best
            tags = (
                ", ".join(outside_tile_space(bp, shape, target)) or "inside the tile pass's space"
            )
            misses.append(f"best: {plan_text(bp, shape.kt, mesh)} ({tags}; {bc.bound}-bound)")
        if r.ours_default is not None and r.ours_default > 1.0:
            dc = r.default[1]
            misses.append(f"default faster: {r.default[0].describe()} ({dc.bound}-bound)")
        if r.default:
            cfg, dcost = r.default
            dtext = cfg.describe() + ("" if cfg.legal else " (not legal in our footprint)")
            dus, dratio = f"{dcost.us:.2f}", ratio(r.ours_default)
        else:
            dtext, dus, dratio = r.default_na, "n/a", "n/a"
        lines.append(
            f"| {r.case.name} | {r.case.mkn} | {plan_text(plan, shape.kt, mesh)} | {cost.us:.2f} | "
            f"{r.us(r.roofline):.2f} | {ratio(r.ours_roof)} | {r.us(r.floor.latency):.2f}"
            f"{' (dominated)' if r.floor.dominated else ''} | {r.us(r.floor.measure):.2f} | "
            f"{ratio(r.ours_floor)} | {r.best[1].us:.2f} | {ratio(r.ours_best)} | "
            f"{dtext} | {dus} | {dratio} | {cost.bound} | {'; '.join(misses)} |"
        )
    return lines


def summary(rows: list[Row]) -> str:
    name = rows[0].target
    roofs = [r.ours_roof for r in rows if r.ours_roof is not None]
    bests = [r.ours_best for r in rows if r.ours_best is not None]
    defaults = [r.ours_default for r in rows if r.ours_default is not None]
    med = statistics.median(roofs) if roofs else float("nan")
    worst = max(bests) if bests else float("nan")
    over = sum(b > GOAL_BEST for b in bests)
    line = (
        f"{name}: median ours/roofline {med:.3f} (goal <= {GOAL_ROOFLINE}); max ours/best {worst:.3f}, "
        f"{over} of {len(bests)} shapes over {GOAL_BEST}; "
    )
    if defaults:
        line += f"ours <= default on {sum(d <= 1.0 for d in defaults)} of {len(defaults)} shapes"
    else:
        line += "ttnn default n/a"
    over = [r for r in rows if r.ours_roof is not None and r.ours_roof > GOAL_WORST]
    bad = [r.case.mkn for r in over if not r.worst_ok]
    line += (
        f"; {len(over)} shapes over {GOAL_WORST:g}x the roofline"
        f" ({len(over) - len(bad)} latency-dominated, within {GOAL_WORST:g}x the floor"
        f"{'; not: ' + ', '.join(bad) if bad else ''})"
    )
    missing = len(rows) - len(roofs)
    if missing:
        line += f"; {missing} shapes without a legal plan"
    return line


def run(cases_by_target: dict[str, list[Case]], jobs: int) -> dict[str, list[Row]]:
    work = [(t, c) for t, cases in cases_by_target.items() for c in cases]
    # The largest first, so the pool's tail is short.
    work.sort(key=lambda tc: -(tc[1].m * tc[1].k * tc[1].n))
    if jobs > 1:
        with ProcessPoolExecutor(jobs) as pool:
            rows = list(pool.map(evaluate, *zip(*work, strict=True)))
    else:
        rows = [evaluate(t, c) for t, c in work]
    out: dict[str, list[Row]] = {t: [] for t in cases_by_target}
    for r in rows:
        out[r.target].append(r)
    for t, cases in cases_by_target.items():
        order = {c: i for i, c in enumerate(cases)}
        out[t].sort(key=lambda r: order[r.case])
    return out


def report(results: dict[str, list[Row]], seconds: float, jobs: int, command: str) -> str:
    stamp = datetime.date.today().isoformat()
    machine = f"{platform.machine()}, {jobs} worker process(es) on {os.cpu_count()} CPUs, Python {platform.python_version()}"
    lines = [
        "# Plan quality",
        "",
        f"`{command}` on {stamp} ({machine}); {seconds:.0f} s wall.",
        f"All times are cost-model predictions in microseconds at {FIDELITY}; ratios are of predicted cycles.",
        "",
        "## Summary",
        "",
    ]
    lines += [f"* {summary(rows)}" for rows in results.values()]
    for rows in results.values():
        plans = sum(r.evaluated for r in rows)
        lines += [
            "",
            *table(rows),
            "",
            f"Plans priced for this target: {plans} "
            f"({sum(r.seconds for r in rows):.0f} s of worker time).",
        ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="only the smallest shape per target (CI)")
    ap.add_argument(
        "--jobs", type=int, default=min(2, os.cpu_count() or 1), help="worker processes (default 2)"
    )
    ap.add_argument(
        "--out",
        type=Path,
        help=f"markdown report (default {RESULTS} for the whole suite on every target, else none)",
    )
    ap.add_argument(
        "--target", action="append", choices=sorted(TARGETS), help="only this target (repeatable)"
    )
    ap.add_argument(
        "--shapes",
        type=shapes_option,
        default="suite",
        help="suite (default), squares (256..8192) or MxKxN[,MxKxN...]",
    )
    args = ap.parse_args(argv)
    cases = args.shapes
    if args.smoke:
        cases = [smallest(cases)]
    chosen = args.target or list(TARGETS)
    t0 = time.perf_counter()
    results = run({t: cases for t in chosen}, args.jobs)
    seconds = time.perf_counter() - t0
    for rows in results.values():
        print(summary(rows))
    whole = not args.smoke and args.target is None and cases == suite()
    out = args.out or (RESULTS if whole else None)
    if out:
        command = "python bench/plan_quality.py" + " ".join(["", *(argv or sys.argv[1:])])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(report(results, seconds, args.jobs, command))
        print(f"wrote {out} ({seconds:.0f} s)")
    else:
        print(f"({seconds:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
