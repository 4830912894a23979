"""Bytes a GEMM block plan needs in one site's local memory (docs/passes.md#tile-one-footprint-function).

THE one definition: the tile pass calls it to decide which plans are legal, size-buffers lays out
exactly these buffers. If the two ever priced different things the planner would choose plans the
allocator refuses (or refuse plans the allocator would have laid out), which is how two bugs of the
reference compiler were found. Buffer bytes go through :func:`page_bytes`, so a page has one size too.
"""

from __future__ import annotations

from dataclasses import dataclass

from spatial_dialect.sp.kinds import PARTIALS_RINGS

from .gemm import GemmPlan, GemmShape
from .spec import Target

# The ring depth the legality formula assumes for the operand FIFOs. size-buffers may deepen a FIFO
# afterwards, but only into memory that is left over, so a plan legal at depth 2 stays legal.
FOOTPRINT_DEPTH = 2


def page_bytes(target: Target, dtype_or_fmt: str, tiles: int) -> int:
    """Bytes of a page of ``tiles`` tiles of ``dtype_or_fmt`` on ``target``: every buffer's size is
    pages x this, so the planner and the allocator agree to the byte (block-float formats carry their
    exponent bytes, bfp8_b 1088 per tile)."""
    return tiles * target.tile_bytes(dtype_or_fmt)


@dataclass(frozen=True)
class FootprintParts:
    """The buffers of one site, in the order size-buffers lays them out."""

    in0: int
    in1: int
    out: int
    interm: int
    partials: int = 0

    @property
    def total(self) -> int:
        return self.in0 + self.in1 + self.out + self.interm + self.partials


def footprint_parts(
    target: Target, shape: GemmShape, plan: GemmPlan, *, in_place: bool = False, exact: bool = False
) -> FootprintParts:
    """The per-buffer bytes :func:`footprint_bytes_for_plan` sums. ``in_place``: the output is
    accumulated where it lives (tt-metal's packer L1 accumulation), so partial sums need no buffer of
    their own. ``exact``: partial sums spill in the accumulator's 32-bit precision rather than the
    operand format (the exact numerics policy)."""
    ob = shape.operand_format
    out = shape.out_dtype
    if plan.streaming:
        # One tile in flight per operand and for the result, double-buffered.
        return FootprintParts(
            in0=page_bytes(target, ob, FOOTPRINT_DEPTH),
            in1=page_bytes(target, shape.b_format, FOOTPRINT_DEPTH),
            out=page_bytes(target, out, FOOTPRINT_DEPTH),
            interm=0,
        )
    pm, pn, ibw = plan.per_site_m, plan.per_site_n, plan.ibw
    sub = plan.sub_blocks
    sub_tiles = plan.osh * plan.osw
    in0 = FOOTPRINT_DEPTH * page_bytes(target, ob, pm * ibw)
    in1 = FOOTPRINT_DEPTH * page_bytes(target, shape.b_format, ibw * pn)
    # ★ The epilogue costs a fixed scratch, not the block, where the accumulator is register-resident
    # (docs/passes.md#tile-a-register-accumulator-holds-its-whole-block): each lane (a warp) writes its own tiles to DRAM through one tile-sized slot, so the
    # output never stages through a ring. Charging the whole block (osh*osw tiles, double-buffered)
    # is what stopped the planner affording a block tile worth running on a GPU. Only where the lanes
    # really tile the sub-block; otherwise the output goes through a ring like anywhere else.
    if target.acc_in_registers and target.acc_lane_grid(plan.osh, plan.osw) is not None:
        outbuf = page_bytes(target, out, target.acc_lanes)
    elif in_place:
        outbuf = page_bytes(target, out, sub * sub_tiles)
    else:
        # One page per sub-block, and at least two so the packer and the writer overlap.
        outbuf = page_bytes(target, out, max(sub, 2) * sub_tiles)
    # ★ The K-block spill exists only when there is more than one K block, the accumulator is not in
    # registers (a GPU's fragments hold partial sums across the whole K loop), and the output is not
    # accumulated in place. The reference compiler priced it on `k_blocks > 1` alone while the pass creating it
    # also checked the other two: the planner paid 64 KiB of a 99 KiB budget for a buffer never made.
    interm = 0
    if plan.k_blocks(shape.kt) > 1 and not target.acc_in_registers and not in_place:
        interm = _accumulator_pages(target, ob, sub * sub_tiles, exact)
    # Split-K: the partial sums the previous slice sends and those this slice sends on, one page
    # each per sub-block at the accumulator's precision (PARTIALS_RINGS; docs/passes.md#tile-
    # split-k-where-the-grid-does-not-fill). A middle slice holds both rings at once.
    partials = 0
    if plan.split_k > 1:
        partials = _accumulator_pages(target, out, PARTIALS_RINGS * sub * sub_tiles, exact)
    return FootprintParts(in0=in0, in1=in1, out=outbuf, interm=interm, partials=partials)


def _accumulator_pages(target: Target, plain: str, tiles: int, exact: bool) -> int:
    """Bytes of ``tiles`` tiles of partial sums: 32-bit when ``exact``, else ``plain`` (the
    operand format of a spill, the output type of split-K's partials: the accumulator's)."""
    if exact and not target.has_dtype("f32"):
        return tiles * target.tile_elems * 4
    return page_bytes(target, "f32" if exact else plain, tiles)


def footprint_bytes_for_plan(
    target: Target, shape: GemmShape, plan: GemmPlan, *, in_place: bool = False, exact: bool = False
) -> int:
    """Bytes ``plan``'s buffers take on one site at the legality depth (2 pages per operand FIFO):
    in0 = 2 x per_site_m x ibw tiles, in1 = 2 x ibw x per_site_n tiles (operand format), the output
    (see :func:`footprint_parts`) and the K-block spill. Streaming plans: 2 + 2 + 2 single tiles."""
    return footprint_parts(target, shape, plan, in_place=in_place, exact=exact).total


def plan_fits(
    target: Target, shape: GemmShape, plan: GemmPlan, *, in_place: bool = False, exact: bool = False
) -> bool:
    """Whether ``plan``'s footprint fits the site's local memory. The budget is what the site can be
    CONFIGURED with (``local_mem_max_bytes``), the same number size-buffers checks its layout against
    (docs/passes.md#tile-the-budget-is-the-configurable-maximum: measuring against a GPU's 48 KiB default rejected plans the device runs well)."""
    return (
        footprint_bytes_for_plan(target, shape, plan, in_place=in_place, exact=exact)
        <= target.local_mem_max_bytes
    )
