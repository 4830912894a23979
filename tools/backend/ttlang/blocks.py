"""What the compute stages' printers share (compute.py, stats.py): a fill block, a page's
shape, the `with` that pops a stage's input pages and reserves its output, and the constant
tensors the host allocates beside the program's own."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from spatial_dialect import sp

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


def fill(value: float, shape: str) -> str:
    return f"ttl.block.fill({value!r}, {shape})"


@dataclass(frozen=True)
class Constant:
    """A constant tensor the host allocates beside the program's own: its shape in elements,
    the numpy source that builds it, and the tiles (rows, cols) each range of the section reads
    of it (once per range, before its items: OperationWriter.open_consts)."""

    shape: tuple[int, int]
    source: str
    pages: dict[int, tuple[int, int]]
    per_item: bool = False
    """Read per item, not per range: the tiles at the columns of the load that fills the
    stage's first input (a row's column mask at each block's own columns), by that load's
    movement kernel just after it, into a DFB of block_count 2 the compute pops with the
    stage's pages (`with_blocks`)."""


def page_of(v, b: dict) -> tuple[int, int]:  # noqa: ANN001
    """The page (tiles) of value `v`'s buffer under a range's bindings `b`."""
    return sp.buffer_of(v).page.resolve(b)


def with_blocks(sec: OperationWriter, ins, out_v, r: sp.SitesOp) -> tuple[str, list[str]]:  # noqa: ANN001
    """`with` the stage's input pages popped (named i0, i1, ...) and its output page reserved
    (o_blk); returns the line and the names."""
    names = [f"i{k}" for k in range(len(ins))]
    parts = [
        f"{sec.dfb(sp.buffer_of(v), r)}.wait() as {n}" for v, n in zip(ins, names, strict=True)
    ]
    ri = sec.ranges.index(r)
    parts += [  # the constants read at the item's columns (Constant.per_item), as `{name}_blk`
        f"{sec.const_dfb_name(n, sec.const_pages[n][ri])}.wait() as {n}_blk"
        for n, buf in sec.item_consts.items()
        if buf is sp.buffer_of(ins[0])
    ]
    parts.append(f"{sec.dfb(sp.buffer_of(out_v), r)}.reserve() as o_blk")
    return "with " + ", ".join(parts) + ":", names
