"""Where the rows of a batched write land, and where a batched attention's user reads its keys
(docs/tg.md#batched-decode): the simulator's addressing of the users of one cache.

Decided here, for every stage that takes a batch's positions (sp.scatter `tokens`, the batched
flash attention): a position and a block id are read from DRAM as the chip reads them, and ALL
users' are checked before the stage writes or reads a row, so a bad one is an `IndexOutOfRange`
that writes nothing (every item checks the whole batch first, so no site writes when any would
fail). Two rows landing on one cache row is the same kind of error: which would win is no
contract a parallel chip keeps.
"""

from __future__ import annotations

import numpy as np

from spatial_dialect.tools.simulator.machine import DramTensor, IndexOutOfRange, UnwrittenRead

IDLE = -1
"""The position of an idle user: nothing written for it, its attention row zero."""


def read_i32(tensor: DramTensor, who: str) -> np.ndarray:
    """The elements of an i32 tensor of DRAM (positions, a block table), every one written."""
    if not tensor.written.all():
        raise UnwrittenRead(who, tensor.name, (0, 0), int(np.count_nonzero(~tensor.written)))
    return tensor.data[: tensor.rows, : tensor.cols].astype(np.int64)


def user_slots(
    who: str,
    cache: DramTensor,
    pos: np.ndarray,
    tokens: int,
    table: np.ndarray | None,
    block_size: int | None,
    *,
    prefix: bool,
) -> list[np.ndarray | None]:
    """Per user b: the cache rows of its positions pos[b] .. pos[b] + tokens - 1 (the rows it
    writes), or 0 .. pos[b] + tokens - 1 with `prefix` (the keys it reads); None when idle.
    Contiguous without `table` (row b * S + j, S = the cache's rows / users), else
    table[b, j / N] * N + j mod N. Every user is checked before any row is returned."""
    users = pos.shape[0]
    n = block_size or 1
    capacity = cache.rows // users if table is None else table.shape[1] * n
    pool = cache.rows // n
    slots: list[np.ndarray | None] = []
    for b, p in enumerate(int(x) for x in pos):
        if p == IDLE:
            slots.append(None)
            continue
        if not 0 <= p <= capacity - tokens:
            raise IndexOutOfRange(
                f"{who}: position {p} of user {b} (pos[{b}]) outside [0, {capacity - tokens}] "
                f"({tokens} row(s) from it; a user holds {capacity} positions of @{cache.name}; "
                "-1 marks an idle user)"
            )
        j = np.arange(0 if prefix else p, p + tokens)
        if table is None:
            slots.append(b * capacity + j)
            continue
        for i in sorted(set((j // n).tolist())):
            if not 0 <= table[b, i] < pool:
                raise IndexOutOfRange(
                    f"{who}: block id {int(table[b, i])} of user {b} (table[{b}, {i}]) outside "
                    f"[0, {pool}) ({pool} blocks of {n} rows of @{cache.name})"
                )
        slots.append(table[b, j // n] * n + j % n)
    return slots


def check_distinct(who: str, slots: list[np.ndarray | None]) -> None:
    """No two written rows land on one cache row."""
    seen: dict[int, int] = {}
    for b, rows in enumerate(slots):
        for row in [] if rows is None else rows.tolist():
            if row in seen:
                raise IndexOutOfRange(
                    f"{who}: users {seen[row]} and {b} both write cache row {row}; each "
                    "position must map to its own slot"
                )
            seen[row] = b


class UserCache:
    """What a load of users' caches (sp.load `users`) read before its item: every user's
    position and, paged, block table, checked; then the page of any block of the U x S walk."""

    def __init__(self, who: str, cache: DramTensor, pos: np.ndarray, table, op) -> None:
        self.cache, self.capacity, self.tokens = cache, op.capacity, op.tokens
        if table is not None and table.shape[1] * op.block_size != op.capacity:
            raise IndexOutOfRange(
                f"{who}: a block table of {table.shape[1]} blocks of {op.block_size} rows is "
                f"not a capacity of {op.capacity} positions"
            )
        users = pos.shape[0]
        if table is None and cache.rows != users * op.capacity:
            raise IndexOutOfRange(
                f"{who}: @{cache.name} has {cache.rows} rows, not {users} users x "
                f"{op.capacity} positions"
            )
        slots = user_slots(who, cache, pos, op.tokens, table, op.block_size, prefix=True)
        # the cache row of each position of the walk, -1 where the user holds none yet
        self.rows = np.full(users * op.capacity, -1, np.int64)
        for b, rows in enumerate(slots):
            if rows is not None:
                self.rows[b * op.capacity : b * op.capacity + rows.shape[0]] = rows

    def page(self, who: str, th: int, tw: int, r: int, c: int, er: int, ec: int) -> np.ndarray:
        """The block of er x ec tiles at tile (r, c) of the walk: each element row the cache's
        row of its position, zero where there is none."""
        page = np.zeros((er * th, ec * tw), self.cache.dtype)
        cols = slice(c * tw, (c + ec) * tw)
        for i, x in enumerate(range(r * th, (r + er) * th)):
            row = int(self.rows[x]) if x < self.rows.shape[0] else -1
            if row < 0:
                continue
            if not self.cache.written[row // th, c : c + ec].all():
                raise UnwrittenRead(who, self.cache.name, (row, c * tw), 1)
            page[i] = self.cache.data[row, cols]
        return page
