"""The plumbing every executor of a deployment over a mesh shares (docs/mesh.md#the-linked-deployment,
docs/simulator.md#deployments-over-a-mesh).

A deployment is SPMD: every chip runs the same sections on its own shard and the steps run across
the chips between them. Every executor (our simulator, tt-lang-sim's, Triton's) runs one the same
way, and this module is that way, once:

- `deployment_of(module)`: the linked module's mesh shape, the entry's names and placements
  (`mesh/interface.entry_placements`) and its schedule, the sections and steps in execution order;
- `whole_shapes(fn)`: a per-chip function's whole input shapes (`interface.whole_type`), which
  spatial-run draws inputs in;
- `shard_inputs` / `unshard_outputs`: whole tensors to stacks (one array whose leading axes are the
  mesh's, collectives.py) under the entry's placements, and back; `chips` / `stack` convert a
  stack to the list of chips' arrays (chip order: row-major over the mesh) and back;
- `run_step(step, stack)`: a step on a stack, by collectives.py's functions;
- `mesh_reference(fn, whole)`: the reference of a per-chip function, in lockstep: every tg op runs
  on every chip's values (the tg reference's implementations), every collective across them.

Decided here, and why:

- **A repeat is sharding an expanded tensor.** Repeat r (docs/mesh.md#the-per-chip-function) is
  the tensor cut into n/r blocks along its dim, each held by r consecutive chips: exactly
  `collectives.shard` of the tensor with every block written r times in a row, so this module
  expands and contracts around `shard`/`unshard` rather than restating them.
- **A partial input's addends are drawn from a fixed seed**: the split into addends is no part
  of the inputs a run is seeded with, and a rerun must see the same numbers.
- **A per-chip function's reference is the mesh's, for now**: the single-device reference needs
  the WHOLE function, which a hand-written per-chip function does not have; once the
  tensor-parallel pass makes per-chip functions from whole ones, an executor compares with the
  whole function's reference instead.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import SSAValue

from spatial_dialect import sp
from spatial_dialect.mesh import Collective, CollectiveOp, MeshOp, StepOp, entry_dim
from spatial_dialect.mesh.interface import (
    Placement,
    entry_placements,
    interface,
    whole_type,
)
from spatial_dialect.tools.interpreters import collectives
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import EVALUATED_OPS, input_names
from spatial_dialect.tools.interpreters.tg_functions import REFUSED_OPS, TgFunctions

PARTIAL_SEED = 23
"""The seed of a partial input's addends (module docstring)."""


@dataclass(frozen=True)
class Deployment:
    """A linked deployment over a mesh: what every executor reads of it."""

    mesh_shape: tuple[int, ...]
    input_names: list[str]
    output_names: list[str]
    inputs: list[Placement]
    outputs: list[Placement]
    schedule: list[sp.ProgramOp | StepOp]
    """The sections and steps in execution order (the module's order)."""

    @property
    def chips(self) -> int:
        return int(np.prod(self.mesh_shape))

    @property
    def steps(self) -> list[StepOp]:
        return [s for s in self.schedule if isinstance(s, StepOp)]


def deployment_of(module: ModuleOp) -> Deployment | None:
    """The deployment a linked module is, or None for one chip's program (an entry without
    placements)."""
    entries = [op for op in module.walk() if isinstance(op, sp.EntryOp)]
    if len(entries) != 1:
        return None
    entry = entries[0]
    ins = [s.data for s in entry.inputs.data]
    outs = [s.data for s in entry.outputs.data]
    placed = entry_placements(dict(entry.attributes), len(ins), len(outs), "sp.entry")
    if placed is None:
        return None
    meshes = {op.sym_name.data: op for op in module.body.block.ops if isinstance(op, MeshOp)}
    placements = placed[0] + placed[1]
    name = placements[0].sharding.mesh.data if placements else None
    mesh = meshes.get(name) if name is not None else None
    if mesh is None:
        raise EvaluationError(f"sp.entry is placed over mesh @{name}, which is not in the module")
    schedule = [op for op in module.body.block.ops if isinstance(op, sp.ProgramOp | StepOp)]
    return Deployment(mesh.sizes, ins, outs, placed[0], placed[1], schedule)


def whole_shapes(fn: func.FuncOp) -> dict[str, tuple[int, ...]]:
    """The whole shape of each input of a per-chip function, by input name."""
    mesh = _mesh_sizes(fn)
    ins, _ = interface(fn)
    shapes = {}
    for name, arg, p in zip(input_names(fn), fn.body.block.args, ins, strict=True):
        assert isinstance(arg.type, TensorType)
        shapes[name] = tuple(whole_type(arg.type, p, mesh).get_shape())
    return shapes


def _mesh_sizes(fn: func.FuncOp) -> tuple[int, ...]:
    ins, outs = interface(fn)
    name = (ins or outs)[0].sharding.mesh.data
    module = fn.parent_op()
    assert isinstance(module, ModuleOp)
    for op in module.body.block.ops:
        if isinstance(op, MeshOp) and op.sym_name.data == name:
            return op.sizes
    raise EvaluationError(f"@{fn.sym_name.data}: mesh @{name} is not in the module")


# ── Stacks ────────────────────────────────────────────────────────────────────────────────────


def chips(stack: np.ndarray, mesh_shape: Sequence[int]) -> list[np.ndarray]:
    """Each chip's array of a stack, in row-major chip order."""
    flat = stack.reshape((-1, *stack.shape[len(mesh_shape) :]))
    return [flat[i].copy() for i in range(flat.shape[0])]


def stack(arrays: Sequence[np.ndarray], mesh_shape: Sequence[int]) -> np.ndarray:
    """The stack of the chips' arrays (row-major chip order)."""
    return np.stack(list(arrays)).reshape((*mesh_shape, *arrays[0].shape))


def _repeated(p: Placement) -> tuple[int, int] | None:
    """(mesh axis, tensor dim) of a placement's repeat; None at repeat 1."""
    axis = p.repeated_axis()
    if axis is None:
        return None
    dim = entry_dim(p.placements[axis])
    assert dim is not None
    return axis, dim


def shard_one(whole: np.ndarray, mesh_shape: Sequence[int], p: Placement, rng) -> np.ndarray:
    """The stack of one whole tensor under placement `p` (module docstring: the repeat)."""
    where = _repeated(p)
    if where is not None:
        axis, dim = where
        blocks = np.split(whole, mesh_shape[axis] // p.repeat, axis=dim)
        whole = np.concatenate([b for b in blocks for _ in range(p.repeat)], axis=dim)
    return collectives.shard(whole, mesh_shape, p.placements, rng, blocks=p.blocks)


def unshard_one(stacked: np.ndarray, mesh_shape: Sequence[int], p: Placement) -> np.ndarray:
    """The whole tensor a stack holds under `p`: for a repeat, one chip of each group."""
    whole = collectives.unshard(stacked, p.placements, blocks=p.blocks)
    where = _repeated(p)
    if where is not None:
        axis, dim = where
        blocks = np.split(whole, mesh_shape[axis], axis=dim)
        whole = np.concatenate(blocks[:: p.repeat], axis=dim)
    return whole


def shard_inputs(dep: Deployment, whole: Sequence[np.ndarray]) -> list[np.ndarray]:
    rng = np.random.default_rng(PARTIAL_SEED)
    return [shard_one(w, dep.mesh_shape, p, rng) for w, p in zip(whole, dep.inputs, strict=True)]


def unshard_outputs(dep: Deployment, stacks: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [unshard_one(s, dep.mesh_shape, p) for s, p in zip(stacks, dep.outputs, strict=True)]


# ── Steps ─────────────────────────────────────────────────────────────────────────────────────

StepFunction = Callable[[np.ndarray, int, int, str, str], np.ndarray]

STEP_FUNCTIONS: dict[Collective, StepFunction] = {
    Collective.ALL_GATHER: lambda s, rank, a, before, _: collectives.all_gather(
        s, rank, a, entry_dim(before)
    ),
    Collective.REDUCE_SCATTER: lambda s, rank, a, _, after: collectives.reduce_scatter(
        s, rank, a, entry_dim(after)
    ),
    Collective.ALL_REDUCE: lambda s, rank, a, _b, _a: collectives.all_reduce(s, rank, a),
    Collective.ALL_TO_ALL: lambda s, rank, a, before, after: collectives.all_to_all(
        s, rank, a, entry_dim(before), entry_dim(after)
    ),
}
"""Each collective kind and its meaning on a stack (collectives.py), for the linked steps."""


def run_step(step: StepOp, stacked: np.ndarray) -> np.ndarray:
    """A step's result on every chip, from its input on every chip (both stacks)."""
    a = step.axis.value.data
    before, after = step.src.placements[a], step.dst.placements[a]
    fn = STEP_FUNCTIONS[step.collective]
    return fn(stacked, len(step.src.placements), a, before, after)


# ── The mesh reference of a per-chip function ─────────────────────────────────────────────────


def mesh_reference(fn: func.FuncOp, whole: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The per-chip function's whole outputs: its inputs sharded, every tg op run on every
    chip's values by the tg reference, every collective across the chips, the outputs unsharded."""
    check_ops_of(fn)
    mesh = _mesh_sizes(fn)
    ins, outs = interface(fn)
    rng = np.random.default_rng(PARTIAL_SEED)
    n = int(np.prod(mesh))
    env: list[dict[SSAValue, np.ndarray]] = [{} for _ in range(n)]
    for arg, w, p in zip(fn.body.block.args, whole, ins, strict=True):
        for c, local in enumerate(chips(shard_one(w, mesh, p, rng), mesh)):
            env[c][arg] = local
    module = fn.parent_op()
    interp = Interpreter(module if isinstance(module, ModuleOp) else ModuleOp([]))
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(TgFunctions())
    interp.register_implementations(collectives.MeshFunctions())
    returned: list[SSAValue] = []
    with np.errstate(over="ignore", under="ignore"):
        for op in fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                returned = list(op.operands)
            elif isinstance(op, CollectiveOp):
                (out,) = interp.run_op(op, (stack([e[op.input] for e in env], mesh),))
                for c, local in enumerate(chips(out, mesh)):
                    env[c][op.result] = local
            else:
                for e in env:
                    results = interp.run_op(op, tuple(e[v] for v in op.operands))
                    e.update(zip(op.results, results, strict=True))
    return [
        unshard_one(stack([e[v] for e in env], mesh), mesh, p)
        for v, p in zip(returned, outs, strict=True)
    ]


def check_ops_of(fn: func.FuncOp) -> None:
    """The tg reference's check of the ops (reference.check_ops), the collectives allowed."""
    for op in fn.body.block.ops:
        if isinstance(op, CollectiveOp):
            continue
        if type(op) in REFUSED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics: {REFUSED_OPS[type(op)]}")
        if type(op) not in EVALUATED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics (only tg ops do)")
