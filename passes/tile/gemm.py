"""tile's GEMM plan space and its ranking: every legal plan of a GEMM section, priced by the cost
model, best first (the rules are the tile package docstring's).
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.targets import FIDELITIES, Target
from spatial_dialect.targets.cost import (
    GemmCost,
    GemmPlan,
    GemmQuantities,
    GemmShape,
    gemm_cost_floor,
    split_sums_through_dram,
)
from spatial_dialect.targets.gemm import ceil_div, divisors, largest_divisor


def gemm_packing(target: Target) -> str:
    """How loads and the store share the movement engines: the arrangement the cost model prices
    (two engines: B's loader shares the store's engine, tt-metal's in1 + writer pairing)."""
    engines = target.movement_engines
    return "split" if engines >= 3 else "operand_with_store" if engines == 2 else "single"


def dimension(tiles: int, sites: int) -> dict[int, list[int]]:
    """The blocks one dimension of `tiles` tiles can be cut into on `sites` sites, as
    {block: [sites it is dealt over]}: in one round (per block ceil(tiles / g), g <= sites, a
    boundary block taking what is left), or, where the block divides the tiles, in several: over
    the fewest sites that run the fewest rounds R = ceil(blocks / sites) and R + 1 each (the
    first blocks % sites ones running one round more where it does not divide), and over the
    largest divisor of the block count not above `sites` (every site as many)."""
    out: dict[int, list[int]] = {}

    def add(per: int, grid: int) -> None:
        grids = out.setdefault(per, [])
        if grid not in grids:
            grids.append(grid)

    # Every g in 1..sites, in order, through the runs of g that share ceil(tiles / g): a run
    # adds one entry, so this costs O(sqrt tiles) steps whatever the site count (g > tiles
    # gives the block of one tile, as g = tiles does).
    g, last = 1, min(sites, tiles)
    while g <= last:
        per = ceil_div(tiles, g)
        add(per, ceil_div(tiles, per))
        g = last + 1 if per == 1 else ceil_div(tiles, per - 1)
    for per in divisors(tiles):
        blocks = tiles // per
        fewest = ceil_div(blocks, sites)
        for rounds in (fewest, fewest + 1):
            if 2 <= rounds <= blocks:
                add(per, ceil_div(blocks, rounds))
        if blocks > sites:
            add(per, largest_divisor(blocks, sites))
    return out


FLAT_EXTRA_ROUNDS = 16
"""How many rounds beyond the fewest a flat deal may give its busiest site (over fewer sites)."""


def flat_grids(
    target: Target, units: int, mesh: tuple[int, int] | None = None
) -> list[tuple[int, int]]:
    """The rectangles of sites a flat target may deal `units` blocks over: the whole mesh; for
    each round count R from the fewest up to FLAT_EXTRA_ROUNDS more, the fewest sites that run
    at most R each, ceil(units / R) (fewer sites, fewer concurrent write-backs: what a small
    GEMM's fill and drain want); and the largest rectangle whose sites divide the blocks (every
    site as many: on a GPU, waves that line up with the blocks). A count is used where a
    rectangle of the mesh has exactly that many sites (the widest such). ``mesh``: the part of
    the mesh one K slice of a split-K plan has, where not the whole."""
    x, y = mesh or (target.mesh_x, target.mesh_y)
    shapes: dict[int, tuple[int, int]] = {}
    for gy in range(1, y + 1):
        for gx in range(1, x + 1):
            shapes.setdefault(gx * gy, (gx, gy))
            if shapes[gx * gy][0] < gx:
                shapes[gx * gy] = (gx, gy)
    grids = [(x, y)]
    fewest = ceil_div(units, x * y)
    counts = [ceil_div(units, r) for r in range(fewest, min(units, fewest + FLAT_EXTRA_ROUNDS) + 1)]
    if units > x * y:
        counts.append(max(g for g in shapes if units % g == 0))
    for g in counts:
        if g in shapes and shapes[g] not in grids:
            grids.append(shapes[g])
    return grids


MAX_K_SLICES = 4
"""The most slices split-K cuts K into: a bound on the search, not a finding. Each slice count
adds two sets of grid arrangements to price (along x and y), and the chain that carries the
partial sums grows by one hand-over with every slice."""


SPLIT_TILES = 64
"""Split-K is priced only where the output has fewer tiles than this a site: a bound on the
search, measured, not derived. With a site's share of the output that large, blocks that do not
divide the mesh leave it at most a block row or column over an even share, and split-K never won
in bench/split_k.py above 20 tiles a site but once (32768x512x256 on wormhole_n150, 128 a site,
by 0.7%); pricing its arrangements there tripled the ranking of 4096^3."""


def k_splits(target: Target, shape: GemmShape, max_split: int) -> list[tuple[int, str]]:
    """The K splits a grid plan is priced with: (1, y), the unsplit plan, and every S from 2 to
    `max_split` (at most MAX_K_SLICES; the tile option `split-k`) dividing the K tiles, with
    each mesh axis (x, y) long enough to stack S copies of a grid along
    (docs/passes.md#tile-split-k-where-the-grid-does-not-fill), on a target whose slices can add
    their partial sums: over the NoC on a mesh with rectangle multicast, or through DRAM in a
    second kernel where the target prices its launch (a GPU: split_sums_through_dram). A flat
    target without either has no way to hand sums over."""
    out = [(1, "y")]
    can = target.multicasts_rectangles or split_sums_through_dram(target)
    if not can or shape.mt * shape.nt >= SPLIT_TILES * target.sites:
        return out
    for split in divisors(shape.kt):
        if 2 <= split <= min(MAX_K_SLICES, max_split):
            out += [
                (split, a) for a, n in (("x", target.mesh_x), ("y", target.mesh_y)) if n >= split
            ]
    return out


def arrangements(
    target: Target, shape: GemmShape, max_split: int = MAX_K_SLICES
) -> Iterator[GemmPlan]:
    """Every block with the grid or line it is dealt over and its multicast choices, as a plan
    whose sub-block and K block are placeholders (1, 1, 1): the part the cost floor depends on."""
    mt, nt = shape.mt, shape.nt
    x, y = target.mesh_x, target.mesh_y
    if not target.multicasts_rectangles:
        for split, axis in k_splits(target, shape, max_split):
            mesh = (x // split, y) if axis == "x" else (x, y // split)
            for pm in divisors(mt):
                for pn in divisors(nt):
                    for gx, gy in flat_grids(target, (mt // pm) * (nt // pn), mesh):
                        yield GemmPlan(gx, gy, pm, pn, 1, 1, 1, split_k=split, split_axis=axis)
        return
    for split, axis in k_splits(target, shape, max_split):
        sx, sy = (x // split, y) if axis == "x" else (x, y // split)
        rows, cols = dimension(mt, sy), dimension(nt, sx)
        for pm, row_grids in rows.items():
            for pn, col_grids in cols.items():
                for gy in row_grids:
                    for gx in col_grids:
                        # Uneven rounds along one dimension only: then a site that runs fewer
                        # rounds runs a prefix of its row's (column's) blocks (sp.ItemSpace).
                        if ceil_div(mt, pm) % gy and ceil_div(nt, pn) % gx:
                            continue
                        for ma in (True, False) if gx > 1 else (True,):
                            for mb in (True, False) if gy > 1 else (True,):
                                yield GemmPlan(
                                    gx,
                                    gy,
                                    pm,
                                    pn,
                                    1,
                                    1,
                                    1,
                                    mcast_a=ma,
                                    mcast_b=mb,
                                    split_k=split,
                                    split_axis=axis,
                                )
    # Lines longer than a mesh row: a GX x 1 line deals the block columns and shares A, a 1 x GY
    # line the block rows and shares B; every block row (column) runs on each site, so the other
    # dimension's blocks must divide it when there are several.
    for shares_a, dealt, other in ((True, nt, mt), (False, mt, nt)):
        for per, lines in dimension(dealt, x * y).items():
            for line, across, mc in itertools.product(lines, divisors(other), (True, False)):
                if line > x:
                    pm, pn = (across, per) if shares_a else (per, across)
                    gx, gy = (line, 1) if shares_a else (1, line)
                    yield GemmPlan(
                        gx,
                        gy,
                        pm,
                        pn,
                        1,
                        1,
                        1,
                        mcast_a=mc and shares_a,
                        mcast_b=mc and not shares_a,
                        line=True,
                    )


def configs(
    target: Target, shape: GemmShape, numerics: Numerics, pm: int, pn: int, split: int = 1
) -> list[tuple[int, int, int]]:
    """The legal (osh, osw, ibw) of a pm x pn block over K slices of kt / `split` tiles
    (legality does not depend on the grid)."""
    acc_cap = target.acc_tiles(numerics.acc)
    kt = shape.kt // split
    out = []
    for osh in divisors(pm):
        for osw in divisors(pn):
            if osh * osw > acc_cap:
                continue
            for ibw in divisors(kt):
                if target.acc_in_registers and kt > ibw and (osh, osw) != (pm, pn):
                    continue
                # The footprint grows with the K block: past the first that does not fit, none does.
                probe = GemmPlan(1, 1, pm, pn, osh, osw, ibw, split_k=split)
                if not numerics.fits(target, shape, probe):
                    break
                out.append((osh, osw, ibw))
    return out


def candidates(target: Target, shape: GemmShape, numerics: Numerics) -> Iterator[GemmPlan]:
    """Every legal plan (module docstring), streaming last."""
    legal: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    for a in arrangements(target, shape):
        block = (a.per_site_m, a.per_site_n, a.split_k)
        if block not in legal:
            legal[block] = configs(target, shape, numerics, *block)
        for osh, osw, ibw in legal[block]:
            yield with_config(a, osh, osw, ibw)
    streaming = GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)
    if numerics.fits(target, shape, streaming):
        yield streaming


def with_config(a: GemmPlan, osh: int, osw: int, ibw: int) -> GemmPlan:
    return GemmPlan(
        a.grid_x,
        a.grid_y,
        a.per_site_m,
        a.per_site_n,
        osh,
        osw,
        ibw,
        mcast_a=a.mcast_a,
        mcast_b=a.mcast_b,
        line=a.line,
        split_k=a.split_k,
        split_axis=a.split_axis,
    )


def describe(plan: GemmPlan, kt: int, target: Target | None = None) -> str:
    if plan.streaming:
        return f"streaming grid {plan.grid_x}x{plan.grid_y}"
    text = (
        f"blocked per_site {plan.per_site_m}x{plan.per_site_n} block {plan.osh}x{plan.osw} "
        f"k_block {plan.ibw} k_blocks {plan.k_blocks(kt)}"
    )
    if target is not None and not target.multicasts_rectangles:
        if (plan.grid_x, plan.grid_y) != (target.mesh_x, target.mesh_y):
            text += f" grid {plan.grid_x}x{plan.grid_y}"
    elif target is not None:
        kind = "line" if plan.line else "grid"
        text += f" {kind} {plan.grid_x}x{plan.grid_y}"
        off = [n for n, m in (("a", plan.mcast_a), ("b", plan.mcast_b)) if not m]
        shared = {"a": plan.grid_x > 1, "b": plan.grid_y > 1}
        off = [n for n in off if shared[n]]
        if off:
            text += f" unicast {', '.join(off)}"
        if plan.split_k > 1:
            text += f" split {plan.split_k} along {plan.split_axis}"
    return text


def _key(pc: tuple[GemmPlan, GemmCost]) -> tuple:
    p, c = pc
    return (
        c.total_cycles,
        p.split_k,
        -p.osh * p.osw,
        -p.ibw,
        p.per_site_m * p.per_site_n,
        p.osh,
        p.streaming,
        p.line,
        not p.mcast_a,
        not p.mcast_b,
        -p.grid_x * p.grid_y,
        p.grid_x,
    )


@dataclass(frozen=True)
class Ranking:
    """The legal plans with their costs, best first (every candidate that can be first or
    second), and for each kind of plan (False: K unsplit, True: split-K) the least cycles any
    plan of that kind can take: the cheapest priced one, or the least floor of those the pruning
    dropped, whichever is lower (a bound the plan's `split_why` can state exactly)."""

    plans: list[tuple[GemmPlan, GemmCost]]
    least: dict[bool, int]


def rank(
    target: Target,
    shape: GemmShape,
    numerics: Numerics,
    fidelity: str,
    max_split: int = MAX_K_SLICES,
) -> list[tuple[GemmPlan, GemmCost]]:
    """The legal plans with their costs, best first: every candidate that can be first or second
    (the pruning, module docstring, drops only plans whose floor is above the runner-up)."""
    return ranking(target, shape, numerics, fidelity, max_split).plans


def ranking(
    target: Target,
    shape: GemmShape,
    numerics: Numerics,
    fidelity: str,
    max_split: int = MAX_K_SLICES,
) -> Ranking:
    """`rank`'s plans, with the least cycles of each kind (:class:`Ranking`)."""
    costed: list[tuple[GemmPlan, GemmCost]] = []
    streaming = GemmPlan.streaming_plan(target.mesh_x, target.mesh_y)
    if numerics.fits(target, shape, streaming):
        costed.append((streaming, numerics.cost(target, shape, streaming, fidelity)))
    floors = sorted(
        (
            (gemm_cost_floor(target, shape, a, fidelity), i, a)
            for i, a in enumerate(arrangements(target, shape, max_split))
        ),
        key=lambda f: (f[0], f[1]),
    )
    legal: dict[tuple[int, int, int], list[tuple[int, int, int]]] = {}
    second = [c.total_cycles for _, c in costed]
    dropped = len(floors)
    for visited, (floor, _, a) in enumerate(floors):
        if len(second) >= 2 and floor > second[1]:
            dropped = visited
            break
        block = (a.per_site_m, a.per_site_n, a.split_k)
        if block not in legal:
            legal[block] = configs(target, shape, numerics, *block)
        # The cycles depend on the sub-block only through its larger side (the unpacker's
        # re-reads) and its tiles (the write-back's page, write_back.write_pages).
        cache: dict[tuple[int, int, int], GemmCost] = {}
        for osh, osw, ibw in legal[block]:
            plan = with_config(a, osh, osw, ibw)
            key = (ibw, max(osh, osw), osh * osw)
            if key not in cache:
                cache[key] = numerics.cost(target, shape, plan, fidelity)
            costed.append((plan, cache[key]))
            second = sorted([*second, cache[key].total_cycles])[:2]
    costed.sort(key=_key)
    least: dict[bool, int] = {}
    for p, c in costed:
        least.setdefault(p.split_k > 1, c.total_cycles)
    # Floors only grow past the first dropped: the first of each kind is its least.
    for floor, _, a in floors[dropped:]:
        kind = a.split_k > 1
        if floor < least.get(kind, floor + 1):
            least[kind] = floor
        if len(least) == 2 and all(floor >= v for v in least.values()):
            break
    return Ranking(costed, least)


def fidelity_matters(target: Target, dtype: str) -> bool:
    return len({target.matmul_tile_cycles(dtype, f) for f in FIDELITIES}) > 1


def multicast_why(
    target: Target,
    fidelity: str,
    plan: GemmPlan,
    q: GemmQuantities,
    shape: GemmShape,
    numerics: Numerics,
) -> str | None:
    """Each operand that several sites share, multicast or read by each: the plan's choice and the
    cycles of the same plan with the other choice for that operand."""
    if not target.multicasts_rectangles or plan.streaming:
        return None
    parts = []
    for name, on, sharers in (
        ("A", q.mcast_a, q.grid_x_used if not (plan.line and plan.grid_x == 1) else 1),
        ("B", q.mcast_b, q.grid_y_used if not (plan.line and plan.grid_y == 1) else 1),
    ):
        if sharers < 2:
            continue
        flag = "mcast_a" if name == "A" else "mcast_b"
        other = dataclasses.replace(plan, **{flag: not on})
        cycles = numerics.cost(target, shape, other, fidelity).total_cycles
        where = (
            f"the line of {sharers}"
            if plan.line
            else (f"rows of {sharers}" if name == "A" else f"columns of {sharers}")
        )
        if on:
            parts.append(f"{name} multicast over {where} (unicast: {cycles} cycles)")
        else:
            parts.append(f"{name} unicast, shared by {where} (multicast: {cycles} cycles)")
    return "; ".join(parts) or None
