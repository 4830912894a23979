"""place: every work item to a site, every stage to an engine and a NoC (seed 003).

Items to sites. Where the target multicasts rectangles and the plan is blocked, block (row, col)
goes to site (x = col, y = row): a row of sites then holds one block row and can share its A
blocks, a column its B blocks (fuse-operands). Elsewhere (streaming plans, and targets without
multicast such as a GPU's line of SMs, where adjacency means nothing and a 2-D map would leave
most sites idle) the items are dealt out by `split_work_to_sites`, tt-metal's
split_work_to_cores(grid, units, row_wise=false) transcribed: column-major core ranges, x-fastest
inside each range, the first `units % cores` sites taking one unit more.

Site ranges. Sites that run the same shapes form one `sp.sites` range; what differs per site is
the first item it runs, an affine function of (x, y) inside a rectangle. A boundary site of the
2-D map covers the block it really covers (`ItemSpace.rect`), so it is its own range with its own
block and sub-block (the largest divisor of its block not above the plan's), and its pages, load
extents, store strides and sub-block counts, all written with the range's size symbols, change
together (seed 003: a boundary site that kept the nominal stride wrote past the tensor).

Engines. The compute stage on the compute engine. Movement as the plan's packing says, the NoC
by the target's rule: loads on movement engine 1 with the receiver NoC, the store on engine 0
with the writer NoC; under operand-with-store packing B's loader joins the store's engine; with
one engine everything moves on it. A section that moves data on a target without movement
engines is refused (TooManyEngines).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby

from xdsl.context import Context
from xdsl.dialects.builtin import AffineMapAttr, ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from spatial_dialect import sp
from spatial_dialect.passes.common import SectionGemm, SectionPattern, module_target, run_sections
from spatial_dialect.sp_attrs import EngineAttr, Phase, RectAttr, linear_site_map
from spatial_dialect.sp_errors import SpatialPassError, TooManyEngines
from spatial_dialect.targets import Target

Rect = tuple[int, int, int, int]
"""x0, x1, y0, y1, both ends included."""


def _column_ranges(start: tuple[int, int], n: int, ny: int) -> list[Rect]:
    """The first `n` sites from `start` in column-major order, as tt-metal's
    num_cores_to_corerangeset(row_wise=false) groups them: the rest of the start column, then a
    block of full columns, then a partial column."""
    out: list[Rect] = []
    sx, sy = start
    left = n
    if sy != 0 and left > ny - sy:
        out.append((sx, sx, sy, ny - 1))
        left -= ny - sy
        sx, sy = sx + 1, 0
    if left > ny:
        full = left // ny
        out.append((sx, sx + full - 1, sy, ny - 1))
        left -= full * ny
        sx, sy = sx + full, 0
    if left > 0:
        out.append((sx, sx, sy, sy + left - 1))
    return out


def split_work_ranges(mesh_x: int, mesh_y: int, units: int) -> list[tuple[Rect, int, int]]:
    """split_work_to_cores as site rectangles: (rect, first unit, units per site), in assignment
    order; a rectangle's sites take consecutive units, y outer and x inner."""
    cores = mesh_x * mesh_y
    if units <= 0 or cores <= 0:
        return []
    used = min(units, cores)
    if units % used == 0:
        groups = [(_column_ranges((0, 0), used, mesh_y), units // used)]
    else:
        more = units % used
        g1 = _column_ranges((0, 0), more, mesh_y)
        _, x1, _, y1 = g1[-1]
        start = (x1, y1 + 1) if y1 != mesh_y - 1 else (x1 + 1, 0)
        groups = [
            (g1, units // used + 1),
            (_column_ranges(start, used - more, mesh_y), units // used),
        ]
    out: list[tuple[Rect, int, int]] = []
    offset = 0
    for rects, per in groups:
        for x0, x1, y0, y1 in rects:
            out.append(((x0, x1, y0, y1), offset, per))
            offset += per * (x1 - x0 + 1) * (y1 - y0 + 1)
    return out


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


def fit(nominal: int, extent: int) -> int:
    """The largest sub-block side that tiles `extent` and is not above the plan's."""
    return max(d for d in range(1, min(nominal, extent) + 1) if extent % d == 0)


def _runs(extents: list[int]) -> list[tuple[int, int, int]]:
    """(first index, last index, value) of each run of equal values."""
    out, i = [], 0
    for value, run in groupby(extents):
        n = len(list(run))
        out.append((i, i + n - 1, value))
        i += n
    return out


def grid_ranges(
    mesh: tuple[int, int], space: sp.ItemSpace, sub: tuple[int, int]
) -> list[sp.SitesOp]:
    """The 2-D map: item (row, col) on site (col, row), one range per block shape. tile sizes
    blocks so the block grid fits the mesh (a site holding blocks of two rounds would hold two
    block shapes at the boundary, and one range has one shape)."""
    if space.items_n > mesh[0] or space.items_m > mesh[1]:
        raise SpatialPassError(
            f"place: {space.items_m}x{space.items_n} blocks do not fit the {mesh[0]}x{mesh[1]} mesh one to a site"
        )
    heights = [space.rect(r * space.items_n).h for r in range(space.items_m)]
    widths = [space.rect(c).w for c in range(space.items_n)]
    first = AffineMapAttr(linear_site_map(0, 1, space.items_n))
    return [
        sp.SitesOp(RectAttr.of(x0, x1, y0, y1), first, 1, (h, w), (fit(sub[0], h), fit(sub[1], w)))
        for y0, y1, h in _runs(heights)
        for x0, x1, w in _runs(widths)
    ]


def flat_ranges(
    mesh: tuple[int, int], space: sp.ItemSpace, sub: tuple[int, int]
) -> list[sp.SitesOp]:
    """split_work_to_sites over the items; tile gives them one shape on a flat target."""
    shapes = {(space.rect(i).h, space.rect(i).w) for i in range(space.count)}
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
                (fit(sub[0], h), fit(sub[1], w)),
            )
        )
    return ranges


def engines(
    target: Target, plan: sp.PlanOp, gemm: SectionGemm | None
) -> dict[sp.StageOp, EngineAttr]:
    """Each stage's engine and NoC (module docstring)."""
    n = target.movement_engines
    store_engine = EngineAttr.movement(0, target.writer_noc)
    load_engine = EngineAttr.movement(1, target.receiver_noc) if n >= 2 else store_engine
    b_engine = {
        "split": EngineAttr.movement(2, target.receiver_noc),
        "operand_with_store": store_engine,
        "single": store_engine,
    }[plan.packing.data]
    out: dict[sp.StageOp, EngineAttr] = {}
    for s in plan.program.stages():
        if isinstance(s, sp.MatmulTilesOp):
            out[s] = EngineAttr.compute()
            continue
        if n == 0:
            raise TooManyEngines(s.stage_name(), "movement engine 0", 0)
        if isinstance(s, sp.StoreOp):
            out[s] = store_engine
        else:
            out[s] = b_engine if gemm is not None and s is gemm.load_b else load_engine
    return out


@dataclass
class PlaceSection(SectionPattern):
    target: Target
    pass_name = "place"
    takes_phase = Phase.TILED

    def rewrite(self, program: sp.ProgramOp, rewriter: PatternRewriter) -> None:
        plan = program.one(sp.PlanOp)
        assert plan is not None
        space = program.item_space()
        sub = (plan.osh.data, plan.osw.data)
        mesh = (self.target.mesh_x, self.target.mesh_y)
        if plan.streaming or self.target.multicast != "rectangle":
            ranges = flat_ranges(mesh, space, sub)
        else:
            ranges = grid_ranges(mesh, space, sub)
        gemm = SectionGemm.of(program) if program.one(sp.MatmulTilesOp) else None
        for stage, engine in engines(self.target, plan, gemm).items():
            stage.set_engine(engine)
        t = self.target
        mesh_op = sp.MeshOp(
            mesh, t.movement_engines, max(t.receiver_noc, t.writer_noc) + 1, t.local_mem_max_bytes
        )
        rewriter.insert([mesh_op, *ranges], InsertPoint.after(plan))
        program.set_phase(Phase.PLACED)


@dataclass(frozen=True)
class PlacePass(ModulePass):
    """`place`: map every tiled section's work items to sites and its stages to engines."""

    name = "place"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_sections(op, PlaceSection(module_target(op, self.name)))
