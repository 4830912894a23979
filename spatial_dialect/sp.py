"""sp: spatial programs, the IR every pass after link reads and writes (DESIGN.md section 4).

A module holds `sp.entry` (which DRAM tensors are the function's arguments and results) and one
`sp.program` per section, in execution order. A section is a dataflow program: DRAM tensors,
buffers (FIFOs in each site's local memory, a K-block spill, the accumulator), stages (load,
compute, store) joined by the buffers, and, as the passes run, its work items and plan (tile),
its mesh, site ranges and engines (place), its multicast groups or sharing decisions
(fuse-operands), and its depths and memory map (size-buffers). The `phase` says how far it got.

Everything in a section is a TEMPLATE that every site instantiates. Shapes are written with the
size symbols h, w, sh, sw, kw, subs (sp_attrs), which each `sp.sites` range binds, so the IR
costs one copy of the stages plus one line per distinct site shape: a 13x10 mesh costs a few
lines more than an 8x8 one, not a copy of every stage per site (DESIGN.md section 4,
placement). The per-site instance of buffer `in0` on site (3, 4) is `in0@3,4` (seed 003's
naming); a simulator expands the ranges lazily.

Execution semantics (what spatial-run executes; each op's docstring adds its own part, and the
stages of the sections that are not GEMMs, in sp_ops, theirs):

  * A site (x, y) belongs to at most one `sp.sites` range. It processes the work items
    `first(x, y) .. first(x, y) + count - 1` of the range, in order. Item i covers the block
    of the result given by `sp.work` (`ItemSpace.rect`): origin tile (r0, c0), extent h x w.
    Items are numbered so that every site's items are consecutive: row-major over the blocks,
    or, where the blocks are dealt round-robin over a grid of sites (`sp.work ... over`), site
    by site with each site's blocks in round order (`ItemSpace`); every item of a range has the
    range's block.
  * Per item, a stage iterates the loops whose variables its access pattern uses, nested
    k0 (outer), ti, tj, u, v (inner): k0 = 0, kw, ... below the work's K tiles; ti = 0, sh, ...
    below h; tj = 0, sw, ... below w; u = 0 .. sh - 1; v = 0 .. sw - 1. Each iteration moves
    one page (the pattern's extent, tiles in row-major order). Stages on different engines run concurrently and synchronize only
    through the FIFOs: a push waits for a free page, a pop for a full one.
  * DRAM tensors in `tiled` layout hold whole tiles; a partial tile at the edge is padded with
    zeros, so padding adds nothing to a product, and only the unpadded region of an output is
    the result.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, TypeVar, cast

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DictionaryAttr,
    FlatSymbolRefAttr,
    IntAttr,
    IntegerAttr,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import (
    Attribute,
    Block,
    Dialect,
    Operation,
    ParametrizedAttribute,
    Region,
    SSAValue,
    TypeAttribute,
)
from xdsl.irdl import (
    AttrSizedOperandSegments,
    IRDLOperation,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsolatedFromAbove, NoTerminator, SymbolOpInterface, SymbolTable
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp_attrs import (
    AccessAttr,
    EngineAttr,
    GroupAxis,
    GroupAxisAttr,
    Layout,
    LayoutAttr,
    Phase,
    PhaseAttr,
    PlanKind,
    PlanKindAttr,
    RectAttr,
    Sharing,
    SharingAttr,
    SizesAttr,
    TensorRole,
    TensorRoleAttr,
    parse_pair,
    parse_site_map,
    site_map_text,
)

_OpT = TypeVar("_OpT", bound=Operation)


@irdl_attr_definition
class BufferType(ParametrizedAttribute, TypeAttribute):
    """`!sp.buffer`: a buffer of a section (its shape lives on the op that declares it)."""

    name = "sp.buffer"


BUFFER = BufferType()


def _int(value: int) -> IntAttr:
    return IntAttr(value)


def _print_attr_dict(op: Operation, printer: Printer) -> None:
    printer.print_op_attributes(op.attributes, print_keyword=True)


def _parse_attr_dict(parser: Parser) -> dict[str, Attribute]:
    attrs = parser.parse_optional_attr_dict_with_keyword()
    return dict(attrs.data) if attrs is not None else {}


_OpU = TypeVar("_OpU", bound=Operation)


def _with_attrs(op: _OpU, parser: Parser) -> _OpU:
    """The op parsed so far, with the `attributes {...}` that may end its custom form."""
    op.attributes.update(_parse_attr_dict(parser))
    return op


def _parse_numbers(parser: Parser, keywords: Sequence[str]) -> list[int]:
    """`kw1 N1 kw2 N2 ...`: non-negative integers, each after its keyword."""
    values = []
    for keyword in keywords:
        parser.parse_keyword(keyword)
        values.append(parser.parse_integer(allow_negative=False))
    return values


def _numbers_text(pairs: Sequence[tuple[str, int]]) -> str:
    return "".join(f" {keyword} {value}" for keyword, value in pairs)


# ── The section ───────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class ProgramOp(IRDLOperation):
    """`sp.program @c op "tg.matmul" phase sized tile 32x32 { ... }`: one section.

    `op` names the tg op the section computes (or the layout bridge it is: `tilize`,
    `untilize`), `tile` the tile shape (rows x cols of elements) the tensors are cut into. The body is one block of the ops below; tensors and groups are
    symbols of the section.
    """

    name = "sp.program"
    sym_name = prop_def(SymbolNameConstraint())
    source_op = prop_def(StringAttr, prop_name="op")
    phase = prop_def(PhaseAttr)
    tile_rows = prop_def(IntAttr)
    tile_cols = prop_def(IntAttr)
    body = region_def("single_block")
    traits = traits_def(IsolatedFromAbove(), NoTerminator(), SymbolOpInterface(), SymbolTable())

    def __init__(
        self,
        sym_name: str,
        source_op: str,
        phase: Phase,
        tile: tuple[int, int],
        ops: Sequence[Operation] = (),
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(sym_name),
                "op": StringAttr(source_op),
                "phase": PhaseAttr(phase),
                "tile_rows": _int(tile[0]),
                "tile_cols": _int(tile[1]),
            },
            regions=[Region(Block(ops))],
        )

    @classmethod
    def parse(cls, parser: Parser) -> ProgramOp:
        name = parser.parse_symbol_name()
        parser.parse_keyword("op")
        source = parser.parse_str_literal()
        parser.parse_keyword("phase")
        phase = parser.parse_str_enum(Phase)
        parser.parse_keyword("tile")
        rows, cols = parse_pair(parser, "the tile shape")
        attrs = _parse_attr_dict(parser)
        region = parser.parse_region()
        if not region.blocks:
            region.add_block(Block())
        op = cls.create(
            properties={
                "sym_name": name,
                "op": StringAttr(source),
                "phase": PhaseAttr(phase),
                "tile_rows": _int(rows),
                "tile_cols": _int(cols),
            },
            attributes=attrs,
            regions=[region],
        )
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_symbol_name(self.sym_name.data)
        printer.print_string(" op ")
        printer.print_string_literal(self.source_op.data)
        printer.print_string(
            f" phase {self.phase.data.value} tile {self.tile_rows.data}x{self.tile_cols.data}"
        )
        _print_attr_dict(self, printer)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)

    # Accessors ---------------------------------------------------------------------------------

    @property
    def phase_value(self) -> Phase:
        return self.phase.data

    def set_phase(self, phase: Phase) -> None:
        self.properties["phase"] = PhaseAttr(phase)

    @property
    def tile(self) -> tuple[int, int]:
        return self.tile_rows.data, self.tile_cols.data

    def ops_of(self, kind: type[_OpT]) -> list[_OpT]:
        return [op for op in self.body.block.ops if isinstance(op, kind)]

    def one(self, kind: type[_OpT]) -> _OpT | None:
        found = self.ops_of(kind)
        return found[0] if found else None

    def tensor(self, name: str) -> TensorOp:
        found = SymbolTable.lookup_symbol(self, name)
        if not isinstance(found, TensorOp):
            raise VerifyException(f"section @{self.sym_name.data} declares no tensor @{name}")
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
        super().verify(verify_nested_ops)
        # The section-wide rules run after every op verified on its own, and report at the op
        # that breaks them (sp_verify), not at the section.
        from spatial_dialect.sp_verify import verify_program

        verify_program(self)


class SectionOp(IRDLOperation):
    """An op that lives directly in an sp.program body."""

    @property
    def program(self) -> ProgramOp:
        parent = self.parent_op()
        assert isinstance(parent, ProgramOp)
        return parent


def _section_traits():
    return traits_def(HasParent(ProgramOp))


# ── Module-level interface ────────────────────────────────────────────────────────────────────


@irdl_op_definition
class EntryOp(IRDLOperation):
    """`sp.entry @main(@a, @b) -> (@c)`: the linked function's interface.

    Argument i of function @main is the DRAM tensor named by the i-th input, and result j the
    tensor named by the j-th output; a simulator fills and reads those by name.
    """

    name = "sp.entry"
    function = prop_def(StringAttr)
    inputs = prop_def(ArrayAttr[StringAttr])
    outputs = prop_def(ArrayAttr[StringAttr])

    def __init__(self, function: str, inputs: Sequence[str], outputs: Sequence[str]):
        super().__init__(
            properties={
                "function": StringAttr(function),
                "inputs": ArrayAttr([StringAttr(n) for n in inputs]),
                "outputs": ArrayAttr([StringAttr(n) for n in outputs]),
            }
        )

    @classmethod
    def parse(cls, parser: Parser) -> EntryOp:
        function = parser.parse_symbol_name().data
        inputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_symbol_name().data
        )
        parser.parse_punctuation("->")
        outputs = parser.parse_comma_separated_list(
            parser.Delimiter.PAREN, lambda: parser.parse_symbol_name().data
        )
        return _with_attrs(cls(function, inputs, outputs), parser)

    def print(self, printer: Printer) -> None:
        def names(a: ArrayAttr[StringAttr]) -> str:
            return ", ".join(f"@{s.data}" for s in a.data)

        printer.print_string(
            f" @{self.function.data}({names(self.inputs)}) -> ({names(self.outputs)})"
        )
        _print_attr_dict(self, printer)


# ── DRAM tensors ──────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class TensorOp(SectionOp):
    """`sp.tensor @a : tensor<100x70xbf16> tiles 4x3 input tiled [format bfp8_b]`.

    A DRAM tensor: its shape in elements and in tiles (a rank-1 tensor is one row), its role in
    the section, its layout (`tiled`: whole tiles in row-major tile order, a partial tile padded
    with zeros, tt-metal's TILE layout; `rows`: row-major elements, ROW_MAJOR) and, for bf16 on
    Tensix, the storage format of its tiles in DRAM and local memory.
    """

    name = "sp.tensor"
    sym_name = prop_def(SymbolNameConstraint())
    type = prop_def(TensorType)
    tiles_m = prop_def(IntAttr)
    tiles_n = prop_def(IntAttr)
    role = prop_def(TensorRoleAttr)
    layout = prop_def(LayoutAttr)
    format = opt_prop_def(StringAttr)
    traits = traits_def(HasParent(ProgramOp), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        type: TensorType,
        tiles: tuple[int, int],
        role: TensorRole,
        layout: Layout,
        format: str | None = None,
    ):
        super().__init__(
            properties={
                "sym_name": StringAttr(name),
                "type": type,
                "tiles_m": _int(tiles[0]),
                "tiles_n": _int(tiles[1]),
                "role": TensorRoleAttr(role),
                "layout": LayoutAttr(layout),
                "format": StringAttr(format) if format else None,
            }
        )

    @property
    def shape2d(self) -> tuple[int, int]:
        shape = self.type.get_shape()
        return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])

    @property
    def tiles(self) -> tuple[int, int]:
        return self.tiles_m.data, self.tiles_n.data

    @property
    def element_type(self) -> Attribute:
        return self.type.element_type

    @property
    def storage(self) -> str:
        """The storage format of the tiles: the element type unless a format overrides it."""
        return self.format.data if self.format else str(self.element_type)

    def verify_(self) -> None:
        shape = self.type.get_shape()
        if len(shape) not in (1, 2) or any(d <= 0 for d in shape):
            raise VerifyException(
                f"@{self.sym_name.data}: a DRAM tensor has a static rank-1 or rank-2 shape, got {self.type}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> TensorOp:
        name = parser.parse_symbol_name().data
        parser.parse_punctuation(":")
        type = parser.parse_type()
        if not isinstance(type, TensorType):
            parser.raise_error(f"a DRAM tensor has a tensor type, got {type}")
        parser.parse_keyword("tiles")
        tiles = parse_pair(parser, "the tile counts")
        role = parser.parse_str_enum(TensorRole)
        layout = parser.parse_str_enum(Layout)
        fmt = parser.parse_identifier() if parser.parse_optional_keyword("format") else None
        return _with_attrs(cls(name, cast(TensorType, type), tiles, role, layout, fmt), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} : ")
        printer.print_attribute(self.type)
        printer.print_string(
            f" tiles {self.tiles_m.data}x{self.tiles_n.data} {self.role.data.value} {self.layout.data.value}"
        )
        if self.format:
            printer.print_string(f" format {self.format.data}")
        _print_attr_dict(self, printer)


# ── Work and plan ─────────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class ItemRect:
    """The block of the result a work item covers, in tiles: origin (r0, c0), extent h x w."""

    r0: int
    c0: int
    h: int
    w: int


@dataclass(frozen=True)
class ItemSpace:
    """The work items of a section: the result cut into blocks of block_m x block_n tiles (a
    block at the bottom or right edge is clipped to the tensor), and how the items are numbered.

    Without `over` the items are the blocks in row-major order. With `over` = (GX, GY) the
    blocks are dealt round-robin over a GX x GY grid of sites, seed 003's map: block (r, c) goes
    to grid site (c % GX, r % GY), which runs its blocks in ROUNDS i = r // GY, j = c // GX.
    Grid row y holds rm(y) = ceil((items_m - y) / GY) block rows and grid column x holds
    rn(x) = ceil((items_n - x) / GX) block columns, so the first items_m % GY rows (items_n % GX
    columns) hold one round more when GY (GX) does not divide the blocks. The items are numbered
    site by site, grid site (x, y) after every site of the rows above and of its row to its left
    (x fastest), each holding its rm(y) x rn(x) blocks in the order: the rounds every site of the
    grid runs first, row-major, then its extra column round (by i), then its extra row round (by
    j), then the corner. So each site's items are consecutive, and a site with fewer rounds than
    a neighbour in its row (column) runs a prefix of the neighbour's sequence of block rows
    (columns) when only the columns (rows) are dealt unevenly: a multicast group can then serve
    them all from its first site. (With GX = items_n and GY = items_m, one block a site, this is
    the row-major order.) A line of sites is the grid GX x 1 or 1 x GY: one grid site per block
    column (block row), every block row (column) on each.

    THE one definition of what an item covers: place groups sites by it, the verifier checks
    ranges against it, the simulator runs it.
    """

    tiles_m: int
    tiles_n: int
    block_m: int
    block_n: int
    over: tuple[int, int] | None = None

    def __post_init__(self) -> None:
        if self.over is not None:
            gx, gy = self.over
            if not (0 < gx <= self.items_n and 0 < gy <= self.items_m):
                raise VerifyException(
                    f"{self.items_m}x{self.items_n} blocks leave sites of a {gx}x{gy} grid without work"
                )

    @property
    def items_m(self) -> int:
        return -(-self.tiles_m // self.block_m)

    @property
    def items_n(self) -> int:
        return -(-self.tiles_n // self.block_n)

    @property
    def count(self) -> int:
        return self.items_m * self.items_n

    @property
    def grid(self) -> tuple[int, int]:
        """The grid of sites the blocks are dealt over (GX, GY); one block each without `over`."""
        return self.over if self.over is not None else (self.items_n, self.items_m)

    def _even(self) -> tuple[int, int, int, int]:
        """(rounds every grid row runs, rows with one more, likewise for columns)."""
        gx, gy = self.grid
        return self.items_m // gy, self.items_m % gy, self.items_n // gx, self.items_n % gx

    def site_rounds(self, x: int, y: int) -> tuple[int, int]:
        """The block rows and block columns grid site (x, y) runs."""
        rm, em, rn, en = self._even()
        return rm + (y < em), rn + (x < en)

    @property
    def rounds(self) -> tuple[int, int]:
        """The most block rows and block columns a grid site runs (grid site (0, 0))."""
        return self.site_rounds(0, 0)

    @property
    def per_site(self) -> int:
        """The most items a grid site runs (grid site (0, 0))."""
        rm, rn = self.rounds
        return rm * rn

    def site_first(self, x: int, y: int) -> int:
        """The first item of grid site (x, y)."""
        rm, em, rn, en = self._even()
        rows_above = y * rm + min(y, em)
        return rows_above * self.items_n + (rm + (y < em)) * (x * rn + min(x, en))

    def _round(self, t: int, rmy: int, rnx: int) -> tuple[int, int]:
        """The rounds (i, j) of the t-th item of a site running rmy x rnx blocks."""
        rm, _, rn, _ = self._even()
        if t < rm * rn:
            return divmod(t, rn)
        t -= rm * rn
        if rnx > rn:
            if t < rm:
                return t, rn
            t -= rm
        if rmy > rm:
            if t < rn:
                return rm, t
            t -= rn
        assert t == 0 and rmy > rm and rnx > rn, "an item beyond its site's blocks"
        return rm, rn

    def _position(self, i: int, j: int, rnx: int) -> int:
        """The inverse of `_round`: where rounds (i, j) come among a site's items."""
        rm, _, rn, _ = self._even()
        if i < rm and j < rn:
            return i * rn + j
        if i < rm:
            return rm * rn + i
        extra_column = rm if rnx > rn else 0
        return rm * rn + extra_column + j

    def coord(self, item: int) -> tuple[int, int]:
        """The block (row, column) item `item` covers."""
        if self.over is None:
            return divmod(item, self.items_n)
        gx, gy = self.over
        rm, em, rn, en = self._even()
        row_items = self.items_n
        per_long_row = (rm + 1) * row_items
        if item < em * per_long_row:
            y = item // per_long_row
        else:
            y = em + (item - em * per_long_row) // (rm * row_items)
        rest = item - (y * rm + min(y, em)) * row_items
        rmy = rm + (y < em)
        per_long_col = (rn + 1) * rmy
        if rest < en * per_long_col:
            x = rest // per_long_col
        else:
            x = en + (rest - en * per_long_col) // (rn * rmy)
        t = rest - rmy * (x * rn + min(x, en))
        i, j = self._round(t, rmy, rn + (x < en))
        return y + i * gy, x + j * gx

    def item(self, row: int, col: int) -> int:
        """The item covering block (row, column): the inverse of `coord`."""
        if self.over is None:
            return row * self.items_n + col
        gx, gy = self.over
        x, y = col % gx, row % gy
        return self.site_first(x, y) + self._position(
            row // gy, col // gx, self.site_rounds(x, y)[1]
        )

    def rect(self, item: int) -> ItemRect:
        bi, bj = self.coord(item)
        r0, c0 = bi * self.block_m, bj * self.block_n
        return ItemRect(
            r0, c0, min(self.block_m, self.tiles_m - r0), min(self.block_n, self.tiles_n - c0)
        )


@irdl_op_definition
class WorkOp(SectionOp):
    """`sp.work @c block 16x16 k 128 by 2 [over 8x8]`: the work items and the K loop (tile's
    decision).

    The items cut the named result into blocks of the given tiles (`ItemSpace`); every item runs
    the K loop over `k` tiles in blocks of `by` tiles (the size symbol kw). With `over GXxGY` the
    blocks are dealt round-robin over a GX x GY grid of sites, several to a site, and numbered
    site by site (`ItemSpace`); the grid is at most the block columns by the block rows.
    """

    name = "sp.work"
    tensor = prop_def(FlatSymbolRefAttr)
    block_m = prop_def(IntAttr)
    block_n = prop_def(IntAttr)
    k_tiles = prop_def(IntAttr)
    k_block = prop_def(IntAttr)
    over_x = opt_prop_def(IntAttr)
    over_y = opt_prop_def(IntAttr)
    traits = _section_traits()

    def __init__(
        self,
        tensor: str,
        block: tuple[int, int],
        k_tiles: int,
        k_block: int,
        over: tuple[int, int] | None = None,
    ):
        super().__init__(
            properties={
                "tensor": SymbolRefAttr(tensor),
                "block_m": _int(block[0]),
                "block_n": _int(block[1]),
                "k_tiles": _int(k_tiles),
                "k_block": _int(k_block),
                "over_x": None if over is None else _int(over[0]),
                "over_y": None if over is None else _int(over[1]),
            }
        )

    @property
    def over(self) -> tuple[int, int] | None:
        if self.over_x is None or self.over_y is None:
            return None
        return self.over_x.data, self.over_y.data

    def space(self, result: TensorOp) -> ItemSpace:
        return ItemSpace(
            result.tiles_m.data,
            result.tiles_n.data,
            self.block_m.data,
            self.block_n.data,
            self.over,
        )

    @property
    def k_blocks(self) -> int:
        return self.k_tiles.data // self.k_block.data

    def verify_(self) -> None:
        if min(self.block_m.data, self.block_n.data, self.k_tiles.data, self.k_block.data) <= 0:
            raise VerifyException("sp.work: blocks and K tiles must be positive")
        if self.k_tiles.data % self.k_block.data:
            raise VerifyException(
                f"sp.work: the K block of {self.k_block.data} tiles does not divide the {self.k_tiles.data} K tiles"
            )
        if (self.over_x is None) != (self.over_y is None):
            raise VerifyException("sp.work: `over` is a grid GXxGY")
        if self.over is not None and min(self.over) <= 0:
            raise VerifyException("sp.work: the grid the blocks are dealt over must have sites")

    @classmethod
    def parse(cls, parser: Parser) -> WorkOp:
        tensor = parser.parse_symbol_name().data
        parser.parse_keyword("block")
        block = parse_pair(parser, "the item block")
        k_tiles, k_block = _parse_numbers(parser, ("k", "by"))
        over = (
            parse_pair(parser, "the grid the blocks are dealt over")
            if parser.parse_optional_keyword("over")
            else None
        )
        return _with_attrs(cls(tensor, block, k_tiles, k_block, over), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(
            f" @{self.tensor.root_reference.data} block {self.block_m.data}x{self.block_n.data}"
            + _numbers_text((("k", self.k_tiles.data), ("by", self.k_block.data)))
        )
        if (over := self.over) is not None:
            printer.print_string(f" over {over[0]}x{over[1]}")
        _print_attr_dict(self, printer)


@irdl_op_definition
class PlanOp(SectionOp):
    """`sp.plan blocked [line] grid 8x8 block 4x2 packing operand_with_store [multicast a, b]
    predicted 262144 bound "compute" runner_up ...`.

    The block plan tile chose and why: the kind (`blocked`: each site computes its items'
    blocks in sub-blocks with operand reuse; `streaming`: each site walks single output tiles,
    tt-metal's non-reuse matmul), the grid of sites it uses, the output sub-block
    (osh x osw tiles held in the accumulator at once), the predicted cycles and the bound of
    the cost model, and the runner-up plan with its cycles. `packing` says how the data
    movement shares the site's movement engines: `single` (one engine moves everything),
    `operand_with_store` (A's loader on one engine, B's loader with the store on the other:
    tt-metal's pairing of in1 with the writer, seed 003), `split` (A, B and the store each on
    their own). The per-site block and the K block are the work's (`sp.work`).

    `line`: the grid (GX x 1 or 1 x GY) is a line of sites folded onto the mesh row by row,
    tt-metal's 1-D multicast matmul: a GX x 1 line shares A over all its sites, a 1 x GY line
    shares B. `multicast` names the operands a group of sites shares by rectangle multicast
    (`a`: a row of the grid, or the whole line; `b`: a column, or the whole line); an operand
    not named is read by every site for itself. The cost of the other choice for each operand
    is in the `multicast_why` attribute.
    """

    name = "sp.plan"
    kind = prop_def(PlanKindAttr)
    line = opt_prop_def(UnitAttr)
    grid_x = prop_def(IntAttr)
    grid_y = prop_def(IntAttr)
    osh = prop_def(IntAttr)
    osw = prop_def(IntAttr)
    packing = prop_def(StringAttr)
    multicast = opt_prop_def(ArrayAttr[StringAttr])
    predicted_cycles = prop_def(IntAttr)
    bound = prop_def(StringAttr)
    runner_up = opt_prop_def(StringAttr)
    runner_up_cycles = opt_prop_def(IntAttr)
    traits = _section_traits()

    PACKINGS: ClassVar = ("single", "operand_with_store", "split")
    OPERANDS: ClassVar = ("a", "b")

    def __init__(
        self,
        kind: PlanKind,
        grid: tuple[int, int],
        block: tuple[int, int],
        packing: str,
        predicted_cycles: int,
        bound: str,
        runner_up: tuple[str, int] | None = None,
        *,
        line: bool = False,
        multicast: Sequence[str] = (),
    ):
        super().__init__(
            properties={
                "kind": PlanKindAttr(kind),
                "line": UnitAttr() if line else None,
                "grid_x": _int(grid[0]),
                "grid_y": _int(grid[1]),
                "osh": _int(block[0]),
                "osw": _int(block[1]),
                "packing": StringAttr(packing),
                "multicast": ArrayAttr([StringAttr(m) for m in multicast]) if multicast else None,
                "predicted_cycles": _int(predicted_cycles),
                "bound": StringAttr(bound),
                "runner_up": StringAttr(runner_up[0]) if runner_up else None,
                "runner_up_cycles": _int(runner_up[1]) if runner_up else None,
            }
        )

    @property
    def streaming(self) -> bool:
        return self.kind.data == PlanKind.STREAMING

    @property
    def is_line(self) -> bool:
        return self.line is not None

    @property
    def multicast_operands(self) -> tuple[str, ...]:
        return () if self.multicast is None else tuple(m.data for m in self.multicast.data)

    def verify_(self) -> None:
        if min(self.grid_x.data, self.grid_y.data, self.osh.data, self.osw.data) <= 0:
            raise VerifyException("sp.plan: grid and block must be positive")
        if (self.runner_up is None) != (self.runner_up_cycles is None):
            raise VerifyException("sp.plan: a runner-up has a description and its cycles")
        if self.packing.data not in self.PACKINGS:
            raise VerifyException(
                f"sp.plan: packing is one of {', '.join(self.PACKINGS)}, got {self.packing.data}"
            )
        ops = self.multicast_operands
        if any(o not in self.OPERANDS for o in ops) or len(set(ops)) != len(ops):
            raise VerifyException(f"sp.plan: multicast names operands a and b, got {list(ops)}")
        if self.is_line and (self.streaming or min(self.grid_x.data, self.grid_y.data) != 1):
            raise VerifyException(
                f"sp.plan: a line is a blocked grid GXx1 or 1xGY, got {self.grid_x.data}x{self.grid_y.data}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> PlanOp:
        kind = parser.parse_str_enum(PlanKind)
        line = parser.parse_optional_keyword("line") is not None
        parser.parse_keyword("grid")
        grid = parse_pair(parser, "the grid")
        parser.parse_keyword("block")
        block = parse_pair(parser, "the sub-block")
        parser.parse_keyword("packing")
        packing = parser.parse_identifier()
        multicast: list[str] = []
        if parser.parse_optional_keyword("multicast"):
            multicast = parser.parse_comma_separated_list(
                parser.Delimiter.NONE, parser.parse_identifier
            )
        parser.parse_keyword("predicted")
        cycles = parser.parse_integer(allow_negative=False)
        parser.parse_keyword("bound")
        bound = parser.parse_str_literal()
        runner_up = None
        if parser.parse_optional_keyword("runner_up"):
            what = parser.parse_str_literal()
            runner_up = (what, parser.parse_integer(allow_negative=False))
        op = cls(
            kind, grid, block, packing, cycles, bound, runner_up, line=line, multicast=multicast
        )
        return _with_attrs(op, parser)

    def print(self, printer: Printer) -> None:
        line = " line" if self.is_line else ""
        multicast = (
            f" multicast {', '.join(self.multicast_operands)}" if self.multicast_operands else ""
        )
        printer.print_string(
            f" {self.kind.data.value}{line} grid {self.grid_x.data}x{self.grid_y.data} block {self.osh.data}x{self.osw.data}"
            f" packing {self.packing.data}{multicast} predicted {self.predicted_cycles.data} bound "
        )
        printer.print_string_literal(self.bound.data)
        if self.runner_up is not None and self.runner_up_cycles is not None:
            printer.print_string(" runner_up ")
            printer.print_string_literal(self.runner_up.data)
            printer.print_string(f" {self.runner_up_cycles.data}")
        _print_attr_dict(self, printer)


# ── Placement ─────────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class MeshOp(SectionOp):
    """`sp.mesh 8x8 movement 2 nocs 2 local 1395424`: the sites a placed section runs on.

    The (sub-)mesh, each site's movement engines and NoCs, and the local memory each site can
    be configured with (bytes from its first usable address): the budget size-buffers lays out
    against.
    """

    name = "sp.mesh"
    x = prop_def(IntAttr)
    y = prop_def(IntAttr)
    movement_engines = prop_def(IntAttr)
    nocs = prop_def(IntAttr)
    local_mem = prop_def(IntAttr)
    traits = _section_traits()

    def __init__(self, mesh: tuple[int, int], movement_engines: int, nocs: int, local_mem: int):
        super().__init__(
            properties={
                "x": _int(mesh[0]),
                "y": _int(mesh[1]),
                "movement_engines": _int(movement_engines),
                "nocs": _int(nocs),
                "local_mem": _int(local_mem),
            }
        )

    def verify_(self) -> None:
        if min(self.x.data, self.y.data) <= 0:
            raise VerifyException("sp.mesh: the mesh must have sites")

    @classmethod
    def parse(cls, parser: Parser) -> MeshOp:
        mesh = parse_pair(parser, "the mesh")
        engines, nocs, local = _parse_numbers(parser, ("movement", "nocs", "local"))
        return _with_attrs(cls(mesh, engines, nocs, local), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(
            f" {self.x.data}x{self.y.data}"
            + _numbers_text(
                (
                    ("movement", self.movement_engines.data),
                    ("nocs", self.nocs.data),
                    ("local", self.local_mem.data),
                )
            )
        )
        _print_attr_dict(self, printer)


@irdl_op_definition
class SitesOp(SectionOp):
    """`sp.sites [0, 6]x[0, 7] first y * 8 + x count 1 block 16x16 sub_block 4x2 [memory {...}]`.

    A site range: sites that run the same instances with the same shapes (tt-metal's
    CoreRange). Per site, what differs is an argument: site (x, y) runs the `count` work items
    from `first(x, y)` (affine in x and y). Every item of the range has the stated block; with
    the sub-block it binds the size symbols (`bindings`). Once sized, `memory` gives each
    buffer's offset in the site's local memory (from its first usable byte); a buffer's bytes
    are its depth x page tiles x tile bytes under the range's bindings.
    """

    name = "sp.sites"
    rect = prop_def(RectAttr)
    first = prop_def(AffineMapAttr)
    count = prop_def(IntAttr)
    block_h = prop_def(IntAttr)
    block_w = prop_def(IntAttr)
    sub_h = prop_def(IntAttr)
    sub_w = prop_def(IntAttr)
    memory = opt_prop_def(DictionaryAttr)
    traits = _section_traits()

    def __init__(
        self,
        rect: RectAttr,
        first: AffineMapAttr,
        count: int,
        block: tuple[int, int],
        sub_block: tuple[int, int],
        memory: dict[str, int] | None = None,
    ):
        super().__init__(
            properties={
                "rect": rect,
                "first": first,
                "count": _int(count),
                "block_h": _int(block[0]),
                "block_w": _int(block[1]),
                "sub_h": _int(sub_block[0]),
                "sub_w": _int(sub_block[1]),
                "memory": None if memory is None else _memory_attr(memory),
            }
        )

    # Semantics ---------------------------------------------------------------------------------

    def first_item(self, x: int, y: int) -> int:
        return self.first.data.eval([x, y], [])[0]

    def items(self, x: int, y: int) -> range:
        first = self.first_item(x, y)
        return range(first, first + self.count.data)

    @property
    def block(self) -> tuple[int, int]:
        return self.block_h.data, self.block_w.data

    @property
    def sub_block(self) -> tuple[int, int]:
        return self.sub_h.data, self.sub_w.data

    def bindings(self, k_block: int) -> dict[str, int]:
        """The size symbols of this range's sites."""
        (h, w), (sh, sw) = self.block, self.sub_block
        return {"h": h, "w": w, "sh": sh, "sw": sw, "kw": k_block, "subs": (h // sh) * (w // sw)}

    def offsets(self) -> dict[str, int]:
        if self.memory is None:
            return {}
        return {k: cast(IntegerAttr, v).value.data for k, v in self.memory.data.items()}

    def set_offsets(self, offsets: dict[str, int]) -> None:
        self.properties["memory"] = _memory_attr(offsets)

    def verify_(self) -> None:
        m = self.first.data
        if m.num_dims != 2 or m.num_symbols != 0 or len(m.results) != 1:
            raise VerifyException(
                "sp.sites: `first` is one affine expression of the site's x and y"
            )
        (h, w), (sh, sw) = self.block, self.sub_block
        if self.count.data <= 0 or min(h, w, sh, sw) <= 0:
            raise VerifyException("sp.sites: count, block and sub-block must be positive")
        if h % sh or w % sw:
            raise VerifyException(
                f"sp.sites: the sub-block {sh}x{sw} does not tile the block {h}x{w}"
            )

    @classmethod
    def parse(cls, parser: Parser) -> SitesOp:
        rect = RectAttr.parse_body(parser)
        parser.parse_keyword("first")
        first = parse_site_map(parser)
        parser.parse_keyword("count")
        count = parser.parse_integer(allow_negative=False)
        parser.parse_keyword("block")
        block = parse_pair(parser, "the block")
        parser.parse_keyword("sub_block")
        sub = parse_pair(parser, "the sub-block")
        memory = None
        if parser.parse_optional_keyword("memory"):

            def entry() -> tuple[str, int]:
                key = parser.parse_identifier()
                parser.parse_punctuation("=")
                return key, parser.parse_integer(allow_negative=False)

            memory = dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, entry))
        return _with_attrs(cls(rect, AffineMapAttr(first), count, block, sub, memory), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(
            f" {self.rect.text()} first {site_map_text(self.first.data)} count {self.count.data}"
            f" block {self.block_h.data}x{self.block_w.data} sub_block {self.sub_h.data}x{self.sub_w.data}"
        )
        if self.memory is not None:
            printer.print_string(
                " memory {" + ", ".join(f"{k} = {v}" for k, v in self.offsets().items()) + "}"
            )
        _print_attr_dict(self, printer)


def _memory_attr(offsets: dict[str, int]) -> DictionaryAttr:
    return DictionaryAttr({k: IntegerAttr(v, i64) for k, v in offsets.items()})


# ── Buffers ───────────────────────────────────────────────────────────────────────────────────


class BufferOp(SectionOp):
    """A buffer template: one instance per site of the section's ranges.

    `label` names it (instances are `label@x,y`), `page` is the shape in tiles of one page
    (rows x cols, tiles row-major), `elt` the element type, `format` the storage format of its
    tiles where it is not the element type's (bfp8_b, bfp4_b), `tile_bytes` the bytes of one
    stored tile.
    """

    label = prop_def(StringAttr)
    page = prop_def(SizesAttr)
    elt = prop_def(Attribute)
    format = opt_prop_def(StringAttr)
    res = result_def(BufferType)

    @property
    def storage(self) -> str:
        return self.format.data if self.format else str(self.elt)

    def page_tiles(self, bindings: dict[str, int]) -> int:
        rows, cols = self.page.resolve(bindings)
        return rows * cols

    def verify_(self) -> None:
        if len(self.page.exprs) != 2:
            raise VerifyException(f"buffer {self.label.data}: a page is [rows, cols] of tiles")


class MemoryBufferOp(BufferOp):
    """A buffer in the site's local memory: `depth` pages, laid out at an offset once sized."""

    depth = prop_def(SizesAttr)
    tile_bytes = prop_def(IntAttr)
    alias = opt_operand_def(BufferType)

    def __init__(
        self,
        label: str,
        depth: SizesAttr,
        page: SizesAttr,
        elt: Attribute,
        tile_bytes: int,
        format: str | None = None,
        alias: SSAValue | None = None,
    ):
        super().__init__(
            operands=[alias],
            properties={
                "label": StringAttr(label),
                "depth": depth,
                "page": page,
                "elt": elt,
                "tile_bytes": _int(tile_bytes),
                "format": StringAttr(format) if format else None,
            },
            result_types=[BUFFER],
        )

    def bytes(self, bindings: dict[str, int]) -> int:
        return self.depth.resolve(bindings)[0] * self.page_tiles(bindings) * self.tile_bytes.data

    @property
    def alias_of(self) -> MemoryBufferOp | None:
        if self.alias is None:
            return None
        owner = self.alias.owner
        assert isinstance(owner, MemoryBufferOp), "the verifier checks what an alias names"
        return owner

    def verify_(self) -> None:
        super().verify_()
        if len(self.depth.exprs) != 1:
            raise VerifyException(f"buffer {self.label.data}: a depth is one size")
        if (d := self.depth.constant()) is not None and d[0] < 1:
            raise VerifyException(f"buffer {self.label.data}: depth {d[0]} must be at least 1")
        if self.tile_bytes.data <= 0:
            raise VerifyException(f"buffer {self.label.data}: tile bytes must be positive")
        if self.alias is not None and not isinstance(self.alias.owner, MemoryBufferOp):
            raise VerifyException(
                f"buffer {self.label.data}: an alias names a buffer in local memory"
            )

    @classmethod
    def parse(cls, parser: Parser) -> MemoryBufferOp:
        label = parser.parse_str_literal()
        parser.parse_keyword("depth")
        depth = SizesAttr.parse_scalar(parser)
        parser.parse_keyword("page")
        page = SizesAttr.parse_body(parser)
        elt = parser.parse_type()
        fmt = parser.parse_identifier() if parser.parse_optional_keyword("as") else None
        parser.parse_keyword("tile_bytes")
        tile_bytes = parser.parse_integer(allow_negative=False)
        alias = parser.parse_operand(BUFFER) if parser.parse_optional_keyword("alias") else None
        return _with_attrs(cls(label, depth, page, elt, tile_bytes, fmt, alias), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        printer.print_string(f" depth {self.depth.scalar_text()} page {self.page.text()} ")
        printer.print_attribute(self.elt)
        if self.format:
            printer.print_string(f" as {self.format.data}")
        printer.print_string(f" tile_bytes {self.tile_bytes.data}")
        if self.alias is not None:
            printer.print_string(" alias ")
            printer.print_operand(self.alias)
        _print_attr_dict(self, printer)


@irdl_op_definition
class FifoOp(MemoryBufferOp):
    """`%in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048`.

    A FIFO of `depth` pages between a producer stage and its consumers. A push writes the next
    page in ring order and waits while every page is full; a pop releases the oldest. A FIFO
    that a multicast group fills is written by the group's sender on every member site.
    """

    name = "sp.fifo"
    traits = _section_traits()


@irdl_op_definition
class IntermOp(MemoryBufferOp):
    """`%spill = sp.interm "spill" depth subs page [sh, sw] f32 tile_bytes 4096 [alias %out]`.

    The K-block spill of a blocked matmul: one page per sub-block holds that sub-block's
    partial sums between K blocks, at the accumulator's precision. Its depth is a correctness
    constraint (every sub-block's partial is parked before the first is reloaded), not a rate
    choice. With `alias` it shares the memory of the output FIFO (an output accumulated in
    place, seed 001): the last K block packs each sub-block onto the page its partial occupied.
    """

    name = "sp.interm"
    traits = _section_traits()


@irdl_op_definition
class AccOp(BufferOp):
    """`%dst = sp.acc "dst" page [sh, sw] f32`: the accumulator (dest registers on Tensix,
    register fragments on a GPU). Not in local memory: it has no depth and no offset."""

    name = "sp.acc"
    traits = _section_traits()

    def __init__(self, label: str, page: SizesAttr, elt: Attribute):
        super().__init__(
            properties={"label": StringAttr(label), "page": page, "elt": elt}, result_types=[BUFFER]
        )

    @classmethod
    def parse(cls, parser: Parser) -> AccOp:
        label = parser.parse_str_literal()
        parser.parse_keyword("page")
        page = SizesAttr.parse_body(parser)
        return _with_attrs(cls(label, page, parser.parse_type()), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.label.data)
        printer.print_string(f" page {self.page.text()} ")
        printer.print_attribute(self.elt)
        _print_attr_dict(self, printer)


def buffer_of(value: SSAValue) -> BufferOp:
    owner = value.owner
    assert isinstance(owner, BufferOp), "buffer operands are !sp.buffer results of buffer ops"
    return owner


# ── Multicast groups and sharing decisions ────────────────────────────────────────────────────


@irdl_op_definition
class GroupOp(SectionOp):
    """`sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0`: a family of multicast groups.

    `rows`: each row y of the rectangle is one group; its sender is the site (sender, y), its
    members the instances of the buffer on every site (x, y) of the row. `columns`: each column
    x, sender (x, sender). `line` (`sp.group @in0_line %in0 line [0, 7]x[0, 7] sites 60
    sender 0`): one group, the first `sites` sites of the rectangle walked row by row (x
    fastest), which is a line of sites folded onto the mesh; its sender is the `sender`-th of
    them. A load naming the group runs on the sender only: for the sender's t-th item it reads
    the block once from DRAM and writes each page to the same offset of the FIFO of every member
    that runs a t-th item, waiting until each of them has a free page; the members' own
    instances of that load do nothing. A member runs at most as many items as its sender, and
    its t-th item reads the same block of the operand as the sender's t-th (the verifier checks
    it), so each page it receives is the one its next item pops. Members agree on depth, page
    size and offset (GroupMemberMismatch).
    """

    name = "sp.group"
    sym_name = prop_def(SymbolNameConstraint())
    buffer = operand_def(BufferType)
    axis = prop_def(GroupAxisAttr)
    rect = prop_def(RectAttr)
    sites = opt_prop_def(IntAttr)
    sender = prop_def(IntAttr)
    traits = traits_def(HasParent(ProgramOp), SymbolOpInterface())

    def __init__(
        self,
        name: str,
        buffer: SSAValue,
        axis: GroupAxis,
        rect: RectAttr,
        sender: int,
        sites: int | None = None,
    ):
        if axis == GroupAxis.LINE and sites is None:
            sites = rect.width * rect.height
        super().__init__(
            operands=[buffer],
            properties={
                "sym_name": StringAttr(name),
                "axis": GroupAxisAttr(axis),
                "rect": rect,
                "sites": None if sites is None else _int(sites),
                "sender": _int(sender),
            },
        )

    def groups(self) -> Iterator[tuple[tuple[int, int], list[tuple[int, int]]]]:
        """Each group of the family: (sender site, member sites)."""
        x0, x1, y0, y1 = self.rect.bounds
        s = self.sender.data
        if self.axis.data == GroupAxis.LINE:
            members = self.rect.sites()[: self.line_sites]
            yield members[s], members
        elif self.axis.data == GroupAxis.ROWS:
            for y in range(y0, y1 + 1):
                yield (s, y), [(x, y) for x in range(x0, x1 + 1)]
        else:
            for x in range(x0, x1 + 1):
                yield (x, s), [(x, y) for y in range(y0, y1 + 1)]

    @property
    def line_sites(self) -> int:
        return self.sites.data if self.sites is not None else self.rect.width * self.rect.height

    def verify_(self) -> None:
        x0, x1, y0, y1 = self.rect.bounds
        name = self.sym_name.data
        if self.axis.data == GroupAxis.LINE:
            n, width = self.line_sites, self.rect.width
            # The rectangle is the one the line occupies: its last row is the only partial one.
            if not (self.rect.height - 1) * width < n <= self.rect.height * width:
                raise VerifyException(
                    f"sp.group @{name}: a line of {n} sites does not fill the rows of {self.rect.text()}"
                )
            if not 0 <= self.sender.data < n:
                raise VerifyException(
                    f"sp.group @{name}: sender {self.sender.data} is not one of the line's {n} sites"
                )
            return
        if self.sites is not None:
            raise VerifyException(f"sp.group @{name}: only a line group counts its sites")
        lo, hi = (x0, x1) if self.axis.data == GroupAxis.ROWS else (y0, y1)
        if not lo <= self.sender.data <= hi:
            raise VerifyException(
                f"sp.group @{name}: sender {self.sender.data} lies outside the group's {self.axis.data.value} [{lo}, {hi}]"
            )

    @classmethod
    def parse(cls, parser: Parser) -> GroupOp:
        name = parser.parse_symbol_name().data
        buffer = parser.parse_operand(BUFFER)
        axis = parser.parse_str_enum(GroupAxis)
        rect = RectAttr.parse_body(parser)
        sites = (
            parser.parse_integer(allow_negative=False)
            if parser.parse_optional_keyword("sites")
            else None
        )
        parser.parse_keyword("sender")
        sender = parser.parse_integer(allow_negative=False)
        return _with_attrs(cls(name, buffer, axis, rect, sender, sites), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.sym_name.data} ")
        printer.print_operand(self.buffer)
        printer.print_string(f" {self.axis.data.value} {self.rect.text()}")
        if self.sites is not None:
            printer.print_string(f" sites {self.sites.data}")
        printer.print_string(f" sender {self.sender.data}")
        _print_attr_dict(self, printer)


@irdl_op_definition
class ShareOp(SectionOp):
    """`sp.share @a broadcast consumers 8 bytes 65536 hops 7 saves 40 costs 12 copies 1 "why"`.

    How one shared operand panel reaches the items that read it where the fabric has no
    multicast rectangles (seed 000): `broadcast` fetches it once and fans it out over the
    fabric, `replicated` lets each consumer fetch its own copy. The numbers are the decision's:
    the panel's bytes, its consumers, the hops a fan-out crosses, the DRAM cycles a broadcast
    saves and the fabric cycles it costs, and the copies fetched from DRAM. Every consumer
    receives the same panel either way, so a simulator's data does not change; the bytes the
    report and the roofline count do.
    """

    name = "sp.share"
    tensor = prop_def(FlatSymbolRefAttr)
    sharing = prop_def(SharingAttr)
    consumers = prop_def(IntAttr)
    bytes = prop_def(IntAttr)
    hops = prop_def(IntAttr)
    dram_cycles_saved = prop_def(IntAttr)
    fabric_cycles_added = prop_def(IntAttr)
    copies = prop_def(IntAttr)
    why = prop_def(StringAttr)
    traits = _section_traits()

    FIELDS: ClassVar = (
        ("consumers", "consumers"),
        ("bytes", "bytes"),
        ("hops", "hops"),
        ("saves", "dram_cycles_saved"),
        ("costs", "fabric_cycles_added"),
        ("copies", "copies"),
    )

    def __init__(self, tensor: str, sharing: Sharing, numbers: dict[str, int], why: str):
        props: dict[str, Attribute] = {
            "tensor": SymbolRefAttr(tensor),
            "sharing": SharingAttr(sharing),
            "why": StringAttr(why),
        }
        props.update({field: _int(numbers[field]) for _, field in self.FIELDS})
        super().__init__(properties=props)

    @classmethod
    def parse(cls, parser: Parser) -> ShareOp:
        tensor = parser.parse_symbol_name().data
        sharing = parser.parse_str_enum(Sharing)
        values = _parse_numbers(parser, [keyword for keyword, _ in cls.FIELDS])
        numbers = {field: v for (_, field), v in zip(cls.FIELDS, values, strict=True)}
        return _with_attrs(cls(tensor, sharing, numbers, parser.parse_str_literal()), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.tensor.root_reference.data} {self.sharing.data.value}")
        printer.print_string(
            _numbers_text([(k, cast(IntAttr, self.properties[f]).data) for k, f in self.FIELDS])
        )
        printer.print_string(" ")
        printer.print_string_literal(self.why.data)
        _print_attr_dict(self, printer)


# ── Stages ────────────────────────────────────────────────────────────────────────────────────


class StageOp(SectionOp):
    """A stage template: one instance per site, on the engine `engine` once placed."""

    engine = opt_prop_def(EngineAttr)

    def stage_name(self) -> str:
        raise NotImplementedError

    def set_engine(self, engine: EngineAttr) -> None:
        self.properties["engine"] = engine

    def _print_engine(self, printer: Printer) -> None:
        if self.engine is not None:
            printer.print_string(f" on {self.engine.text()}")
        _print_attr_dict(self, printer)

    @staticmethod
    def _parse_engine(parser: Parser) -> EngineAttr | None:
        return EngineAttr.parse_body(parser) if parser.parse_optional_keyword("on") else None


@irdl_op_definition
class LoadOp(StageOp):
    """`sp.load @a[r0, k0] x [h, kw] -> %in0 [multicast @in0_rows] [on movement 1 noc 0]`.

    Per item and per iteration of its loops, reads the block of tiles the access pattern gives
    from the DRAM tensor and pushes it as one page. With `multicast`, the load belongs to the
    group's sender (sp.group).
    """

    name = "sp.load"
    tensor = prop_def(FlatSymbolRefAttr)
    access = prop_def(AccessAttr)
    group = opt_prop_def(FlatSymbolRefAttr)
    dst = operand_def(BufferType)
    traits = _section_traits()

    def __init__(
        self,
        tensor: str,
        access: AccessAttr,
        dst: SSAValue,
        group: str | None = None,
        engine: EngineAttr | None = None,
    ):
        super().__init__(
            operands=[dst],
            properties={
                "tensor": SymbolRefAttr(tensor),
                "access": access,
                "group": SymbolRefAttr(group) if group else None,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"load @{self.tensor.root_reference.data} -> {buffer_of(self.dst).label.data}"

    @classmethod
    def parse(cls, parser: Parser) -> LoadOp:
        tensor = parser.parse_symbol_name().data
        access = AccessAttr.parse_body(parser)
        parser.parse_punctuation("->")
        dst = parser.parse_operand(BUFFER)
        group = (
            parser.parse_symbol_name().data if parser.parse_optional_keyword("multicast") else None
        )
        return _with_attrs(cls(tensor, access, dst, group, cls._parse_engine(parser)), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(f" @{self.tensor.root_reference.data}{self.access.text()} -> ")
        printer.print_operand(self.dst)
        if self.group is not None:
            printer.print_string(f" multicast @{self.group.root_reference.data}")
        self._print_engine(printer)


@irdl_op_definition
class StoreOp(StageOp):
    """`sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] [on movement 0 noc 1]`.

    Per item and per iteration of its loops, pops one page and writes it to the block of the
    DRAM tensor the access pattern gives.
    """

    name = "sp.store"
    src = operand_def(BufferType)
    tensor = prop_def(FlatSymbolRefAttr)
    access = prop_def(AccessAttr)
    traits = _section_traits()

    def __init__(
        self, src: SSAValue, tensor: str, access: AccessAttr, engine: EngineAttr | None = None
    ):
        super().__init__(
            operands=[src],
            properties={
                "tensor": SymbolRefAttr(tensor),
                "access": access,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"store {buffer_of(self.src).label.data} -> @{self.tensor.root_reference.data}"

    @classmethod
    def parse(cls, parser: Parser) -> StoreOp:
        src = parser.parse_operand(BUFFER)
        parser.parse_punctuation("->")
        tensor = parser.parse_symbol_name().data
        access = AccessAttr.parse_body(parser)
        return _with_attrs(cls(src, tensor, access, cls._parse_engine(parser)), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.src)
        printer.print_string(f" -> @{self.tensor.root_reference.data}{self.access.text()}")
        self._print_engine(printer)


@irdl_op_definition
class MatmulTilesOp(StageOp):
    """`sp.matmul_tiles %in0, %in1 -> %out acc %dst [spill %spill] [fidelity hifi4] [on compute]`.

    Per item: for each K block k0, pop one page of A (h x kw tiles) and one of B (kw x w); for
    each sub-block (ti, tj), row-major: start the accumulator at zero on the first K block,
    else from the sub-block's partial (popped from the spill, or still held in the accumulator
    where there is no spill: a single sub-block, or a register accumulator holding the whole
    block); add A[ti .. ti+sh, :] @ B[:, tj .. tj+sw] over the kw tiles in the accumulator's
    precision; push the partial to the spill, or on the last K block push the sub-block to the
    output FIFO rounded to its element type, in pages of the FIFO's page shape (row-major over
    the sub-block: one page of sh x sw tiles, or single tiles where a register accumulator's
    lanes write their own tiles). Then release the two operand pages. Without a spill, an item
    has one sub-block or one K block. `fidelity` is the Tensix math fidelity (lofi, hifi2,
    hifi3, hifi4) where the target has one.
    """

    name = "sp.matmul_tiles"
    in0 = operand_def(BufferType)
    in1 = operand_def(BufferType)
    out = operand_def(BufferType)
    acc = operand_def(BufferType)
    spill = opt_operand_def(BufferType)
    fidelity = opt_prop_def(StringAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = _section_traits()

    def __init__(
        self,
        in0: SSAValue,
        in1: SSAValue,
        out: SSAValue,
        acc: SSAValue,
        spill: SSAValue | None = None,
        fidelity: str | None = None,
        engine: EngineAttr | None = None,
    ):
        super().__init__(
            operands=[in0, in1, out, acc, spill],
            properties={
                "fidelity": StringAttr(fidelity) if fidelity else None,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return "matmul_tiles"

    @classmethod
    def parse(cls, parser: Parser) -> MatmulTilesOp:
        in0 = parser.parse_operand(BUFFER)
        parser.parse_punctuation(",")
        in1 = parser.parse_operand(BUFFER)
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        parser.parse_keyword("acc")
        acc = parser.parse_operand(BUFFER)
        spill = parser.parse_operand(BUFFER) if parser.parse_optional_keyword("spill") else None
        fidelity = parser.parse_identifier() if parser.parse_optional_keyword("fidelity") else None
        return _with_attrs(
            cls(in0, in1, out, acc, spill, fidelity, cls._parse_engine(parser)), parser
        )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.in0)
        printer.print_string(", ")
        printer.print_operand(self.in1)
        printer.print_string(" -> ")
        printer.print_operand(self.out)
        printer.print_string(" acc ")
        printer.print_operand(self.acc)
        if self.spill is not None:
            printer.print_string(" spill ")
            printer.print_operand(self.spill)
        if self.fidelity is not None:
            printer.print_string(f" fidelity {self.fidelity.data}")
        self._print_engine(printer)


def __getattr__(name: str) -> Dialect:
    """`SP`, the dialect, built on first use: the stages of the non-GEMM sections live in
    sp_ops, which builds on the classes above, so the dialect lists them once both modules exist
    (whichever of the two is imported first)."""
    if name != "SP":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from spatial_dialect.sp_ops import SP_OPS

    dialect = Dialect(
        "sp",
        [
            *SP_OPS,
            ProgramOp,
            EntryOp,
            TensorOp,
            WorkOp,
            PlanOp,
            MeshOp,
            SitesOp,
            FifoOp,
            IntermOp,
            AccOp,
            GroupOp,
            ShareOp,
            LoadOp,
            StoreOp,
            MatmulTilesOp,
        ],
        [
            BufferType,
            SizesAttr,
            AccessAttr,
            RectAttr,
            EngineAttr,
            PhaseAttr,
            TensorRoleAttr,
            LayoutAttr,
            PlanKindAttr,
            GroupAxisAttr,
            SharingAttr,
        ],
    )
    globals()["SP"] = dialect
    return dialect
