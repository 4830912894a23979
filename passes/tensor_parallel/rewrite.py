"""The per-chip function of contract 23 section 1, written from the decisions (decide.py).

Decided here, and why:

- **The function is rebuilt, not edited in place**: every argument's and result's type becomes
  the local shard's, so a new block with local argument types is filled with a copy of each tg op
  on local types (an attention's heads and KV heads become the chip's).
- **A collective is written once per (value, layout)**: two readers that need one value gathered
  share the gather. Each carries its reason (the reader and its plan) and its price
  (`passes/mesh_prices.cost_of`); an all_reduce's reason also prices its runner-up, a
  reduce_scatter then an all_gather.
- **A partial result is reduced before it is returned**: a caller reads a whole tensor per chip
  or a shard, never addends.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    FunctionType,
    StringAttr,
    TensorType,
    f64,
)
from xdsl.ir import Block, Operation, Region, SSAValue

from spatial_dialect.mesh import (
    AllGatherOp,
    AllReduceOp,
    ArgmaxGatherOp,
    Collective,
    CollectiveOp,
    ReduceScatterOp,
    ShardingAttr,
)
from spatial_dialect.mesh.interface import Placement, mark
from spatial_dialect.passes.mesh_prices import cost_of
from spatial_dialect.tg import RmsApplyOp, RmsNormOp, RmsStatsOp

from .decide import Decider, local_type, value_name
from .layout import REPLICATED, Layout, P, R, conversion, partial_scatter_gather
from .price import step_result_shape, steps_us

OPS = {
    Collective.ALL_GATHER: AllGatherOp,
    Collective.ALL_REDUCE: AllReduceOp,
    Collective.REDUCE_SCATTER: ReduceScatterOp,
}


def sharding_attrs(mesh_name: str, lay: Layout, rank: int) -> DictionaryAttr:
    """An argument's or result's attributes (mesh/interface.py writes them)."""
    return mark(
        None,
        Placement(
            ShardingAttr(mesh_name, lay.placements(rank)),
            max(p.repeat for p in lay.parts()),
            max(p.stacked for p in lay.parts()),
        ),
    )


class Rewriter:
    def __init__(self, d: Decider, mesh_name: str):
        self.d = d
        self.mesh_name = mesh_name
        self.block = Block(arg_types=[local_type(a, d.layouts[a], d.sizes) for a in d.fn.args])
        for old, new in zip(d.fn.args, self.block.args, strict=True):
            new.name_hint = old.name_hint
        self.values: dict[tuple[SSAValue, Layout], SSAValue] = {
            (old, d.layouts[old]): new for old, new in zip(d.fn.args, self.block.args, strict=True)
        }

    def _collective(self, step, value: SSAValue, shape, reason: str) -> SSAValue:
        t = value.type
        assert isinstance(t, TensorType)
        out = TensorType(t.get_element_type(), step_result_shape(step, shape, self.d.sizes))
        src = ShardingAttr(self.mesh_name, step.before)
        dst = ShardingAttr(self.mesh_name, step.after)
        op: CollectiveOp = OPS[step.kind](value, out, step.axis, src, dst, reason)
        op.properties["cost"] = cost_of(op, self.d.mesh)
        self.block.add_op(op)
        op.results[0].name_hint = value.name_hint
        return op.results[0]

    def _pick(self, step, value: SSAValue, out: TensorType, reason: str) -> Operation:
        src = ShardingAttr(self.mesh_name, step.before)
        dst = ShardingAttr(self.mesh_name, step.after)
        op = ArgmaxGatherOp(value, out, step.axis, src, dst, reason)
        op.properties["cost"] = cost_of(op, self.d.mesh)
        self.block.add_op(op)
        return op

    def value(self, old: SSAValue, want: Layout, reader: str) -> SSAValue:
        """The new value of ``old`` in layout ``want``, gathering it once."""
        if (old, want) in self.values:
            return self.values[(old, want)]
        cur = self.d.layouts[old]
        steps = conversion(cur, want, self.d.rank, self.d.scatter)
        assert steps is not None, f"{old} {cur} -> {want}"
        new = self.values[(old, cur)]
        t = old.type
        assert isinstance(t, TensorType)
        shape = cur.local_shape(t.get_shape(), self.d.sizes)
        owner = self.d.decisions.get(old.owner) if isinstance(old.owner, Operation) else None
        made = f"{old.owner.name} ({owner.plan.name})" if owner else "the host"
        reason = (
            f"{made} leaves {value_name(old)} {cur.describe()}; {reader} reads it {want.describe()}"
        )
        if cur.kind == P and want.kind == R and cur.also is None:
            alt = partial_scatter_gather(cur, len(shape) - 1, self.d.rank)
            if shape[-1] % self.d.mesh.chips == 0:
                us = steps_us(self.d.mesh, alt, t, shape)
                reason += f" (runner-up: reduce_scatter then all_gather, {us:.3f} us)"
        for step in steps:
            new = self._collective(step, new, shape, reason)
            shape = step_result_shape(step, shape, self.d.sizes)
        self.values[(old, want)] = new
        return new

    def op(self, op: Operation) -> None:
        dec = self.d.decisions[op]
        reader = f"{op.name} ({dec.plan.name})"
        operands = [
            self.value(v, lay, reader)
            for v, lay in zip(op.operands, dec.plan.operands, strict=True)
        ]
        types = [local_type(r, dec.plan.result, self.d.sizes) for r in op.results]
        attrs = dict(op.attributes)
        attrs["tp.plan"] = StringAttr(dec.plan.name)
        attrs["tp.us"] = FloatAttr(round(dec.us, 4), f64)
        attrs["tp.runner_up"] = StringAttr(dec.runner_up)
        if (step := dec.plan.collective) is not None:
            # The op is the collective (the vocab arg-max): it carries the decision.
            new = self._pick(
                step,
                operands[0],
                types[0],
                f"{reader} picks each row's first maximum over the chips' columns",
            )
            new.attributes.update(attrs)
        elif dec.plan.stats is not None:
            new = self._distributed_norm(op, operands, dec.plan.stats, reader)
            new.attributes.update(attrs)
        else:
            new = type(op).create(
                operands=operands,
                result_types=types,
                properties={**op.properties, **dec.plan.props},
                attributes=attrs,
            )
            self.block.add_op(new)
        for old_r, new_r in zip(op.results, new.results, strict=True):
            new_r.name_hint = old_r.name_hint
            self.values[(old_r, dec.plan.result)] = new_r

    def _distributed_norm(
        self, op: Operation, operands: list[SSAValue], axes, reader: str
    ) -> Operation:
        """tg.rms_norm on a chip's columns (tensor_parallel/norm.py): its share of each row's sum
        of squares, all-reduced over ``axes`` (rows x 1 f32, not x), then applied with the whole
        row's width."""
        assert isinstance(op, RmsNormOp)
        x, weight, *residual = operands
        res = residual[0] if residual else None
        stats_op = RmsStatsOp(x, res)
        self.block.add_op(stats_op)
        stats = stats_op.results[0]
        stats.name_hint = f"{op.results[0].name_hint or 'norm'}_ss"
        st, steps = self.d.stats_steps(op, axes)
        shape = list(st.get_shape())
        why = (
            f"{reader}: each chip's share of the rows' sum of squares, summed over the chips "
            "(the statistics, not x)"
        )
        for step in steps:
            stats = self._collective(step, stats, shape, why)
        n = _shape(op.operands[0])[1]
        apply = RmsApplyOp(x, stats, weight, res, eps=op.eps, n=n)
        self.block.add_op(apply)
        return apply

    def function(self) -> func.FuncOp:
        fn = self.d.fn
        ret = None
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                ret = op
                break
            self.op(op)
        assert ret is not None
        outs, out_lays = [], []
        for v in ret.arguments:
            lay = self.d.layouts[v]
            if lay.has_partial:
                lay = REPLICATED
            outs.append(self.value(v, lay, "func.return"))
            out_lays.append(lay)
        self.block.add_op(func.ReturnOp(*outs))
        rank = self.d.rank
        arg_attrs = []
        for i, a in enumerate(fn.args):
            old = fn.arg_attrs.data[i].data if fn.arg_attrs is not None else {}
            new = sharding_attrs(self.mesh_name, self.d.layouts[a], rank).data
            arg_attrs.append(DictionaryAttr({**old, **new}))
        res_attrs = [sharding_attrs(self.mesh_name, lay, rank) for lay in out_lays]
        out = func.FuncOp(
            fn.sym_name.data,
            FunctionType.from_lists(self.block.arg_types, [v.type for v in outs]),
            Region(self.block),
            fn.sym_visibility,
            arg_attrs=ArrayAttr(arg_attrs),
            res_attrs=ArrayAttr(res_attrs),
        )
        for k, v in fn.attributes.items():
            out.attributes[k] = v
        return out


def _shape(v: SSAValue) -> list[int]:
    t = v.type
    assert isinstance(t, TensorType)
    return list(t.get_shape())
