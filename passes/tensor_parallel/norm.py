"""The distributed rms_norm (docs/tensor-parallel.md#the-distributed-rms_norm): a whole-row
tg.rms_norm whose rows lie split by columns over the chips, as tt-metal's LLM layout keeps the
residual stream (tech report LLMs 3.3: reduce_scatter after the row-parallel product, the
residual add and the norm on each chip's columns, an all-gather of the per-row statistics only,
then an all_gather of x before the next column-parallel product).

Decided here, and why:

- **The norm is two tg ops on the chip** (tg.rms_stats, tg.rms_apply): a chip's share of a
  row's sum of squares is a partial sum over the chips, so the statistics (rows x 1, f32) take
  one all_reduce (the partial layout's ordinary conversion) where tt-metal all-gathers them and
  sums locally; the same bytes and latency per axis, and one collective kind the executors
  already run. rms_apply reads the whole row's width ``n``, so each chip's mean is the row's.
- **The plan (``distributed``)** takes x (and a fused residual) split by columns, the weight
  split alike (the host shards it), the result split alike; its price is the op on the local
  shapes plus the statistics' all_reduce (``Plan.stats``). A reader that wants the normalized x
  whole gathers it (an all_gather before a column product); a row product reads it as it is.
- **The residual stream stays split** (``scatter``): an add of a partial sum (a row product's
  output) becomes a reduce_scatter of it by columns and an add on each chip's columns, where
  the other operand lies so split (or is an argument the host splits), instead of an all_reduce
  and a replicated add.
- **The stream starts split** (``columns``): an embedding (tg.gather_rows) of a table split by
  columns gives each chip its columns of every row, with no collective; a replicated residual
  could not become split (tg has no local slice), so without it the first norm and add of a
  layer would be replicated.
- **It is a mode of the pass** (``distributed-norm``): ``priced`` (the default,
  ``NORM_DEFAULT``: the whole plan with every norm replicated and the one with every norm
  distributed are priced, __init__.per_chip, and the cheaper taken: op by op, the greedy
  decision's split embedding and scattered adds pay their gathers only later, so the plans here
  are offered only to the ``forced`` run), ``forced`` (the distributed, scatter and columns plans
  are taken wherever they can run, still priced and recorded: the tests' hook, as prefer-sharded
  is), ``off`` (every whole-row norm replicated).
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from spatial_dialect.tg import GatherRowsOp, RmsNormOp

from .layout import REPLICATED, P, S, shard, splits
from .plan import Plan, replicate

NORM_MODES = ("off", "priced", "forced")
"""The values of the pass's ``distributed-norm`` option (module docstring)."""

NORM_DEFAULT = "priced"
"""The mode tensor-parallel, spatial-pipeline and spatial-run take when none is given: every
decision by numbers (issue 23), the distributed norms taken where they are cheaper."""

NORM_PLANS = ("distributed", "scatter", "columns")
"""The plans ``forced`` takes wherever they can run."""

REPLICATED_WHY = {
    "off": "the distributed rms_norm is off (tensor-parallel{distributed-norm=priced|forced})",
    "priced": "distributed: priced as a whole plan, every norm distributed (mesh.deployment)",
}
"""Why a whole-row norm is replicated where its ``distributed`` plan is not priced op by op: the
mode is off, or ``priced`` compares the whole plans (module docstring) and this is the one with
replicated norms."""


def _cols(op: Operation, i: int) -> int:
    t = op.operands[i].type
    assert isinstance(t, TensorType)
    return t.get_shape()[1]


def norm_plans(op: RmsNormOp, ctx) -> list:
    """``distributed`` over each group x may lie split on by columns (its own layout, or one per
    group for an argument no op has read), then ``replicate``."""
    plans = []
    cols = _cols(op, 0)
    cur = ctx.layout(op.x)
    if cur is None:
        groups = ctx.groups
    elif cur.kind == S and cur.dim == 1 and cur.repeat == 1 and cur.stacked == 1:
        groups = [cur.axes]
    else:
        groups = []
        plans.append(Plan("distributed", refused=f"x is {cur.describe()}, not split by columns"))
    for g in groups:
        lay, over = shard(1, g), ctx.over(g)
        if not splits(cols, lay, ctx.sizes):
            why = f"{cols} columns do not split over {ctx.chips(g)} chips"
            plans.append(Plan("distributed", refused=why, over=over))
            continue
        lays = [lay, lay] + ([lay] if op.residual is not None else [])
        plans.append(Plan("distributed", lays, lay, over=over, stats=g))
    plans.append(replicate(op))
    return plans


def scatter_plans(op: Operation, ctx, linear: bool) -> list:
    """``scatter`` for an elementwise op one of whose operands is a partial sum (a row product's
    output) and none yet split: it is reduce_scattered by columns, the op runs on each chip's
    columns (where another operand is split so, its ``local`` plan reduce_scatters the partial
    sum alike). ``linear``:
    the op keeps partial sums partial (add, sub), so its ``partial`` plan exists too."""
    if not linear or ctx.norm != "forced":
        return []
    out = []
    for v in op.operands:
        cur = ctx.layout(v)
        if cur is None or cur.kind != P:
            continue
        lay = shard(1, cur.axes)
        cols = _cols(op, 0)
        if any(_shape_of(u) != _shape_of(op.operands[0]) for u in op.operands):
            continue
        if any(ctx.layout(u) == lay for u in op.operands):
            break  # the ``local`` plan of the split operand is this plan (it scatters v too)
        if not splits(cols, lay, ctx.sizes):
            why = f"{cols} columns do not split over {ctx.chips(cur.axes)} chips"
            out.append(Plan("scatter", refused=why, over=ctx.over(cur.axes)))
        else:
            out.append(Plan("scatter", [lay] * len(op.operands), lay, over=ctx.over(cur.axes)))
        break
    return out


def _shape_of(v) -> tuple[int, ...]:
    t = v.type
    assert isinstance(t, TensorType)
    return tuple(t.get_shape())


def embedding_plans(op: GatherRowsOp, ctx) -> list:
    """``columns``: the table split by columns (the host shards it), the ids replicated, each
    chip's rows its own columns; then ``replicate``."""
    cols = _cols(op, 0)
    plans = []
    cur = ctx.layout(op.table)
    for g in ctx.groups:
        lay, over = shard(1, g), ctx.over(g)
        if cur is not None and cur != lay:
            why = f"the table is {cur.describe()}"
            plans.append(Plan("columns", refused=why, over=over))
        elif not splits(cols, lay, ctx.sizes):
            why = f"{cols} columns do not split over {ctx.chips(g)} chips"
            plans.append(Plan("columns", refused=why, over=over))
        else:
            plans.append(Plan("columns", [lay, REPLICATED], lay, over=over))
    plans.append(replicate(op))
    return plans
