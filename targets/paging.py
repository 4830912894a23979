"""The page size of a paged KV cache, priced (docs/tg.md#choosing-the-page-size).

A paged cache (docs/tg.md#batched-decode) is a pool of blocks of N rows and a block table per
user. N is a trade, and the target's cost model prices both sides of it in cycles of one decode
step, so `spatial-import --batch B --paged auto` can pick it (:func:`choose_page_size`):

* **per-block read overhead.** A user's rows are contiguous only within a block: each block is
  one DRAM transaction run, and the reader waits for a run before it issues the next (the stream
  model's "one DRAM round trip per K block after an item's first", targets/stream_cost.py). Every
  block a step reads therefore costs one `dram_latency_cycles` round trip on the reader that
  issues it; the step's readers (every site's movement engines) work side by side, so the
  overhead is block runs x latency / readers. Smaller blocks: more runs.
* **the partly filled last block.** A user at length L holds ceil(L / N) blocks, so its last
  block wastes ceil(L / N) x N - L rows. At lengths uniform over 1 .. S (S the rows a user may
  hold, a whole number of blocks) the expected waste is exactly (N - 1) / 2 rows a user: half a
  block. A block-granular reader moves those rows too (a block is one transaction run), so they
  cost their bytes at the DRAM rate the plan sustains (targets/dram.py), every step. Larger
  blocks: more waste.
* **the pool's fit.** A pool sized to its users' expected occupancy, ((S + 1) / 2 + (N - 1) / 2)
  rows a user per layer for K and for V, plus the weights, must fit in the target's DRAM
  (`dram_bytes`); a block size whose pool does not fit is refused, and if none fits
  :class:`PagingError` says so with the numbers.

The candidates are whole tiles of rows, doubling: tile_rows, 2 x tile_rows, ... up to S, each
dividing S (a cache of fewer rows than a tile, or of no such divisor, has the one block of S
rows: the contiguous layout). The cheapest that fits wins; its runner-up is kept beside it, as
every decision of the compiler keeps one.

A target that declares no DRAM latency has no per-block overhead: the smallest block wins.
"""

from __future__ import annotations

from dataclasses import dataclass

from .dram import sustained_dram_bytes_per_cycle
from .spec import Target


class PagingError(ValueError):
    """No page size fits: the weights and the smallest block's pool exceed the target's DRAM."""


@dataclass(frozen=True)
class KvShape:
    """What the page size is priced on: `users` users of up to `rows` positions each (S), over
    `layers` layers, one K (or V) row of a layer `row_bytes` bytes, beside `weight_bytes` of
    weights that share the DRAM with the pool."""

    users: int
    rows: int
    layers: int
    row_bytes: int
    weight_bytes: int = 0

    def streams(self) -> int:
        """The caches a step reads per user: K and V of every layer."""
        return 2 * self.layers


@dataclass(frozen=True)
class PagePrice:
    """One candidate block size of N rows, priced per decode step (cycles of the target's
    clock) at lengths uniform over 1 .. S."""

    block: int
    block_runs: float  # blocks one step reads, all users and caches: the expected ceil(L / N)
    overhead_cycles: float  # block_runs x DRAM round trip / readers
    waste_rows: float  # expected rows of a user's last block past its length: (N - 1) / 2
    waste_cycles: float  # those rows' bytes, all users and caches, at the sustained DRAM rate
    pool_bytes: int  # the pool at expected occupancy (all layers, K and V)
    fits: bool  # weights + pool within the target's DRAM

    @property
    def cycles(self) -> float:
        return self.overhead_cycles + self.waste_cycles

    def waste_bytes_per_user(self, shape: KvShape) -> int:
        """The expected bytes one user's partly filled last blocks hold, over its caches."""
        return round(self.waste_rows * shape.row_bytes * shape.streams())


@dataclass(frozen=True)
class PageChoice:
    """The block size chosen, its runner-up (None where there was one candidate that fits) and
    every candidate's price, in the order tried."""

    chosen: PagePrice
    runner_up: PagePrice | None
    candidates: tuple[PagePrice, ...]


def candidate_blocks(target: Target, rows: int) -> list[int]:
    """Whole tiles of rows, doubling, up to `rows`, each dividing it; [rows] where none does."""
    blocks, n = [], target.tile_rows
    while n <= rows:
        if rows % n == 0:
            blocks.append(n)
        n *= 2
    return blocks or [rows]


def readers(target: Target) -> int:
    """The movement engines that read the caches side by side: every site's."""
    return target.sites * max(1, target.movement_engines)


def price_block(target: Target, shape: KvShape, block: int) -> PagePrice:
    """The step's cost of blocks of `block` rows (module docstring)."""
    s, n = shape.rows, block
    caches = shape.users * shape.streams()
    # lengths uniform over 1 .. S, S a whole number of blocks: ceil(L / N) is each of
    # 1 .. S / N for N lengths, so its mean is (S / N + 1) / 2, and the waste's (N - 1) / 2
    blocks_per_cache = (s / n + 1) / 2
    waste_rows = (n - 1) / 2
    runs = caches * blocks_per_cache
    overhead = runs * (target.dram_latency_cycles or 0) / readers(target)
    waste = caches * waste_rows * shape.row_bytes / sustained_dram_bytes_per_cycle(target)
    pool = round(caches * ((s + 1) / 2 + waste_rows) * shape.row_bytes)
    fits = target.dram_bytes is None or shape.weight_bytes + pool <= target.dram_bytes
    return PagePrice(n, runs, overhead, waste_rows, waste, pool, fits)


def choose_page_size(target: Target, shape: KvShape) -> PageChoice:
    """The cheapest block size whose pool fits, and the next cheapest; PagingError where none
    fits."""
    priced = tuple(price_block(target, shape, n) for n in candidate_blocks(target, shape.rows))
    fitting = sorted((p for p in priced if p.fits), key=lambda p: (p.cycles, p.block))
    if not fitting:
        least = min(priced, key=lambda p: p.pool_bytes)
        raise PagingError(
            f"no page size fits on {target.name}: {shape.weight_bytes} B of weights and the "
            f"smallest pool ({least.block}-row blocks, {shape.users} users of up to {shape.rows} "
            f"rows) of {least.pool_bytes} B exceed its {target.dram_bytes} B of DRAM"
        )
    return PageChoice(fitting[0], fitting[1] if len(fitting) > 1 else None, priced)
