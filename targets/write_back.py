"""The cost model's last-step write-back (docs/targets.md#gemm-cycles): the pages a site's
last block leaves in, one page's write, and the step from its compute to the last write's
acknowledgement, one write in flight or two (:func:`~.gemm.writes_in_pairs`, the rule the
TT-Lang printer pairs the writer's pages by). Its own module so the rule and its price sit
together; :mod:`.cost` reads it."""

from __future__ import annotations

from .dram import dram_transfer_cycles
from .gemm import GemmPlan, GemmShape, writes_in_pairs
from .quantities import GemmQuantities
from .spec import Target


def write_pages(target: Target, plan: GemmPlan, q: GemmQuantities) -> tuple[int, int]:
    """(tiles a page, pages) of the last block's write-back: a Tensix packer pushes each
    sub-block of the last K block as soon as it is accumulated and the writer stores it
    (docs/backend-ttlang.md#sub-blocks); a target that accumulates in registers (a GPU:
    `acc_in_registers`) stores the whole block once after its compute."""
    block = min(q.busiest_c_tiles, plan.per_site_m * plan.per_site_n)
    page = block if target.acc_in_registers else min(block, plan.osh * plan.osw)
    return page, max(1, block // page)


def page_write_cycles(target: Target, shape: GemmShape, q: GemmQuantities, page: int) -> float:
    """One page of ``page`` tiles written back, every site writing its page together: through
    the site's link and, all sites together, through DRAM; then the write's round trip (a copy's
    wait is a write barrier)."""
    return sum(_page_write_parts(target, shape, q, page))


def _page_write_parts(
    target: Target, shape: GemmShape, q: GemmQuantities, page: int
) -> tuple[float, float]:
    """(transfer, round trip) of :func:`page_write_cycles`: the transfer holds the link and
    the DRAM, so writes in flight together take their transfers in turn; the round trip
    holds neither."""
    tbo = shape.out_dram_tile_bytes(target)
    burst = dram_transfer_cycles(target, page * tbo * q.c_writers, q.c_writers, page * q.c_writers)
    link = float(target.link_bytes_per_cycle)
    return max(page * tbo / link, burst), float(target.dram_latency_cycles or 0)


def write_back_cycles(
    target: Target, shape: GemmShape, plan: GemmPlan, q: GemmQuantities, step_c: float
) -> float:
    """The last step, from the start of its compute (``step_c``) to the last write's
    acknowledgement. The writer takes a page as the compute pushes it and waits for its write
    before it takes the next (:func:`write_pages`, :func:`page_write_cycles`: S pages of write
    w each). Page i is ready at (i + 1) c, c = ``step_c`` / S, so the writer finishes at
    max(c + S w, S c + w): the compute waits on the writer (S writes after the first page) or
    the writer on the compute (the last page's write after the whole step).

    Where the writer stores the pages two at a time (:func:`~.gemm.writes_in_pairs`), page
    2j + 1's copy is issued before page 2j's write is waited: the pair's transfers (t each)
    run back to back and one round trip (l) ends them, and the next pair starts when the pair
    is acknowledged, which also frees the two output DFBs' pages the compute pushes next."""
    if not q.busiest_c_tiles:
        return step_c
    page, pages = write_pages(target, plan, q)
    c = step_c / pages
    if not _writes_in_pairs(target, plan, q, page * pages):
        w = page_write_cycles(target, shape, q, page)
        return max(c + pages * w, pages * c + w)
    t, lat = _page_write_parts(target, shape, q, page)
    ready = acked = 0.0  # when the last page was pushed, and the last pair acknowledged
    for _ in range(pages // 2):
        # page 2j's DFB page is free once the pair before it is acknowledged
        first = max(ready + c, acked)
        second = first + c
        sent = max(first + t, second) + t  # the second transfer after the first and its push
        ready, acked = second, sent + lat
    return acked


def _writes_in_pairs(target: Target, plan: GemmPlan, q: GemmQuantities, block: int) -> bool:
    """Whether the busiest site's writer stores its block's pages two at a time: a Tensix
    sub-block write-back (not split-K's, whose writer also hands partial sums on) of a whole
    block the printer pairs (:func:`~.gemm.writes_in_pairs`)."""
    return (
        not target.acc_in_registers
        and q.k_slices == 1
        and block == plan.per_site_m * plan.per_site_n
        and writes_in_pairs(plan.per_site_m, plan.per_site_n, plan.osh, plan.osw)
    )
