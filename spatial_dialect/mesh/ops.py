"""The ops of the mesh dialect: a mesh of chips, a tensor's sharding, and the five collectives.

Decided here, and why (docs/mesh.md):

- **A mesh is a symbol** (``mesh.mesh @t3k``) holding what a deployment may know of the machine:
  its shape, each axis's topology and links, and the preset it came from. The dialect imports
  nothing of `targets` (docs/architecture.md#import-rules): that a preset's numbers are the IR's is
  checked where the mesh is priced (passes/mesh_prices.py).
- **Collectives act on one chip's local tensor** (MLIR's mesh dialect after spmdization): the
  operand and result types are the shard one chip holds, so each chip's program stays an ordinary
  single-chip program. Each collective names its mesh axis and the sharding before (``from``) and
  after (``to``): the change of entry ``axis``, and only it, is the collective's reason, and it
  fixes the shapes (an all_gather over n chips multiplies the gathered dim by n, a reduce_scatter
  divides it, an all_reduce keeps the shape, an all_to_all moves the split from one dim to
  another). An optional ``reason`` string names the producer and consumer; an optional ``cost``
  carries the price (passes/mesh_prices.cost_of), whose bytes must be the bytes the types imply.
- **The vocab-parallel arg-max is a collective** (``mesh.argmax_gather``, MPI's MAXLOC): it
  gathers each chip's (value, index) and picks, so it needs the chip's place on the axis (its
  first column), which no tg op knows; it is the one collective whose element type and rank
  change (float logits to tg.argmax's i32 per row), so each op states its own type rule
  (``check_types``) beside the one shape rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    AnyFloat,
    ArrayAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.irdl import (
    IRDLOperation,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import Pure, SymbolOpInterface, SymbolTable

from spatial_dialect.mesh.attrs import (
    REPLICATE,
    TOPOLOGIES,
    Collective,
    CostAttr,
    MeshVerifyError,
    ShardingAttr,
    check_sharding,
    entry_dim,
    is_partial,
)


@irdl_op_definition
class MeshOp(IRDLOperation):
    """``mesh.mesh @t3k shape 2x4 topology [line, line] links [1, 1] preset "t3k"``."""

    name = "mesh.mesh"
    sym_name = prop_def(SymbolNameConstraint())
    shape = prop_def(ArrayAttr[IntAttr])
    topology = prop_def(ArrayAttr[StringAttr])
    links = prop_def(ArrayAttr[IntAttr])
    preset = opt_prop_def(StringAttr)
    traits = traits_def(SymbolOpInterface())

    def __init__(self, name: str, shape, topology, links, preset: str | None = None):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "shape": ArrayAttr(IntAttr(s) for s in shape),
                "topology": ArrayAttr(StringAttr(t) for t in topology),
                "links": ArrayAttr(IntAttr(n) for n in links),
                "preset": StringAttr(preset) if preset is not None else None,
            }
        )

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(s.data for s in self.shape)

    @property
    def topologies(self) -> tuple[str, ...]:
        return tuple(t.data for t in self.topology)

    @property
    def link_counts(self) -> tuple[int, ...]:
        return tuple(n.data for n in self.links)

    def verify_(self) -> None:
        name = f"mesh @{self.sym_name.data}"
        sizes = self.sizes
        topo, links = self.topologies, self.link_counts
        if not sizes:
            raise MeshVerifyError(f"{name}: a mesh needs at least one axis")
        for field, values in (("topology", topo), ("links", links)):
            if len(values) != len(sizes):
                raise MeshVerifyError(
                    f"{name}: {len(values)} {field} entries for {len(sizes)} axes; give one per axis"
                )
        for axis, (size, t, n) in enumerate(zip(sizes, topo, links, strict=True)):
            if size < 1 or n < 1:
                raise MeshVerifyError(
                    f"{name}: axis {axis} has {size} chips and {n} links; both must be >= 1"
                )
            if t not in TOPOLOGIES:
                raise MeshVerifyError(
                    f"{name}: axis {axis} topology {t!r} is not one of {', '.join(TOPOLOGIES)}"
                )

    @classmethod
    def parse(cls, parser: Parser) -> MeshOp:
        name = parser.parse_symbol_name().data
        parser.parse_keyword("shape")
        shape = parser.parse_dimension_list()
        parser.parse_keyword("topology")
        topo = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_identifier)
        parser.parse_keyword("links")
        links = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
        preset = parser.parse_str_literal() if parser.parse_optional_keyword("preset") else None
        attrs = parser.parse_optional_attr_dict()
        op = MeshOp(name, shape, topo, links, preset)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        topo = ", ".join(t.data for t in self.topology)
        links = ", ".join(str(n.data) for n in self.links)
        printer.print_string(f" shape {_x(self.sizes)} topology [{topo}] links [{links}]")
        if self.preset is not None:
            printer.print_string(" preset ")
            printer.print_string_literal(self.preset.data)
        printer.print_op_attributes(self.attributes)


def _x(sizes) -> str:
    return "x".join(map(str, sizes))


def lookup_mesh(op: Operation, sharding: ShardingAttr, what: str) -> MeshOp:
    found = SymbolTable.lookup_symbol(op, sharding.mesh.data)
    if not isinstance(found, MeshOp):
        raise MeshVerifyError(f"{what}: mesh @{sharding.mesh.data} is not a mesh.mesh in scope")
    return found


@irdl_op_definition
class ShardOp(IRDLOperation):
    """``%y = mesh.shard %x to #mesh.sharding<@n300, [shard(1)]> : tensor<64x512xbf16>``: records
    how a whole (un-sharded) tensor lies over the mesh; ``%y`` is ``%x``. Every dim a mesh axis
    shards must divide evenly by the chips that split it."""

    name = "mesh.shard"
    T: ClassVar = VarConstraint("T", base(TensorType))
    input = operand_def(T)
    result = result_def(T)
    sharding = prop_def(ShardingAttr)
    traits = traits_def(Pure())
    assembly_format = "$input `to` qualified($sharding) attr-dict `:` type($input)"

    def __init__(self, value, sharding: ShardingAttr):
        super().__init__(
            operands=[value], result_types=[value.type], properties={"sharding": sharding}
        )

    def verify_(self) -> None:
        assert isinstance(self.input.type, TensorType)
        shape = self.input.type.get_shape()
        mesh = lookup_mesh(self, self.sharding, "mesh.shard")
        check_sharding(self.sharding, len(mesh.sizes), len(shape), "mesh.shard")
        split = [1] * len(shape)
        for axis, entry in enumerate(self.sharding.placements):
            if (dim := entry_dim(entry)) is not None:
                split[dim] *= mesh.sizes[axis]
        for dim, (size, n) in enumerate(zip(shape, split, strict=True)):
            if size >= 0 and size % n:
                raise MeshVerifyError(
                    f"mesh.shard: dim {dim} of size {size} does not split evenly over {n} chips"
                )


class CollectiveOp(IRDLOperation):
    """One collective over one mesh axis, on one chip's local tensor (module docstring)."""

    KIND: ClassVar[Collective]
    input = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    src = prop_def(ShardingAttr, prop_name="from")
    dst = prop_def(ShardingAttr, prop_name="to")
    reason = opt_prop_def(StringAttr)
    cost = opt_prop_def(CostAttr)
    assembly_format = (
        "$input `axis` $axis `from` qualified($from) `to` qualified($to) "
        "(`reason` $reason^)? (`cost` qualified($cost)^)? attr-dict `:` type($input) `->` type($result)"
    )

    def __init__(
        self,
        value,
        result_type: Attribute,
        axis: int,
        src: ShardingAttr,
        dst: ShardingAttr,
        reason: str | None = None,
        cost: CostAttr | None = None,
    ):
        super().__init__(
            operands=[value],
            result_types=[result_type],
            properties={
                "axis": IntegerAttr(axis, 64),
                "from": src,
                "to": dst,
                "reason": StringAttr(reason) if reason is not None else None,
                "cost": cost,
            },
        )

    def verify_(self) -> None:
        check_collective(
            self,
            type(self),
            self.input.type,
            self.result.type,
            self.axis.value.data,
            self.src,
            self.dst,
            self.cost,
        )

    @classmethod
    def local_result_shape(cls, before: str, after: str, shape, n: int, axis: int) -> list[int]:
        """The result's local shape from the change of the axis's placement; raises when the
        change is not this collective's."""
        raise NotImplementedError

    @classmethod
    def check_types(cls, tin: TensorType, tout: TensorType) -> None:
        """What the element types and ranks must be: a collective moves values, so it keeps both."""
        if tin.get_element_type() != tout.get_element_type():
            raise MeshVerifyError(
                f"{cls.name}: element type {tout.get_element_type()} differs from the input's "
                f"{tin.get_element_type()}"
            )
        sin, sout = tin.get_shape(), tout.get_shape()
        if len(sin) != len(sout):
            raise MeshVerifyError(f"{cls.name}: rank {len(sout)} result of a rank-{len(sin)} input")

    @classmethod
    def _refuse(cls, before: str, after: str, axis: int, wants: str) -> MeshVerifyError:
        return MeshVerifyError(
            f"{cls.name} over axis {axis} turns {before} into {after}; it turns {wants}"
        )

    @property
    def collective(self) -> Collective:
        return self.KIND

    def priced_bytes(self, sizes: Sequence[int] | None = None) -> int | None:
        """The bytes a price of this collective takes (targets/collectives.py's T or B), or None
        when the element type has no width; `sizes`: the mesh's (else looked up)."""
        sizes = _sizes(self, self.KIND, self.src, sizes)
        return priced_bytes(
            self.KIND, self.input.type, self.result.type, sizes, self.axis.value.data
        )


def _sizes(
    op: Operation, kind: Collective, src: ShardingAttr, sizes: Sequence[int] | None
) -> Sequence[int]:
    """The chips of each mesh axis where a price needs them (an argmax_gather's counts the pairs
    of its axis, :func:`priced_bytes`): given, or looked up from the op's mesh."""
    if sizes is not None or kind is not Collective.ARGMAX_GATHER:
        return sizes or ()
    return lookup_mesh(op, src, op.name).sizes


def priced_bytes(
    kind: Collective, tin: Attribute, tout: Attribute, sizes: Sequence[int] = (), axis: int = 0
) -> int | None:
    """The bytes a price of a collective of `kind` from `tin` to `tout` takes (targets/collectives.py's
    T or B: the result of an all_gather, the input of the others), or None when the element type
    has no width. An argmax_gather is priced as the all_gather of its (value, index) pairs: each
    of the `sizes[axis]` chips gives one pair per row, the value in the input's type and the index
    in 4 bytes."""
    t = tout if kind is Collective.ALL_GATHER else tin
    assert isinstance(t, TensorType)
    width = getattr(t.get_element_type(), "bitwidth", None)
    if width is None:
        return None
    if kind is Collective.ARGMAX_GATHER:
        assert isinstance(tout, TensorType)
        return sizes[axis] * tout.element_count() * (width // 8 + 4)
    return t.element_count() * width // 8


def check_collective(
    op: Operation,
    rule: type[CollectiveOp],
    tin: Attribute,
    tout: Attribute,
    a: int,
    src: ShardingAttr,
    dst: ShardingAttr,
    cost: CostAttr | None,
) -> None:
    """The one rule of a collective's types and shardings (docs/mesh.md#ops-and-attributes), for
    the SSA collectives of a per-chip function and the linked deployment's `mesh.step` alike."""
    what = rule.name
    if not isinstance(tin, TensorType) or not isinstance(tout, TensorType):
        raise MeshVerifyError(f"{what}: takes and gives tensors, got {tin} -> {tout}")
    rule.check_types(tin, tout)
    sin, sout = tin.get_shape(), tout.get_shape()
    if any(s < 0 for s in (*sin, *sout)):
        # A chip's shard is a static block: every layout of issue 23 has static shapes.
        raise MeshVerifyError(f"{what}: takes static shapes, got {tin} -> {tout}")
    if src.mesh != dst.mesh:
        raise MeshVerifyError(f"{what}: from is over @{src.mesh.data}, to over @{dst.mesh.data}")
    mesh = lookup_mesh(op, src, what)
    rank = len(mesh.sizes)
    if not 0 <= a < rank:
        raise MeshVerifyError(
            f"{what}: axis {a} is not an axis of mesh @{mesh.sym_name.data} "
            f"(shape {_x(mesh.sizes)})"
        )
    check_sharding(src, rank, len(sin), f"{what} from")
    check_sharding(dst, rank, len(sin), f"{what} to")
    before, after = src.placements, dst.placements
    for other in range(rank):
        if other != a and before[other] != after[other]:
            raise MeshVerifyError(
                f"{what} over axis {a}: mesh axis {other} changes from {before[other]} to "
                f"{after[other]}; a collective changes its own axis only"
            )
    expected = rule.local_result_shape(before[a], after[a], sin, mesh.sizes[a], a)
    _check_minor_most(what, a, before, after)
    if list(sout) != expected:
        raise MeshVerifyError(
            f"{what} over axis {a} of {mesh.sizes[a]} chips from {before[a]} to {after[a]}: "
            f"result shape {_x(sout)} should be {_x(expected)} (input {_x(sin)})"
        )
    if cost is not None:
        want = priced_bytes(rule.KIND, tin, tout, mesh.sizes, a)
        if want is not None and cost.bytes.data != want:
            raise MeshVerifyError(
                f"{what}: cost is priced on {cost.bytes.data} bytes, the types say {want}"
            )


def _check_minor_most(what: str, a: int, before: Sequence[str], after: Sequence[str]) -> None:
    """Two axes that shard one dim split it major to minor in axis order, so a collective may
    gather or scatter a dim only over the last axis that splits it: over an earlier one, the
    blocks a chip holds afterwards would be strided, which no sharding describes."""
    for entry in dict.fromkeys((before[a], after[a])):
        dim = entry_dim(entry)
        later = [b for b in range(a + 1, len(before)) if entry_dim(before[b]) == dim]
        if dim is not None and later:
            raise MeshVerifyError(
                f"{what} over axis {a}: mesh axis {later[-1]} also shards dim {dim}, "
                f"finer; a dim is gathered or scattered over its last splitting axis first"
            )


def _scaled(shape, dim: int, factor: int | None, divisor: int | None, what: str) -> list[int]:
    out = list(shape)
    if divisor is not None:
        if out[dim] % divisor:
            raise MeshVerifyError(
                f"{what}: dim {dim} of size {out[dim]} does not split over {divisor} chips"
            )
        out[dim] //= divisor
    if factor is not None:
        out[dim] *= factor
    return out


@irdl_op_definition
class AllGatherOp(CollectiveOp):
    """shard(d) -> replicate over the axis: dim d grows n-fold."""

    name = "mesh.all_gather"
    KIND: ClassVar[Collective] = Collective.ALL_GATHER

    @classmethod
    def local_result_shape(cls, before, after, shape, n, axis):
        dim = entry_dim(before)
        if dim is None or after != REPLICATE:
            raise cls._refuse(before, after, axis, "shard(d) into replicate")
        return _scaled(shape, dim, n, None, cls.name)


@irdl_op_definition
class ReduceScatterOp(CollectiveOp):
    """partial(sum) -> shard(d) over the axis: dim d shrinks n-fold."""

    name = "mesh.reduce_scatter"
    KIND: ClassVar[Collective] = Collective.REDUCE_SCATTER

    @classmethod
    def local_result_shape(cls, before, after, shape, n, axis):
        dim = entry_dim(after)
        if not is_partial(before) or dim is None:
            raise cls._refuse(before, after, axis, "partial(sum) into shard(d)")
        return _scaled(shape, dim, None, n, cls.name)


@irdl_op_definition
class AllReduceOp(CollectiveOp):
    """partial(sum) -> replicate over the axis: the shape is kept."""

    name = "mesh.all_reduce"
    KIND: ClassVar[Collective] = Collective.ALL_REDUCE

    @classmethod
    def local_result_shape(cls, before, after, shape, n, axis):
        if not is_partial(before) or after != REPLICATE:
            raise cls._refuse(before, after, axis, "partial(sum) into replicate")
        return list(shape)


@irdl_op_definition
class AllToAllOp(CollectiveOp):
    """shard(d1) -> shard(d2) over the axis: d1 grows n-fold, d2 shrinks n-fold."""

    name = "mesh.all_to_all"
    KIND: ClassVar[Collective] = Collective.ALL_TO_ALL

    @classmethod
    def local_result_shape(cls, before, after, shape, n, axis):
        d1, d2 = entry_dim(before), entry_dim(after)
        if d1 is None or d2 is None or d1 == d2:
            raise cls._refuse(before, after, axis, "shard(d1) into shard(d2) with d1 != d2")
        return _scaled(_scaled(shape, d2, None, n, cls.name), d1, n, None, cls.name)


@irdl_op_definition
class ArgmaxGatherOp(CollectiveOp):
    """shard(last dim) -> replicate over the axis, of the logits into the index of each row's
    maximum (MPI's MAXLOC): a vocab-parallel arg-max.

    Each chip's row holds its block of the columns (chip c of n: columns c x V/n on). Each takes
    its local arg-max and its value; the (value, index) pairs are all-gathered; every chip picks
    the first largest value in chip order and offsets its index by that chip's first column. The
    first maximum wins, so a tie goes to the lowest global column, as tg.argmax over the whole row.
    The result is tg.argmax's: one i32 per row (the input's dims but the last; a rank-1 input is
    one row)."""

    name = "mesh.argmax_gather"
    KIND: ClassVar[Collective] = Collective.ARGMAX_GATHER

    @classmethod
    def check_types(cls, tin: TensorType, tout: TensorType) -> None:
        el = tout.get_element_type()
        if not (isinstance(el, IntegerType) and el.width.data == 32):
            raise MeshVerifyError(f"{cls.name}: gives i32 indices, got {el}")
        if not isinstance(tin.get_element_type(), AnyFloat):
            raise MeshVerifyError(
                f"{cls.name}: compares float values, got {tin.get_element_type()}"
            )

    @classmethod
    def local_result_shape(cls, before, after, shape, n, axis):
        dim = entry_dim(before)
        if dim != len(shape) - 1 or after != REPLICATE:
            raise cls._refuse(before, after, axis, f"shard({len(shape) - 1}) into replicate")
        return list(shape[:-1]) if len(shape) > 1 else [1]


COLLECTIVES: tuple[type[CollectiveOp], ...] = (
    AllGatherOp,
    ReduceScatterOp,
    AllReduceOp,
    AllToAllOp,
    ArgmaxGatherOp,
)

COLLECTIVE_OF: dict[Collective, type[CollectiveOp]] = {c.KIND: c for c in COLLECTIVES}
"""Each collective kind and the op whose rule it obeys (the SSA op; `mesh.step` shares it)."""


@irdl_op_definition
class StepOp(IRDLOperation):
    """``mesh.step @o_sum all_reduce @o axis 0 from S to S' reason ".." cost #mesh.cost<..> : T -> T'``:
    one collective of a linked deployment, between its sections (docs/mesh.md#the-linked-deployment).

    A linked module holds no SSA values between sections: a section reads and writes DRAM tensors by
    name, so a step does too. It reads the local tensor ``@o`` that an earlier section (or step, or
    the entry) holds on every chip and writes ``@o_sum``, which later sections read by name. Its
    place among the module's sections is its place in execution order. Its types are local (one
    chip's shard) and obey the same rule as the SSA collective of its kind (:func:`check_collective`).
    """

    name = "mesh.step"
    tensor = prop_def(SymbolNameConstraint())
    kind = prop_def(StringAttr)
    source = prop_def(StringAttr)
    axis = prop_def(IntegerAttr[I64])
    src = prop_def(ShardingAttr, prop_name="from")
    dst = prop_def(ShardingAttr, prop_name="to")
    reason = opt_prop_def(StringAttr)
    cost = opt_prop_def(CostAttr)
    input_type = prop_def(TensorType)
    result_type = prop_def(TensorType)

    def __init__(
        self,
        tensor: str,
        kind: Collective | str,
        source: str,
        axis: int,
        src: ShardingAttr,
        dst: ShardingAttr,
        input_type: TensorType,
        result_type: TensorType,
        reason: str | None = None,
        cost: CostAttr | None = None,
    ):
        super().__init__(
            properties={
                "tensor": StringAttr(tensor),
                "kind": StringAttr(str(kind)),
                "source": StringAttr(source),
                "axis": IntegerAttr(axis, 64),
                "from": src,
                "to": dst,
                "input_type": input_type,
                "result_type": result_type,
                "reason": StringAttr(reason) if reason is not None else None,
                "cost": cost,
            }
        )

    @property
    def collective(self) -> Collective:
        return Collective(self.kind.data)

    def priced_bytes(self, sizes: Sequence[int] | None = None) -> int | None:
        """The bytes its price takes, as the SSA collective's (:func:`priced_bytes`)."""
        return priced_bytes(
            self.collective,
            self.input_type,
            self.result_type,
            _sizes(self, self.collective, self.src, sizes),
            self.axis.value.data,
        )

    def verify_(self) -> None:
        if self.kind.data not in COLLECTIVE_OF:
            raise MeshVerifyError(
                f"mesh.step @{self.tensor.data}: {self.kind.data!r} is not a collective "
                f"({', '.join(COLLECTIVE_OF)})"
            )
        check_collective(
            self,
            COLLECTIVE_OF[self.collective],
            self.input_type,
            self.result_type,
            self.axis.value.data,
            self.src,
            self.dst,
            self.cost,
        )

    @classmethod
    def parse(cls, parser: Parser) -> StepOp:
        tensor = parser.parse_symbol_name().data
        kind = parser.parse_identifier()
        source = parser.parse_symbol_name().data
        parser.parse_keyword("axis")
        axis = parser.parse_integer()
        parser.parse_keyword("from")
        src = parser.parse_attribute()
        parser.parse_keyword("to")
        dst = parser.parse_attribute()
        reason = parser.parse_str_literal() if parser.parse_optional_keyword("reason") else None
        cost = parser.parse_attribute() if parser.parse_optional_keyword("cost") else None
        attrs = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        tin = parser.parse_type()
        parser.parse_punctuation("->")
        tout = parser.parse_type()
        for what, value, want, called in (
            ("from", src, ShardingAttr, "#mesh.sharding"),
            ("to", dst, ShardingAttr, "#mesh.sharding"),
            ("cost", cost, CostAttr | None, "#mesh.cost"),
            ("input type", tin, TensorType, "tensor type"),
            ("result type", tout, TensorType, "tensor type"),
        ):
            if not isinstance(value, want):
                parser.raise_error(f"mesh.step: {what} must be a {called}, got {value}")
        op = StepOp(tensor, kind, source, axis, src, dst, tin, tout, reason, cost)
        op.attributes.update(attrs)
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.tensor.data)
        printer.print_string(f" {self.kind.data} ")
        printer.print_symbol_name(self.source.data)
        printer.print_string(f" axis {self.axis.value.data} from ")
        printer.print_attribute(self.src)
        printer.print_string(" to ")
        printer.print_attribute(self.dst)
        if self.reason is not None:
            printer.print_string(" reason ")
            printer.print_string_literal(self.reason.data)
        if self.cost is not None:
            printer.print_string(" cost ")
            printer.print_attribute(self.cost)
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.input_type)
        printer.print_string(" -> ")
        printer.print_attribute(self.result_type)
