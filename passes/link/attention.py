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

from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, StringAttr, TensorType, UnitAttr
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
from spatial_dialect.passes.stream_plans import choose_stream_plan
from spatial_dialect.sp import (
    AccessAttr,
    AttentionCombineOp,
    AttentionOp,
    Layout,
    SectionKind,
    SizeTerm,
    TensorRole,
    size_expr,
)
from spatial_dialect.sp.errors import NotLowered
from spatial_dialect.sp.item_space import users_key_range
from spatial_dialect.targets import DEFAULT_FIDELITY
from spatial_dialect.targets.gemm import divisors


def _group_column(col: AffineExpr, item_tiles: int, tiles: int, kv_heads: int) -> AffineExpr:
    """The first tile column an item reads of a tensor holding `tiles` tiles per kv head's
    group: (col / item_tiles) * tiles, the item at result column `col` serving kv head
    col / item_tiles; written without divisions and products by one (0 with one kv head, `col`
    itself when the tensor's group is as wide as the item)."""
    if kv_heads == 1:
        return ZERO
    if tiles == item_tiles:
        return col
    group = col if item_tiles == 1 else col // item_tiles
    return group if tiles == 1 else group * tiles


@dataclass(frozen=True)
class Users:
    """A batched attention's users (link/batched.py): `users` users of `tokens` queries each,
    over caches of `capacity` positions, paged through `table` in blocks of `block_size`."""

    users: int
    capacity: int
    tokens: int
    table: str | None
    block_size: int | None


@dataclass(frozen=True)
class Shape:
    """What the sections of one tg.attention (or tg.batch_attention) are built from."""

    op: tg.AttentionOp | tg.BatchAttentionOp
    heads: int
    kv: int
    dt: int  # a head's tiles of q and k
    dvt: int  # a head's tiles of v
    key_tiles: int
    numbers: dict[str, int]
    batch: Users | None = None


def link_attention(op: tg.AttentionOp, ctx: LinkContext) -> sp.ProgramOp | list[sp.ProgramOp]:
    heads, kv = op.heads.value.data, op.kv_heads.value.data
    d, dv = op.head_dim.value.data, op.v_head_dim()
    dims = {"head_dim": d, "the v head dim": dv}
    dt, dvt = head_tiles(op, ctx, dims, "the flash form reads a head as whole tiles")
    queries, keys = valid(op.q)[0], valid(op.k)[0]
    numbers = {
        "heads": heads,
        "kv_heads": kv,
        "head_dim": d,
        "v_head_dim": dv,
        "queries": queries,
        "keys": keys,
    }
    shape = Shape(op, heads, kv, dt, dvt, ctx.tiles(keys, 1)[0], numbers)
    if queries > 1:
        return sections(shape, ctx, 1)
    return _split(shape, ctx)


def sections(
    shape: Shape, ctx: LinkContext, splits: int, by_users: bool = False
) -> list[sp.ProgramOp]:
    """The flash form: one section, or with `splits` > 1 the split partials and their combine
    (`by_users`: each split whole users' caches, its pages their results, summed)."""
    if splits == 1:
        return [_attention(shape, ctx, None)]
    return [_attention(shape, ctx, splits, by_users), _combine(shape, ctx, splits, by_users)]


def _split(shape: Shape, ctx: LinkContext, by_users: list[int] | None = None) -> list[sp.ProgramOp]:
    """docs/passes.md#link-flash-decoding-splits-the-keys: the sections of the number of splits
    of one query row's keys that `_count` chose, each recording why; `by_users` the counts of
    splits by whole users priced beside them (a batch of one tile row of queries)."""
    op = shape.op
    key = (
        tuple(shape.numbers.values()),
        tuple(str(v.type) for v in (op.q, op.k, op.v)),
        op.pos is not None,
        shape.batch if shape.batch is not None else op.causal.value.data,  # type: ignore[union-attr]
    )
    if key not in ctx.split_counts:
        ctx.split_counts[key] = _count(shape, ctx, by_users or [])
    count, users, why = ctx.split_counts[key]
    made = sections(shape, ctx, count, users)
    for s in made:
        s.attributes["kv_splits"] = StringAttr(why)
    return made


def split_batch(shape: Shape, ctx: LinkContext) -> list[sp.ProgramOp]:
    """docs/passes.md#link-the-batched-decode-step: a batched attention's sections, split over
    the users' caches as one query row's keys are (`_split`) where its partials fit a page (2 Q
    rows at most a tile's: Q query rows' outputs and statistics) and the target's kernels carry
    them (Target.batched_kv_splits), or where the `kv-splits` option forces a count; split by
    whole users (`user_splits`) where the queries fit one tile row; priced against each other
    and the one flash section. Else the one flash section, unpriced as before."""
    rows = 2 * shape.numbers["queries"]
    whole, forced = user_splits(shape, ctx), ctx.kv_splits
    if forced is None and whole:
        return _split(shape, ctx, whole)
    if forced in whole and (rows > ctx.tile[0] or not ctx.target.batched_kv_splits):
        # the key splits cannot be carried here: the forced count splits by users
        made = sections(shape, ctx, forced, True)
        for s in made:
            s.attributes["kv_splits"] = StringAttr(
                f"{forced} by users; forced by the kv-splits option"
            )
        return made
    if ctx.kv_splits is not None and ctx.kv_splits > 1 and rows > ctx.tile[0]:
        raise NotLowered(
            f"{shape.op.name}: kv-splits={ctx.kv_splits} splits partials of "
            f"{shape.numbers['queries']} query rows and their statistics ({rows} rows), past a "
            f"tile's {ctx.tile[0]}"
        )
    if ctx.kv_splits is None and (rows > ctx.tile[0] or not ctx.target.batched_kv_splits):
        return sections(shape, ctx, 1)
    return _split(shape, ctx)


def user_splits(shape: Shape, ctx: LinkContext) -> list[int]:
    """The counts P > 1 of splits of a batched attention by whole users: its U x T queries fit
    one tile row (so each split's page is the result's tile row, its users' rows) and P cuts
    the U users into groups whose caches are whole key tiles ((U / P) x S a multiple of the
    tile's rows), at most one split a site. Each split reads only its users' K and V, so the
    item space (splits x heads of a kv head) has P times the items at the same reads."""
    batch, th = shape.batch, ctx.tile[0]
    if batch is None or shape.numbers["queries"] > th:
        return []
    users, capacity = batch.users, batch.capacity
    return [
        p
        for p in divisors(users)
        if 1 < p <= ctx.target.sites and (users // p) * capacity % th == 0
    ]


def _count(shape: Shape, ctx: LinkContext, by_users: list[int]) -> tuple[int, bool, str]:
    """The number of splits, priced by the stream cost model on the sections each count makes
    (the partials' reads of K and V, their writes and the combine's reads, each section's fill),
    cheapest first, ties to fewer splits; the `kv-splits` option forces a count. Beside the
    splits of the keys, the splits by whole users `by_users` (a batch whose split key ranges
    would otherwise need two pages of partials or a target without batched_kv_splits): whether
    the winner is one. With its reason: its cycles, the runner-up's and the unsplit section's."""
    forced = ctx.kv_splits
    if forced is not None and shape.key_tiles % forced:
        raise NotLowered(
            f"{shape.op.name}: kv-splits={forced} does not divide the cache's "
            f"{shape.key_tiles} key tiles"
        )
    if forced is not None:
        counts = [(forced, False)]
    elif by_users:  # the key splits' partials do not fit a page, or the target cannot carry them
        counts = [(1, False)] + [(p, True) for p in by_users]
        if 2 * shape.numbers["queries"] <= ctx.tile[0] and ctx.target.batched_kv_splits:
            counts += [(p, False) for p in divisors(shape.key_tiles) if 1 < p <= ctx.target.sites]
    else:
        counts = [(p, False) for p in divisors(shape.key_tiles) if p <= ctx.target.sites]
    priced: list[tuple[int, int, bool, list[int]]] = []
    for p, users in counts:
        made = sections(shape, ctx, p, users)
        cycles = [
            choose_stream_plan(s, ctx.target, DEFAULT_FIDELITY).cost.total_cycles for s in made
        ]
        priced.append((sum(cycles), p, users, cycles))
        for s in made:
            ctx.sections.discard(s.sym_name.data)
    priced.sort()
    (total, best, users, parts), runner = priced[0], priced[1] if len(priced) > 1 else None

    def named(p: int, by: bool) -> str:
        return f"{p}{' by users' if by else ''}"

    what = f"{named(best, users)}: {total} cycles" + (
        f" (partials {parts[0]} + combine {parts[1]})" if best > 1 else " (unsplit)"
    )
    if forced is not None:
        return best, False, f"{what}; forced by the kv-splits option"
    unsplit = next(t for t, p, _, _ in priced if p == 1)
    why = f"{what}; runner-up {named(runner[1], runner[2])}: {runner[0]} cycles" if runner else what
    why += f"; unsplit {unsplit} cycles" if best > 1 else ""
    return best, users, why + f"; priced at {DEFAULT_FIDELITY}"


def _attention(
    shape: Shape, ctx: LinkContext, splits: int | None, by_users: bool = False
) -> sp.ProgramOp:
    """The flash-attention section; with `splits`, the split form writing the partials (by
    whole users: each split's users' results)."""
    op, kv, dt, dvt = shape.op, shape.kv, shape.dt, shape.dvt
    group = shape.heads // kv
    queries, keys = shape.numbers["queries"], shape.numbers["keys"]
    many = queries > 1
    s = ProgramBuilder(ctx, op)
    q = s.input(op.q, Layout.TILED if many else None)
    k, v = s.input(op.k, Layout.TILED), s.input(op.v, Layout.TILED)
    pos = s.input(op.pos) if op.pos is not None else None
    batch = shape.batch
    if batch is not None and batch.table is not None:
        s.input(op.table)  # type: ignore[union-attr]
    # a batch's position page holds every user's position
    pos_tiles = 1 if batch is None else -(-batch.users // ctx.tile[1])
    # An item covers w tiles of the result: whole heads of one kv head's group (tile chooses
    # how many; all of them when the q and v heads differ in width, so that the query page
    # stays an affine size).
    q_page: SizeTerm = "w" if dt == dvt else group * dt
    width = group * dvt  # a kv head's group of result columns
    if splits is None:
        y = s.output(op.res, Layout.TILED if many else None)
        col, first_key, out_elt = C0, K0, None
        ranged = (
            None
            if batch is None
            else users_key_range(queries, batch.users, batch.capacity, ctx.tile[0])
        )
        if ranged is not None:  # a query tile row walks its own users' caches only
            first_key = R0 * ranged + K0
    else:
        # the partials: split c0 / W reads key tiles from (c0 / W) * K on, for the heads of
        # column c0 mod W (W: every head's columns, K: a split's key tiles)
        w_all = shape.heads * dvt
        y = s.declare(_partials(shape, ctx, splits, TensorRole.SCRATCH, by_users))
        col = C0 % w_all
        first_key = (C0 // w_all) * (shape.key_tiles // splits) + K0
        out_elt = None if by_users else F32
    qf = s.fifo("q", q, "h", q_page)
    kf = s.fifo("k", k, "kw", dt)
    vf = s.fifo("v", v, "kw", dvt)
    pf = s.fifo("pos", pos, 1, pos_tiles) if pos is not None else None
    out = s.fifo("out", out_elt or y, "sh", "sw")
    dst = s.acc("dst", F32, "h", "kw")
    state = s.interm("o", F32, "h", "w")
    heads_per_item = size_expr("w") // dvt if dvt > 1 else "w"
    stats = s.interm("ml", F32, "h", heads_per_item if dt == dvt else group)
    q_col = col if dt == dvt else _group_column(col, width, group * dt, kv)
    s.load(q, AccessAttr.of(R0, q_col, "h", q_page), qf)
    if pos is not None and pf is not None:
        s.load(pos, AccessAttr.of(ZERO, ZERO, 1, pos_tiles), pf)
    s.load(k, AccessAttr.of(first_key, _group_column(col, width, dt, kv), "kw", dt), kf)
    s.load(v, AccessAttr.of(first_key, _group_column(col, width, dvt, kv), "kw", dvt), vf)
    if batch is not None and pos is not None:
        for load in s.stages[-2:]:  # the K and V loads walk the users' caches
            assert isinstance(load, sp.LoadOp)
            load.of_users(
                pos.sym_name.data, batch.capacity, batch.tokens, batch.table, batch.block_size
            )
    causal = batch is not None or op.causal.value.data != 0  # type: ignore[union-attr]
    stage = AttentionOp(
        qf, kf, vf, pf, out, dst, state, stats, shape.numbers, op.scale.value.data, causal, splits
    )
    if batch is not None:
        stage.properties["users"] = IntegerAttr(batch.users, 64)
        stage.properties["capacity"] = IntegerAttr(batch.capacity, 64)
    if by_users:
        stage.properties["by_users"] = UnitAttr()
    s.stage(stage)
    s.store(out, y, SUB_BLOCK)
    position = "read at run time from @" + pos.sym_name.data if pos else f"{keys - queries}"
    s.why(
        "attention",
        f"flash: {shape.heads} heads over {kv} kv heads, an item per (query block, heads of a "
        f"kv head) serving up to {group} heads from one read of K and V, in blocks of kw tiles "
        f"of keys with an online softmax in f32; first query position {position}"
        + (f"; split {splits} ways, each item a split's keys" if splits else "")
        + (" (whole users' caches, each K and V byte read once)" if by_users else ""),
    )
    return s.build(y.sym_name.data, SectionKind.ATTENTION)


def _partials(
    shape: Shape, ctx: LinkContext, splits: int, role: TensorRole, by_users: bool = False
) -> sp.TensorOp:
    """The split partials: two f32 rows (the outputs; in every tile its head's m and l), a
    split's heads' columns after another's; `rows` layout, so each tile moves its two rows.
    By users: the Q query rows' results in the result's element type (a row's value is whole
    in its user's split and zero in the others, so adding them rounds nothing)."""
    cols = splits * shape.heads * shape.numbers["v_head_dim"]
    name = f"{ctx.names[shape.op.res]}__splits"
    queries = shape.numbers["queries"]
    # the outputs, then the statistics, of each query row; by users the outputs only
    rows = queries if by_users else 2 * queries
    elt = shape.op.res.type.element_type if by_users else F32  # type: ignore[attr-defined]
    return sp.TensorOp(
        name, TensorType(elt, (rows, cols)), ctx.tiles(rows, cols), role, Layout.ROWS
    )


def _combine(shape: Shape, ctx: LinkContext, splits: int, by_users: bool = False) -> sp.ProgramOp:
    """The log-sum-exp merge of the splits: an item per block of the result's tiles (each tile
    carries its head's statistics), a K loop over the splits, one split a step. By users: the
    sum of the splits' pages."""
    s = ProgramBuilder(ctx, shape.op)
    parts = s.declare(_partials(shape, ctx, splits, TensorRole.INPUT, by_users))
    queries = shape.numbers["queries"]
    y = s.output(shape.op.res, Layout.TILED if queries > 1 else None)
    pf = s.fifo("parts", parts if by_users else F32, 1, "w")
    out = s.fifo("out", y, "sh", "sw")
    state = s.interm("o", F32, 1, "w")
    s.load(parts, AccessAttr.of(ZERO, K0 * (shape.heads * shape.dvt) + C0, 1, "w"), pf)
    rows = queries if queries > 1 else None
    s.stage(AttentionCombineOp(pf, out, state, splits, rows=rows, summed=by_users))
    s.store(out, y, SUB_BLOCK)
    s.why(
        "attention",
        f"flash decoding: adds {splits} splits by users of {shape.heads} heads (each row's "
        "result is whole in its user's split), one split a K step"
        if by_users
        else f"flash decoding: merges {splits} splits of {shape.heads} heads by their maxima "
        "and sums (log-sum-exp), tile by tile, one split a K step",
    )
    return s.build(y.sym_name.data, SectionKind.ATTENTION_COMBINE)


LINKERS = {tg.AttentionOp: link_attention}
"""The ops this module links."""
