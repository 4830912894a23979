"""What `-t ttlang` prints for a deployment over several chips (issue 23): the `deployment`
function that runs every section on every chip and the collectives between them, in program
order, and the MESH table the host functions of host.py read.

A linked deployment (docs/mesh.md) is the sections of ONE chip's program with the collectives as
module-level steps between them, in the order tools/interpreters/deployment.py's `deployment_of`
reads (the one reader every executor shares); `Step` is what this printer reads of a step. A
collective is a host call between launches (host.py says why each runs where it runs); its
cluster axis is ttnn's (a 1-D mesh of n chips is ttnn's (1, n)), its dims those of the chip's
2-D DRAM tensor.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from spatial_dialect.mesh import Collective, StepOp, entry_dim
from spatial_dialect.tools.backend.ttlang import host
from spatial_dialect.tools.backend.ttlang.text import Lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported


@dataclass(frozen=True)
class Step:
    """One collective between sections: `dst` = KIND of `src` over mesh axis `axis`; the
    dims are the logical ones of the local tensors (`src_dim` the one a gather concatenates or an
    all_to_all's source dim, `dst_dim` the one a scatter splits), shapes the local shapes."""

    kind: Collective
    src: str
    dst: str
    axis: int
    src_dim: int | None
    dst_dim: int | None
    src_shape: tuple[int, ...]
    dst_shape: tuple[int, ...]
    dtype: str


HOST_CALL = {
    Collective.ALL_GATHER: host._all_gather,
    Collective.REDUCE_SCATTER: host._reduce_scatter,
    Collective.ALL_REDUCE: host._all_reduce,
    Collective.ALL_TO_ALL: host._all_to_all,
    Collective.ARGMAX_GATHER: host._argmax_gather,
}
"""The host function each collective prints as (host.py)."""


def ttnn_mesh(shape: Sequence[int]) -> tuple[int, int]:
    """ttnn's (rows, cols) of a mesh of our shape: ttnn's meshes are 2-D."""
    if len(shape) == 1:
        return (1, shape[0])
    if len(shape) == 2:
        return (shape[0], shape[1])
    raise TTLangUnsupported("-", f"a {len(shape)}-D mesh {list(shape)}: ttnn's meshes are 2-D")


def cluster_axis(shape: Sequence[int], axis: int) -> int:
    """ttnn's cluster axis of our mesh axis `axis`."""
    return 1 if len(shape) == 1 else axis


def stored_dim(step: Step, dim: int, shape: tuple[int, ...]) -> int:
    """The dim of the chip's (rows, cols) DRAM tensor (host.py `_as_2d`) that logical `dim`
    is: the last dim is the columns, the leading one whole rows; a middle dim of a 3-D tensor is
    neither (its blocks are strided in the rows), refused by name."""
    if dim == len(shape) - 1:
        return 1
    if dim == 0:
        return 0
    raise TTLangUnsupported(
        step.dst,
        f"{step.kind} of @{step.src} over dim {dim} of its {list(shape)} local tensor: a chip "
        f"stores it as (rows, cols), and dim {dim} is neither",
    )


def collective_call(step: Step, mesh_shape: Sequence[int]) -> str:
    """The host call of one step (its arguments in host.py's order)."""
    args = [repr(step.src), repr(step.dst), str(cluster_axis(mesh_shape, step.axis))]
    if step.kind is Collective.ALL_GATHER:
        assert step.src_dim is not None
        args.append(str(stored_dim(step, step.src_dim, step.src_shape)))
    elif step.kind is Collective.REDUCE_SCATTER:
        assert step.dst_dim is not None
        args.append(str(stored_dim(step, step.dst_dim, step.dst_shape)))
    elif step.kind is Collective.ALL_TO_ALL:
        assert step.src_dim is not None and step.dst_dim is not None
        args.append(str(stored_dim(step, step.src_dim, step.src_shape)))
        args.append(str(stored_dim(step, step.dst_dim, step.src_shape)))
    return f"{HOST_CALL[step.kind].__name__}(mesh, devices, drams, {', '.join(args)})"


def section_call(fn: str, names: Sequence[str | tuple[str, str]]) -> str:
    """A section's launch on one chip's DRAM."""
    args = [f"dram[{n!r}]" if isinstance(n, str) else f"_arg(dram, {n!r})" for n in names]
    return f"{fn}({', '.join(args)})"


def deployment_lines(order: Sequence[tuple[str, list] | Step], mesh_shape: Sequence[int]) -> Lines:
    """MESH and the `deployment` function: `order` holds each section as (fn, its arguments)
    and each step, in program order."""
    out = Lines()
    out(f"MESH = {ttnn_mesh(mesh_shape)!r}")
    out()
    out()
    out("def deployment(mesh, devices, drams):")
    with out.indent():
        out('"""Every section on every chip\'s own DRAM, the collectives between, in order."""')
        previous = None
        for item in order:
            if isinstance(item, Step):
                out(collective_call(item, mesh_shape))
            else:
                # a chip runs its sections up to the next collective
                if not isinstance(previous, tuple):
                    out("for dram in drams:")
                with out.indent():
                    out(section_call(*item))
            previous = item
    return out


def step_of(op: StepOp) -> Step:
    """What the printer reads of one `mesh.step`."""
    kind = Collective(op.kind.data)
    axis = op.axis.value.data
    before, after = op.src.placements[axis], op.dst.placements[axis]
    tin, tout = op.input_type, op.result_type
    return Step(
        kind,
        op.source.data,
        op.tensor.data,
        axis,
        entry_dim(before),
        entry_dim(after),
        tuple(tin.get_shape()),
        tuple(tout.get_shape()),
        str(tout.get_element_type()),
    )
