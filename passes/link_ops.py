"""link for the tg ops that are one section each: pointwise ops, swiglu, transpose, rope,
gather_rows, set_rows, arg-max; and the layout bridges (tilize, untilize).

Every section here has the shape of the GEMM's (link.py): loads from DRAM tensors into FIFOs
through symbolic access patterns, one stage that computes, a store; only the stage differs
(sp_ops says what each executes). The sizes are the symbols tile binds: an item is a block of
h x w tiles of the tensor the section writes, the compute stage works in sub-blocks of sh x sw
tiles (what the accumulator holds at once), K loops walk blocks of kw tiles.

    pointwise   load x[r0, c0] x [h, w] (a 1 x C operand of add/sub/mul: [0, c0] x [1, w],
                broadcast over rows) -> map -> store y[r0 + ti, c0 + tj] x [sh, sw]
    transpose   load x[c0, r0] x [w, h] -> map "transpose" -> store as above
    rope        load x[r0, c0] x [h, w], cos and sin [r0, 0] x [h, D/2 tiles] -> rope -> store;
                an item holds whole heads (w a multiple of the head's tiles)
    gather_rows gather @table by @ids[r0, c0] x [1, w] -> store y[r0, c0] x [1, w]: each row
                of the page is the table's row named by its id, read at run time (range-checked)
    set_rows    load rows[r0, c0] x [1, w] -> scatter into the cache at the runtime position.
                The cache is carried state, updated in place (one DRAM tensor for the cache and
                the result, link_context.carried_names) when nothing reads the old cache later;
                otherwise a copy section first makes the result, and the rows land in the copy.
    argmax      load x[c0, k0] x [1, kw] (K loop over the row's tiles) -> argmax (running
                maximum per row in local memory) -> store idx[r0, c0] x [1, 1]: one i32 tile of
                the result vector per tile row of x.

Layouts the sections want (the prelude's agreement, link_context): a gather reads its table and
writes its rows in `rows` layout (a row lookup moves whole rows), an arg-max scans rows (`rows`),
a pointwise op over a matrix is tiled (as the prelude decides), and the others take the layout
their tensors have. A shape an op cannot take is refused by name (NotLowered): a rope whose heads
straddle tiles (head_dim neither a multiple nor a divisor of the tile width).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link_context import (
    BRIDGE_OPS,
    F32,
    Section,
    SectionContext,
)
from spatial_dialect.sp import (
    AccessAttr,
    ArgmaxOp,
    GatherOp,
    Layout,
    MapOp,
    Mode,
    RopeOp,
    ScatterOp,
    TensorRole,
    loop_var,
)
from spatial_dialect.sp.errors import NotLowered

R0, C0, K0, TI, TJ = (loop_var(v) for v in ("r0", "c0", "k0", "ti", "tj"))
ZERO = AffineExpr.constant(0)

BLOCK = AccessAttr.of(R0, C0, "h", "w")
"""The item's block: what a map reads of each full operand."""
SUB_BLOCK = AccessAttr.of(R0 + TI, C0 + TJ, "sh", "sw")
"""One sub-block of the item: what a compute stage pushes and the store writes."""
ROW_OPERAND = AccessAttr.of(ZERO, C0, 1, "w")
"""A 1 x C operand broadcast over rows: the item's columns of its one row."""


def valid(value: SSAValue) -> tuple[int, int]:
    """The real (unpadded) rows and columns of a tensor value."""
    shape = value.type.get_shape()  # type: ignore[attr-defined]
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def map_section(
    ctx: SectionContext,
    op: Operation | str,
    kind: str,
    operands: list[tuple[sp.TensorOp, str, AccessAttr]],
    result: sp.TensorOp,
    s: Section | None = None,
    group: int | None = None,
    scalar: float | None = None,
) -> sp.ProgramOp:
    """A map section: each operand (tensor, mode, access) loaded into its own FIFO, the map,
    the store of sub-blocks."""
    s = s or Section(ctx, op)
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
    return s.build(result.sym_name.data)


# ── Pointwise ─────────────────────────────────────────────────────────────────────────────────

UNARY_KINDS: dict[type[Operation], str] = {
    tg.SiluOp: "silu",
    tg.ReluOp: "relu",
    tg.SigmoidOp: "sigmoid",
    tg.ScaleOp: "scale",
    tg.SoftcapOp: "softcap",
}


def link_unary(op: tg.UnaryOp, ctx: SectionContext) -> sp.ProgramOp:
    if isinstance(op, tg.GeluOp):
        kind = "gelu_tanh" if op.approximate.data == "tanh" else "gelu"
    else:
        kind = UNARY_KINDS[type(op)]
    scalar = None
    if isinstance(op, tg.ScaleOp):
        scalar = op.factor.value.data
    elif isinstance(op, tg.SoftcapOp):
        scalar = op.cap.value.data
    s = Section(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)
    return map_section(ctx, op, kind, [(x, Mode.FULL, BLOCK)], y, s, scalar=scalar)


BINARY_KINDS = {tg.AddOp: "add", tg.SubOp: "sub", tg.MulOp: "mul"}


def link_binary(op: tg.BinaryOp, ctx: SectionContext) -> sp.ProgramOp:
    kind = BINARY_KINDS[type(op)]
    s = Section(ctx, op)
    a, b = s.input(op.a, Layout.TILED), s.input(op.b, Layout.TILED)
    y = s.output(op.res, Layout.TILED)
    if valid(op.b)[0] == 1 and valid(op.a)[0] > 1:
        # a 1 x C operand broadcast over the rows of a
        operands = [(a, Mode.FULL, BLOCK), (b, Mode.ROWS, ROW_OPERAND)]
        kind = f"{kind}_row"
    else:
        operands = [(a, Mode.FULL, BLOCK), (b, Mode.FULL, BLOCK)]
    return map_section(ctx, op, kind, operands, y, s)


def link_swiglu(op: tg.SwigluOp, ctx: SectionContext) -> sp.ProgramOp:
    s = Section(ctx, op)
    gate, up = s.input(op.gate, Layout.TILED), s.input(op.up, Layout.TILED)
    y = s.output(op.res, Layout.TILED)
    return map_section(ctx, op, "swiglu", [(gate, Mode.FULL, BLOCK), (up, Mode.FULL, BLOCK)], y, s)


def link_transpose(op: tg.TransposeOp, ctx: SectionContext) -> sp.ProgramOp:
    s = Section(ctx, op)
    x, y = s.input(op.x, Layout.TILED), s.output(op.res, Layout.TILED)
    access = AccessAttr.of(C0, R0, "w", "h")
    return map_section(ctx, op, "transpose", [(x, Mode.TRANSPOSED, access)], y, s)


def bridge(
    ctx: SectionContext, value: SSAValue, src: str, src_layout: Layout, dst: str, dst_layout: Layout
) -> sp.ProgramOp:
    """The ONE section that gives a tensor's data in the other layout: read `src` in
    `src_layout`, write `dst` in `dst_layout` (a tilize or an untilize; the data is the same).
    One of the two is the tensor the prelude laid out, the other its twin."""
    kind = BRIDGE_OPS[dst_layout]
    real = ctx.names[value]
    t = value.type
    assert isinstance(t, TensorType)
    tiles, storage = ctx.tiles(*valid(value)), ctx.storage(str(t.element_type))
    returned = dst == real and value in ctx.results
    role = TensorRole.OUTPUT if returned else TensorRole.SCRATCH
    src_t = sp.TensorOp(src, t, tiles, TensorRole.INPUT, src_layout, storage)
    dst_t = sp.TensorOp(dst, t, tiles, role, dst_layout, storage)
    s = Section(ctx, kind)
    twin_layout = dst_layout if dst != real else src_layout
    s.why(
        "bridge",
        f"@{real} is {ctx.layout(value).value} for the whole function and a section "
        f"{'reads' if dst != real else 'writes'} it in {twin_layout.value}",
    )
    return map_section(ctx, kind, kind, [(src_t, Mode.FULL, BLOCK)], dst_t, s)


# ── Rope ──────────────────────────────────────────────────────────────────────────────────────


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


def link_rope(op: tg.RopeOp, ctx: SectionContext) -> sp.ProgramOp:
    d = op.head_dim.value.data
    tc = ctx.tile[1]
    per_head = head_tiles(op, d, tc)
    s = Section(ctx, op)
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
    s.stage(RopeOp(op.style.data, in0, in1, in2, out, d, y.shape2d))
    s.store(out, y, SUB_BLOCK)
    held = f"{per_head} tile(s) per head" if d % tc == 0 else f"{tc // d} heads per tile"
    s.why("heads", f"an item holds whole heads of {d} columns: {held}")
    return s.build(y.sym_name.data)


# ── Rows by a runtime index ───────────────────────────────────────────────────────────────────


def link_gather(op: tg.GatherRowsOp, ctx: SectionContext) -> sp.ProgramOp:
    s = Section(ctx, op)
    table, ids = s.input(op.table, Layout.ROWS), s.input(op.ids)
    y = s.output(op.res, Layout.ROWS)
    out = s.fifo("out", y, 1, "w")
    count = valid(op.res)[0]
    s.stage(
        GatherOp(table.sym_name.data, ids.sym_name.data, AccessAttr.of(R0, C0, 1, "w"), count, out)
    )
    s.store(out, y, AccessAttr.of(R0, C0, 1, "w"))
    return s.build(y.sym_name.data)


def link_set_rows(op: tg.SetRowsOp, ctx: SectionContext) -> list[sp.ProgramOp]:
    in_place = ctx.names[op.res] == ctx.names[op.cache]
    sections = []
    if not in_place:
        s = Section(ctx, op)
        cache, copy = s.input(op.cache), s.output(op.res)
        s.why("carried", f"copied: the old @{cache.sym_name.data} is read after the update")
        sections.append(map_section(ctx, op, "copy", [(cache, Mode.FULL, BLOCK)], copy, s))
    s = Section(ctx, op)
    rows, pos = s.input(op.rows), s.input(op.pos)
    result = ctx.tensor(op.res, TensorRole.OUTPUT)
    s.declare(result)
    if in_place:
        s.why("carried", f"in place: @{result.sym_name.data} is the cache and its update")
    in0 = s.fifo("in0", rows, 1, "w")
    block = AccessAttr.of(R0, C0, 1, "w")
    s.load(rows, block, in0)
    count = valid(op.rows)[0]
    s.stage(ScatterOp(result.sym_name.data, pos.sym_name.data, block, count, in0))
    sections.append(s.build(result.sym_name.data))
    return sections


def link_argmax(op: tg.ArgmaxOp, ctx: SectionContext) -> sp.ProgramOp:
    s = Section(ctx, op)
    x, idx = s.input(op.x, Layout.ROWS), s.output(op.res)
    in0 = s.fifo("in0", x, 1, "kw")
    out = s.fifo("out", idx, 1, 1)
    best = s.interm("best", F32, 1, 2)
    s.load(x, AccessAttr.of(C0, K0, 1, "kw"), in0)
    rows, cols = valid(op.x)
    s.stage(ArgmaxOp(in0, out, best, cols, rows))
    s.store(out, idx, AccessAttr.of(R0, C0, 1, 1))
    return s.build(idx.sym_name.data)


LINKERS = {
    tg.SiluOp: link_unary,
    tg.ReluOp: link_unary,
    tg.SigmoidOp: link_unary,
    tg.GeluOp: link_unary,
    tg.ScaleOp: link_unary,
    tg.SoftcapOp: link_unary,
    tg.AddOp: link_binary,
    tg.SubOp: link_binary,
    tg.MulOp: link_binary,
    tg.SwigluOp: link_swiglu,
    tg.TransposeOp: link_transpose,
    tg.RopeOp: link_rope,
    tg.GatherRowsOp: link_gather,
    tg.SetRowsOp: link_set_rows,
    tg.ArgmaxOp: link_argmax,
}
"""The ops this module links."""
