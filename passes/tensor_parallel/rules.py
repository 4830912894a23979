"""The shardings each tg op may run under (docs/tensor-parallel.md#decision-rules): per op a list
of plans, each naming the layout it needs of every operand and the layout of its result, or the
reason it cannot apply (with the numbers). The decision (decide.py) prices the ones that apply.

Decided here, and why:

- **matmul** (and the Q8_0 product): ``column`` (weight split on N, activation replicated,
  result split on its last dim), ``row`` (activation and weight split on K, result a partial
  sum) or ``replicate``: the Megatron pairs (QKV/FF1/FF3 column, WO/FF2 row) follow from the
  prices, as in tt-metal's tech report (LLMs 3.3). A Q8_0 shard boundary falls on a 32-element
  block of K, so each chip quantizes its local activation by whole blocks (the Q8_0 view is
  named per chip). A column product read only by an arg-max is the LM head's ``vocab`` plan. On a
  2-D mesh also ``2d`` (:func:`_matmul_2d`): K over one axis and N over the other, tt-metal's
  Galaxy layout, so a partial sum is reduced over one axis on a 1/n-wide shard.
- **attention**: ``heads`` (q heads split over the chips with their KV heads; fewer KV heads
  than chips are repeated, ``mesh.repeat``) or ``replicate``. The batched ops
  (tg.batch_attention, tg.batch_set_rows) take the same rules: their caches hold every user's
  rows by KV-head columns as the single-user cache does, so a column cut is a cut by heads for
  every user at once; the per-user positions and the block table address rows, which no chip
  splits, so they are replicated. Values on the way from a
  projection to an attention (rope, per-head norms, the cache's set_rows) carry a hint of the
  head width, the KV repeat and the mesh axes the attention splits over (:func:`head_hints`), so
  the projection's column plan cuts on whole heads over those axes alone: a repeated shard is
  never gathered (no collective un-repeats one).
- **Groups of mesh axes**: a plan splits over every axis (a 2-D mesh major to minor) or over one
  axis alone (``over axis 1`` in its label), each priced; an attention takes the first group that
  divides its heads and KV heads, the larger axis before the smaller (more chips share its work).
- **elementwise**: operands in one layout (a partial sum may be added to a partial sum).
- **moe**: ``ffn`` (each expert's FFN width F split over the chips: w_gate and w_up by columns,
  w_down's rows within each of the E stacked expert blocks, ``mesh.blocks = E``; the shared
  expert likewise, its sigmoid gate weight replicated; the router and x replicated, so every chip
  routes every token alike; the result a partial sum, all-reduced before the residual add: the
  expert outputs are linear in their F columns), ``experts`` (E / chips whole experts a chip,
  ``experts_held``; the router replicated, so each chip routes every token over all E experts and
  sums the chosen ones it holds, a partial sum all-reduced alike: with replicated tokens, our
  decode, no all_to_all dispatch is needed, docs/tensor-parallel.md) or ``replicate``.
- **arg-max**: ``vocab`` (the logits split by columns over one mesh axis; the op becomes
  mesh.argmax_gather, each chip's (value, index) gathered and the first largest picked, MPI's
  MAXLOC) or ``replicate`` (the logits gathered whole): the LM head's column split then pays a
  gather of T x (value + index) pairs instead of T x V logits.
- **whole-row rms_norm**: ``distributed`` (x split by columns, the statistics all-reduced,
  tg.rms_stats and tg.rms_apply on the chip) where the pass's distributed-norm mode asks
  (norm.py, which also adds the elementwise ``scatter`` plan that keeps the residual stream
  split); otherwise replicated.
- **everything else** (whole-row norms, gather_rows, the delta ops): replicated, gathering what
  it reads; always correct, and recorded with the reason.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import IntegerAttr, TensorType
from xdsl.ir import Operation, SSAValue

from spatial_dialect.mesh import Collective
from spatial_dialect.tg import (
    AddOp,
    ArgmaxOp,
    AttentionOp,
    BatchAttentionOp,
    BatchSetRowsOp,
    GatherRowsOp,
    GeluOp,
    MatmulOp,
    MatmulQ8_0Op,
    MoeOp,
    MulOp,
    ReluOp,
    RmsNormOp,
    RopeOp,
    ScaleOp,
    SetRowsOp,
    SigmoidOp,
    SiluOp,
    SoftcapOp,
    SoftplusOp,
    SubOp,
    SwigluOp,
)

from .layout import REPLICATED, Layout, R, S, Step, partial, shard, splits
from .norm import NORM_DEFAULT, REPLICATED_WHY, embedding_plans, norm_plans, scatter_plans
from .plan import Plan, replicate

Q8_0_BLOCK = 32
"""Elements of K per Q8_0 block (spatial_dialect/tg/quant.py)."""


@dataclass(frozen=True)
class Hint:
    """A value on the way to an attention: cut it on whole heads of ``unit`` columns; ``kv``:
    the attention's KV heads when the value is k or v (they may repeat)."""

    unit: int
    kv: int | None = None
    group: tuple[int, ...] = ()
    """The mesh axes the attention splits its heads over: the projection cuts over these alone,
    so that a repeated KV shard never has to be gathered (no collective un-repeats one)."""


@dataclass
class Context:
    sizes: tuple[int, ...]
    layout: Callable[[SSAValue], Layout | None]
    """The current layout of a value; None for an argument no op has read yet."""
    hints: dict[SSAValue, Hint]
    readers: Callable[[SSAValue], list[Operation]]
    tile_rows: int = 32
    """The chip's tile height: link reads each expert's block of w_down at a whole tile."""
    norm: str = NORM_DEFAULT
    """The pass's distributed-norm mode (norm.py NORM_MODES)."""

    @property
    def groups(self) -> list[tuple[int, ...]]:
        return groups(self.sizes)

    def chips(self, group: tuple[int, ...]) -> int:
        return chips(self.sizes, group)

    def over(self, group: tuple[int, ...]) -> str:
        return "" if len(group) == len(self.sizes) else f" over axis {group[0]}"

    def groups_for(self, v: SSAValue) -> list[tuple[int, ...]]:
        """The groups a plan may cut ``v`` over: its attention's, for a value on the way to one."""
        hint = self.hints.get(v)
        return [hint.group] if hint is not None else self.groups

    def repeat_for(self, hint: Hint | None, group: tuple[int, ...]) -> int | str:
        return repeat_for(self.sizes, hint.kv if hint else None, group)


def groups(sizes: Sequence[int]) -> list[tuple[int, ...]]:
    """The axis groups a plan may shard over: every axis, then each axis alone, the one with
    more chips first (the minor one on a tie). Each axis alone is offered so that a split can
    take the axis whose chips divide its heads (Llama-3-70B's 8 KV heads on Galaxy's 8-chip
    axis, as tt-metal does) and its collectives run over that sub-axis only."""
    rank = len(sizes)
    every = tuple(range(rank))
    if rank == 1:
        return [every]
    alone = sorted(range(rank), key=lambda a: (-sizes[a], -a))
    return [every, *((a,) for a in alone)]


def chips(sizes: Sequence[int], group: tuple[int, ...]) -> int:
    n = 1
    for a in group:
        n *= sizes[a]
    return n


def repeat_for(sizes: Sequence[int], kv: int | None, group: tuple[int, ...]) -> int | str:
    """The repeat ``kv`` KV heads take over ``group``, or why they cannot be cut on heads. A
    repeat is a fact of one sharding axis (docs/mesh.md#the-per-chip-function: the axis's blocks
    are each held by r consecutive chips), so a group of two axes takes none: a 2-D mesh with
    fewer KV heads than chips splits its heads over the minor axis alone."""
    n = chips(sizes, group)
    if kv is None or kv % n == 0:
        return 1
    if len(group) > 1:
        return f"{kv} KV heads do not split over {n} chips, and a repeat needs one sharding axis"
    if n % kv:
        return f"{kv} KV heads neither split over nor repeat evenly on {n} chips"
    return n // kv


def heads_group(sizes: Sequence[int], heads: int, kv: int) -> tuple[tuple[int, ...] | None, str]:
    """The first group an attention of ``heads`` (``kv`` KV heads) splits over, or why none."""
    why = ""
    for g in groups(sizes):
        n = chips(sizes, g)
        rep = repeat_for(sizes, kv, g)
        if heads % n:
            why = f"{heads} heads do not split over {n} chips"
        elif isinstance(rep, str):
            why = rep
        else:
            return g, ""
    return None, why


def _shape(v: SSAValue) -> tuple[int, ...]:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def _matmul(op: MatmulOp | MatmulQ8_0Op, ctx: Context) -> list[Plan]:
    (_, k), w = _shape(op.operands[0]), _shape(op.operands[1])
    tb = (
        op.transposes_b
        if isinstance(op, MatmulOp)
        else bool(op.transpose_b and op.transpose_b.value.data)
    )
    n_cols = w[0] if tb else w[1]
    n_dim, k_dim = (0, 1) if tb else (1, 0)
    q8 = isinstance(op, MatmulQ8_0Op)
    hint = ctx.hints.get(op.results[0])
    feeds_argmax = all(isinstance(r, ArgmaxOp) for r in ctx.readers(op.results[0]))
    col_name = "vocab" if feeds_argmax and ctx.readers(op.results[0]) else "column"
    plans: list[Plan] = []
    for g in ctx.groups_for(op.results[0]):
        n = ctx.chips(g)
        rep = ctx.repeat_for(hint, g)
        unit = hint.unit if hint else 1
        over = ctx.over(g)
        if isinstance(rep, str):
            plans.append(Plan(col_name, refused=rep, over=over))
        elif not splits(n_cols, shard(1, g, rep), ctx.sizes, unit):
            why = f"N {n_cols} does not split over {n // rep} blocks of {unit}"
            plans.append(Plan(col_name, refused=why, over=over))
        else:
            wl = shard(n_dim, g, rep)
            lays = [REPLICATED, wl, wl][: len(op.operands)]
            plans.append(Plan(col_name, lays, shard(1, g, rep), over=over))
        kl = shard(k_dim, g)
        if k % n or (q8 and (k // n) % Q8_0_BLOCK):
            block = f" in blocks of {Q8_0_BLOCK}" if q8 else ""
            why = f"K {k} does not split over {n} chips{block}"
            plans.append(Plan("row", refused=why, over=over))
        else:
            lays = [shard(1, g), kl, kl][: len(op.operands)]
            plans.append(Plan("row", lays, partial(g), over=over))
    plans.extend(_matmul_2d(ctx, hint, k, n_cols, k_dim, n_dim, q8, len(op.operands)))
    plans.append(replicate(op))
    return plans


def _matmul_2d(
    ctx: Context,
    hint: Hint | None,
    k: int,
    n_cols: int,
    k_dim: int,
    n_dim: int,
    q8: bool,
    arity: int,
) -> list[Plan]:
    """``2d``: on a 2-D mesh, K split over one axis and N over the other (tt-metal's Galaxy
    layout, each chip a [K/4, N/8] block): the activation split on K over the first axis, the
    result a partial sum over it and split on N over the second, so its all-reduce runs over the
    first axis alone on a 1/n-wide shard, and a reader may keep the N split. One plan per order
    of the two axes; a value on the way to an attention cuts N over the attention's axis alone,
    with its KV repeat (on the minor axis only: a repeat acts on the last sharding axis)."""
    if len(ctx.sizes) != 2:
        return []
    plans = []
    for ka, na in ((0, 1), (1, 0)):
        over = f" (K over axis {ka}, N over axis {na})"
        nk, nn = ctx.sizes[ka], ctx.sizes[na]
        rep = ctx.repeat_for(hint, (na,))
        unit = hint.unit if hint else 1
        if hint is not None and hint.group != (na,):
            why = f"the attention splits its heads over axes {hint.group}, not axis {na}"
            plans.append(Plan("2d", refused=why, over=over))
            continue
        if isinstance(rep, str) or (rep != 1 and na < ka):
            why = rep if isinstance(rep, str) else "a KV repeat acts on the minor sharding axis"
            plans.append(Plan("2d", refused=why, over=over))
            continue
        if not splits(n_cols, shard(1, (na,), rep), ctx.sizes, unit):
            why = f"N {n_cols} does not split over {nn // rep} blocks of {unit}"
            plans.append(Plan("2d", refused=why, over=over))
            continue
        if k % nk or (q8 and (k // nk) % Q8_0_BLOCK):
            block = f" in blocks of {Q8_0_BLOCK}" if q8 else ""
            plans.append(
                Plan("2d", refused=f"K {k} does not split over {nk} chips{block}", over=over)
            )
            continue
        w = shard(k_dim, (ka,), also=shard(n_dim, (na,), rep))
        if na < ka:  # parts in axis order, so equal layouts compare equal
            w = shard(n_dim, (na,), rep, also=shard(k_dim, (ka,)))
        lays = [shard(1, (ka,)), w, w][:arity]
        plans.append(Plan("2d", lays, partial((ka,), also=shard(1, (na,), rep)), over=over))
    return plans


def _attention(op: AttentionOp | BatchAttentionOp, ctx: Context) -> list[Plan]:
    heads, kv = op.heads.value.data, op.kv_heads.value.data
    plans = []
    g, why = heads_group(ctx.sizes, heads, kv)
    if g is None:
        plans.append(Plan("heads", refused=why))
    else:
        n = ctx.chips(g)
        rep = ctx.repeat_for(Hint(1, kv), g)
        assert not isinstance(rep, str)
        q, kvl = shard(1, g), shard(1, g, rep)
        props = {
            "heads": IntegerAttr(heads // n, 64),
            "kv_heads": IntegerAttr(kv // (n // rep), 64),
        }
        # pos (and a batched op's block table) replicated: they address rows, not heads
        lays = [q, kvl, kvl] + [REPLICATED] * (len(op.operands) - 3)
        plans.append(Plan("heads", lays, q, props, over=ctx.over(g)))
    plans.append(replicate(op))
    return plans


def _sharded_candidates(v: SSAValue, ctx: Context) -> list[Layout]:
    """The S layouts of dim 1 a head-wise op may keep for ``v``: its own, or (an unread
    argument) one per group, with the KV repeat its hint asks for."""
    cur = ctx.layout(v)
    if cur is not None:
        return [cur] if cur.kind == S and cur.dim == 1 and cur.also is None else []
    out = []
    for g in ctx.groups_for(v):
        rep = ctx.repeat_for(ctx.hints.get(v), g)
        if not isinstance(rep, str):
            out.append(shard(1, g, rep))
    return out


def _headwise(op: Operation, ctx: Context, x: int, unit: int, name: str) -> list[Plan]:
    """An op that keeps whole heads of ``unit`` columns of operand ``x`` local (rope, a per-head
    norm, set_rows, batch_set_rows): run on the shard when its blocks are whole heads; the others replicated."""
    plans = []
    cols = _shape(op.operands[x])[1]
    for lay in _sharded_candidates(op.operands[x], ctx):
        if not splits(cols, lay, ctx.sizes, unit):
            plans.append(
                Plan(
                    name,
                    refused=f"{cols} columns do not split into {lay.blocks(ctx.sizes)} "
                    f"blocks of whole {unit}-wide heads",
                )
            )
            continue
        lays = [REPLICATED] * len(op.operands)
        lays[x] = lay
        if isinstance(op, (SetRowsOp, BatchSetRowsOp)):
            lays[0] = lay
        if isinstance(op, RmsNormOp) and op.residual is not None:
            lays[2] = lay
        plans.append(Plan(name, lays, lay))
    plans.append(replicate(op))
    return plans


ELEMENTWISE = (
    AddOp,
    SubOp,
    MulOp,
    SiluOp,
    ReluOp,
    SigmoidOp,
    SoftplusOp,
    GeluOp,
    ScaleOp,
    SoftcapOp,
    SwigluOp,
)
LINEAR_SUMS = (AddOp, SubOp)
"""Binary ops under which partial sums stay partial: (a1 + a2) + (b1 + b2) = (a1 + b1) + (a2 + b2)."""


def _elementwise(op: Operation, ctx: Context) -> list[Plan]:
    shape = _shape(op.results[0])
    plans = []
    same = all(_shape(v) == shape for v in op.operands)
    seen = []
    for v in op.operands:
        cur = ctx.layout(v)
        if cur is None or cur.kind == R or cur in seen:
            continue
        seen.append(cur)
        if cur.has_partial and not isinstance(op, LINEAR_SUMS):
            continue
        if not same:
            plans.append(Plan("local", refused="operands broadcast; a shard would not line up"))
            continue
        name = "partial" if cur.has_partial else "local"
        plans.append(Plan(name, [cur] * len(op.operands), cur))
    plans.append(replicate(op))
    return plans


def _moe(op: MoeOp, ctx: Context) -> list[Plan]:
    _, _, e, f = op.sizes()
    fs = _shape(op.shared[0])[1] if op.shared else None
    plans = []
    for g in ctx.groups:
        n, over = ctx.chips(g), ctx.over(g)
        tr = ctx.tile_rows
        widths = [f] if fs is None else [f, fs]
        if any(w % (n * tr) for w in widths):
            shared = f" (shared expert {fs})" if fs is not None else ""
            why = (
                f"F {f}{shared} does not split over {n} chips in whole {tr}-row tiles (link "
                "reads each expert's rows of w_down from a tile boundary)"
            )
            plans.append(Plan("ffn", refused=why, over=over))
            continue
        cols, rows = shard(1, g), shard(0, g)
        lays = [REPLICATED, REPLICATED, cols, cols, shard(0, g, stacked=e)]
        lays += [cols, cols, rows, REPLICATED][: len(op.shared)]
        plans.append(Plan("ffn", lays, partial(g), over=over))
    plans.append(_experts(op, ctx, e, fs))
    plans.append(replicate(op))
    return plans


def _experts(op: MoeOp, ctx: Context, e: int, fs: int | None) -> Plan:
    """``experts``: E / chips whole experts a chip (the stacked matrices split by rows, so chip c
    holds experts c x H .. c x H + H - 1, H = ``experts_held``), over every mesh axis (the held
    range follows the chip's row-major index); the shared expert split by its width as ``ffn``
    splits it. The router and x replicated: each chip routes every token over all E and sums the
    chosen experts it holds, a partial sum."""
    g = tuple(range(len(ctx.sizes)))
    n, tr = ctx.chips(g), ctx.tile_rows
    if e % n:
        return Plan("experts", refused=f"E {e} experts do not split over {n} chips")
    if fs is not None and fs % (n * tr):
        why = (
            f"the shared expert's {fs} columns do not split over {n} chips in whole {tr}-row tiles"
        )
        return Plan("experts", refused=why)
    rows = shard(0, g)
    lays = [REPLICATED, REPLICATED, rows, rows, rows]
    lays += [shard(1, g), shard(1, g), rows, REPLICATED][: len(op.shared)]
    return Plan("experts", lays, partial(g), {"experts_held": IntegerAttr(e // n, 64)})


def _argmax(op: ArgmaxOp, ctx: Context) -> list[Plan]:
    """``vocab``: the logits split by columns over ONE mesh axis, each chip's arg-max and its
    value gathered and the first largest picked (mesh.argmax_gather, MPI's MAXLOC); or
    ``replicate`` (the logits gathered). Over two axes the pick would need one step per axis,
    each with its own offset: not built, and refused by name."""
    _, v = _shape(op.operands[0])
    rank = len(ctx.sizes)
    plans = []
    for g in ctx.groups:
        n, over = ctx.chips(g), ctx.over(g)
        lay = shard(1, g)
        if len(g) != 1:
            why = f"a (value, index) gather runs over one mesh axis, not axes {g}"
            plans.append(Plan("vocab", refused=why, over=over))
        elif not splits(v, lay, ctx.sizes):
            plans.append(Plan("vocab", refused=f"V {v} does not split over {n} chips", over=over))
        else:
            pick = Step(
                Collective.ARGMAX_GATHER,
                g[0],
                tuple(lay.placements(rank)),
                tuple(REPLICATED.placements(rank)),
            )
            plans.append(Plan("vocab", [lay], REPLICATED, over=over, collective=pick))
    plans.append(replicate(op))
    return plans


def plans_of(op: Operation, ctx: Context) -> tuple[list[Plan], str | None]:
    """The plans of ``op`` and, for an op with no sharded rule, why it is replicated."""
    if isinstance(op, (MatmulOp, MatmulQ8_0Op)):
        return _matmul(op, ctx), None
    if isinstance(op, (AttentionOp, BatchAttentionOp)):
        return _attention(op, ctx), None
    if isinstance(op, RopeOp):
        return _headwise(op, ctx, 0, op.head_dim.value.data, "heads"), None
    if isinstance(op, RmsNormOp) and op.width is not None:
        return _headwise(op, ctx, 0, op.width.value.data, "heads"), None
    if isinstance(op, (SetRowsOp, BatchSetRowsOp)):
        hint = ctx.hints.get(op.results[0])
        return _headwise(op, ctx, 1, hint.unit if hint else 1, "heads"), None
    if isinstance(op, MoeOp):
        return _moe(op, ctx), None
    if isinstance(op, ArgmaxOp):
        return _argmax(op, ctx), None
    if isinstance(op, RmsNormOp) and op.width is None:
        if ctx.norm != "forced":
            return [replicate(op)], REPLICATED_WHY[ctx.norm]
        return norm_plans(op, ctx), None
    if isinstance(op, GatherRowsOp) and ctx.norm == "forced":
        return embedding_plans(op, ctx), None
    if isinstance(op, ELEMENTWISE):
        plans = _elementwise(op, ctx)
        plans[-1:-1] = scatter_plans(op, ctx, isinstance(op, LINEAR_SUMS))
        return plans, "every operand is replicated" if len(plans) == 1 else None
    why = f"{op.name} has no tensor-parallel rule"
    return [replicate(op)], why


def head_hints(ops: Sequence[Operation], sizes: Sequence[int]) -> dict[SSAValue, Hint]:
    """Per value on the way from a projection to an attention that splits its heads: the head
    width, the group and, for k and v, the KV heads. Walks back from each attention through
    rope, per-head norms and (batch_)set_rows."""
    hints: dict[SSAValue, Hint] = {}
    for op in ops:
        if not isinstance(op, (AttentionOp, BatchAttentionOp)):
            continue
        d, kv = op.head_dim.value.data, op.kv_heads.value.data
        g, _ = heads_group(sizes, op.heads.value.data, kv)
        if g is None:
            continue
        for v, hint in ((op.q, Hint(d, None, g)), (op.k, Hint(d, kv, g)), (op.v, Hint(d, kv, g))):
            todo = [v]
            while todo:
                cur = todo.pop()
                if cur in hints:
                    continue
                hints[cur] = hint
                owner = cur.owner
                if isinstance(owner, (RopeOp, RmsNormOp)) and (
                    not isinstance(owner, RmsNormOp) or owner.width is not None
                ):
                    todo.append(owner.operands[0])
                elif isinstance(owner, (SetRowsOp, BatchSetRowsOp)):
                    todo.extend([owner.cache, owner.rows])
    return hints
