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
- `run_step(step, stack)`: a step on a stack, by collectives.py's functions.

The reference of a per-chip function in lockstep is mesh_reference.py's.

Decided here, and why:

- **A repeat is collectives.shard's** (docs/mesh.md#the-per-chip-function): the one definition
  of sharding and unsharding with a repeat, which the mesh reference uses too.
- **A partial input's addends are drawn from a fixed seed**: the split into addends is no part
  of the inputs a run is seeded with, and a rerun must see the same numbers.
- **A chip-first input is the host's** (`mesh.chip_firsts`, docs/tensor-parallel.md#an-moe-by-
  experts): link adds it after the function's arguments, so a caller passes the function's whole
  inputs and `shard_inputs` adds each one's whole [chips, 1] i32 (row c: c x H), split by rows
  as any input is: the executors and the printed programs receive it as any other shard.
- **A per-chip function's reference is the mesh's** (mesh_reference.py): the single-device
  reference needs the WHOLE function, which a hand-written per-chip function does not have;
  spatial-run on a whole function and a mesh target compares with the whole function's reference.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType

from spatial_dialect import sp
from spatial_dialect.mesh import Collective, MeshOp, StepOp, entry_dim
from spatial_dialect.mesh.interface import (
    Placement,
    entry_chip_firsts,
    entry_placements,
    interface,
    whole_type,
)
from spatial_dialect.tools.interpreters import collectives
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import input_names

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
    chip_firsts: dict[str, int]
    """The inputs the host supplies per chip, last in the entry: name -> H (chip c's is c x H)."""

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
    firsts = entry_chip_firsts(dict(entry.attributes))
    return Deployment(mesh.sizes, ins, outs, placed[0], placed[1], schedule, firsts)


def whole_shapes(fn: func.FuncOp) -> dict[str, tuple[int, ...]]:
    """The whole shape of each input of a per-chip function, by input name."""
    mesh = mesh_sizes(fn)
    ins, _ = interface(fn)
    shapes = {}
    for name, arg, p in zip(input_names(fn), fn.body.block.args, ins, strict=True):
        assert isinstance(arg.type, TensorType)
        shapes[name] = tuple(whole_type(arg.type, p, mesh).get_shape())
    return shapes


def mesh_sizes(fn: func.FuncOp) -> tuple[int, ...]:
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


def shard_inputs(dep: Deployment, whole: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Every entry input's stack from the function's whole inputs (entry order), the chip-first
    inputs added (module docstring)."""
    rng = np.random.default_rng(PARTIAL_SEED)
    firsts = [
        (np.arange(dep.chips, dtype=np.int32) * h).reshape(dep.chips, 1)
        for h in dep.chip_firsts.values()
    ]
    whole = [*whole, *firsts]
    return [
        collectives.shard(w, dep.mesh_shape, p.placements, rng, p.repeat, p.blocks)
        for w, p in zip(whole, dep.inputs, strict=True)
    ]


def unshard_outputs(dep: Deployment, stacks: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [
        collectives.unshard(s, p.placements, p.repeat, p.blocks)
        for s, p in zip(stacks, dep.outputs, strict=True)
    ]


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
    Collective.ARGMAX_GATHER: lambda s, rank, a, _b, _a: collectives.argmax_gather(s, rank, a),
}
"""Each collective kind and its meaning on a stack (collectives.py), for the linked steps."""


def run_step(step: StepOp, stacked: np.ndarray) -> np.ndarray:
    """A step's result on every chip, from its input on every chip (both stacks)."""
    a = step.axis.value.data
    before, after = step.src.placements[a], step.dst.placements[a]
    fn = STEP_FUNCTIONS[step.collective]
    return fn(stacked, len(step.src.placements), a, before, after)
