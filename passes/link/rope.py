"""link for tg.rope: one section, an item holding whole heads.

    rope        load x[r0, c0] x [h, w], cos and sin [r0, 0] x [h, D/2 tiles] -> sp.rope -> store;
                an item holds whole heads (w a multiple of the head's tiles)

The section takes the layout its tensors have. A rope whose heads straddle tiles (head_dim
neither a multiple nor a divisor of the tile width) is refused by name (NotLowered).
"""

from __future__ import annotations

from xdsl.ir import Operation

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    R0,
    SUB_BLOCK,
    ZERO,
    LinkContext,
    ProgramBuilder,
)
from spatial_dialect.sp import AccessAttr, SectionKind
from spatial_dialect.sp.errors import NotLowered


def head_tiles(op: Operation, head_dim: int, tile: int, what: str = "head_dim") -> int:
    """Tiles one head spans (1 where a tile holds whole heads); NotLowered where heads straddle
    tile boundaries."""
    if head_dim % tile == 0:
        return head_dim // tile
    if tile % head_dim == 0:
        return 1
    raise NotLowered(
        f"{op.name}: {what} {head_dim} neither fills whole {tile}-column tiles nor divides one, "
        "so heads straddle tiles"
    )


def link_rope(op: tg.RopeOp, ctx: LinkContext) -> sp.ProgramOp:
    d = op.head_dim.value.data
    tc = ctx.tile[1]
    per_head = head_tiles(op, d, tc)
    s = ProgramBuilder(ctx, op)
    x, y = s.input(op.x), s.output(op.res)
    cos, sin = s.input(op.cos), s.input(op.sin)
    half = ctx.tiles(1, d // 2)[1]
    in0 = s.fifo("in0", x, "h", "w")
    in1 = s.fifo("cos", cos, "h", half)
    in2 = s.fifo("sin", sin, "h", half)
    out = s.fifo("out", y, "sh", "sw")
    s.load(x, BLOCK, in0)
    s.load(cos, AccessAttr.of(R0, ZERO, "h", half), in1)
    s.load(sin, AccessAttr.of(R0, ZERO, "h", half), in2)
    s.stage(sp.RopeOp(op.style.data, in0, in1, in2, out, d, y.shape2d))
    s.store(out, y, SUB_BLOCK)
    held = f"{per_head} tile(s) per head" if d % tc == 0 else f"{tc // d} heads per tile"
    s.why("heads", f"an item holds whole heads of {d} columns: {held}")
    return s.build(y.sym_name.data, SectionKind.ROPE)


LINKERS = {tg.RopeOp: link_rope}
"""The ops this module links."""
