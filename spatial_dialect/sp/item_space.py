"""The work items of a section as index arithmetic: which block of the result each item covers
and how the items are numbered site by site (`ItemSpace`).

Pure arithmetic on integers, no IR: the op that carries these numbers (`sp.work`) turns an
`ItemSpaceError` into its verifier's diagnostic.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property


def ceil_div(a: int, b: int) -> int:
    """a / b rounded up (b > 0)."""
    return -(-a // b)


class ItemSpaceError(ValueError):
    """Numbers that do not make an item space (a grid with sites that get no block)."""


@dataclass(frozen=True)
class ItemRect:
    """The block of the result a work item covers, in tiles: origin (r0, c0), extent h x w."""

    r0: int
    c0: int
    h: int
    w: int


@dataclass(frozen=True)
class ItemSpace:
    """The work items of a section: the result cut into blocks of block_m x block_n tiles (a
    block at the bottom or right edge is clipped to the tensor), and how the items are numbered.

    Without `over` the items are the blocks in row-major order. With `over` = (GX, GY) the
    blocks are dealt round-robin over a GX x GY grid of sites, the map of docs/passes.md#place-the-2-d-map-where-multicast-exists: block (r, c) goes
    to grid site (c % GX, r % GY), which runs its blocks in ROUNDS i = r // GY, j = c // GX.
    Grid row y holds rm(y) = ceil((items_m - y) / GY) block rows and grid column x holds
    rn(x) = ceil((items_n - x) / GX) block columns, so the first items_m % GY rows (items_n % GX
    columns) hold one round more when GY (GX) does not divide the blocks. The items are numbered
    site by site, grid site (x, y) after every site of the rows above and of its row to its left
    (x fastest), each holding its rm(y) x rn(x) blocks in the order: the rounds every site of the
    grid runs first, row-major, then its extra column round (by i), then its extra row round (by
    j), then the corner. So each site's items are consecutive, and a site with fewer rounds than
    a neighbour in its row (column) runs a prefix of the neighbour's sequence of block rows
    (columns) when only the columns (rows) are dealt unevenly: a multicast group can then serve
    them all from its first site. (With GX = items_n and GY = items_m, one block a site, this is
    the row-major order.) A line of sites is the grid GX x 1 or 1 x GY: one grid site per block
    column (block row), every block row (column) on each.

    With `k_slices` = S > 1 (split-K) every block is S items, one per K slice: the items of slice
    s are s * blocks + the numbering above, so each slice is numbered as the whole space is
    without a split, and item i covers the block of item i mod blocks over K slice i // blocks.

    THE one definition of what an item covers: place groups sites by it, the verifier checks
    ranges against it, the simulator runs it.
    """

    tiles_m: int
    tiles_n: int
    block_m: int
    block_n: int
    over: tuple[int, int] | None = None
    k_slices: int = 1

    # The derived counts (items_m, items_n, blocks, _even) are cached properties: the space is
    # frozen, and the verifier and place ask them millions of times on a 70B step.

    def __post_init__(self) -> None:
        if self.over is not None:
            gx, gy = self.over
            if not (0 < gx <= self.items_n and 0 < gy <= self.items_m):
                raise ItemSpaceError(
                    f"{self.items_m}x{self.items_n} blocks leave sites of a {gx}x{gy} grid without work"
                )

    @cached_property
    def items_m(self) -> int:
        return ceil_div(self.tiles_m, self.block_m)

    @cached_property
    def items_n(self) -> int:
        return ceil_div(self.tiles_n, self.block_n)

    @cached_property
    def blocks(self) -> int:
        """Items of one K slice: one per block."""
        return self.items_m * self.items_n

    @property
    def count(self) -> int:
        return self.blocks * self.k_slices

    def k_slice(self, item: int) -> int:
        """The K slice item `item` walks (0 without split-K)."""
        return item // self.blocks

    @property
    def grid(self) -> tuple[int, int]:
        """The grid of sites the blocks are dealt over (GX, GY); one block each without `over`."""
        return self.over if self.over is not None else (self.items_n, self.items_m)

    def _even(self) -> tuple[int, int, int, int]:
        """(rounds every grid row runs, rows with one more, likewise for columns)."""
        return self._evens

    @cached_property
    def _evens(self) -> tuple[int, int, int, int]:
        gx, gy = self.grid
        return self.items_m // gy, self.items_m % gy, self.items_n // gx, self.items_n % gx

    def site_rounds(self, x: int, y: int) -> tuple[int, int]:
        """The block rows and block columns grid site (x, y) runs."""
        rm, em, rn, en = self._even()
        return rm + (y < em), rn + (x < en)

    @property
    def rounds(self) -> tuple[int, int]:
        """The most block rows and block columns a grid site runs (grid site (0, 0))."""
        return self.site_rounds(0, 0)

    @property
    def per_site(self) -> int:
        """The most items a grid site runs (grid site (0, 0))."""
        rm, rn = self.rounds
        return rm * rn

    def site_first(self, x: int, y: int) -> int:
        """The first item of grid site (x, y)."""
        rm, em, rn, en = self._even()
        rows_above = y * rm + min(y, em)
        return rows_above * self.items_n + (rm + (y < em)) * (x * rn + min(x, en))

    def _round(self, t: int, rmy: int, rnx: int) -> tuple[int, int]:
        """The rounds (i, j) of the t-th item of a site running rmy x rnx blocks."""
        rm, _, rn, _ = self._even()
        if t < rm * rn:
            return divmod(t, rn)
        t -= rm * rn
        if rnx > rn:
            if t < rm:
                return t, rn
            t -= rm
        if rmy > rm:
            if t < rn:
                return rm, t
            t -= rn
        assert t == 0 and rmy > rm and rnx > rn, "an item beyond its site's blocks"
        return rm, rn

    def _position(self, i: int, j: int, rnx: int) -> int:
        """The inverse of `_round`: where rounds (i, j) come among a site's items."""
        rm, _, rn, _ = self._even()
        if i < rm and j < rn:
            return i * rn + j
        if i < rm:
            return rm * rn + i
        extra_column = rm if rnx > rn else 0
        return rm * rn + extra_column + j

    def coord(self, item: int) -> tuple[int, int]:
        """The block (row, column) item `item` covers."""
        item %= self.blocks
        if self.over is None:
            return divmod(item, self.items_n)
        gx, gy = self.over
        rm, em, rn, en = self._even()
        row_items = self.items_n
        per_long_row = (rm + 1) * row_items
        if item < em * per_long_row:
            y = item // per_long_row
        else:
            y = em + (item - em * per_long_row) // (rm * row_items)
        rest = item - (y * rm + min(y, em)) * row_items
        rmy = rm + (y < em)
        per_long_col = (rn + 1) * rmy
        if rest < en * per_long_col:
            x = rest // per_long_col
        else:
            x = en + (rest - en * per_long_col) // (rn * rmy)
        t = rest - rmy * (x * rn + min(x, en))
        i, j = self._round(t, rmy, rn + (x < en))
        return y + i * gy, x + j * gx

    def item(self, row: int, col: int, k_slice: int = 0) -> int:
        """The item covering block (row, column) in K slice `k_slice`: the inverse of `coord`."""
        base = k_slice * self.blocks
        if self.over is None:
            return base + row * self.items_n + col
        gx, gy = self.over
        x, y = col % gx, row % gy
        return (
            base
            + self.site_first(x, y)
            + self._position(row // gy, col // gx, self.site_rounds(x, y)[1])
        )

    def rect(self, item: int) -> ItemRect:
        bi, bj = self.coord(item)
        r0, c0 = bi * self.block_m, bj * self.block_n
        return ItemRect(
            r0, c0, min(self.block_m, self.tiles_m - r0), min(self.block_n, self.tiles_n - c0)
        )

    # ── Questions about runs of items, answered without walking them ──────────────────────────
    # A 10^6-cubed GEMM has tens of millions of items; the verifier asks these per site, so each
    # costs O(1) or O(edge blocks), never O(items).

    def edge_items(self) -> list[int]:
        """The items whose block is clipped (the last block row or column, where the tensor does
        not fill it), in increasing order: every other item is a whole block_m x block_n."""
        rows = [self.items_m - 1] if self.tiles_m % self.block_m else []
        cols = [self.items_n - 1] if self.tiles_n % self.block_n else []
        edge = set()
        for s in range(self.k_slices):
            edge |= {self.item(r, c, s) for r in rows for c in range(self.items_n)}
            edge |= {self.item(r, c, s) for c in cols for r in range(self.items_m)}
        return sorted(edge)

    def block_bounds(self, first: int, count: int) -> tuple[int, int, int, int]:
        """(lowest, highest block row, lowest, highest block column) of items first ..
        first + count - 1: closed form for a run of row-major blocks and for one grid site's
        whole deal (what place lays out); any other run is walked."""
        last = first + count - 1
        if self.k_slice(first) == self.k_slice(last):
            # A run inside one K slice covers what the same run of slice 0 covers.
            base = self.k_slice(first) * self.blocks
            first, last = first - base, last - base
        else:
            coords = [self.coord(i) for i in range(first, last + 1)]
            rows, cols = [r for r, _ in coords], [c for _, c in coords]
            return min(rows), max(rows), min(cols), max(cols)
        if self.over is None:
            n = self.items_n
            if first // n == last // n:
                return first // n, last // n, first % n, last % n
            return first // n, last // n, 0, n - 1
        gx, gy = self.over
        site = self.deal_of(first, count)
        if site is not None:
            (x, y), (rmy, rnx) = site, self.site_rounds(*site)
            return y, y + (rmy - 1) * gy, x, x + (rnx - 1) * gx
        coords = [self.coord(i) for i in range(first, last + 1)]
        rows, cols = [r for r, _ in coords], [c for _, c in coords]
        return min(rows), max(rows), min(cols), max(cols)

    def deal_of(self, first: int, count: int) -> tuple[int, int] | None:
        """The grid site (x, y) whose whole deal items first .. first + count - 1 are, if they
        are one (each site of a placed GEMM runs exactly its grid site's blocks)."""
        if self.over is None or count == 0:
            return None
        first -= self.k_slice(first) * self.blocks
        gx, gy = self.over
        row, col = self.coord(first)
        x, y = col % gx, row % gy
        rmy, rnx = self.site_rounds(x, y)
        return (x, y) if first == self.site_first(x, y) and count == rmy * rnx else None

    @property
    def shared_rounds(self) -> int:
        """How many leading items every grid site runs in the same round order: the rm x rn
        rounds all sites have (rounds (i, j) = divmod(t, rn)); only a site's extra row or
        column comes after them."""
        rm, _, rn, _ = self._even()
        return rm * rn


def users_key_range(queries: int, users: int, capacity: int, tile_rows: int) -> int | None:
    """The key tiles a batched attention's query tile row reads, S / T, where the U x T queries
    fill more than one tile row and whole ones, a tile row holds whole users (T divides th) and
    their caches whole key tiles (T divides S): its th / T users' caches are S / T key tiles
    from key tile r0 * S / T. Else None: the users fit one tile row (its walk is every cache),
    or a tile row would cut a user or a key tile, or the last would be partial (its walk would
    run past the caches), and every item walks every cache, masked."""
    tokens = queries // users
    if queries <= tile_rows or queries % tile_rows or tile_rows % tokens or capacity % tokens:
        return None
    return capacity // tokens
