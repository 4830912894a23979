"""`tensor-parallel{mesh=PRESET}`: the whole-tensor tg function becomes the per-chip function of
a tensor-parallel deployment (contract 23 section 1; docs/tensor-parallel.md).

Every chip runs the same per-chip function on its own shard (SPMD): arguments and results have
local types and carry `mesh.sharding` (and `mesh.repeat`), the mesh collectives sit where a
reader needs another layout than its producer's, and each tg op records its decision
(`tp.plan`, `tp.us`, `tp.runner_up`). The decision is decide.py's, op by op, on the chip target's
prices and the mesh's collective prices; rules.py says which shardings each op may take.

Decided here, and why:

- **Running it twice changes nothing**: a function whose arguments already carry
  `mesh.sharding` is left alone, and the `mesh.mesh` op is added once.
- **A bad option is refused in one line** naming the presets, before anything is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from spatial_dialect.mesh import CollectiveOp, MeshOp
from spatial_dialect.passes.mesh_prices import mesh_op_of
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.mesh import MESH_PRESETS

from .decide import Decider
from .price import op_us
from .rewrite import Rewriter


def is_per_chip(fn: func.FuncOp) -> bool:
    """Whether ``fn`` is already a per-chip function (its arguments carry mesh.sharding)."""
    if fn.arg_attrs is None:
        return False
    return any("mesh.sharding" in d.data for d in fn.arg_attrs.data)


def per_chip(fn: func.FuncOp, preset: str, prefer_sharded: bool = False) -> func.FuncOp:
    """The per-chip function of ``fn`` over mesh ``preset`` (a new op; ``fn`` is untouched)."""
    mesh = MESH_PRESETS[preset]
    decider = Decider(mesh, fn, prefer_sharded)
    decider.run()
    out = Rewriter(decider, preset).function()
    # Each op alone plus each collective written: a decision's tp.us also counts the collectives
    # it causes, which its neighbours' count too.
    total = sum(d.own for d in decider.decisions.values()) + sum(
        op.cost.ns.data / 1000.0
        for op in out.body.block.ops
        if isinstance(op, CollectiveOp) and op.cost is not None
    )
    # What running the whole function on every chip would take: the greedy decision's yardstick.
    replicated = sum(
        op_us(mesh, op, [v.type for v in op.operands], [r.type for r in op.results])
        for op in decider.decisions
    )
    out.attributes["mesh.deployment"] = StringAttr(
        f"tensor-parallel over {preset} ({mesh.describe()}): {total:.3f} us per chip, priced "
        f"(every op replicated: {replicated:.3f} us)"
    )
    return out


@dataclass(frozen=True)
class TensorParallelPass(ModulePass):
    """`tensor-parallel{mesh=PRESET prefer-sharded=false}`: each tg function becomes its per-chip
    function over the mesh preset (targets/mesh.py MESH_PRESETS). `prefer-sharded=true` takes a
    sharded plan wherever one can run (the Megatron layout at any size: the tiny models'
    collectives cost more than their products save, so by price alone they are gathered early)."""

    name = "tensor-parallel"
    mesh: str | None = None
    prefer_sharded: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mesh is None:
            raise SpatialPassError(
                f"tensor-parallel: give mesh=PRESET (one of {', '.join(MESH_PRESETS)})"
            )
        if self.mesh not in MESH_PRESETS:
            raise SpatialPassError(
                f"tensor-parallel: unknown mesh {self.mesh!r} (known: {', '.join(MESH_PRESETS)})"
            )
        fns = [f for f in op.body.block.ops if isinstance(f, func.FuncOp) and not is_per_chip(f)]
        if not fns:
            return
        have = {m.sym_name.data for m in op.body.block.ops if isinstance(m, MeshOp)}
        if self.mesh not in have:
            first = op.body.block.first_op
            mesh_op = mesh_op_of(self.mesh)
            if first is None:
                op.body.block.add_op(mesh_op)
            else:
                op.body.block.insert_op_before(mesh_op, first)
        for fn in fns:
            new = per_chip(fn, self.mesh, self.prefer_sharded)
            op.body.block.insert_op_before(new, fn)
            fn.detach()
            fn.erase()
        op.verify()
