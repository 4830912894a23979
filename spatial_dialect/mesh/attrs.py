"""The attributes of the mesh dialect: a tensor's sharding over a mesh and a collective's price.

Decided here, and why (docs/mesh.md#shardings):

- **A sharding names one placement per mesh axis** (``shard(d)``, ``replicate``, ``partial(sum)``),
  as PyTorch's DTensor does and as issue 23 states the fact, rather than MLIR's per-tensor-dim lists
  of split axes. Each mesh axis therefore says exactly one thing about the tensor: an axis can never
  be used twice, and a collective over axis ``a`` changes entry ``a`` alone, which is what its
  verifier checks. Two axes that shard one dim split it major to minor in axis order (DTensor's
  order); the other order, which MLIR can write, is needed by no layout tt-metal publishes.
- **Partial results are sums.** Every reduction a tensor-parallel deployment leaves behind (a
  row-parallel matmul, a vocab-parallel norm's E[x^2]) is a sum; ``partial(max)`` and the rest are
  refused by name until a program needs one.
- **The price is a fact of the collective, not recomputed by readers**: bytes, links, hops and the
  time, in integer nanoseconds so that the IR round-trips exactly (:func:`cost_of`).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import ArrayAttr, IntAttr, StringAttr
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


class Topology(StrEnum):
    """How the chips of one mesh axis are joined. The dialect owns this vocabulary and the cost
    model (spatial_dialect.targets.mesh) imports it (docs/architecture.md#import-rules)."""

    # Each chip links to its neighbours; the chips at the ends have one neighbour on the axis.
    LINE = "line"
    # A line whose ends are linked too: two links per chip on the axis, half the diameter.
    RING = "ring"
    # Every chip's links go to a switch, which reaches every other chip in one hop (NVSwitch).
    SWITCH = "switch"


TOPOLOGIES: tuple[str, ...] = tuple(t.value for t in Topology)


class Collective(StrEnum):
    """The collectives, one op each (ops.py); targets/collectives.py prices each."""

    ALL_GATHER = "all_gather"
    REDUCE_SCATTER = "reduce_scatter"
    ALL_REDUCE = "all_reduce"
    ALL_TO_ALL = "all_to_all"
    ARGMAX_GATHER = "argmax_gather"


REPLICATE = "replicate"
# The reductions a partial entry may name. Only sums occur in the layouts of issue 23.
REDUCTIONS: tuple[str, ...] = ("sum",)


class MeshVerifyError(VerifyException):
    """A mesh op or attribute that breaks a rule of docs/mesh.md."""


def shard_entry(dim: int) -> str:
    return f"shard({dim})"


def partial_entry(kind: str = "sum") -> str:
    return f"partial({kind})"


def entry_dim(entry: str) -> int | None:
    """The tensor dim a ``shard(d)`` entry splits; None for replicate and partial."""
    if entry.startswith("shard(") and entry.endswith(")"):
        return int(entry[6:-1])
    return None


def is_partial(entry: str) -> bool:
    return entry.startswith("partial(")


def _check_entry(entry: str, axis: int) -> None:
    if entry == REPLICATE:
        return
    if entry.startswith("shard(") and entry.endswith(")"):
        text = entry[6:-1]
        if not text.lstrip("-").isdigit():
            raise MeshVerifyError(f"mesh axis {axis}: shard takes a tensor dim, got {entry!r}")
        if int(text) < 0:
            raise MeshVerifyError(f"mesh axis {axis}: shard dim must be >= 0, got {int(text)}")
        return
    if entry.startswith("partial(") and entry.endswith(")"):
        kind = entry[8:-1]
        if kind not in REDUCTIONS:
            raise MeshVerifyError(
                f"mesh axis {axis}: partial({kind}) is not supported (reductions: "
                f"{', '.join(REDUCTIONS)})"
            )
        return
    raise MeshVerifyError(
        f"mesh axis {axis}: {entry!r} is not a placement (shard(d), replicate, partial(sum))"
    )


def _check_entries(entries: Sequence[str]) -> None:
    if not entries:
        raise MeshVerifyError("a sharding needs one placement per mesh axis, got none")
    for axis, entry in enumerate(entries):
        _check_entry(entry, axis)


@irdl_attr_definition
class ShardingAttr(ParametrizedAttribute):
    """``#mesh.sharding<@t3k, [replicate, shard(1)]>``: how one tensor lies over mesh ``@t3k``,
    one placement per mesh axis. The mesh's rank and the tensor's rank are checked by the ops that
    know them (:func:`check_sharding`)."""

    name = "mesh.sharding"
    mesh: StringAttr
    entries: ArrayAttr[StringAttr]

    def __init__(self, mesh: str, entries: Sequence[str]):
        super().__init__(StringAttr(mesh), ArrayAttr(StringAttr(e) for e in entries))

    @property
    def placements(self) -> tuple[str, ...]:
        return tuple(e.data for e in self.entries)

    def verify(self) -> None:
        _check_entries(self.placements)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            mesh = parser.parse_symbol_name()
            parser.parse_punctuation(",")
            entries = parser.parse_comma_separated_list(
                parser.Delimiter.SQUARE, lambda: _parse_entry(parser)
            )
            _refuse_at(parser, _check_entries, entries)
        return (mesh, ArrayAttr(StringAttr(e) for e in entries))

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_symbol_name(self.mesh.data)
            printer.print_string(f", [{', '.join(self.placements)}]")


def _refuse_at(parser: AttrParser, check, *args) -> None:
    """Run a verifier's check while parsing, so that its refusal points at the text."""
    try:
        check(*args)
    except MeshVerifyError as e:
        parser.raise_error(str(e))


def _parse_entry(parser: AttrParser) -> str:
    word = parser.parse_identifier()
    if word == REPLICATE:
        return word
    if word == "shard":
        with parser.in_parens():
            return shard_entry(parser.parse_integer(allow_negative=True))
    if word == "partial":
        with parser.in_parens():
            return partial_entry(parser.parse_identifier())
    parser.raise_error(f"expected shard(d), replicate or partial(sum), got {word!r}")


def check_sharding(sharding: ShardingAttr, mesh_rank: int, tensor_rank: int, what: str) -> None:
    """The rules a sharding obeys once its mesh and tensor are known: one placement per mesh axis,
    shard dims inside the tensor."""
    if len(sharding.placements) != mesh_rank:
        raise MeshVerifyError(
            f"{what}: sharding has {len(sharding.placements)} placements for mesh "
            f"@{sharding.mesh.data} of {mesh_rank} axes; give one per axis"
        )
    for axis, entry in enumerate(sharding.placements):
        dim = entry_dim(entry)
        if dim is not None and dim >= tensor_rank:
            raise MeshVerifyError(
                f"{what}: mesh axis {axis} shards dim {dim} of a rank-{tensor_rank} tensor"
            )


_COST_FIELDS = ("bytes", "links", "hops", "ns")


def _check_cost_field(field: str, value: int) -> None:
    if value < 0:
        raise MeshVerifyError(f"cost: {field} must be >= 0, got {value}")


@irdl_attr_definition
class CostAttr(ParametrizedAttribute):
    """``#mesh.cost<bytes = 524288, links = 1, hops = 1, ns = 90123>``: a collective's price
    (spatial_dialect.targets.collectives): the bytes it is priced on (docs/mesh.md#collectives),
    the links and hops one phase uses, and its time in nanoseconds."""

    name = "mesh.cost"
    bytes: IntAttr
    links: IntAttr
    hops: IntAttr
    ns: IntAttr

    def __init__(self, nbytes: int, links: int, hops: int, ns: int):
        super().__init__(IntAttr(nbytes), IntAttr(links), IntAttr(hops), IntAttr(ns))

    def verify(self) -> None:
        for field in _COST_FIELDS:
            _check_cost_field(field, getattr(self, field).data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        values = []
        with parser.in_angle_brackets():
            for i, field in enumerate(_COST_FIELDS):
                if i:
                    parser.parse_punctuation(",")
                parser.parse_keyword(field)
                parser.parse_punctuation("=")
                value = parser.parse_integer(allow_negative=True)
                _refuse_at(parser, _check_cost_field, field, value)
                values.append(IntAttr(value))
        return values

    def print_parameters(self, printer: Printer) -> None:
        text = ", ".join(f"{f} = {getattr(self, f).data}" for f in _COST_FIELDS)
        printer.print_string(f"<{text}>")
