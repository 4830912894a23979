"""The reference meaning of a per-chip function (contract 23 section 1): every chip runs it in
lockstep on its own shard.

A value is a stack (collectives.py): leading axes the mesh's, trailing the chip's local tensor.
Each tg op runs once per chip on that chip's slice, by the tg reference (TgFunctions, as
reference.py runs a whole function); each mesh collective runs once on the whole stack, by
MeshFunctions. ``run_deployment`` shards whole inputs under the function's argument shardings
(``mesh.sharding``, ``mesh.repeat``), runs, and unshards the results under theirs, so that its
outputs can be compared with the whole function's reference: the proof that the
tensor-parallel pass keeps the meaning.

Decided here, and why:

- **Lockstep, op by op**: a collective needs every chip's operand at once, and an SPMD program
  reaches each collective on every chip in the same order, so running each op on all chips
  before the next is the schedule every deployment has.
- **The function's facts are read here by a small private reader** (`placements`); the shared
  reader of contract 23 (spatial_dialect/mesh/interface.py) replaces it at merge.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import SSAValue

from spatial_dialect.mesh import CollectiveOp, MeshOp, ShardingAttr
from spatial_dialect.tools.interpreters.collectives import MeshFunctions, shard, unshard
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import input_names
from spatial_dialect.tools.interpreters.tg_functions import TgFunctions


@dataclass(frozen=True)
class Placement:
    placements: tuple[str, ...]
    repeat: int = 1
    blocks: int = 1


def _placement(attrs: Mapping, what: str) -> Placement:
    sharding = attrs.get("mesh.sharding")
    if not isinstance(sharding, ShardingAttr):
        raise EvaluationError(f"{what} carries no mesh.sharding: not a per-chip function")
    rep, blocks = attrs.get("mesh.repeat"), attrs.get("mesh.blocks")
    return Placement(
        sharding.placements,
        rep.value.data if isinstance(rep, IntegerAttr) else 1,
        blocks.value.data if isinstance(blocks, IntegerAttr) else 1,
    )


def placements(fn: func.FuncOp) -> tuple[list[Placement], list[Placement]]:
    """Each argument's and result's placement over the mesh."""
    args = fn.arg_attrs.data if fn.arg_attrs is not None else []
    res = fn.res_attrs.data if fn.res_attrs is not None else []
    if len(args) != len(fn.args):
        raise EvaluationError(f"@{fn.sym_name.data}: arguments carry no mesh.sharding")
    ins = [_placement(d.data, f"argument {i}") for i, d in enumerate(args)]
    outs = [_placement(d.data, f"result {i}") for i, d in enumerate(res)]
    return ins, outs


def mesh_shape(fn: func.FuncOp) -> tuple[int, ...]:
    """The shape of the mesh the function's first argument is sharded over."""
    module = fn.parent_op()
    sharding = fn.arg_attrs.data[0].data["mesh.sharding"] if fn.arg_attrs else None
    assert isinstance(module, ModuleOp) and isinstance(sharding, ShardingAttr)
    for op in module.body.block.ops:
        if isinstance(op, MeshOp) and op.sym_name.data == sharding.mesh.data:
            return op.sizes
    raise EvaluationError(f"no mesh.mesh @{sharding.mesh.data} in the module")


def run_stacks(fn: func.FuncOp, stacks: Sequence[np.ndarray], shape: Sequence[int]) -> list:
    """The result stacks of ``fn`` run on every chip of a mesh of ``shape`` in lockstep."""
    module = fn.parent_op()
    interp = Interpreter(module if isinstance(module, ModuleOp) else ModuleOp([]))
    for impls in (FuncFunctions(), TgFunctions(), MeshFunctions()):
        interp.register_implementations(impls)
    env: dict[SSAValue, np.ndarray] = dict(zip(fn.args, stacks, strict=True))
    chips = list(np.ndindex(*shape))
    with np.errstate(over="ignore", under="ignore"):
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.arguments]
            args = [env[v] for v in op.operands]
            if isinstance(op, CollectiveOp):
                out = interp.run_op(op, tuple(args))
            else:
                per_chip = [interp.run_op(op, tuple(a[c] for a in args)) for c in chips]
                out = [
                    np.stack([np.asarray(p[i]) for p in per_chip]).reshape(
                        *shape, *np.asarray(per_chip[0][i]).shape
                    )
                    for i in range(len(op.results))
                ]
            env.update(zip(op.results, out, strict=True))
    raise EvaluationError(f"@{fn.sym_name.data} does not end in func.return")


def run_deployment(
    fn: func.FuncOp, whole: Mapping[str, np.ndarray], seed: int = 0
) -> list[np.ndarray]:
    """The whole results of the per-chip ``fn`` on the whole inputs ``whole`` (by argument name):
    shard, run every chip, unshard."""
    ins, outs = placements(fn)
    shape = mesh_shape(fn)
    rng = np.random.default_rng(seed)
    stacks = [
        shard(np.asarray(whole[name]), shape, p.placements, rng, p.repeat, p.blocks)
        for name, p in zip(input_names(fn), ins, strict=True)
    ]
    results = run_stacks(fn, stacks, shape)
    return [
        unshard(s, p.placements, p.repeat, p.blocks) for s, p in zip(results, outs, strict=True)
    ]
