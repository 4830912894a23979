"""place: every work item to a site, every stage to an engine and a NoC (docs/passes.md#place).

Items to sites, by `targets.gemm.deal`, the dealing the cost model prices. Where the target
multicasts rectangles and the plan is blocked, the 2-D map of docs/passes.md#place-the-2-d-map-where-multicast-exists: block (row, col) goes to site
(col % GX, row % GY) of the grid the work is dealt over (`sp.work ... over`, or one block a site),
several blocks to a site in rounds (split-K's slices on copies of the grid side by side,
docs/passes.md#place-split-k-slices-side-by-side), and the items are numbered so that each
site's are consecutive (`sp.ItemSpace`): a row of sites then walks the same block rows and can share its A
blocks, a column its B blocks (fuse-operands). A line plan (`sp.plan blocked line`) deals the
same way over a GX x 1 or 1 x GY line, folded onto the mesh row by row: line site s on mesh site
(s % X, s // X). Elsewhere (streaming plans, and targets without multicast such as a GPU's line
of SMs, where adjacency means nothing and a 2-D map would leave most sites idle) the items are
dealt out by `split_work_to_sites`, tt-metal's split_work_to_cores(grid, units, row_wise=false)
transcribed over the plan's grid: column-major core ranges, x-fastest inside each range, the
first `units % cores` sites taking one unit more.

Site ranges. Sites that run the same shapes and as many items form one `sp.sites` range; what
differs per site is the first item it runs, an affine function of (x, y) inside a rectangle. A
boundary site of the 2-D map covers the block it really covers (`ItemSpace.rect`), so it is its
own range with its own block and sub-block (the largest divisor of its block not above the
plan's), and its pages, load extents, store strides and sub-block counts, all written with the
range's size symbols, change together (docs/passes.md#place-boundary-sites-cover-their-real-block: a boundary site that kept the nominal stride
wrote past the tensor). Every block a site runs has the one shape of its range: tile deals
several blocks to a site only along a dimension whose blocks divide the tiles, and place refuses
a dealing that would mix shapes.

Engines. The compute stage on the compute engine. Movement as the plan's packing says, the NoC
by the target's rule: loads on movement engine 1 with the receiver NoC, the store on engine 0
with the writer NoC; under operand-with-store packing B's loader (a flash attention's query and
position loaders) joins the store's engine; with one engine everything moves on it
(`engine_assignment.engines`, the one assignment). A section that moves data on a target without
movement engines is refused (TooManyEngines).

A stream section (not a GEMM) shares no operand along rows or columns of sites: its items are
dealt out flat. place is a walk over the tiled sections: each placement is a whole-section
decision, built as new sp.mesh and sp.sites ops.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from spatial_dialect import sp
from spatial_dialect.passes.engine_assignment import engines
from spatial_dialect.passes.phases import refusals_at, sections_taken
from spatial_dialect.passes.target_choice import module_target
from spatial_dialect.sp import Phase, RectAttr, linear_site_map
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets import Target
from spatial_dialect.targets.gemm import largest_divisor, split_work_ranges

Rect = tuple[int, int, int, int]
"""x0, x1, y0, y1, both ends included."""


def split_work_to_sites(
    mesh_x: int, mesh_y: int, units: int
) -> list[tuple[tuple[int, int], int, int]]:
    """tt-metal's split_work_to_cores(grid, units, row_wise=false) with the host's per-range walk:
    ((x, y), first unit, unit count) for every site that gets work, in assignment order."""
    out: list[tuple[tuple[int, int], int, int]] = []
    for (x0, x1, y0, y1), first, per in split_work_ranges(mesh_x, mesh_y, units):
        for i, (x, y) in enumerate((x, y) for y in range(y0, y1 + 1) for x in range(x0, x1 + 1)):
            out.append(((x, y), first + i * per, per))
    return out


def line_site(s: int, mesh_x: int) -> tuple[int, int]:
    """The mesh site of line site `s`: the line folded onto the mesh row by row."""
    return s % mesh_x, s // mesh_x


def _rectangles(shapes: dict[tuple[int, int], tuple]) -> list[tuple[Rect, tuple]]:
    """The sites of `shapes` (site -> what its range must agree on) as rectangles of one value
    each: runs of equal values along each row, merged down the rows with the same runs; ordered
    by (y0, x0)."""
    rows: dict[int, list[tuple[int, int, tuple]]] = {}
    for y in sorted({y for _, y in shapes}):
        runs: list[tuple[int, int, tuple]] = []
        for x in sorted(x for x, yy in shapes if yy == y):
            value = shapes[(x, y)]
            if runs and runs[-1][1] == x - 1 and runs[-1][2] == value:
                runs[-1] = (runs[-1][0], x, value)
            else:
                runs.append((x, x, value))
        rows[y] = runs
    out: list[tuple[Rect, tuple]] = []
    ys = sorted(rows)
    i = 0
    while i < len(ys):
        j = i
        while j + 1 < len(ys) and ys[j + 1] == ys[j] + 1 and rows[ys[j + 1]] == rows[ys[i]]:
            j += 1
        out += [((x0, x1, ys[i], ys[j]), value) for x0, x1, value in rows[ys[i]]]
        i = j + 1
    out.sort(key=lambda rv: (rv[0][2], rv[0][0]))
    return out


def _first_map(
    first: dict[tuple[int, int], int], rect: Rect, slope: tuple[int, int]
) -> AffineMapAttr:
    """first(x, y) over `rect` as c + a x + b y with the slopes (a, b) of its sites' piece of the
    numbering (checked on every site)."""
    x0, x1, y0, y1 = rect
    a, b = slope
    c = first[(x0, y0)] - a * x0 - b * y0
    bad = [
        (x, y)
        for y in range(y0, y1 + 1)
        for x in range(x0, x1 + 1)
        if first[(x, y)] != c + a * x + b * y
    ]
    assert not bad, f"the first items of sites {rect} are not affine at {bad[0]}"
    return AffineMapAttr(linear_site_map(c, a, b))


def slice_offset(grid: tuple[int, int], axis: str | None, k_slice: int) -> tuple[int, int]:
    """Where split-K's slice `k_slice` of a grid sits on the mesh: the grid's copies stacked
    along the axis `sp.work ... split S along` names (docs/passes.md#place-split-k-slices-side-by-side)."""
    return (k_slice * grid[0], 0) if axis == "x" else (0, k_slice * grid[1])


def grid_ranges(
    mesh: tuple[int, int],
    space: sp.ItemSpace,
    sub: tuple[int, int],
    line: bool = False,
    axis: str | None = None,
) -> list[sp.SitesOp]:
    """The 2-D map (docs/passes.md#place-the-2-d-map-where-multicast-exists): item (row, col) on grid site (col % GX, row % GY), a grid site's items
    consecutive (`ItemSpace`), and the grid on the mesh as it is or, for a line, folded onto it;
    split-K's K slices on copies of the grid stacked along `axis`; one range per block shape,
    item count and first-item map."""
    gx, gy = space.grid
    ex, ey = slice_offset((gx, gy), axis, space.k_slices)
    ex, ey = max(ex, gx), max(ey, gy)
    fits = gx * gy <= mesh[0] * mesh[1] if line else ex <= mesh[0] and ey <= mesh[1]
    if not fits:
        kind = "line" if line else "grid"
        if space.k_slices > 1:
            kind += f" in {space.k_slices} K slices"
        raise SpatialPassError(
            f"place: a {gx}x{gy} {kind} of sites does not fit the {mesh[0]}x{mesh[1]} mesh"
        )

    def one(extents: set[int], what: str) -> int:
        if len(extents) != 1:
            raise SpatialPassError(
                f"place: a site would run blocks of {len(extents)} {what}s {sorted(extents)}; a range has one block"
            )
        return extents.pop()

    heights = [
        one({space.rect(space.item(r, 0)).h for r in range(y, space.items_m, gy)}, "height")
        for y in range(gy)
    ]
    widths = [
        one({space.rect(space.item(0, c)).w for c in range(x, space.items_n, gx)}, "width")
        for x in range(gx)
    ]
    first: dict[tuple[int, int], int] = {}
    agree: dict[tuple[int, int], tuple] = {}
    for k_slice, y, x in itertools.product(range(space.k_slices), range(gy), range(gx)):
        rm, rn = space.site_rounds(x, y)
        dx, dy = slice_offset((gx, gy), axis, k_slice)
        site = line_site(y * gx + x, mesh[0]) if line else (x + dx, y + dy)
        first[site] = k_slice * space.blocks + space.site_first(x, y)
        # The numbering's slopes where this site is: a grid site runs rm x rn items and a grid
        # row holds items_n x rm of them (ItemSpace); a line runs along x, then down the rows.
        if not line:
            slope = (rm * rn, space.items_n * rm)
        elif gy == 1:
            slope = (rm * rn, mesh[0] * rm * rn)
        else:
            slope = (space.items_n * rm, mesh[0] * space.items_n * rm)
        # What a range shares: the block, the item count, the piece of the numbering and the
        # K slice (the numbering jumps between slices).
        agree[site] = (heights[y], widths[x], rm * rn, slope, k_slice)
    return [
        sp.SitesOp(
            RectAttr.of(*rect),
            _first_map(first, rect, slope),
            count,
            (h, w),
            (largest_divisor(h, sub[0]), largest_divisor(w, sub[1])),
        )
        for rect, (h, w, count, slope, _) in _rectangles(agree)
    ]


def block_shapes(space: sp.ItemSpace) -> set[tuple[int, int]]:
    """The shapes of the items' blocks, in closed form (no walk over the items): every block is
    block_m x block_n but the last block row and column, clipped to the tensor."""

    def sizes(tiles: int, block: int, items: int) -> set[int]:
        return {min(block, tiles)} if items == 1 else {block, tiles - (items - 1) * block}

    return {
        (h, w)
        for h in sizes(space.tiles_m, space.block_m, space.items_m)
        for w in sizes(space.tiles_n, space.block_n, space.items_n)
    }


def flat_ranges(
    mesh: tuple[int, int], space: sp.ItemSpace, sub: tuple[int, int]
) -> list[sp.SitesOp]:
    """split_work_to_sites over the items; tile gives them one shape on a flat target."""
    shapes = block_shapes(space)
    if len(shapes) != 1:
        raise SpatialPassError(
            f"place: items of {len(shapes)} shapes cannot be dealt out evenly: {sorted(shapes)}"
        )
    ((h, w),) = shapes
    ranges = []
    for (x0, x1, y0, y1), first, per in split_work_ranges(*mesh, space.count):
        # first + per * (x - x0) + per * width * (y - y0); a coordinate the rectangle does not
        # vary keeps its coefficient out of the map.
        width = x1 - x0 + 1
        per_x = per if x1 > x0 else 0
        per_y = per * width if y1 > y0 else 0
        site_map = linear_site_map(first - per_x * x0 - per_y * y0, per_x, per_y)
        ranges.append(
            sp.SitesOp(
                RectAttr.of(x0, x1, y0, y1),
                AffineMapAttr(site_map),
                per,
                (h, w),
                (largest_divisor(h, sub[0]), largest_divisor(w, sub[1])),
            )
        )
    return ranges


def site_ranges(program: sp.ProgramOp, target: Target) -> list[sp.SitesOp]:
    """The section's site ranges: dealt flat (a stream section, a streaming plan, a target
    without rectangle multicast: over the plan's grid) or by the 2-D map (a blocked GEMM)."""
    plan = program.one(sp.PlanOp)
    assert plan is not None
    space = program.item_space()
    sub = plan.sub_block
    mesh = (target.mesh_x, target.mesh_y)
    if not program.kind.is_gemm:
        return flat_ranges(mesh, space, sub)
    if plan.streaming or not target.multicasts_rectangles:
        # split_work_to_sites over the plan's grid: the whole mesh or a rectangle of it.
        return flat_ranges(plan.grid, space, sub)
    work = program.one(sp.WorkOp)
    assert work is not None
    return grid_ranges(mesh, space, sub, plan.is_line, work.split_axis)


def place_section(program: sp.ProgramOp, target: Target, rewriter: Rewriter) -> None:
    """Engines on the stages, the mesh and the site ranges after the plan."""
    plan = program.one(sp.PlanOp)
    assert plan is not None
    ranges = site_ranges(program, target)
    for stage, engine in engines(target, program).items():
        stage.set_engine(engine)
    mesh_op = sp.MeshOp(
        (target.mesh_x, target.mesh_y),
        target.movement_engines,
        max(target.receiver_noc, target.writer_noc) + 1,
        target.local_mem_max_bytes,
    )
    rewriter.insert_op([mesh_op, *ranges], InsertPoint.after(plan))
    program.set_phase(Phase.PLACED)


@dataclass(frozen=True)
class PlacePass(ModulePass):
    """`place`: map every tiled section's work items to sites and its stages to engines."""

    name = "place"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.name)
        rewriter = Rewriter()
        for program in sections_taken(op, self.name, Phase.TILED):
            with refusals_at(program):
                place_section(program, target, rewriter)
