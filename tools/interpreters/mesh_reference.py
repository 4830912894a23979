"""The reference meaning of a per-chip function (contract 23 section 1): every chip runs it in
lockstep on its own shard. The one mesh reference: spatial-run compares a hand-written per-chip
function with it, and the tensor-parallel tests compare it with the whole function's reference.

A value is a stack (collectives.py): leading axes the mesh's, trailing the chip's local tensor.
Each tg op runs once per chip on that chip's slice, by the tg reference (TgFunctions, as
reference.py runs a whole function); each mesh collective runs once on the whole stack, by
MeshFunctions. ``run_deployment`` shards whole inputs under the function's argument placements
(mesh/interface.py: ``mesh.sharding``, ``mesh.repeat``) by collectives.shard, runs, and unshards
the results under theirs, so that its outputs can be compared with the whole function's
reference: the proof that the tensor-parallel pass keeps the meaning.

Decided here, and why:

- **Lockstep, op by op**: a collective needs every chip's operand at once, and an SPMD program
  reaches each collective on every chip in the same order, so running each op on all chips
  before the next is the schedule every deployment has.
- **Chip 0's values are returned beside the outputs**: an arg-max output is compared against its
  logits' near ties, and the tensor-parallel rules never split an arg-max (it reads its logits
  whole), so chip 0 holds the whole logits.
- **A partial input's addends are drawn from a fixed seed** (deployment.PARTIAL_SEED): the split
  into addends is no part of the inputs a run is seeded with, and a rerun must see the same numbers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import SSAValue

from spatial_dialect.mesh import CollectiveOp
from spatial_dialect.mesh.interface import interface
from spatial_dialect.tools.interpreters.collectives import MeshFunctions, shard, unshard
from spatial_dialect.tools.interpreters.deployment import PARTIAL_SEED, mesh_sizes
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import EVALUATED_OPS, input_names
from spatial_dialect.tools.interpreters.tg_functions import REFUSED_OPS, TgFunctions


def check_ops_of(fn: func.FuncOp) -> None:
    """The tg reference's check of the ops (reference.check_ops), the collectives allowed."""
    for op in fn.body.block.ops:
        if isinstance(op, CollectiveOp | func.ReturnOp):
            continue
        if type(op) in REFUSED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics: {REFUSED_OPS[type(op)]}")
        if type(op) not in EVALUATED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics (only tg ops do)")


def run_stacks(
    fn: func.FuncOp, stacks: Sequence[np.ndarray], shape: Sequence[int]
) -> tuple[list[np.ndarray], dict[SSAValue, np.ndarray]]:
    """The result stacks of ``fn`` run on every chip of a mesh of ``shape`` in lockstep, and every
    value's stack."""
    check_ops_of(fn)
    module = fn.parent_op()
    interp = Interpreter(module if isinstance(module, ModuleOp) else ModuleOp([]))
    tg_impls = TgFunctions()
    for impls in (FuncFunctions(), tg_impls, MeshFunctions()):
        interp.register_implementations(impls)
    env: dict[SSAValue, np.ndarray] = dict(zip(fn.args, stacks, strict=True))
    chips = list(np.ndindex(*shape))
    with np.errstate(over="ignore", under="ignore"):
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                return [env[v] for v in op.arguments], env
            args = [env[v] for v in op.operands]
            if isinstance(op, CollectiveOp):
                out = interp.run_op(op, tuple(args))
            else:
                per_chip = []
                for i, c in enumerate(chips):
                    tg_impls.chip = i  # row-major: a tg.moe's held experts are chip i's
                    per_chip.append(interp.run_op(op, tuple(a[c] for a in args)))
                out = [
                    np.stack([np.asarray(p[i]) for p in per_chip]).reshape(
                        *shape, *np.asarray(per_chip[0][i]).shape
                    )
                    for i in range(len(op.results))
                ]
            env.update(zip(op.results, out, strict=True))
    raise EvaluationError(f"@{fn.sym_name.data} does not end in func.return")


def mesh_reference(
    fn: func.FuncOp, whole: Sequence[np.ndarray]
) -> tuple[list[np.ndarray], dict[SSAValue, np.ndarray]]:
    """The whole results of the per-chip ``fn`` on the whole inputs ``whole`` (in argument order)
    and chip 0's value of every value (module docstring): shard, run every chip, unshard."""
    ins, outs = interface(fn)
    shape = mesh_sizes(fn)
    rng = np.random.default_rng(PARTIAL_SEED)
    stacks = [
        shard(np.asarray(w), shape, p.placements, rng, p.repeat, p.blocks)
        for w, p in zip(whole, ins, strict=True)
    ]
    results, env = run_stacks(fn, stacks, shape)
    chip0 = {v: s[(0,) * len(shape)] for v, s in env.items()}
    outputs = [
        unshard(s, p.placements, p.repeat, p.blocks) for s, p in zip(results, outs, strict=True)
    ]
    return outputs, chip0


def run_deployment(fn: func.FuncOp, whole: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The whole results of the per-chip ``fn`` on the whole inputs ``whole`` (by argument name)."""
    return mesh_reference(fn, [whole[name] for name in input_names(fn)])[0]
