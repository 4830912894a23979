"""How the compute stages' runners move an item's pages through their FIFOs (maps.py, rows.py,
stages.py): hold an input block without releasing it, release it once the item is done, push a
result as the [sh, sw] sub-block pages the stage's docstring promises, and zero what lies outside
the tensor's real extent.

A compute stage holds its input pages for the whole item and releases them after it has pushed
its result, because that is what the sp ops' docstrings say ("... push the sub-block as one
page. Then release the input pages"): the input pages stay occupied while the result is pushed,
so a FIFO too shallow for that shows up here as the deadlock it would be on the chip.
"""

from __future__ import annotations

import math
from collections.abc import Generator

import numpy as np

from spatial_dialect import sp
from spatial_dialect.tools.simulator.machine import Fifo, Process, SiteRun, Wait, give


def hold(fifo: Fifo, tiles: tuple[int, int], who: str) -> Generator[Wait, None, np.ndarray]:
    """Waits until a block of `tiles` is in the FIFO and returns it without releasing it."""
    pages = math.prod(fifo.pages_of(tiles, who))
    wait = Wait((fifo,), False, pages, who)
    if wait.blocked():
        yield wait
    return fifo.front(tiles, who)


def release(fifo: Fifo, tiles: tuple[int, int], who: str) -> None:
    """Frees the pages of a block `hold` returned."""
    fifo.pop(math.prod(fifo.pages_of(tiles, who)))


def push_sub_blocks(out: Fifo, block: np.ndarray, b: dict[str, int], who: str) -> Process:
    """The item's result, one [sh, sw] page per sub-block in row-major order."""
    th, tw = out.tile
    sh, sw = b["sh"], b["sw"]
    for ti in range(0, b["h"], sh):
        for tj in range(0, b["w"], sw):
            part = block[ti * th : (ti + sh) * th, tj * tw : (tj + sw) * tw]
            yield from give((out,), part, who)


def zero_outside(block: np.ndarray, origin: tuple[int, int], valid: tuple[int, int]) -> None:
    """Zeroes the elements of a block at element `origin` outside the first `valid` rows and
    columns of the tensor (padding never leaks)."""
    r0, c0 = origin
    rows, cols = valid
    block[max(0, rows - r0) :, :] = 0
    block[:, max(0, cols - c0) :] = 0


def item_label(run: SiteRun, op: sp.StageOp, item: int) -> str:
    """A stage instance's work item as errors name it: `rope at (0, 1) (item 3)`."""
    return f"{run.where(op.stage_name())} (item {item})"
