"""The collectives of a per-chip function become the linked deployment's steps
(docs/mesh.md#the-linked-deployment).

A per-chip function (the tensor-parallel pass's output, docs/mesh.md#the-per-chip-function) is
linked as any function: each tg op becomes its section on LOCAL tensors, every chip running the
same sections on its own shard. Each collective between them becomes a module-level `mesh.step`
at its place in execution order, reading its input's DRAM tensor and writing its result's, by
name, as sections do: a linked module has no SSA values between sections. The step keeps the
collective's axis, shardings, reason and price. Its tensors keep one layout (the prelude ties a
collective's input and result): a step moves a chip's tensor as it lies, never relays it.

The function's placements move onto the entry (`mesh.inputs`, `mesh.outputs` and the repeats),
verified first (`interface.verify_interface`), so the executors read them from the linked module.
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr
from xdsl.ir import Attribute, SSAValue

from spatial_dialect.mesh import CollectiveOp, StepOp
from spatial_dialect.mesh.interface import (
    ENTRY_CHIP_FIRSTS,
    chip_firsts_placement,
    entry_attributes,
    is_per_chip,
    verify_interface,
)


def step(op: CollectiveOp, names: dict[SSAValue, str]) -> StepOp:
    """The step a collective becomes: its result's tensor, written from its input's."""
    s = StepOp(
        names[op.result],
        op.KIND,
        names[op.input],
        op.axis.value.data,
        op.src,
        op.dst,
        op.input.type,
        op.result.type,
        op.reason.data if op.reason is not None else None,
        op.cost,
    )
    s.location = op.location
    return s


def entry_mesh_attributes(f: func.FuncOp, firsts: dict[str, int]) -> dict[str, Attribute]:
    """The placements the entry of `f` carries: none for a whole function; for a per-chip one, its
    verified interface (a refusal is reported at the function), then the chip-first inputs link
    added (`firsts`: name -> H, interface.ENTRY_CHIP_FIRSTS), which only a chip of a mesh has."""
    if not is_per_chip(f):
        return {}
    ins, outs = verify_interface(f)
    if not firsts:
        return entry_attributes(ins, outs)
    mesh = ins[0].sharding if ins else outs[0].sharding
    first = chip_firsts_placement(mesh.mesh.data, len(mesh.placements))
    attrs = entry_attributes([*ins, *[first] * len(firsts)], outs)
    attrs[ENTRY_CHIP_FIRSTS] = DictionaryAttr({n: IntegerAttr(h, 64) for n, h in firsts.items()})
    return attrs
