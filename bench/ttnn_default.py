"""tt-metal's default matmul config, transcribed as a baseline policy for the plan-quality bench.

When ``ttnn.matmul`` is called on DRAM-interleaved tensors without a program config, ttnn picks one
with ``create_simple_matmul_program_config`` (tt-metal
ttnn/cpp/ttnn/operations/matmul/device/config/matmul_program_config.cpp, read at commit 001cea9a;
the CB estimate ``get_estimated_size_of_cbs`` and ``get_max_l1_space`` are in
device/utilities/matmul_utilities.cpp of the same commit). :func:`ttnn_default` follows that code
for a rank-2 GEMM whose operands and result are interleaved in DRAM (``GemmShape.a_local`` and
``c_local`` false) and returns the config with the :class:`GemmPlan` our cost model prices.

The route through the source, and where it differs from the usual summary of it:

* ``is_narrow_shape(height, width, all_dram)``: the ratio is an INTEGER division of the longer side
  by the shorter (so 4096 x 500 is ratio 8, not narrow); with every tensor in DRAM a side of at most
  one tile is narrow too (the M = 1 decode case). Narrow and wider than tall is "wide", else "tall".
* ``get_per_core_factor``: per_core_M = per_core_N = the first of 16, 8, 4, 2 whose CB estimate at
  in0_block_w = 2 is strictly below the L1 space, else 1.
* ``num_blocks_y/x`` = ceil(Mt / factor), ceil(Nt / factor); the "core range" is (blocks_x,
  blocks_y) when that is not a single block and fits the grid, else (0, 0).
* With every tensor DRAM-interleaved the first branch is always taken, and then: a core range one
  block high, or a wide shape -> the 1-D config multicasting in0; else one block wide, or a tall
  shape -> the 1-D config multicasting in1; else the 2-D config. (The in0_block_w = 1 fallback for
  Kt odd, and the 2-D non-DRAM sub-block 4x2, belong to paths this case never reaches; the
  MatmulMultiCoreProgramConfig fallback, tt-metal's non-reuse matmul, is never returned here.)
* The 1-D config (``get_mcast_1d_config``) uses the whole compute grid as a line of cores:
  multicasting in0, per_core_M = Mt and per_core_N = ceil(ceil(N / cores) / 32); multicasting in1,
  per_core_M = ceil(ceil(M / cores) / 32) and per_core_N = Nt. Its in0_block_w is 2 when Kt is
  even, else 1, and is NOT shrunk to fit L1: only the out block is
  (``get_multi_dim_per_core_factor`` with adjust_in0_block_w false).
* The 2-D config on DRAM tensors: per_core_M = ceil(Mt / grid_y), per_core_N = ceil(Nt / grid_x),
  in0_block_w = Kt / grid_x when grid_x divides Kt, else 1; then ``get_multi_dim_per_core_factor``
  with adjust_in0_block_w true shrinks, K outermost, in0_block_w through its divisors and the out
  block through the divisor pairs of (per_core_M, per_core_N) (per product the pair closest to
  square), largest product first, until the CB estimate fits.
* The out sub-block is the first of SUBBLOCK_HW_CHOICES (read as (h, w)) dividing the out block,
  skipping areas over 4 with fp32 dest accumulation (``get_matmul_subblock_params``).

How the config maps onto our plan space (what is exact and what is not):

* The out block is what a core holds per K step, so it is our per-site block
  (per_site_m, per_site_n = out_block_h, out_block_w); a core whose per_core block holds several out
  blocks walks them in turn, which is our multi-round plan (the 2-D map deals block rows and columns
  round-robin where ttnn gives a core a contiguous range; the tile-matmuls, DRAM reads and steps of
  the busiest core are the same counts up to the boundary block).
* The 2-D config is our 2-D multicast plan on the full grid: exact.
* A 1-D config is a line of ``cores`` sites: grid cores x 1 multicasting A only (in0), or 1 x cores
  multicasting B only (in1); the other operand is read by every core for itself, as ttnn does.
  Our 2-D map cannot put one block row on all 64 sites of an 8 x 8 mesh, so the plan's grid is the
  line, larger than the mesh. What does not map is the line's multicast span: tt-metal multicasts
  to the rectangle of cores, whose farthest receiver is (x - 1) + (y - 1) hops away, where a line
  is cores - 1. The plan is therefore priced on the target with ``hop_cycles`` scaled by
  ((x - 1) + (y - 1)) / (cores - 1), so the credit loop crosses the rectangle's span; nothing else
  of the target changes.
* Numerics: ttnn sizes its CBs for fp32 dest accumulation when asked; here fp32_dest_acc_en is
  ``Numerics.acc == "f32"`` (the GEMM touches f32), and the plan is PRICED with the section's
  Numerics, the same as the tile pass's plan, so the comparison is of plans alone. (ttnn's default
  compute config has no packer L1 accumulation; pricing that would make the default slower still.)
* The L1 space is the target's configurable budget above the allocator base
  (``local_mem_max_bytes``), which is what get_max_l1_space computes on the device. ttnn's CB
  estimate is its own, not our footprint; :attr:`TtnnConfig.legal` says whether the plan also fits
  our footprint function and accumulator (it does for every shape of the bench).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from calibration import SUBBLOCKS

from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape
from spatial_dialect.targets.gemm import TILE, ceil_div

# ttnn's SUBBLOCK_HW_CHOICES, in its order, as (h, w): matmul_program_config.cpp holds the same list
# as test_benchmark.py, which the calibration bench already transcribes.
SUBBLOCK_HW_CHOICES: tuple[tuple[int, int], ...] = tuple(SUBBLOCKS)

NARROW_SHAPE_RATIO_THRESHOLD = 8
PER_CORE_FACTORS = (16, 8, 4, 2)  # get_per_core_factor's loop: 16, halving while > 1
CB_DEPTH = 2  # MCAST_INPUT_BUFFERING_DEPTH


class NotApplicable(Exception):
    """The heuristic does not apply: not a Tensix target, or an operand or the result is sharded."""


@dataclass(frozen=True)
class TtnnConfig:
    """ttnn's choice in its own terms, with the plan that stands for it in ours: in0_block_w is the
    plan's K block, the out block its per-site block, the out sub-block its sub-block."""

    kind: str  # "2d", "1d_mcast_in0" or "1d_mcast_in1"
    grid: tuple[int, int]  # compute_with_storage_grid_size
    per_core: tuple[int, int]  # per_core_M, per_core_N
    plan: GemmPlan
    priced_on: Target  # the target the plan is priced on (1-D: hop_cycles scaled, see above)
    legal: bool  # the plan fits our footprint function and accumulator

    @property
    def in0_block_w(self) -> int:
        return self.plan.ibw

    @property
    def out_block(self) -> tuple[int, int]:
        return self.plan.per_site_m, self.plan.per_site_n

    @property
    def out_subblock(self) -> tuple[int, int]:
        return self.plan.osh, self.plan.osw

    def cost(self, shape: GemmShape, numerics: Numerics, fidelity: str) -> GemmCost:
        return numerics.cost(self.priced_on, shape, self.plan, fidelity)

    def describe(self) -> str:
        names = {"2d": "2-D", "1d_mcast_in0": "1-D mcast in0", "1d_mcast_in1": "1-D mcast in1"}
        cores = f"{self.plan.grid_x * self.plan.grid_y} of " if self.kind != "2d" else ""
        (pcm, pcn), (obh, obw), (sh, sw) = self.per_core, self.out_block, self.out_subblock
        return (
            f"{names[self.kind]} on {cores}{self.grid[0]}x{self.grid[1]}, per_core {pcm}x{pcn} "
            f"out_block {obh}x{obw} sub {sh}x{sw} in0_block_w {self.in0_block_w}"
        )


@dataclass(frozen=True)
class _Sizes:
    """What get_estimated_size_of_cbs reads: tile bytes and the L1 space."""

    in0_tile: int
    in1_tile: int
    interm_tile: int
    l1_space: int
    fp32_dest_acc: bool

    def cb_bytes(self, pm: int, pn: int, ibw: int) -> int:
        # in0 and in1 double-buffered, the output estimated at in0's tile size, the interm CB at
        # its own; no bias, no sharded in0, no transpose.
        return (
            pm * ibw * CB_DEPTH * self.in0_tile
            + pn * ibw * CB_DEPTH * self.in1_tile
            + pm * pn * self.in0_tile
            + pm * pn * self.interm_tile
        )

    def fits(self, pm: int, pn: int, ibw: int) -> bool:
        return self.cb_bytes(pm, pn, ibw) < self.l1_space


def _sizes(target: Target, shape: GemmShape, numerics: Numerics) -> _Sizes:
    fp32 = numerics.acc == "f32"
    tile = shape.operand_tile_bytes(target)
    # estimate_interm_tile_size: fp32 with fp32 dest accumulation, else the larger of a bf16 tile
    # (packer L1 accumulation) and an output tile.
    interm = (
        target.tile_bytes("f32")
        if fp32
        else max(target.tile_bytes("bf16"), shape.out_tile_bytes(target))
    )
    return _Sizes(tile, tile, interm, target.local_mem_max_bytes, fp32)


def is_narrow(height: int, width: int, all_dram: bool = True) -> bool:
    ratio = max(height, width) // min(height, width)
    if ratio > NARROW_SHAPE_RATIO_THRESHOLD:
        return True
    return all_dram and (height <= TILE or width <= TILE)


def per_core_factor(sizes: _Sizes, in0_block_w: int) -> int:
    for f in PER_CORE_FACTORS:
        if sizes.fits(f, f, in0_block_w):
            return f
    return 1


def multi_dim_factor(
    sizes: _Sizes, pm: int, pn: int, ibw: int, adjust_in0_block_w: bool
) -> tuple[int, int, int]:
    """get_multi_dim_per_core_factor: the out block (and, when allowed, a smaller in0_block_w)
    whose CB estimate fits."""
    if sizes.fits(pm, pn, ibw):
        return pm, pn, ibw
    m_factors = [pm, 1] + [f for f in range(pm // 2, 1, -1) if pm % f == 0]
    n_factors = [pn, 1] + [f for f in range(pn // 2, 1, -1) if pn % f == 0]
    # Per product m * n, the pair closest to square; a later pair as square as the kept one wins.
    by_product: dict[int, tuple[int, int]] = {}
    for fm in m_factors:
        for fn in n_factors:
            ratio = max(fm, fn) / min(fm, fn)
            kept = by_product.get(fm * fn)
            if kept is None or not max(kept) / min(kept) < ratio:
                by_product[fm * fn] = (fm, fn)
    lowest_k = 1 if adjust_in0_block_w else ibw
    for k in range(ibw, lowest_k - 1, -1):
        if ibw % k:
            continue
        for product in sorted(by_product, reverse=True):
            fm, fn = by_product[product]
            if sizes.fits(fm, fn, k):
                return fm, fn, k
    return 1, 1, 1


def subblock(out_block_h: int, out_block_w: int, fp32_dest_acc: bool) -> tuple[int, int]:
    """get_matmul_subblock_params without the sharded-output constraints."""
    for h, w in SUBBLOCK_HW_CHOICES:
        if fp32_dest_acc and h * w > 4:
            continue
        if out_block_h % h == 0 and out_block_w % w == 0:
            return h, w
    return 1, 1


def line_target(target: Target, cores: int) -> Target:
    """``target`` for a 1-D config on ``cores`` cores priced as a line: hop_cycles scaled so the
    line's span (cores - 1 hops) costs what the multicast rectangle's span costs on the mesh."""
    if cores <= 1:
        return target
    cols = min(cores, target.mesh_x)
    rows = ceil_div(cores, target.mesh_x)
    span = (cols - 1) + (rows - 1)
    return dataclasses.replace(target, hop_cycles=target.hop_cycles * span / (cores - 1))


def ttnn_default(target: Target, shape: GemmShape, numerics: Numerics | None = None) -> TtnnConfig:
    """The config create_simple_matmul_program_config picks for ``shape`` on ``target``'s full
    compute grid, all tensors DRAM-interleaved. Raises :class:`NotApplicable` off Tensix."""
    if not target.multicasts_rectangles or target.acc_in_registers:
        raise NotApplicable(
            f"{target.name} is not a Tensix mesh: ttnn's heuristic has no meaning there"
        )
    if shape.a_local or shape.c_local:
        raise NotApplicable(
            "a sharded operand or result takes ttnn's sharded paths, not transcribed"
        )
    numerics = numerics or Numerics.of(target, shape.in_dtype, shape.out_dtype)
    sizes = _sizes(target, shape, numerics)
    mt, nt = shape.mt, shape.nt
    cores_x, cores_y = target.mesh_x, target.mesh_y
    height, width = mt * TILE, nt * TILE  # padded shapes
    narrow = is_narrow(height, width, all_dram=True)
    wide = narrow and width > height
    tall = narrow and not wide

    factor = per_core_factor(sizes, 2)
    blocks_y, blocks_x = ceil_div(mt, factor), ceil_div(nt, factor)
    fits_grid = blocks_y <= cores_y and blocks_x <= cores_x
    range_x, range_y = (
        (blocks_x, blocks_y) if fits_grid and (blocks_x, blocks_y) != (1, 1) else (0, 0)
    )

    if range_y == 1 or wide:
        return _mcast_1d(target, shape, numerics, sizes, mcast_in0=True)
    if range_x == 1 or tall:
        return _mcast_1d(target, shape, numerics, sizes, mcast_in0=False)
    return _mcast_2d(target, shape, numerics, sizes)


def _mcast_1d(
    target: Target, shape: GemmShape, numerics: Numerics, sizes: _Sizes, mcast_in0: bool
) -> TtnnConfig:
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    cores = target.mesh_x * target.mesh_y
    if mcast_in0:
        pcm, pcn = mt, ceil_div(ceil_div(nt * TILE, cores), TILE)
    else:
        pcm, pcn = ceil_div(ceil_div(mt * TILE, cores), TILE), nt
    ibw = 2 if kt % 2 == 0 else 1
    obh, obw, _ = multi_dim_factor(sizes, pcm, pcn, ibw, adjust_in0_block_w=False)
    sh, sw = subblock(obh, obw, sizes.fp32_dest_acc)
    if mcast_in0:
        used = ceil_div(nt, pcn)
        plan = GemmPlan(used, 1, obh, obw, sh, sw, ibw, mcast_a=True, mcast_b=False)
    else:
        used = ceil_div(mt, pcm)
        plan = GemmPlan(1, used, obh, obw, sh, sw, ibw, mcast_a=False, mcast_b=True)
    kind = "1d_mcast_in0" if mcast_in0 else "1d_mcast_in1"
    return _config(kind, target, shape, numerics, (pcm, pcn), plan, line_target(target, used))


def _mcast_2d(target: Target, shape: GemmShape, numerics: Numerics, sizes: _Sizes) -> TtnnConfig:
    mt, kt, nt = shape.mt, shape.kt, shape.nt
    cores_x, cores_y = target.mesh_x, target.mesh_y
    ibw = kt // cores_x if kt % cores_x == 0 else 1
    pcm, pcn = ceil_div(mt, cores_y), ceil_div(nt, cores_x)
    obh, obw, ibw = multi_dim_factor(sizes, pcm, pcn, ibw, adjust_in0_block_w=True)
    sh, sw = subblock(obh, obw, sizes.fp32_dest_acc)
    plan = GemmPlan(cores_x, cores_y, obh, obw, sh, sw, ibw)
    return _config("2d", target, shape, numerics, (pcm, pcn), plan, target)


def _config(
    kind: str,
    target: Target,
    shape: GemmShape,
    numerics: Numerics,
    per_core: tuple[int, int],
    plan: GemmPlan,
    priced_on: Target,
) -> TtnnConfig:
    legal = plan.acc_tiles_needed <= target.acc_tiles(numerics.acc) and numerics.fits(
        target, shape, plan
    )
    return TtnnConfig(kind, (target.mesh_x, target.mesh_y), per_core, plan, priced_on, legal)
