"""A linked deployment's `mesh.step`s in the printed Triton module: the collectives between the
kernel launches (docs/backend-triton.md#several-chips).

A step reads the local DRAM tensor an earlier section (or step, or the entry) wrote and writes its
own, which later sections read by name (docs/mesh.md#the-linked-deployment); in `launch` it is one
call of the helper of its kind (mesh_host.py: torch.distributed over the process group of its mesh
axis), in the module's order, between the kernels it sits between. Its tensors are held as the
kernels hold theirs (a rank-1 tensor is one row), so a sharded dim is named in held dims here.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import TensorType

from spatial_dialect.mesh import Collective, StepOp, entry_dim
from spatial_dialect.tools.backend.triton.kernel import TORCH_DTYPES, TritonNotEmitted
from spatial_dialect.tools.backend.triton.mesh_host import COLLECTIVES
from spatial_dialect.tools.backend.triton.text import INDENT, wrap


@dataclass
class Step:
    """One step as `launch` calls it."""

    op: StepOp
    kind: Collective
    source: str
    result: str

    @property
    def name(self) -> str:
        return self.op.tensor.data

    def refuse(self, why: str) -> TritonNotEmitted:
        return TritonNotEmitted(f"mesh.step @{self.name}", why)


def _held_dim(t: TensorType, dim: int) -> int:
    """Dim `dim` of a declared tensor in its held form (a rank-1 tensor is one row)."""
    return dim + 1 if len(t.get_shape()) == 1 else dim


def held_shape(t: TensorType) -> tuple[int, int]:
    """sp.TensorOp.shape2d's rule (a rank-1 tensor is one row) for a step's types, which are no
    sp.tensor's."""
    dims = t.get_shape()
    return (1, dims[0]) if len(dims) == 1 else (dims[0], dims[1])


def step_of(op: StepOp) -> Step:
    s = Step(op, op.collective, op.source.data, op.tensor.data)
    for t in (op.input_type, op.result_type):
        if len(t.get_shape()) > 2:
            raise s.refuse(f"{t} has rank {len(t.get_shape())}; DRAM tensors are held as rank 2")
        if str(t.get_element_type()) not in TORCH_DTYPES:
            raise s.refuse(f"{t} has no torch dtype")
    return s


def tensors(s: Step) -> dict[str, tuple[tuple[int, int], str, tuple[int, ...]]]:
    """The step's DRAM tensors as printer.py's TENSORS holds them."""
    return {
        name: (held_shape(t), str(t.get_element_type()), tuple(t.get_shape()))
        for name, t in ((s.source, s.op.input_type), (s.result, s.op.result_type))
    }


def launch_lines(s: Step) -> list[str]:
    """The step's comment and its call in `launch`."""
    op = s.op
    a = op.axis.value.data
    before, after = op.src.placements[a], op.dst.placements[a]
    args = [f"t[{s.source!r}]", f"t[{s.result!r}]", f"GROUPS[{a}]"]
    t = op.input_type
    # The dims the collective splits or joins, in held dims (module docstring).
    args += [str(_held_dim(t, d)) for d in (entry_dim(before), entry_dim(after)) if d is not None]
    reason = f": {op.reason.data}" if op.reason is not None else ""
    return [
        *wrap(
            f"{INDENT}# @{s.name}: {s.kind.value} of @{s.source} over mesh axis {a}, "
            f"{before} -> {after}{reason}"
        ),
        *wrap(f"{INDENT}{COLLECTIVES[s.kind].__name__}({', '.join(args)})"),
    ]


def run_it(chips: int) -> str:
    """How a person launches a deployment over `chips` chips (printer.py's header)."""
    return (
        "Run it, one rank per chip, each on its own shards (TRITON_INTERPRET=1 runs it on the CPU\n"
        "over gloo; on GPUs, one per rank, it runs over NCCL):\n\n"
        f"    torchrun --nproc_per_node={chips} THIS.py [--inputs in.{{rank}}.npz] "
        "[--out out.{rank}.npz]\n"
        "        [--seed N] [--device cuda|cpu]"
    )


def mesh_tables(shape: tuple[int, ...]) -> str:
    """The deployment's tables (printer.py's header): the mesh and its process groups."""
    return (
        f"MESH = {shape!r}\n"
        '"""The mesh\'s shape: rank r is chip np.unravel_index(r, MESH)."""\n'
        "GROUPS = []\n"
        '"""Per mesh axis, the process group of this rank\'s chips along it (_join)."""\n'
    )
