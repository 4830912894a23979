"""link for the head ops: tg.head_slice, tg.join and tg.head_matmul, made of the stream and GEMM
sections that exist (an sp.map "copy" with access patterns, matmul_tiles); no stage of their own.

    head_slice   load x[r0, c0 + S] x [h, w] -> map "copy" -> store y[r0 + ti, c0 + tj]
                 (S: the slice's first column, in tiles; the items cut y)
    join         one section per part i: load part[r0, c0] x [h, w] -> map "copy"
                 -> store y[r0 + ti, c0 + O_i + tj] (O_i: the part's first column of y, in
                 tiles; the items cut the PART, recorded as `join` on the section, so tile
                 plans it over the part, docs/passes.md)
    head_matmul per head h: a's columns h*K.. copied to a scratch a_h (M x K), b's rows h*K..
                 to b_h (K x N), the GEMM a_h @ b_h into c_h (M x N); then the join of the c_h
                 into the result. 4H sections: the copies cost DRAM traffic a fused form would
                 not (left for later: a GEMM whose loads carry the offsets needs the GEMM
                 planner to read K off the access pattern).

Offsets are whole tiles: a slice must start on a tile column and every joined part but the last
must be whole tiles wide (its padding would overwrite the next part's columns); anything else is
refused by name with the numbers (NotLowered). The padding of the last tile of a slice or of the
last part is zeroed by the map's `valid`, as every map's is.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    R0,
    SUB_BLOCK,
    TI,
    TJ,
    LinkContext,
    ProgramBuilder,
)
from spatial_dialect.passes.link.matmul import b_block, gemm_section
from spatial_dialect.passes.numerics import Numerics
from spatial_dialect.sp import AccessAttr, Layout, MapOp, Mode, SectionKind, TensorRole
from spatial_dialect.sp.errors import NotLowered
from spatial_dialect.sp.kinds import JOIN_ATTR


def copy_section(
    ctx: LinkContext,
    op: Operation,
    src: sp.TensorOp,
    load: AccessAttr,
    dst: sp.TensorOp,
    store: AccessAttr,
    valid: tuple[int, int],
    s: ProgramBuilder | None = None,
) -> sp.ProgramOp:
    """load src -> map "copy" -> store dst, with the given access patterns; `valid`: the real
    rows and columns of the tensor the items cut."""
    s = s or ProgramBuilder(ctx, op)
    src = s.declare(src if src.parent is None else src.clone())
    dst = s.declare(dst if dst.parent is None else dst.clone())
    fin = s.fifo("in0", src, "h", "w")
    s.load(src, load, fin)
    out = s.fifo("out", dst, "sh", "sw")
    s.stage(MapOp("copy", [fin], [Mode.FULL], out, valid))
    s.store(out, dst, store)
    return s.build(dst.sym_name.data, SectionKind.MAP)


def tile_offset(op: Operation, what: str, columns: int, tile: int) -> int:
    if columns % tile:
        raise NotLowered(
            f"{op.name}: {what} starts at column {columns}, not on a tile column "
            f"(tiles are {tile} wide); only whole-tile offsets have a section form"
        )
    return columns // tile


def link_head_slice(op: tg.HeadSliceOp, ctx: LinkContext) -> sp.ProgramOp:
    start, width = op.column_range()
    off = tile_offset(op, "the slice", start, ctx.tile[1])
    s = ProgramBuilder(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)
    s.why("head_slice", f"columns {start}..{start + width} of @{x.sym_name.data}: from tile {off}")
    load = AccessAttr.of(R0, C0 + off, "h", "w")
    return copy_section(ctx, op, x, load, y, SUB_BLOCK, y.shape2d, s)


def join_parts(
    ctx: LinkContext, op: Operation, parts: list[tuple[sp.TensorOp, int]], y: sp.TensorOp
) -> list[sp.ProgramOp]:
    """One copy section per (part, its first column of y)."""
    tc = ctx.tile[1]
    sections = []
    for i, (part, at) in enumerate(parts):
        rows, cols = part.shape2d
        if i < len(parts) - 1 and cols % tc:
            raise NotLowered(
                f"{op.name}: part {i} is {rows}x{cols}, not whole tiles wide (tiles are {tc} "
                "wide); only the last part may end inside a tile"
            )
        off = tile_offset(op, f"part {i}", at, tc)
        s = ProgramBuilder(ctx, op)
        s.why(JOIN_ATTR, f"part {i}: columns {at}..{at + cols} of @{y.sym_name.data}")
        store = AccessAttr.of(R0 + TI, C0 + off + TJ, "sh", "sw")
        sections.append(copy_section(ctx, op, part, BLOCK, y, store, (rows, cols), s))
    return sections


def link_join(op: tg.JoinOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    probe = ProgramBuilder(ctx, op)
    parts = [probe.input(p, Layout.TILED) for p in op.parts]
    y = probe.output(op.res, Layout.TILED)
    return join_parts(ctx, op, list(zip(parts, op.offsets(), strict=True)), y)


def link_head_matmul(op: tg.HeadMatmulOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    a_t, c_t = op.a.type, op.res.type
    assert isinstance(a_t, TensorType) and isinstance(c_t, TensorType)
    if isinstance(a_t.element_type, IntegerType):
        raise NotLowered(f"{op.name}: an integer head_matmul has no section form yet")
    in_dtype, out_dtype = str(a_t.element_type), str(c_t.element_type)
    ctx.check_dtype(op, in_dtype, matmul=True)
    ctx.check_dtype(op, out_dtype)
    acc_dtype = Numerics.of(ctx.target, in_dtype, out_dtype).acc
    heads, k, n = op.head_sizes()
    m = op.shape(op.a)[0]
    tr, tc = ctx.tile
    if heads > 1 and (k % tc or k % tr):
        raise NotLowered(
            f"{op.name}: a head's K of {k} is not whole {tr}x{tc} tiles; only whole-tile "
            "head blocks have a section form"
        )
    probe = ProgramBuilder(ctx, op)
    a, b = probe.input(op.a, Layout.TILED), probe.input(op.b, Layout.TILED)
    y = probe.output(op.res, Layout.TILED)
    base = y.sym_name.data
    sections: list[sp.ProgramOp] = []
    parts: list[tuple[sp.TensorOp, int]] = []
    for h in range(heads):
        a_h = ctx.scratch(f"{base}__a{h}", (m, k), a_t.element_type)
        b_h = ctx.scratch(f"{base}__b{h}", (k, n), a_t.element_type)
        c_h = ctx.scratch(f"{base}__c{h}", (m, n), c_t.element_type)
        kt = k // tc
        sections.append(
            copy_section(
                ctx, op, a, AccessAttr.of(R0, C0 + h * kt, "h", "w"), a_h, SUB_BLOCK, (m, k)
            )
        )
        sections.append(
            copy_section(
                ctx, op, b, AccessAttr.of(R0 + h * (k // tr), C0, "h", "w"), b_h, SUB_BLOCK, (k, n)
            )
        )
        sections.append(gemm(ctx, op, _read(ctx, a_h), _read(ctx, b_h), c_h, acc_dtype))
        parts.append((_read(ctx, c_h), h * n))
    return [*sections, *join_parts(ctx, op, parts, y)]


def _read(ctx: LinkContext, t: sp.TensorOp) -> sp.TensorOp:
    """A scratch tensor as the next section reads it."""
    return ctx.scratch(t.sym_name.data, t.shape2d, t.element_type, TensorRole.INPUT)


def gemm(
    ctx: LinkContext,
    op: Operation,
    a: sp.TensorOp,
    b: sp.TensorOp,
    c: sp.TensorOp,
    acc_dtype: str,
) -> sp.ProgramOp:
    """The GEMM section of link/matmul.py over tensors of the compiler's own."""
    s = ProgramBuilder(ctx, op)
    a, b, c = (s.declare(t if t.parent is None else t.clone()) for t in (a, b, c))
    in0 = s.fifo("in0", a, "h", "kw")
    in1 = s.fifo("in1", b, *b_block().extent.exprs)
    return gemm_section(s, a, b, c, in0, in1, acc_dtype)


LINKERS = {
    tg.HeadSliceOp: link_head_slice,
    tg.JoinOp: link_join,
    tg.HeadMatmulOp: link_head_matmul,
}
"""The ops this module links."""
