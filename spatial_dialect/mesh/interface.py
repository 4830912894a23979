"""The interface of a per-chip function: how each argument and result lies over the mesh
(docs/mesh.md#the-per-chip-function).

The tensor-parallel pass turns a whole-tensor function into ONE per-chip function that every chip
runs on its own shard (SPMD). Its argument and result TYPES are one chip's shard; what the whole
tensor is, and which chip holds which block, is recorded on each argument and result:

- ``mesh.sharding = #mesh.sharding<@m, [...]>``: the placement of the whole tensor on each mesh
  axis (required on every tensor argument and result once any carries one).
- ``mesh.repeat = r : i64`` (optional, default 1): the dim that the sharding shards is cut into
  (chips along that axis) / r blocks, each held by r consecutive chips (KV heads replicated when a
  model has fewer KV heads than chips: 2 heads on 4 chips is repeat 2). It needs exactly one mesh
  axis to shard, and r must divide that axis's chips.
- ``mesh.blocks = b : i64`` (optional, default 1): the sharded dim is b equal blocks, each split
  over the chips as the sharding says, so a chip holds the same slice of every block, in block
  order (tg.moe's E experts stacked by rows: w_down's rows are split within each expert's block
  when each expert's FFN width is split). It needs one tensor dim sharded, no repeat, and the
  local dim a multiple of b.

Read by ONE module (this one), from the pass, from link (which copies the placements onto the
linked ``sp.entry``) and from the executors (through tools/), so that no reader re-derives them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation

from spatial_dialect.mesh.attrs import MeshVerifyError, ShardingAttr, check_sharding, entry_dim
from spatial_dialect.mesh.ops import MeshOp, lookup_mesh

SHARDING = "mesh.sharding"
REPEAT = "mesh.repeat"
BLOCKS = "mesh.blocks"
"""The argument/result attributes of a per-chip function."""

ENTRY_INPUTS = "mesh.inputs"
ENTRY_OUTPUTS = "mesh.outputs"
ENTRY_INPUT_REPEATS = "mesh.input_repeats"
ENTRY_OUTPUT_REPEATS = "mesh.output_repeats"
ENTRY_INPUT_BLOCKS = "mesh.input_blocks"
ENTRY_OUTPUT_BLOCKS = "mesh.output_blocks"
"""The attributes of a linked deployment's ``sp.entry``: one sharding and one repeat per input and
output, in the entry's order (the function's args and results); the blocks lists only where a
placement has blocks."""
ENTRY_CHIP_FIRSTS = "mesh.chip_firsts"
"""``{name = H}``: entry inputs link added after the function's arguments, which the host supplies
per chip: chip c's value is c x H (a [1, 1] i32, its whole tensor [chips, 1] split on dim 0 over
every axis; a tg.moe's first held expert under the `experts` plan, docs/tensor-parallel.md)."""


@dataclass(frozen=True)
class Placement:
    """How one whole tensor lies over the mesh: its sharding and its repeat (module docstring)."""

    sharding: ShardingAttr
    repeat: int = 1
    blocks: int = 1

    @property
    def placements(self) -> tuple[str, ...]:
        return self.sharding.placements

    def repeated_axis(self) -> int | None:
        """The one mesh axis that shards the tensor where repeat > 1 (None at repeat 1)."""
        if self.repeat == 1:
            return None
        axes = [a for a, e in enumerate(self.placements) if entry_dim(e) is not None]
        return axes[0] if len(axes) == 1 else None

    def blocked_dim(self) -> int | None:
        """The one tensor dim the sharding splits (None where it splits none or several)."""
        dims = {entry_dim(e) for e in self.placements} - {None}
        return dims.pop() if len(dims) == 1 else None


def _placement(attrs: DictionaryAttr | None, what: str) -> Placement | None:
    data = attrs.data if attrs is not None else {}
    sharding = data.get(SHARDING)
    repeat = data.get(REPEAT)
    blocks = data.get(BLOCKS)
    if sharding is None:
        if repeat is not None or blocks is not None:
            raise MeshVerifyError(f"{what}: {REPEAT if repeat else BLOCKS} without {SHARDING}")
        return None
    if not isinstance(sharding, ShardingAttr):
        raise MeshVerifyError(f"{what}: {SHARDING} must be a #mesh.sharding, got {sharding}")
    r = 1
    if repeat is not None:
        if not (isinstance(repeat, IntegerAttr) and repeat.type == i64):
            raise MeshVerifyError(f"{what}: {REPEAT} must be an i64, got {repeat}")
        r = repeat.value.data
    b = 1
    if blocks is not None:
        if not (isinstance(blocks, IntegerAttr) and blocks.type == i64):
            raise MeshVerifyError(f"{what}: {BLOCKS} must be an i64, got {blocks}")
        b = blocks.value.data
    return Placement(sharding, r, b)


def _arg_attrs(f: func.FuncOp) -> list[DictionaryAttr | None]:
    n = len(f.function_type.inputs)
    return list(f.arg_attrs.data) if f.arg_attrs is not None else [None] * n


def _res_attrs(f: func.FuncOp) -> list[DictionaryAttr | None]:
    n = len(f.function_type.outputs)
    return list(f.res_attrs.data) if f.res_attrs is not None else [None] * n


def is_per_chip(f: func.FuncOp) -> bool:
    """Whether `f` is a per-chip function: any argument or result carries a sharding."""
    attrs = [*_arg_attrs(f), *_res_attrs(f)]
    return any(a is not None and SHARDING in a.data for a in attrs)


def interface(f: func.FuncOp) -> tuple[list[Placement], list[Placement]]:
    """The placements of `f`'s arguments and results, verified (:func:`verify_interface`)."""
    return verify_interface(f)


def verify_interface(f: func.FuncOp) -> tuple[list[Placement], list[Placement]]:
    """Every argument and result of a per-chip function carries a sharding over a `mesh.mesh` in
    scope, with one placement per mesh axis, shard dims inside the tensor, and a repeat that
    divides the chips of the one axis that shards it. Refusals name the function, the argument
    or result, and the numbers."""
    name = f"@{f.sym_name.data}"
    types = (f.function_type.inputs.data, f.function_type.outputs.data)
    sides = (_arg_attrs(f), _res_attrs(f))
    out: tuple[list[Placement], list[Placement]] = ([], [])
    for side, (kind, tys, attrs) in enumerate(
        zip(("argument", "result"), types, sides, strict=True)
    ):
        for i, (t, a) in enumerate(zip(tys, attrs, strict=True)):
            what = f"{name} {kind} {i}"
            p = _placement(a, what)
            if p is None:
                raise MeshVerifyError(
                    f"{what} carries no {SHARDING}: every argument and result of a per-chip "
                    "function says how its whole tensor lies over the mesh"
                )
            out[side].append(p)
            check_placement(f, t, p, what)
    return out


def check_placement(op: Operation, t: Attribute, p: Placement, what: str) -> MeshOp:
    """One placement of a local tensor type `t`: the mesh in scope, the ranks, the repeat."""
    if not isinstance(t, TensorType):
        raise MeshVerifyError(f"{what}: a sharding places a tensor, got {t}")
    mesh = lookup_mesh(op, p.sharding, what)
    check_sharding(p.sharding, len(mesh.sizes), t.get_num_dims(), what)
    if p.repeat < 1:
        raise MeshVerifyError(f"{what}: {REPEAT} must be >= 1, got {p.repeat}")
    if p.repeat > 1:
        axis = p.repeated_axis()
        if axis is None:
            raise MeshVerifyError(
                f"{what}: {REPEAT} = {p.repeat} needs exactly one mesh axis to shard, got "
                f"[{', '.join(p.placements)}]"
            )
        if mesh.sizes[axis] % p.repeat:
            raise MeshVerifyError(
                f"{what}: {REPEAT} = {p.repeat} does not divide the {mesh.sizes[axis]} chips of "
                f"mesh axis {axis}"
            )
    if p.blocks != 1:
        dim = p.blocked_dim()
        if p.blocks < 1 or dim is None or p.repeat != 1:
            raise MeshVerifyError(
                f"{what}: {BLOCKS} = {p.blocks} needs blocks >= 1, one tensor dim sharded and no "
                f"{REPEAT}, got [{', '.join(p.placements)}] with {REPEAT} = {p.repeat}"
            )
        if t.get_shape()[dim] % p.blocks:
            raise MeshVerifyError(
                f"{what}: {BLOCKS} = {p.blocks} does not divide the {t.get_shape()[dim]} local "
                f"rows of dim {dim}"
            )
    return mesh


def whole_type(local: TensorType, p: Placement, mesh_sizes: Sequence[int]) -> TensorType:
    """The whole tensor's type from one chip's shard: each dim grows by the chips that split it
    (divided by the repeat on the repeated axis); replicated and partial axes keep it. Blocks
    change which rows a chip holds, not how many."""
    shape = list(local.get_shape())
    for axis, entry in enumerate(p.placements):
        dim = entry_dim(entry)
        if dim is not None:
            shape[dim] *= mesh_sizes[axis] // (p.repeat if axis == p.repeated_axis() else 1)
    return TensorType(local.get_element_type(), shape)


def mark(attrs: DictionaryAttr | None, p: Placement) -> DictionaryAttr:
    """`attrs` with `p` recorded (the repeat only where it is not 1)."""
    data = dict(attrs.data) if attrs is not None else {}
    data[SHARDING] = p.sharding
    data.pop(REPEAT, None)
    data.pop(BLOCKS, None)
    if p.repeat != 1:
        data[REPEAT] = IntegerAttr(p.repeat, 64)
    if p.blocks != 1:
        data[BLOCKS] = IntegerAttr(p.blocks, 64)
    return DictionaryAttr(data)


def entry_attributes(
    inputs: Sequence[Placement], outputs: Sequence[Placement]
) -> dict[str, Attribute]:
    """The attributes a linked deployment's ``sp.entry`` carries (docs/mesh.md)."""
    out: dict[str, Attribute] = {
        ENTRY_INPUTS: ArrayAttr(p.sharding for p in inputs),
        ENTRY_OUTPUTS: ArrayAttr(p.sharding for p in outputs),
        ENTRY_INPUT_REPEATS: ArrayAttr(IntegerAttr(p.repeat, 64) for p in inputs),
        ENTRY_OUTPUT_REPEATS: ArrayAttr(IntegerAttr(p.repeat, 64) for p in outputs),
    }
    for key, ps in ((ENTRY_INPUT_BLOCKS, inputs), (ENTRY_OUTPUT_BLOCKS, outputs)):
        if any(p.blocks != 1 for p in ps):
            out[key] = ArrayAttr(IntegerAttr(p.blocks, 64) for p in ps)
    return out


def chip_firsts_placement(mesh: str, rank: int) -> Placement:
    """How a chip-first input (ENTRY_CHIP_FIRSTS) lies: its whole [chips, 1] split on dim 0 over
    every axis, so chip c (row-major) holds row c."""
    return Placement(ShardingAttr(mesh, ["shard(0)"] * rank))


def entry_chip_firsts(attributes: dict[str, Attribute]) -> dict[str, int]:
    """The entry's chip-first inputs (ENTRY_CHIP_FIRSTS): name -> H."""
    firsts = attributes.get(ENTRY_CHIP_FIRSTS)
    if firsts is None:
        return {}
    if not isinstance(firsts, DictionaryAttr) or not all(
        isinstance(v, IntegerAttr) for v in firsts.data.values()
    ):
        raise MeshVerifyError(f"sp.entry: {ENTRY_CHIP_FIRSTS} must be a dictionary of integers")
    return {k: v.value.data for k, v in firsts.data.items()}  # type: ignore[union-attr]


def entry_placements(
    attributes: dict[str, Attribute], n_inputs: int, n_outputs: int, what: str
) -> tuple[list[Placement], list[Placement]] | None:
    """The placements recorded on a linked entry (None where it carries none: a single chip's
    deployment); refused where the lists are malformed or their lengths are not the entry's."""
    if ENTRY_INPUTS not in attributes and ENTRY_OUTPUTS not in attributes:
        return None
    out: list[list[Placement]] = []
    for key, rkey, bkey, n in (
        (ENTRY_INPUTS, ENTRY_INPUT_REPEATS, ENTRY_INPUT_BLOCKS, n_inputs),
        (ENTRY_OUTPUTS, ENTRY_OUTPUT_REPEATS, ENTRY_OUTPUT_BLOCKS, n_outputs),
    ):
        shardings, repeats = attributes.get(key), attributes.get(rkey)
        if not isinstance(shardings, ArrayAttr) or not all(
            isinstance(s, ShardingAttr) for s in shardings.data
        ):
            raise MeshVerifyError(f"{what}: {key} must be a list of #mesh.sharding")
        if len(shardings.data) != n:
            raise MeshVerifyError(f"{what}: {key} has {len(shardings.data)} shardings for {n}")
        reps = [1] * n
        if repeats is not None:
            if not isinstance(repeats, ArrayAttr) or len(repeats.data) != n:
                raise MeshVerifyError(f"{what}: {rkey} must be a list of {n} integers")
            if not all(isinstance(r, IntegerAttr) for r in repeats.data):
                raise MeshVerifyError(f"{what}: {rkey} must be a list of {n} integers")
            reps = [r.value.data for r in repeats.data]  # type: ignore[union-attr]
        blocks = attributes.get(bkey)
        blks = [1] * n
        if blocks is not None:
            if not (
                isinstance(blocks, ArrayAttr)
                and len(blocks.data) == n
                and all(isinstance(b, IntegerAttr) for b in blocks.data)
            ):
                raise MeshVerifyError(f"{what}: {bkey} must be a list of {n} integers")
            blks = [b.value.data for b in blocks.data]  # type: ignore[union-attr]
        out.append([Placement(s, r, b) for s, r, b in zip(shardings.data, reps, blks, strict=True)])
    return out[0], out[1]
