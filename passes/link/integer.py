"""link for the integer ops of a quantized pipeline: tg.int_requant and tg.int_clamp, each one
map section (link/maps.py's shape) whose map computes exactly in integers:

    int_requant  load x (i32) -> map "requant" scalar SCALE offset ZP -> store y (i8)
    int_clamp    load x -> map "clamp" lo LO hi HI -> store y

The datatype check refuses a chip without the integer datatypes (UnsupportedDatatype), as for
every section.
"""

from __future__ import annotations

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import BLOCK, SUB_BLOCK, LinkContext, ProgramBuilder
from spatial_dialect.sp import Layout, MapOp, Mode, SectionKind


def _map(
    op: tg.TgOp, ctx: LinkContext, kind: str, scalar: float | None, ints: dict[str, int]
) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)  # type: ignore[attr-defined]
    fin = s.fifo("in0", x, "h", "w")
    s.load(x, BLOCK, fin)
    out = s.fifo("out", y, "sh", "sw")
    s.stage(MapOp(kind, [fin], [Mode.FULL], out, y.shape2d, scalar=scalar, ints=ints))
    s.store(out, y, SUB_BLOCK)
    return s.build(y.sym_name.data, SectionKind.MAP)


def link_int_requant(op: tg.IntRequantOp, ctx: LinkContext) -> sp.ProgramOp:
    return _map(op, ctx, "requant", op.scale.value.data, {"offset": op.zero()})


def link_int_clamp(op: tg.IntClampOp, ctx: LinkContext) -> sp.ProgramOp:
    lo, hi = op.bounds()
    return _map(op, ctx, "clamp", None, {"lo": lo, "hi": hi})


LINKERS = {tg.IntRequantOp: link_int_requant, tg.IntClampOp: link_int_clamp}
"""The ops this module links."""
