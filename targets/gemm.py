"""A GEMM's shape and a block plan for it: the two inputs of every cost function besides the target.

``GemmShape`` is in elements (what the program says); the model works in tiles (what the chip moves).
``GemmPlan`` is the tile pass's decision, in tt-metal's vocabulary: per_core_M/N = ``per_site_m/n``,
out_subblock_h/w = ``osh``/``osw``, in0_block_w = ``ibw``, on a ``grid_x`` x ``grid_y`` grid of sites.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import cached_property

from .spec import Target, TargetError, normalize_dtype

TILE = 32  # GemmShape counts tiles of 32 x 32 (tt-metal's TILE layout; every preset uses it)


def ceil_div(a: int, b: int) -> int:
    """ceil(a / b) for b > 0, in integers (a float division would round large counts)."""
    return -(-a // b)


def divisors(n: int) -> list[int]:
    """Every d that divides n, ascending: the block sizes that tile n exactly. Pairs (d, n // d)
    for d up to sqrt(n): O(sqrt n), so a 2^40-row tensor costs what its few divisors cost."""
    small, large = [], []
    d = 1
    while d * d <= n:
        if n % d == 0:
            small.append(d)
            if d * d != n:
                large.append(n // d)
        d += 1
    return small + large[::-1]


def largest_divisor(n: int, at_most: int) -> int:
    """The largest d <= at_most that divides n."""
    if at_most * at_most > n:  # through the divisors: O(sqrt n)
        return max(d for d in divisors(n) if d <= at_most)
    return next(d for d in range(min(n, at_most), 0, -1) if n % d == 0)


def writes_in_pairs(h: int, w: int, sh: int, sw: int) -> bool:
    """Whether a Tensix GEMM's writer stores an h x w block's sh x sw sub-block pages two at a
    time (the copy of the second issued before the first's write is waited), so a write's round
    trip overlaps the next one's transfer (targets/write_back.py `write_back_cycles`). The pages go
    row-major through two output DFBs in turn (tools/backend/ttlang/matmul.py), and a pair is
    two neighbours in one loop: a row of an even number of sub-blocks, or a column of an even
    number where the block is one sub-block wide. Else one write at a time."""
    ni, nj = h // sh, w // sw
    return nj % 2 == 0 or (nj == 1 and ni % 2 == 0)


@dataclass(frozen=True)
class GemmShape:
    """C[m, n] = A[m, k] @ B[k, n], sizes in elements.

    ``in_dtype`` is the operands' compute type, ``out_dtype`` the result's. ``fmt`` is the storage
    format of the operands where it differs (bf16 tensors kept as bfp8_b or bfp4_b on Tensix): it sets
    the bytes of a tile in DRAM, on the NoC and through the unpacker, not the matrix engine's cycles.
    ``a_local`` / ``c_local`` say A is already block-sharded in the sites' local memory / C is left
    there (tt-metal's L1-sharded in0 / output): no DRAM traffic for them."""

    m: int
    k: int
    n: int
    in_dtype: str = "bf16"
    out_dtype: str = "bf16"
    fmt: str | None = None
    b_fmt: str | None = None
    a_local: bool = False
    c_local: bool = False

    def __post_init__(self) -> None:
        for name in ("m", "k", "n"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TargetError(f"GemmShape.{name} must be a positive integer, got {v!r}")
        object.__setattr__(self, "in_dtype", normalize_dtype(self.in_dtype))
        object.__setattr__(self, "out_dtype", normalize_dtype(self.out_dtype))
        for name in ("fmt", "b_fmt"):
            if getattr(self, name) is not None:
                object.__setattr__(self, name, normalize_dtype(getattr(self, name)))

    # Tile counts, computed once per shape: the planner prices hundreds of thousands of plans of one
    # shape and reads them in every step.
    @cached_property
    def mt(self) -> int:
        return ceil_div(self.m, TILE)

    @cached_property
    def kt(self) -> int:
        return ceil_div(self.k, TILE)

    @cached_property
    def nt(self) -> int:
        return ceil_div(self.n, TILE)

    @property
    def operand_format(self) -> str:
        """The datatype operand tiles are stored and moved in."""
        return self.fmt or self.in_dtype

    @property
    def flops(self) -> int:
        return 2 * self.m * self.k * self.n

    @property
    def b_format(self) -> str:
        """The datatype B's tiles are stored and moved in."""
        return self.b_fmt or self.operand_format

    def operand_tile_bytes(self, target: Target) -> int:
        """Bytes of one tile of A (and of B where B has no format of its own)."""
        return target.tile_bytes(self.operand_format)

    @property
    def one_row(self) -> bool:
        """A one-row product (a decode GEMV). The prelude lays a one-row tensor out as rows
        (docs/passes.md#link-layout-is-decided-once-per-tensor), so A's and C's tiles each move
        one row through DRAM, while local memory, the unpackers and the multicasts still hold
        and pass whole tiles."""
        return self.m == 1

    def a_dram_tile_bytes(self, target: Target) -> int:
        """The DRAM bytes one tile of A moves (`Target.dram_tile_bytes`)."""
        return target.dram_tile_bytes(self.operand_format, 1 if self.one_row else None)

    def a_read_transactions(self, target: Target, tiles: float) -> float:
        """The NoC read transactions a read of ``tiles`` tiles of A (one K block of one step)
        issues. One a tile (interleaved pages: neighbouring tiles sit in different banks), except
        on a target that reads a row-major row segment in bursts (`Target.noc_burst_bytes`): a
        one-row A's block is one contiguous segment of its one row, ceil(bytes / burst)
        transactions (docs/targets.md#one-transaction-per-tile)."""
        burst = target.noc_burst_bytes
        if not (burst and self.one_row):
            return tiles
        return float(ceil_div(math.ceil(tiles * self.a_dram_tile_bytes(target)), burst))

    def out_dram_tile_bytes(self, target: Target) -> int:
        """The DRAM bytes one tile of C moves."""
        return target.dram_tile_bytes(self.out_dtype, 1 if self.one_row else None)

    def b_tile_bytes(self, target: Target) -> int:
        return target.tile_bytes(self.b_format)

    def out_tile_bytes(self, target: Target) -> int:
        return target.tile_bytes(self.out_dtype)


@dataclass(frozen=True)
class GemmPlan:
    """A block plan. ``per_site_m`` x ``per_site_n`` output tiles per block (a site may run several
    blocks when the grid does not cover the output in one round), processed as sub-blocks of ``osh`` x
    ``osw`` tiles held in the accumulator, over K blocks of ``ibw`` tiles. ``streaming`` is tt-metal's
    non-reuse matmul: each site walks single output tiles (all block fields 1). ``mcast_a`` /
    ``mcast_b``: a row of sites shares its A blocks / a column its B blocks by rectangle multicast
    (ignored on a target without multicast).

    ``split_k``: K is cut into this many slices (split-K, docs/passes.md#tile-split-k-where-the-grid-does-not-fill):
    every slice runs the whole plan over K / split_k tiles on its own copy of the grid, the copies
    stacked along ``split_axis`` of the mesh (slice s of grid site (x, y) on mesh site
    (x + s grid_x, y) along ``x``, (x, y + s grid_y) along ``y``), and each block's partial sums
    travel slice to slice over the NoC, each slice adding its own, the last slice storing the sum.

    ``line``: the ``grid_x`` x ``grid_y`` sites (one of the two is 1) are a LINE folded onto the
    mesh row by row (line site s on mesh site (s % mesh_x, s // mesh_x)), tt-metal's
    MatmulMultiCoreReuseMultiCast1D: a ``grid_x`` x 1 line deals the block columns over its sites and
    runs every block row on each of them, so all of its sites share A (one multicast from the first
    site to the whole line when ``mcast_a``); a 1 x ``grid_y`` line deals the block rows and shares B.
    The blocks are dealt by the same 2-D map as a grid (:func:`deal`); only where the sites sit
    differs, which the cost model sees as the multicast's span (:func:`span`)."""

    grid_x: int
    grid_y: int
    per_site_m: int
    per_site_n: int
    osh: int
    osw: int
    ibw: int
    streaming: bool = False
    mcast_a: bool = True
    mcast_b: bool = True
    line: bool = False
    split_k: int = 1
    split_axis: str = "y"

    def __post_init__(self) -> None:
        for name in (
            "grid_x",
            "grid_y",
            "per_site_m",
            "per_site_n",
            "osh",
            "osw",
            "ibw",
            "split_k",
        ):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v <= 0:
                raise TargetError(f"GemmPlan.{name} must be a positive integer, got {v!r}")
        if self.streaming and (self.per_site_m, self.per_site_n, self.osh, self.osw, self.ibw) != (
            1,
            1,
            1,
            1,
            1,
        ):
            raise TargetError(
                "a streaming GemmPlan walks single tiles: per_site_m/n, osh, osw and ibw must all be 1"
            )
        if self.line and (self.streaming or min(self.grid_x, self.grid_y) != 1):
            raise TargetError(
                f"a line GemmPlan is blocked on a grid_x x 1 or 1 x grid_y line, got {self.grid_x}x{self.grid_y}"
            )
        if self.split_axis not in ("x", "y"):
            raise TargetError(f"GemmPlan.split_axis is x or y, got {self.split_axis!r}")
        if self.split_k > 1 and (self.streaming or self.line):
            raise TargetError("split-K slices a blocked grid plan, not a streaming or line plan")

    @property
    def mesh_extent(self) -> tuple[int, int]:
        """The columns and rows of mesh the plan's grid and its K slices occupy."""
        if self.split_axis == "x":
            return self.grid_x * self.split_k, self.grid_y
        return self.grid_x, self.grid_y * self.split_k

    def k_slice_tiles(self, kt: int) -> int:
        """K tiles one slice walks (split_k divides kt in every plan tile makes)."""
        return kt // self.split_k

    def k_blocks(self, kt: int) -> int:
        """K blocks an item walks: of its K slice."""
        return ceil_div(self.k_slice_tiles(kt), self.ibw)

    @property
    def sub_blocks(self) -> int:
        """Sub-blocks per block (a partial sub-block still takes a whole accumulator pass)."""
        return ceil_div(self.per_site_m, self.osh) * ceil_div(self.per_site_n, self.osw)

    @property
    def acc_tiles_needed(self) -> int:
        return self.osh * self.osw

    @staticmethod
    def streaming_plan(grid_x: int, grid_y: int) -> GemmPlan:
        return GemmPlan(grid_x, grid_y, 1, 1, 1, 1, 1, streaming=True, mcast_a=False, mcast_b=False)


def slice_shape(shape: GemmShape, plan: GemmPlan) -> GemmShape:
    """The GEMM one K slice of ``plan`` computes: ``shape`` with K / split_k (whole tiles; the
    shape itself where K is not split)."""
    return shape if plan.split_k == 1 else _k_slice(shape, plan.split_k)


@functools.lru_cache(maxsize=256)
def _k_slice(shape: GemmShape, split: int) -> GemmShape:
    # One shape per (GEMM, slices): the planner prices thousands of split plans of one GEMM.
    return dataclasses.replace(shape, k=shape.kt // split * TILE)


# ── How a plan's work is dealt to sites ───────────────────────────────────────────────────────────
#
# ONE definition, read by the place pass (which sites run which items) and by the cost model (what the
# busiest site runs), so the planner prices the placement place makes (docs/passes.md#tile-one-dealing-function: a model that prices a
# map the emitter does not lay out ranks plans on work nobody does).

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
    """tt-metal's split_work_to_cores(grid, units, row_wise=false) as site rectangles: (rect, first
    unit, units per site), in assignment order; a rectangle's sites take consecutive units, y outer
    and x inner. The first ``units % sites`` sites take one unit more."""
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


def fold(sites: int, mesh_x: int) -> tuple[int, int]:
    """The columns and rows of mesh a line of ``sites`` occupies, folded row by row."""
    return min(sites, mesh_x), ceil_div(sites, mesh_x)


def span(target: Target, sites: int, line: bool) -> int:
    """Hops from the first site of a multicast group of ``sites`` sites to its farthest: a row (or
    column) of a grid is ``sites - 1``; a line folded onto the mesh is the rectangle it occupies,
    (columns - 1) + (rows - 1), the route tt-metal's 1-D multicast takes to the far corner."""
    if not line:
        return max(0, sites - 1)
    cols, rows = fold(sites, target.mesh_x)
    return (cols - 1) + (rows - 1)


def _extent(tiles: int, per_block: int, stride: int) -> int:
    """Tiles along one dimension covered by blocks 0, stride, 2 stride, ... (only the last block of
    the dimension can be short, and block 0 is never shorter than another)."""
    blocks = ceil_div(tiles, per_block)
    visited = ceil_div(blocks, stride)
    # Closed form (a 10^6-tile dimension must not cost 10^6 steps): every visited block is whole
    # except the last block of the dimension, when the stride lands on it and it is short.
    short = per_block * blocks - tiles if (blocks - 1) % stride == 0 else 0
    return visited * per_block - short


@dataclass(frozen=True)
class Deal:
    """How a plan's work units (blocks; output tiles when streaming) are dealt to sites, and what the
    busiest site (the one that runs unit 0) gets.

    ``kind``: ``grid`` (the 2-D map of docs/passes.md#place-the-2-d-map-where-multicast-exists: block (r, c) on site (c % grid_x, r % grid_y), a site's
    blocks in rounds), ``line`` (the same map over a ``grid_x`` x 1 or 1 x ``grid_y`` line folded
    onto the mesh) or ``flat`` (tt-metal's split_work_to_cores over the units numbered row-major:
    streaming plans and targets without multicast). ``grid_x`` x ``grid_y`` is the grid the units
    are dealt over: the used part of the plan's grid for grid and line, the plan's grid for flat.
    ``rounds_m`` x ``rounds_n``: the block rows and columns the busiest site runs (flat: 0, its
    blocks need not form a rectangle). ``uniform``: every site with work runs the same number.

    The busiest site, in tiles: ``out_tiles`` it computes, ``a_tiles_per_k`` / ``b_tiles_per_k``
    A and B tiles it receives per K tile (every block brings its own A rows and B columns, even when
    a site ran the same block row before), ``rows`` x ``cols`` the M and N tiles it touches, and
    ``last_row_tiles`` its output tiles in the last M tile row (the only one that can be short)."""

    kind: str
    units: int
    blocks_m: int
    blocks_n: int
    grid_x: int
    grid_y: int
    sites: int
    per_site: int
    rounds_m: int
    rounds_n: int
    uniform: bool
    out_tiles: int
    a_tiles_per_k: int
    b_tiles_per_k: int
    rows: int
    cols: int
    last_row_tiles: int


def deal(target: Target, shape: GemmShape, plan: GemmPlan) -> Deal:
    """THE dealing of ``plan``'s work to sites (see :class:`Deal`): place lays it out, the cost model
    prices its busiest site."""
    if plan.streaming:
        return _deal_output_tiles(shape, plan)
    if not target.multicasts_rectangles:
        return _deal_blocks_flat(shape, plan)
    return _deal_blocks_on_grid(shape, plan)


def _deal_output_tiles(shape: GemmShape, plan: GemmPlan) -> Deal:
    """A streaming plan: its output tiles dealt flat (split_work_to_cores) over the plan's grid."""
    mt, nt = shape.mt, shape.nt
    return _flat_deal(
        plan,
        mt,
        nt,
        lambda per: dict(
            out_tiles=per,
            a_tiles_per_k=per,
            b_tiles_per_k=per,
            rows=min(per, mt),
            cols=per,
            last_row_tiles=per if mt == 1 else 0,
        ),
    )


def _flat_deal(
    plan: GemmPlan, blocks_m: int, blocks_n: int, busiest: Callable[[int], dict[str, int]]
) -> Deal:
    """Units numbered row-major and dealt flat (split_work_to_cores) over the plan's grid: site 0
    runs the first ceil(units / sites) of them; `busiest(per_site)` says what that site moves."""
    units = blocks_m * blocks_n
    used = min(units, plan.grid_x * plan.grid_y)
    per = ceil_div(units, used)
    return Deal(
        kind="flat",
        units=units,
        blocks_m=blocks_m,
        blocks_n=blocks_n,
        grid_x=plan.grid_x,
        grid_y=plan.grid_y,
        sites=used,
        per_site=per,
        rounds_m=0,
        rounds_n=0,
        uniform=units % used == 0,
        **busiest(per),
    )


def _deal_blocks_flat(shape: GemmShape, plan: GemmPlan) -> Deal:
    """Blocks numbered row-major, dealt flat (split_work_to_cores) over the plan's grid: on a target
    without multicast rectangles no row or column of sites shares a block, so the 2-D map buys
    nothing."""
    mt, nt = shape.mt, shape.nt
    pm, pn = plan.per_site_m, plan.per_site_n
    bm, bn = ceil_div(mt, pm), ceil_div(nt, pn)

    def busiest(per: int) -> dict[str, int]:
        # Site 0 runs units 0 .. per - 1: q whole block rows, then r blocks of the next.
        q, r = divmod(per, bn)
        rows_full = min(q * pm, mt)
        h_q = min(pm, mt - q * pm) if q < bm else 0
        w_r = min(r * pn, nt)
        # Its tiles in the last M tile row: all of them once it runs every block row, else the r
        # blocks it runs of the next row when that row is the last.
        last_row_tiles = nt if q >= bm else (w_r if q == bm - 1 else 0)
        return dict(
            out_tiles=rows_full * nt + h_q * w_r,
            a_tiles_per_k=rows_full * bn + h_q * r,
            b_tiles_per_k=q * nt + w_r,
            rows=min(mt, rows_full + (h_q if r else 0)),
            cols=nt if q else w_r,
            last_row_tiles=last_row_tiles,
        )

    return _flat_deal(plan, bm, bn, busiest)


def _deal_blocks_on_grid(shape: GemmShape, plan: GemmPlan) -> Deal:
    """The 2-D map (docs/passes.md#place-the-2-d-map-where-multicast-exists): block (r, c) on site (c % grid_x, r % grid_y) of the used grid (a line
    plan's sites are the same map, folded onto the mesh), so each row of sites shares its block rows
    of A and each column its block columns of B."""
    mt, nt = shape.mt, shape.nt
    pm, pn = plan.per_site_m, plan.per_site_n
    bm, bn = ceil_div(mt, pm), ceil_div(nt, pn)
    gxu, gyu = min(plan.grid_x, bn), min(plan.grid_y, bm)
    rm, rn = ceil_div(bm, gyu), ceil_div(bn, gxu)
    rows, cols = _extent(mt, pm, gyu), _extent(nt, pn, gxu)
    return Deal(
        kind="line" if plan.line else "grid",
        units=bm * bn,
        blocks_m=bm,
        blocks_n=bn,
        grid_x=gxu,
        grid_y=gyu,
        sites=gxu * gyu,
        per_site=rm * rn,
        rounds_m=rm,
        rounds_n=rn,
        uniform=bm % gyu == 0 and bn % gxu == 0,
        out_tiles=rows * cols,
        a_tiles_per_k=rows * rn,
        b_tiles_per_k=cols * rm,
        rows=rows,
        cols=cols,
        # The busiest site runs block rows 0, grid_y, 2 grid_y, ...: it computes tiles of the last
        # M tile row (the only one that can be short) when the last block row is one of them.
        last_row_tiles=cols if (bm - 1) % gyu == 0 else 0,
    )
