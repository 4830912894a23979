"""link for the map sections: pointwise ops (unary, binary, swiglu), transpose, and the layout
bridges (tilize, untilize); `map_section` also builds the copy a `tg.set_rows` makes first and
the apply step of a blocked row reduction.

Every section here has the shape of the GEMM's (link/matmul.py): loads from DRAM tensors into
FIFOs through symbolic access patterns, one stage that computes, a store; only the stage differs
(sp's compute ops say what each executes). The sizes are the symbols tile binds: an item is a
block of h x w tiles of the tensor the section writes, the compute stage works in sub-blocks of
sh x sw tiles (what the accumulator holds at once).

    pointwise   load x[r0, c0] x [h, w] (a 1 x C operand of add/sub/mul: [0, c0] x [1, w],
                broadcast over rows) -> map -> store y[r0 + ti, c0 + tj] x [sh, sw]
    transpose   load x[c0, r0] x [w, h] -> map "transpose" -> store as above
    bridge      load src[r0, c0] x [h, w] -> map "tilize" / "untilize" -> store dst

A pointwise op over a matrix is tiled (as the prelude decides); a bridge reads a tensor in one
layout and writes its twin in the other (link/context.py).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    BRIDGE_OPS,
    C0,
    R0,
    ROW_OPERAND,
    SUB_BLOCK,
    LinkContext,
    ProgramBuilder,
    Relayout,
    valid,
)
from spatial_dialect.sp import AccessAttr, Layout, MapOp, Mode, SectionKind, TensorRole
from spatial_dialect.sp.errors import NotLowered
from spatial_dialect.sp.kinds import MAP_KINDS

BRIDGE_KINDS = {"tilize": SectionKind.TILIZE, "untilize": SectionKind.UNTILIZE}


def map_section(
    ctx: LinkContext,
    op: Operation | str,
    kind: str,
    operands: list[tuple[sp.TensorOp, str, AccessAttr]],
    result: sp.TensorOp,
    s: ProgramBuilder | None = None,
    group: int | None = None,
    scalar: float | None = None,
    section: SectionKind = SectionKind.MAP,
) -> sp.ProgramOp:
    """A map section: each operand (tensor, mode, access) loaded into its own FIFO, the map,
    the store of sub-blocks."""
    s = s or ProgramBuilder(ctx, op)
    for t in (*(t for t, _, _ in operands), result):
        s.declare(t)
    pages = {Mode.FULL: ("h", "w"), Mode.ROWS: (1, "w"), Mode.COLS: ("h", 1)}
    pages[Mode.TRANSPOSED] = ("w", "h")
    ins = []
    for i, (t, mode, access) in enumerate(operands):
        fifo = s.fifo(f"in{i}", t, *pages[mode])
        s.load(t, access, fifo)
        ins.append(fifo)
    out = s.fifo("out", result, "sh", "sw")
    modes = [mode for _, mode, _ in operands]
    s.stage(MapOp(kind, ins, modes, out, result.shape2d, group, scalar))
    s.store(out, result, SUB_BLOCK)
    return s.build(result.sym_name.data, section)


# ── Pointwise ─────────────────────────────────────────────────────────────────────────────────

UNARY_OPS = tuple(op for op in tg.TG.operations if issubclass(op, tg.UnaryOp))
"""Every pointwise tg op of one operand. Each is the map kind of its own name (`tg.silu` is kind
`silu`), its scalar the property its kind names (`MapKind.scalar`: scale's `factor`), so a new
unary op links with no entry here; gelu alone picks between two kinds."""


def unary_kind(op: tg.UnaryOp) -> str:
    if isinstance(op, tg.GeluOp):
        return "gelu_tanh" if op.approximate.data == "tanh" else "gelu"
    return op.name.removeprefix("tg.")


def link_unary(op: tg.UnaryOp, ctx: LinkContext) -> sp.ProgramOp:
    kind = unary_kind(op)
    if kind not in MAP_KINDS:
        raise NotLowered(f"{op.name}: no sp.map kind {kind!r} computes it (sp/kinds.py)")
    prop = MAP_KINDS[kind].scalar
    scalar = getattr(op, prop).value.data if prop is not None else None
    s = ProgramBuilder(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)
    return map_section(ctx, op, kind, [(x, Mode.FULL, BLOCK)], y, s, scalar=scalar)


BINARY_KINDS = {tg.AddOp: "add", tg.SubOp: "sub", tg.MulOp: "mul"}


def link_binary(op: tg.BinaryOp, ctx: LinkContext) -> sp.ProgramOp:
    kind = BINARY_KINDS[type(op)]
    s = ProgramBuilder(ctx, op)
    a, b = s.input(op.a, Layout.TILED), s.input(op.b, Layout.TILED)
    y = s.output(op.res, Layout.TILED)
    if valid(op.b)[0] == 1 and valid(op.a)[0] > 1:
        # a 1 x C operand broadcast over the rows of a
        operands = [(a, Mode.FULL, BLOCK), (b, Mode.ROWS, ROW_OPERAND)]
        kind = f"{kind}_row"
    else:
        operands = [(a, Mode.FULL, BLOCK), (b, Mode.FULL, BLOCK)]
    return map_section(ctx, op, kind, operands, y, s)


def link_swiglu(op: tg.SwigluOp, ctx: LinkContext) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    gate, up = s.input(op.gate, Layout.TILED), s.input(op.up, Layout.TILED)
    y = s.output(op.res, Layout.TILED)
    return map_section(ctx, op, "swiglu", [(gate, Mode.FULL, BLOCK), (up, Mode.FULL, BLOCK)], y, s)


def link_transpose(op: tg.TransposeOp, ctx: LinkContext) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)
    access = AccessAttr.of(C0, R0, "w", "h")
    return map_section(ctx, op, "transpose", [(x, Mode.TRANSPOSED, access)], y, s)


def bridge(ctx: LinkContext, relayout: Relayout) -> sp.ProgramOp:
    """The ONE section that gives a tensor's data in the other layout: read `src` in
    `src_layout`, write `dst` in `dst_layout` (a tilize or an untilize; the data is the same).
    One of the two is the tensor the prelude laid out, the other its twin."""
    value, src, src_layout = relayout.value, relayout.src, relayout.src_layout
    dst, dst_layout = relayout.dst, relayout.dst_layout
    kind = BRIDGE_OPS[dst_layout]
    real = ctx.names[value]
    t = value.type
    assert isinstance(t, TensorType)
    tiles, storage = ctx.tiles(*valid(value)), ctx.storage(str(t.element_type))
    returned = dst == real and value in ctx.results
    role = TensorRole.OUTPUT if returned else TensorRole.SCRATCH
    src_t = sp.TensorOp(src, t, tiles, TensorRole.INPUT, src_layout, storage)
    dst_t = sp.TensorOp(dst, t, tiles, role, dst_layout, storage)
    s = ProgramBuilder(ctx, kind)
    twin_layout = dst_layout if dst != real else src_layout
    s.why(
        "bridge",
        f"@{real} is {ctx.layout(value).value} for the whole function and a section "
        f"{'reads' if dst != real else 'writes'} it in {twin_layout.value}",
    )
    return map_section(
        ctx, kind, kind, [(src_t, Mode.FULL, BLOCK)], dst_t, s, section=BRIDGE_KINDS[kind]
    )


LINKERS = {
    **dict.fromkeys(UNARY_OPS, link_unary),
    tg.AddOp: link_binary,
    tg.SubOp: link_binary,
    tg.MulOp: link_binary,
    tg.SwigluOp: link_swiglu,
    tg.TransposeOp: link_transpose,
}
"""The ops this module links."""
