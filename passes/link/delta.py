"""link for the Gated DeltaNet ops: tg.decay (a map), tg.causal_conv and tg.gated_delta (one
section each, walking time in K blocks with the carried state in local memory). tg.l2_norm is a
row reduction (link/rows.py).

    decay        load a[r0, c0] x [h, w], a_log and dt_bias [0, c0] x [1, w] (row broadcasts)
                 -> map "decay" -> store g
    causal_conv  an item is w tile columns (channels) of the state, which is one tile row:
                 load state[r0, c0] x [1, w], weight[0, c0] x [1, w]       (per item)
                 load x[k0, c0] x [kw, w]                                  (per K block of time)
                 sp.causal_conv -> store out[k0, c0] x [kw, w] per K block,
                                   store new_state[r0, c0] x [1, w] after the last
    gated_delta  an item is one head's block of the state (h = Dt tile rows, head r0 / Dt) by
                 w of its Dvt tile columns; a K block is a CHUNK of kw tile rows of time:
                 load state[r0, c0] x [h, w]                               (per item)
                 load q, k[k0, (r0 / (Dt G)) Dt] x [kw, Dt]  (the head's key head, G = heads /
                 k_heads), v[k0, (r0 / Dt) Dvt + c0] x [kw, w], g, beta[k0, r0 / (Dt tc)] x
                 [kw, 1]                                                   (per chunk)
                 sp.gated_delta -> store o[k0, (r0 / Dt) Dvt + c0] x [kw, w] per chunk,
                                   store new_state[r0, c0] x [h, w] after the last

The state is read once and written once per item: the carried state never leaves the site
between chunks (docs/passes.md#link-the-delta-rule-walks-time-in-chunks). The chunk size is
tile's decision (the K block), priced by the cost model against the others. Decode (one row) is
the same section with one chunk of one real row, where the chunked step is the recurrent one.

A head (head_dim, the v head dim) must fill whole tiles, and a convolution's K - 1 state rows
one tile row; otherwise NotLowered, by name, with the numbers.
"""

from __future__ import annotations

from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    F32,
    K0,
    R0,
    ROW_OPERAND,
    ZERO,
    LinkContext,
    ProgramBuilder,
    head_tiles,
    valid,
)
from spatial_dialect.passes.link.maps import map_section
from spatial_dialect.sp import AccessAttr, Layout, Mode, SectionKind
from spatial_dialect.sp.errors import NotLowered

TILED = Layout.TILED


def link_decay(op: tg.DecayOp, ctx: LinkContext) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    a, y = s.input(op.a, TILED), s.output(op.res, TILED)
    a_log, dt_bias = s.input(op.a_log), s.input(op.dt_bias)
    operands = [(a, Mode.FULL, BLOCK)]
    operands += [(t, Mode.ROWS, ROW_OPERAND) for t in (a_log, dt_bias)]
    return map_section(ctx, op, "decay", operands, y, s)


def link_causal_conv(op: tg.CausalConvOp, ctx: LinkContext) -> sp.ProgramOp:
    taps = op.kernel()
    tr = ctx.tile[0]
    if taps > tr:
        raise NotLowered(
            f"{op.name}: a kernel of {taps} taps does not fit one {tr}-row tile row; the "
            "section holds the taps and the K - 1 state rows in one"
        )
    rows, cols = valid(op.x)
    s = ProgramBuilder(ctx, op)
    x, weight, state = (s.input(v, TILED) for v in (op.x, op.weight, op.state))
    out, new_state = s.output(op.res, TILED), s.output(op.new_state, TILED)
    state_f = s.fifo("state", state, 1, "w")
    weight_f = s.fifo("weight", weight, 1, "w")
    x_f = s.fifo("x", x, "kw", "w")
    out_f = s.fifo("out", out, "kw", "w")
    new_f = s.fifo("new_state", new_state, 1, "w")
    window = s.interm("window", F32, 1, "w")
    s.load(state, AccessAttr.of(R0, C0, 1, "w"), state_f)
    s.load(weight, AccessAttr.of(ZERO, C0, 1, "w"), weight_f)
    s.load(x, AccessAttr.of(K0, C0, "kw", "w"), x_f)
    numbers = {"taps": taps, "rows": rows, "cols": cols}
    s.stage(sp.CausalConvOp([x_f, weight_f, state_f], [out_f, new_f], window, numbers, op.act()))
    s.store(out_f, out, AccessAttr.of(K0, C0, "kw", "w"))
    s.store(new_f, new_state, AccessAttr.of(R0, C0, 1, "w"))
    s.why(
        "causal_conv",
        f"{taps} taps over {rows} row(s) of {cols} channels: an item per block of channels "
        f"walks time in K blocks, the last {taps - 1} rows carried in local memory",
    )
    return s.build(out.sym_name.data, SectionKind.CAUSAL_CONV)


def _scaled(expr: AffineExpr, div: int, mul: int) -> AffineExpr:
    """(expr / div) * mul, written without divisions or products by one."""
    e = expr if div == 1 else expr // div
    return e if mul == 1 else e * mul


def link_gated_delta(op: tg.GatedDeltaOp, ctx: LinkContext) -> sp.ProgramOp:
    heads, k_heads, d, dv = op.numbers()
    tc = ctx.tile[1]
    dims = {"head_dim": d, "the v head dim": dv}
    dt, dvt = head_tiles(op, ctx, dims, "an item holds a head's state as whole tiles")
    group = heads // k_heads
    rows = valid(op.q)[0]
    s = ProgramBuilder(ctx, op)
    q, k, v, g, beta, state = (
        s.input(x, TILED) for x in (op.q, op.k, op.v, op.g, op.beta, op.state)
    )
    out, new_state = s.output(op.res, TILED), s.output(op.new_state, TILED)
    fifos = [
        s.fifo("q", q, "kw", dt),
        s.fifo("k", k, "kw", dt),
        s.fifo("v", v, "kw", "w"),
        s.fifo("g", g, "kw", 1),
        s.fifo("beta", beta, "kw", 1),
        # one page a head, read once and written once per item: single pages, so a head's
        # state block takes its site's memory three times (in, running, out), not five
        s.fifo("state", state, "h", "w", depth=1),
    ]
    out_f = s.fifo("out", out, "kw", "w")
    new_f = s.fifo("new_state", new_state, "h", "w", depth=1)
    dst = s.acc("dst", F32, "kw", "kw")
    running = s.interm("s", F32, "h", "w")
    head_col = _scaled(R0, dt, dvt) + C0  # the item's columns of v and of the output
    key_col = _scaled(R0, dt * group, dt)  # the first tile column of its key head
    gate_col = _scaled(R0, dt * tc, 1)  # the tile column of g and beta holding its head
    s.load(state, AccessAttr.of(R0, C0, "h", "w"), fifos[5])
    s.load(q, AccessAttr.of(K0, key_col, "kw", dt), fifos[0])
    s.load(k, AccessAttr.of(K0, key_col, "kw", dt), fifos[1])
    s.load(v, AccessAttr.of(K0, head_col, "kw", "w"), fifos[2])
    s.load(g, AccessAttr.of(K0, gate_col, "kw", 1), fifos[3])
    s.load(beta, AccessAttr.of(K0, gate_col, "kw", 1), fifos[4])
    numbers = {"heads": heads, "k_heads": k_heads, "head_dim": d, "v_head_dim": dv, "rows": rows}
    s.stage(sp.GatedDeltaOp(fifos, [out_f, new_f], dst, running, numbers, op.scale.value.data))
    s.store(out_f, out, AccessAttr.of(K0, head_col, "kw", "w"))
    s.store(new_f, new_state, AccessAttr.of(R0, C0, "h", "w"))
    s.why(
        "gated_delta",
        f"chunked delta rule: {heads} heads over {k_heads} key heads, an item per (head, block "
        f"of its {dv} state columns) keeping its {d}x{dv} state in local memory; {rows} row(s) "
        f"of time in chunks of kw tile rows (tile's choice)",
    )
    return s.build(out.sym_name.data, SectionKind.GATED_DELTA)


LINKERS = {
    tg.DecayOp: link_decay,
    tg.CausalConvOp: link_causal_conv,
    tg.GatedDeltaOp: link_gated_delta,
}
"""The ops this module links."""
