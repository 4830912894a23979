"""link for the row reductions: rms_norm (with a residual; in groups of `width` columns, Qwen3's
per-head q/k norm), layer_norm, softmax, l2_norm (per head, the Gated DeltaNet's q and k); and
arg-max, which scans rows too.

    argmax      load x[c0, k0] x [1, kw] (K loop over the row's tiles) -> argmax (running
                maximum per row in local memory) -> store idx[r0, c0] x [1, 1]: one i32 tile of
                the result vector per tile row of x. It reads x in `rows` layout.

A row reduction takes the layout of the tensors it touches (the prelude ties them); it reads and
writes in one layout and wants none of its own. What link decides is the FORM, from the width of
one group (the whole row, or `width` columns) against the target's f32 accumulator (statistics
are f32; the accumulator holds the group's tiles while they are normalized):

- whole (the group fits the accumulator, and its smallest plan a site's memory): ONE section. An item is a block of h tile rows by the group's tiles;
  `sp.row_reduce whole` computes the statistics of each row's group and applies them.
- blocked (docs/passes.md#link-wide-rows-are-blocked-never-refused: a row too wide for a site's accumulator is linked in the blocked form, never
  refused): THREE sections that each fit. The block is the widest divisor of the group's tiles
  that fits the accumulator and whose partials section fits a site (one tile always does).
    partials  @y__partials (f32, one tile per block): `row_reduce partial` of each block of the
              row (x + residual for a residual norm)
    combine   @y__stats (f32, one tile per group): `row_reduce combine` merges a group's
              partials over a K loop (any number of blocks), rms 1/sqrt(mean + eps), layer norm
              the mean and 1/sqrt(var + eps), softmax the maximum and 1/sum
    apply     @y: the map `rms_apply` / `layer_apply` / `softmax_apply` / `l2_apply` reads the group's stats
              as a column broadcast and the weight (bias) as a row broadcast
  No intermediate is rounded: the residual sum is recomputed where it is needed, the statistics
  stay f32, so the blocked form computes what the whole form does.

A group narrower than the row must fill whole tiles (a group boundary inside a tile would put two
groups in one tile column); otherwise the op is refused by name (NotLowered).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    F32,
    K0,
    R0,
    SUB_BLOCK,
    ZERO,
    LinkContext,
    ProgramBuilder,
    valid,
)
from spatial_dialect.passes.link.maps import map_section
from spatial_dialect.passes.site_footprint import buffer_bytes, memory_buffers
from spatial_dialect.sp import (
    AccessAttr,
    ArgmaxOp,
    Layout,
    Mode,
    RowReduceOp,
    SectionKind,
    TensorRole,
)
from spatial_dialect.sp.errors import NotLowered


def _fits(ctx: LinkContext, program: sp.ProgramOp, width: int) -> bool:
    """Whether a row section's smallest plan (one tile row, `width` tiles) fits a site: the
    footprint size-buffers lays out, at the budget tile plans against."""
    bindings = {"h": 1, "w": width, "sh": 1, "sw": width, "kw": 1, "subs": 1}
    return buffer_bytes(memory_buffers(program), bindings) <= ctx.target.local_mem_max_bytes


def _operands(op: Operation) -> tuple[str, SSAValue, list[SSAValue], list[SSAValue], int, float]:
    """(kind, x, streamed operands besides x, row operands, group width, eps) of a row op."""
    if isinstance(op, tg.RmsNormOp):
        rest = [op.residual] if op.residual is not None else []
        return "rms_norm", op.x, rest, [op.weight], op.group_width(), op.eps.value.data
    if isinstance(op, tg.LayerNormOp):
        width = valid(op.x)[1]
        return "layer_norm", op.x, [], [op.weight, op.bias], width, op.eps.value.data
    if isinstance(op, tg.L2NormOp):
        return "l2_norm", op.x, [], [], op.group_width(), op.eps.value.data
    assert isinstance(op, tg.SoftmaxOp)
    return "softmax", op.x, [], [], valid(op.x)[1], 0.0


def link_row(op: Operation, ctx: LinkContext) -> sp.ProgramOp | list[sp.ProgramOp]:
    kind, x_value, streamed, row_values, width, eps = _operands(op)
    rows, cols = valid(x_value)
    tc = ctx.tile[1]
    if width != cols and width % tc:
        raise NotLowered(
            f"{op.name}: groups of {width} columns do not fill whole {tc}-column tiles (x has "
            f"{cols} columns), so two groups would share a tile"
        )
    group_tiles = ctx.tiles(1, width)[1]
    cap = ctx.target.acc_tiles("f32")
    res = op.results[0]
    if group_tiles <= cap:
        s = ProgramBuilder(ctx, op)
        x = s.input(x_value)
        others = [s.input(v) for v in streamed]
        weights = [s.input(v) for v in row_values]
        y = s.output(res)
        ins = [s.fifo(f"in{i}", t, "h", "w") for i, t in enumerate([x, *others])]
        for t, fifo in zip([x, *others], ins, strict=True):
            s.load(t, BLOCK, fifo)
        for t in weights:
            fifo = s.fifo(t.sym_name.data, t, 1, "w")
            s.load(t, AccessAttr.of(ZERO, ZERO, 1, "w"), fifo)
            ins.append(fifo)
        out = s.fifo("out", y, "sh", "sw")
        eps_ = None if kind == "softmax" else eps
        s.stage(RowReduceOp("whole", kind, ins, out, width, cols, rows, eps=eps_))
        s.store(out, y, SUB_BLOCK)
        s.why(
            "row",
            f"whole: a group of {group_tiles} tile(s) fits the {cap}-tile f32 accumulator and "
            "a site's local memory",
        )
        whole = s.build(y.sym_name.data, SectionKind.ROW_REDUCE)
        if _fits(ctx, whole, group_tiles):
            return whole
        ctx.sections.discard(whole.sym_name.data)
    # The widest block that divides the group, fits the accumulator and whose partials fit a
    # site; a block of one tile always remains.
    values = (x_value, streamed, row_values)
    for block in sorted(
        (d for d in range(1, min(cap, group_tiles) + 1) if group_tiles % d == 0), reverse=True
    ):
        sections = _blocked(op, ctx, kind, values, (width, eps), block)
        if block == 1 or _fits(ctx, sections[0], block):
            return sections
        for p in sections:
            ctx.sections.discard(p.sym_name.data)
    raise AssertionError("a block of one tile is always linked")


def _blocked(
    op: Operation,
    ctx: LinkContext,
    kind: str,
    values: tuple[SSAValue, list[SSAValue], list[SSAValue]],
    numbers: tuple[int, float],
    block: int,
) -> list[sp.ProgramOp]:
    x_value, streamed, row_values = values
    width, eps = numbers
    rows, cols = valid(x_value)
    tc = ctx.tile[1]
    group_tiles = ctx.tiles(1, width)[1]
    groups = 1 if width == cols else cols // width
    per_group = group_tiles // block
    res = op.results[0]
    name = ctx.names[res]
    partials_shape = (rows, groups * per_group * tc)
    stats_shape = (rows, groups * tc)
    cap = ctx.target.acc_tiles("f32")
    too = "wider than the" if group_tiles > cap else "too wide for a site's memory with the"
    why = (
        f"blocked: a group of {group_tiles} tiles is {too} {cap}-tile f32 accumulator; "
        f"{per_group} block(s) of {block} tile(s) per group: partials, combine, apply"
    )
    eps_ = None if kind == "softmax" else eps

    # 1. partial statistics of each block
    s = ProgramBuilder(ctx, op)
    x = s.input(x_value)
    others = [s.input(v) for v in streamed]
    partials = s.declare(ctx.scratch(f"{name}__partials", partials_shape, F32))
    ins = [s.fifo(f"in{i}", t, "h", "w") for i, t in enumerate([x, *others])]
    for t, fifo in zip([x, *others], ins, strict=True):
        s.load(t, BLOCK, fifo)
    out = s.fifo("out", F32, "h", 1)
    s.stage(RowReduceOp("partial", kind, ins, out, width, cols, rows, block=block * tc))
    s.store(out, partials, AccessAttr.of(R0, C0 if block == 1 else C0 // block, "h", 1))
    s.why("row", why)
    first = s.build(partials.sym_name.data, SectionKind.ROW_REDUCE)

    # 2. combine each group's partials over a K loop
    s = ProgramBuilder(ctx, op)
    partials_in = s.declare(
        ctx.scratch(partials.sym_name.data, partials_shape, F32, TensorRole.INPUT)
    )
    stats = s.declare(ctx.scratch(f"{name}__stats", stats_shape, F32))
    in0 = s.fifo("in0", F32, "h", "kw")
    col: AffineExpr = K0 if groups == 1 else C0 * per_group + K0
    s.load(partials_in, AccessAttr.of(R0, col, "h", "kw"), in0)
    out = s.fifo("out", F32, "h", 1)
    s.stage(RowReduceOp("combine", kind, [in0], out, width, cols, rows, block * tc, eps_))
    s.store(out, stats, AccessAttr.of(R0, C0, "h", 1))
    s.why("row", why)
    second = s.build(stats.sym_name.data, SectionKind.ROW_REDUCE)

    # 3. apply the statistics: a map over the row
    s = ProgramBuilder(ctx, op)
    x = s.input(x_value)
    others = [s.input(v) for v in streamed]
    weights = [s.input(v) for v in row_values]
    stats_in = s.declare(ctx.scratch(stats.sym_name.data, stats_shape, F32, TensorRole.INPUT))
    y = s.output(res)
    grouped = groups > 1
    stats_col = C0 // group_tiles if grouped else ZERO
    weight_col = C0 % group_tiles if grouped else C0
    operands = [(x, Mode.FULL, BLOCK), *((t, Mode.FULL, BLOCK) for t in others)]
    operands.append((stats_in, Mode.COLS, AccessAttr.of(R0, stats_col, "h", 1)))
    operands += [(t, Mode.ROWS, AccessAttr.of(ZERO, weight_col, 1, "w")) for t in weights]
    s.why("row", why)
    kinds = {
        "rms_norm": "rms_apply",
        "layer_norm": "layer_apply",
        "softmax": "softmax_apply",
        "l2_norm": "l2_apply",
    }
    third = map_section(
        ctx, op, kinds[kind], operands, y, s, group=group_tiles if grouped else None
    )
    return [first, second, third]


def link_rms_stats(op: tg.RmsStatsOp, ctx: LinkContext) -> sp.ProgramOp | list[sp.ProgramOp]:
    """The chip's share of each row's sum of squares (`sum_squares`), stored as the rows x 1
    f32 result (column 0 of a tile): ONE `partial` section where one block over all the chip's
    columns fits the f32 accumulator and a site; else the blocked form's first two steps, the
    partials of the widest block that fits and their `combine`, whose finish is their sum (a
    real model's columns: 4096 / 2 against Tensix's 4 tiles), never refused."""
    rows, cols = valid(op.x)
    tiles = ctx.tiles(1, cols)[1]
    cap = ctx.target.acc_tiles("f32")
    if tiles <= cap:
        program = _stats_partial(op, ctx, tiles, None)
        if _fits(ctx, program, tiles):
            return program
        ctx.sections.discard(program.sym_name.data)
    for block in sorted((d for d in range(1, min(cap, tiles) + 1) if tiles % d == 0), reverse=True):
        if block == tiles:
            continue  # the one-block form, above
        first = _stats_partial(op, ctx, block, tiles // block)
        if block == 1 or _fits(ctx, first, block):
            return [first, _stats_combine(op, ctx, block, tiles // block)]
        ctx.sections.discard(first.sym_name.data)
    raise AssertionError("a block of one tile is always linked")


def _stats_why(ctx: LinkContext, cols: int, block: int, blocks: int | None) -> str:
    cap = ctx.target.acc_tiles("f32")
    if blocks is None:
        return (
            f"distributed rms_norm, first half: one block of {block} tile(s) over the chip's "
            f"{cols} columns (the {cap}-tile f32 accumulator holds it) sums each row's squares"
        )
    tiles = block * blocks
    too = "wider than the" if tiles > cap else "too wide for a site's memory with the"
    return (
        f"distributed rms_norm, first half: the chip's {cols} columns are {tiles} tiles, "
        f"{too} {cap}-tile f32 accumulator: {blocks} block(s) of {block} tile(s), their sums "
        "of squares summed (partials, combine)"
    )


def _stats_partial(
    op: tg.RmsStatsOp, ctx: LinkContext, block: int, blocks: int | None
) -> sp.ProgramOp:
    """Each block's sum of squares: into the result (one block, `blocks` None) or into the
    partials scratch, one tile per block."""
    rows, cols = valid(op.x)
    tc = ctx.tile[1]
    s = ProgramBuilder(ctx, op)
    streamed = [s.input(v) for v in (op.x, op.residual) if v is not None]
    if blocks is None:
        dest, at = s.output(op.res), AccessAttr.of(R0, ZERO, "h", 1)
    else:
        shape = (rows, blocks * tc)
        dest = s.declare(ctx.scratch(f"{ctx.names[op.res]}__partials", shape, F32))
        at = AccessAttr.of(R0, C0 if block == 1 else C0 // block, "h", 1)
    ins = [s.fifo(f"in{i}", t, "h", "w") for i, t in enumerate(streamed)]
    for t, fifo in zip(streamed, ins, strict=True):
        s.load(t, BLOCK, fifo)
    out = s.fifo("out", F32, "h", 1)
    s.stage(RowReduceOp("partial", "sum_squares", ins, out, cols, cols, rows, block=block * tc))
    s.store(out, dest, at)
    s.why("row", _stats_why(ctx, cols, block, blocks))
    return s.build(dest.sym_name.data, SectionKind.ROW_REDUCE)


def _stats_combine(op: tg.RmsStatsOp, ctx: LinkContext, block: int, blocks: int) -> sp.ProgramOp:
    """The partials of each row summed over a K loop into the result's column 0."""
    rows, cols = valid(op.x)
    tc = ctx.tile[1]
    s = ProgramBuilder(ctx, op)
    name = f"{ctx.names[op.res]}__partials"
    partials = s.declare(ctx.scratch(name, (rows, blocks * tc), F32, TensorRole.INPUT))
    stats = s.output(op.res)
    in0 = s.fifo("in0", F32, "h", "kw")
    s.load(partials, AccessAttr.of(R0, K0, "h", "kw"), in0)
    out = s.fifo("out", F32, "h", 1)
    s.stage(RowReduceOp("combine", "sum_squares", [in0], out, cols, cols, rows, block * tc))
    s.store(out, stats, AccessAttr.of(R0, ZERO, "h", 1))
    s.why("row", _stats_why(ctx, cols, block, blocks))
    return s.build(stats.sym_name.data, SectionKind.ROW_REDUCE)


def link_rms_apply(op: tg.RmsApplyOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    """The whole row's statistics from its all-reduced sum of squares, then the chip's columns
    normalized: the blocked form's `combine` (one partial: the sum over all n columns, so its
    count is n) and its `rms_apply` map."""
    rows, cols = valid(op.x)
    n = op.n.value.data
    eps = op.eps.value.data
    tc = ctx.tile[1]
    name = ctx.names[op.res]
    stats_shape = (rows, tc)
    why = (
        f"distributed rms_norm, second half: 1/sqrt(sum / {n} + eps) from the all-reduced sum "
        f"of squares of the whole row ({n} columns), then the chip's {cols} columns normalized"
    )

    # 1. the statistics: one partial, the sum over the whole row's n columns
    s = ProgramBuilder(ctx, op)
    sums = s.input(op.stats)
    stats = s.declare(ctx.scratch(f"{name}__stats", stats_shape, F32))
    in0 = s.fifo("in0", F32, "h", "kw")
    s.load(sums, AccessAttr.of(R0, K0, "h", "kw"), in0)
    out = s.fifo("out", F32, "h", 1)
    # block: n rounded up to whole tiles, so the combine's one K step covers the sum and its
    # count (min(block, n)) is n
    block = ctx.tiles(1, n)[1] * tc
    s.stage(RowReduceOp("combine", "rms_norm", [in0], out, n, n, rows, block, eps))
    s.store(out, stats, AccessAttr.of(R0, C0, "h", 1))
    s.why("row", why)
    first = s.build(stats.sym_name.data, SectionKind.ROW_REDUCE)

    # 2. apply them: the blocked form's map over the chip's columns
    s = ProgramBuilder(ctx, op)
    streamed = [s.input(v) for v in (op.x, op.residual) if v is not None]
    weight = s.input(op.weight)
    stats_in = s.declare(ctx.scratch(stats.sym_name.data, stats_shape, F32, TensorRole.INPUT))
    y = s.output(op.res)
    operands = [(t, Mode.FULL, BLOCK) for t in streamed]
    operands.append((stats_in, Mode.COLS, AccessAttr.of(R0, ZERO, "h", 1)))
    operands.append((weight, Mode.ROWS, AccessAttr.of(ZERO, C0, 1, "w")))
    s.why("row", why)
    return [first, map_section(ctx, op, "rms_apply", operands, y, s)]


def link_argmax(op: tg.ArgmaxOp, ctx: LinkContext) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    x, idx = s.input(op.x, Layout.ROWS), s.output(op.res)
    in0 = s.fifo("in0", x, 1, "kw")
    out = s.fifo("out", idx, 1, 1)
    best = s.interm("best", F32, 1, 2)
    s.load(x, AccessAttr.of(C0, K0, 1, "kw"), in0)
    rows, cols = valid(op.x)
    s.stage(ArgmaxOp(in0, out, best, cols, rows))
    s.store(out, idx, AccessAttr.of(R0, C0, 1, 1))
    return s.build(idx.sym_name.data, SectionKind.ARGMAX)


LINKERS = {
    tg.RmsNormOp: link_row,
    tg.LayerNormOp: link_row,
    tg.SoftmaxOp: link_row,
    tg.L2NormOp: link_row,
    tg.ArgmaxOp: link_argmax,
    tg.RmsStatsOp: link_rms_stats,
    tg.RmsApplyOp: link_rms_apply,
}
"""The ops this module links."""
