"""The section and the module's interface: `sp.program` (one section), `sp.entry` (the linked
function's arguments and results) and `sp.tensor` (a DRAM tensor of a section).

The execution semantics every section follows are the package docstring's (spatial_dialect.sp).
The section-wide rules (verify.py) run when the program op verifies, after each op verified on
its own.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
)
from xdsl.ir import Attribute, Block, Operation, Region
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    opt_prop_def,
    prop_def,
    region_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import BufferOp, SectionOp, StageOp
from spatial_dialect.sp.attrs import (
    parse_pair,
)
from spatial_dialect.sp.distinct import verify_once
from spatial_dialect.sp.enums import (
    Layout,
    LayoutAttr,
    Phase,
    PhaseAttr,
    SectionKind,
    SectionKindAttr,
    TensorRole,
    TensorRoleAttr,
)
from spatial_dialect.sp.errors import UnresolvedReference
from spatial_dialect.sp.formats import Pair, Symbols
from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.sp.kinds import Q8_0_BLOCK, Q8_0_FORMATS
from spatial_dialect.sp.syntax import PairValue, pair_attr, pair_prop
from spatial_dialect.sp.verify import verify_program
from spatial_dialect.sp.work import WorkOp

_OpT = TypeVar("_OpT", bound=Operation)

_IS_A: dict[type, dict[type, bool]] = {}
"""ProgramOp.ops_of's memo: for an op class asked for, whether each concrete op class is one
(no op class is registered with an ABC after the fact, so subclassing decides it)."""

_SYMBOL: dict[type, SymbolOpInterface | None] = {}
"""ProgramOp.tensor's memo: each op class's SymbolOpInterface trait (None: not a symbol)."""


# ── The section ───────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """`sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 { ... }`: one section.

    `op` names the tg op the section computes (or the layout bridge it is: `tilize`,
    `untilize`), `kind` what the section computes (link records it; text without it takes the
    kind its stages have), `tile` the tile shape (rows x cols of elements) the tensors are cut into. The body is one block of the ops below; tensors and groups are
    symbols of the section.
    """

    name = "sp.program"
    sym_name = prop_def(SymbolNameConstraint())
    source_op = prop_def(StringAttr, prop_name="op")
    section_kind = prop_def(SectionKindAttr, prop_name="kind")
    phase = prop_def(PhaseAttr)
    tile_attr = pair_prop("tile")
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    def __init__(
        self,
        sym_name: str,
        source_op: str,
        kind: SectionKind,
        phase: Phase,
        tile: tuple[int, int],
        ops: Sequence[Operation] = (),
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "op": StringAttr(source_op),
                "kind": SectionKindAttr(kind),
                "phase": PhaseAttr(phase),
                "tile": pair_attr(tile),
            },
            regions=[Region(Block(ops))],
        )

    # A format cannot say it: `{}` parses to a region of no block, and the body is one block
    # (an xDSL parser rule), so parse adds it, as builtin.module does.
    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("op")
        source = parser.parse_str_literal()
        parser.parse_keyword("kind")
        kind = parser.parse_str_enum(SectionKind)
        parser.parse_keyword("phase")
        phase = parser.parse_str_enum(Phase)
        parser.parse_keyword("tile")
        rows, cols = parse_pair(parser, "the tile shape")
        attrs = parser.parse_optional_attr_dict_with_keyword()
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        op = cls.create(
            properties={
                "sym_name": name,
                "op": StringAttr(source),
                "kind": SectionKindAttr(kind),
                "phase": PhaseAttr(phase),
                "tile": pair_attr((rows, cols)),
            },
            attributes=dict(attrs.data) if attrs is not None else {},
            regions=[region],
        )
        return op

    # The counterpart of parse: the body prints without its (implicit) block header.
    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" op ")
        printer.print_string_literal(self.source_op.data)
        printer.print_string(
            f" kind {self.kind.value} phase {self.phase.data.value} tile {self.tile_attr.text()}"
        )
        printer.print_op_attributes(self.attributes, print_keyword=True)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    # Accessors ---------------------------------------------------------------------------------

    @property
    def phase_value(self) -> Phase:
        return self.phase.data

    def set_phase(self, phase: Phase) -> None:
        self.properties["phase"] = PhaseAttr(phase)

    @property
    def kind(self) -> SectionKind:
        return self.section_kind.data

    tile = PairValue("tile")
    """The tile shape: rows x cols of elements."""

    def _of(self, kind: type[_OpT]) -> Iterator[_OpT]:
        # Asked ~175k times on a 70B step (every pass and the verifier ask a section for its ops
        # of a kind); `isinstance` against an abstract op class goes through ABCMeta's
        # Python-level check, so the answer is remembered per concrete op class.
        memo = _IS_A.setdefault(kind, {})
        for op in self.body.block.ops:
            t = type(op)
            hit = memo.get(t)
            if hit is None:
                hit = memo[t] = issubclass(t, kind)
            if hit:
                yield op  # type: ignore[misc]

    def ops_of(self, kind: type[_OpT]) -> list[_OpT]:
        return list(self._of(kind))

    def one(self, kind: type[_OpT]) -> _OpT | None:
        # The first op of the kind, without listing the rest (most calls are for the work, plan
        # or mesh op near the top of the body).
        return next(self._of(kind), None)

    def tensors(self) -> list[TensorOp]:
        return self.ops_of(TensorOp)

    def tensor(self, name: str) -> TensorOp:
        # SymbolTable.lookup_symbol(self, name) without its per-call SymbolRefAttr and trait
        # lookups (15k calls in the verifier alone on a 70B step): the first op of the body
        # whose symbol is `name`.
        found = None
        for op in self.body.block.ops:
            t = type(op)
            if t not in _SYMBOL:
                _SYMBOL[t] = t.get_trait(SymbolOpInterface)
            trait = _SYMBOL[t]
            if trait is not None and trait.get_sym_attr_name(op).data == name:
                found = op
                break
        if not isinstance(found, TensorOp):
            raise UnresolvedReference(f"section @{self.sym_name.data} declares no tensor @{name}")
        return found

    def buffers(self) -> list[BufferOp]:
        return self.ops_of(BufferOp)

    def stages(self) -> list[StageOp]:
        return self.ops_of(StageOp)

    def item_space(self) -> ItemSpace:
        work = self.one(WorkOp)
        assert work is not None, "a tiled section has its work"
        return work.space(self.tensor(work.tensor.root_reference.data))

    def verify(self, verify_nested_ops: bool = True) -> None:
        def run() -> None:
            super(ProgramOp, self).verify(verify_nested_ops)
            # The section-wide rules run after every op verified on its own, and report at the
            # op that breaks them (verify.py), not at the section.
            verify_program(self)

        if verify_nested_ops:
            verify_once(self, run)  # once per distinct section where asked (distinct.py)
        else:
            run()


_TYPE_TEXT: dict[Attribute, str] = {}


def type_text(t: Attribute) -> str:
    """`str(t)`, remembered: str() of an attribute runs xDSL's printer (~0.1 ms), and link asks
    ~36k times on a 70B step for a handful of element types (attributes are immutable)."""
    text = _TYPE_TEXT.get(t)
    if text is None:
        text = _TYPE_TEXT[t] = str(t)
    return text


# ── Module-level interface ────────────────────────────────────────────────────────────────────


@irdl_op_definition
class EntryOp(IRDLOperation):
    """`sp.entry @main(@a, @b) -> (@c)`: the linked function's interface.

    Argument i of function @main is the DRAM tensor named by the i-th input, and result j the
    tensor named by the j-th output; a simulator fills and reads those by name.
    """

    name = "sp.entry"
    function = prop_def(SymbolNameConstraint())
    inputs = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])
    custom_directives = (Symbols,)
    assembly_format = "$function `` custom<Symbols>($inputs) `->` custom<Symbols>($outputs) attr-dict-with-keyword"

    def __init__(self, function: str, inputs: Sequence[str], outputs: Sequence[str]):
        super().__init__(
            properties={
                "function": StringAttr(function),
                "inputs": ArrayAttr([StringAttr(n) for n in inputs]),
                "outputs": ArrayAttr([StringAttr(n) for n in outputs]),
            }
        )


# ── DRAM tensors ──────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class TensorOp(SectionOp):
    """`sp.tensor @a : tensor<100x70xbf16> tiles 4x3 input tiled [format bfp8_b] [scales @s]`.

    A DRAM tensor: its shape in elements and in tiles (a rank-1 tensor is one row), its role in
    the section, its layout (`tiled`: whole tiles in row-major tile order, a partial tile padded
    with zeros, tt-metal's TILE layout; `rows`: row-major elements, ROW_MAJOR) and the storage
    format of its tiles in DRAM and local memory where it is not the element type: bf16 on
    Tensix as bfp8_b or bfp4_b, or an i8 tensor in a Q8_0 format (`q8_0`, `q8_0_kn`: the values
    and their f16 block scales together, 34 bytes per 32 elements). `scales` names the function
    argument that holds a Q8_0 tensor's scales, where the tensor is an argument.
    """

    name = "sp.tensor"
    sym_name = prop_def(SymbolNameConstraint())
    type = prop_def(TensorType)
    tiles_attr = pair_prop("tiles")
    role = prop_def(TensorRoleAttr)
    layout = prop_def(LayoutAttr)
    format = opt_prop_def(StringAttr)
    scales = opt_prop_def(SymbolRefAttr)
    traits = traits_def(HasParent(ProgramOp), SymbolOpInterface())
    custom_directives = (Pair,)
    assembly_format = (
        "$sym_name `:` $type `tiles` custom<Pair>($tiles) $role $layout (`format` $format^)?"
        " (`scales` $scales^)? attr-dict-with-keyword"
    )

    tiles = PairValue("tiles")
    """The tensor's shape in tiles (rows x cols)."""

    def __init__(
        self,
        name: str,
        type: TensorType,
        tiles: tuple[int, int],
        role: TensorRole,
        layout: Layout,
        format: str | None = None,
        scales: str | None = None,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "type": type,
                "tiles": pair_attr(tiles),
                "role": TensorRoleAttr(role),
                "layout": LayoutAttr(layout),
                "format": StringAttr(format) if format else None,
                "scales": SymbolRefAttr(scales) if scales else None,
            }
        )

    @property
    def shape2d(self) -> tuple[int, int]:
        shape = self.type.get_shape()
        return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])

    @property
    def element_type(self) -> Attribute:
        return self.type.element_type

    @property
    def storage(self) -> str:
        """The storage format of the tiles: the element type unless a format overrides it."""
        if self.format:
            return self.format.data
        return type_text(self.element_type)

    @property
    def q8_0_axis(self) -> int | None:
        """The axis a Q8_0 tensor's blocks run along; None for any other storage."""
        return Q8_0_FORMATS.get(self.storage)

    @property
    def scales_name(self) -> str | None:
        return self.scales.root_reference.data if self.scales else None

    def verify_(self) -> None:
        shape = self.type.get_shape()
        if len(shape) not in (1, 2) or any(d <= 0 for d in shape):
            raise VerifyException(
                f"@{self.sym_name.data}: a DRAM tensor has a static rank-1 or rank-2 shape, got {self.type}"
            )
        axis = self.q8_0_axis
        if axis is None:
            if self.scales is not None:
                raise VerifyException(
                    f"@{self.sym_name.data}: only a Q8_0 tensor has scales, not {self.storage}"
                )
            return
        elt = self.element_type
        if not (isinstance(elt, IntegerType) and elt.width.data == 8):
            raise VerifyException(
                f"@{self.sym_name.data}: a {self.storage} tensor holds i8 values, not {elt}"
            )
        length = self.shape2d[axis]
        if length % Q8_0_BLOCK:
            raise VerifyException(
                f"@{self.sym_name.data}: its {self.storage} blocks run along axis {axis}, which "
                f"has {length} elements, not a multiple of {Q8_0_BLOCK}"
            )
