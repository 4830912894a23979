"""link for tg.attention: the flash form, one section.

A work item is (query block, heads of one kv head): the block of the result of h tile rows of
queries by the columns of g of the G query heads that share a kv head (grouped-query attention:
head j reads kv head j / G, G = heads / kv_heads). Each K and V block is read from DRAM once for
the g heads of an item; tile chooses g (a divisor of G), weighing those reads against spreading
the heads over more sites. K and V are never held whole: the item walks them in K blocks of
kw tiles of keys (the K loop), and `sp.attention` keeps an online softmax in f32 between blocks
per head (the running maximum and sum per row, the running output), so any cache length fits a
site. The position p of the first query is read at run time from `pos` (default keys -
queries): the causal mask hides keys j > p + i from query row i, and a p that would put a query
past the cache is a runtime error.

    q    load q[r0, c0] x [h, w]  (the item's g heads)          (per item; movement 0)
    pos  load pos[0, 0] x [1, 1]                                (per item; movement 0)
    k    load k[k0, (c0 / (G Dvt)) * Dt] x [kw, Dt]             (per K block; movement 1)
    v    load v[k0, (c0 / (G Dvt)) * Dvt] x [kw, Dvt]           (per K block; movement 1)
    sp.attention -> out [sh, sw]; store out[r0 + ti, c0 + tj] x [sh, sw]

(Dt, Dvt: a head's tiles of q/k and of v.) The queries and the position move on the store's
engine, so the engine that streams K and V never waits on them. Layouts: K and V are tiled (they
are read a tile block at a time), and the queries and the result too when there is more than
one query row (the prelude's rule). A head that does not fill whole tiles is refused by name
(NotLowered).
"""

from __future__ import annotations

from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    C0,
    F32,
    K0,
    R0,
    SUB_BLOCK,
    ZERO,
    LinkContext,
    ProgramBuilder,
    head_tiles,
    valid,
)
from spatial_dialect.sp import AccessAttr, AttentionOp, Layout, SectionKind, SizeTerm, size_expr


def _group_column(item_tiles: int, tiles: int, kv_heads: int) -> AffineExpr:
    """The first tile column an item reads of a tensor holding `tiles` tiles per kv head's
    group: (c0 / item_tiles) * tiles, the item at column c0 serving kv head c0 / item_tiles;
    written without divisions and products by one (0 with one kv head, c0 itself when the
    tensor's group is as wide as the item)."""
    if kv_heads == 1:
        return ZERO
    if tiles == item_tiles:
        return C0
    group = C0 if item_tiles == 1 else C0 // item_tiles
    return group if tiles == 1 else group * tiles


def link_attention(op: tg.AttentionOp, ctx: LinkContext) -> sp.ProgramOp:
    heads, kv = op.heads.value.data, op.kv_heads.value.data
    d, dv = op.head_dim.value.data, op.v_head_dim()
    dims = {"head_dim": d, "the v head dim": dv}
    dt, dvt = head_tiles(op, ctx, dims, "the flash form reads a head as whole tiles")
    group = heads // kv
    queries, keys = valid(op.q)[0], valid(op.k)[0]
    many = queries > 1
    s = ProgramBuilder(ctx, op)
    q = s.input(op.q, Layout.TILED if many else None)
    k, v = s.input(op.k, Layout.TILED), s.input(op.v, Layout.TILED)
    pos = s.input(op.pos) if op.pos is not None else None
    y = s.output(op.res, Layout.TILED if many else None)
    # An item covers w tiles of the result: whole heads of one kv head's group (tile chooses
    # how many; all of them when the q and v heads differ in width, so that the query page
    # stays an affine size).
    q_page: SizeTerm = "w" if dt == dvt else group * dt
    width = group * dvt  # a kv head's group of result columns
    qf = s.fifo("q", q, "h", q_page)
    kf = s.fifo("k", k, "kw", dt)
    vf = s.fifo("v", v, "kw", dvt)
    pf = s.fifo("pos", pos, 1, 1) if pos is not None else None
    out = s.fifo("out", y, "sh", "sw")
    dst = s.acc("dst", F32, "h", "kw")
    state = s.interm("o", F32, "h", "w")
    heads_per_item = size_expr("w") // dvt if dvt > 1 else "w"
    stats = s.interm("ml", F32, "h", heads_per_item if dt == dvt else group)
    q_col = C0 if dt == dvt else _group_column(width, group * dt, kv)
    s.load(q, AccessAttr.of(R0, q_col, "h", q_page), qf)
    if pos is not None and pf is not None:
        s.load(pos, AccessAttr.of(ZERO, ZERO, 1, 1), pf)
    s.load(k, AccessAttr.of(K0, _group_column(width, dt, kv), "kw", dt), kf)
    s.load(v, AccessAttr.of(K0, _group_column(width, dvt, kv), "kw", dvt), vf)
    numbers = {
        "heads": heads,
        "kv_heads": kv,
        "head_dim": d,
        "v_head_dim": dv,
        "queries": queries,
        "keys": keys,
    }
    s.stage(
        AttentionOp(
            qf,
            kf,
            vf,
            pf,
            out,
            dst,
            state,
            stats,
            numbers,
            op.scale.value.data,
            op.causal.value.data != 0,
        )
    )
    s.store(out, y, SUB_BLOCK)
    position = "read at run time from @" + pos.sym_name.data if pos else f"{keys - queries}"
    s.why(
        "attention",
        f"flash: {heads} heads over {kv} kv heads, an item per (query block, heads of a kv "
        f"head) serving up to {group} heads from one read of K and V, in blocks of kw tiles of "
        f"keys with an online softmax in f32; first query position {position}",
    )
    return s.build(y.sym_name.data, SectionKind.ATTENTION)


LINKERS = {tg.AttentionOp: link_attention}
"""The ops this module links."""
