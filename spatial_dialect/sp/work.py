"""The work of a section and the plan that chose it (tile's decisions): `sp.work` (the work
items and the K loop) and `sp.plan` (the block plan, its predicted cycles and its runner-up)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    FlatSymbolRefAttr,
    IntAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import SectionOp, section_traits
from spatial_dialect.sp.attrs import PlanKind, PlanKindAttr, parse_pair
from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.sp.syntax import numbers_text, parse_numbers, print_attr_dict, with_attrs

if TYPE_CHECKING:
    from spatial_dialect.sp.program import TensorOp


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
    traits = section_traits()

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
                "block_m": IntAttr(block[0]),
                "block_n": IntAttr(block[1]),
                "k_tiles": IntAttr(k_tiles),
                "k_block": IntAttr(k_block),
                "over_x": None if over is None else IntAttr(over[0]),
                "over_y": None if over is None else IntAttr(over[1]),
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
        k_tiles, k_block = parse_numbers(parser, ("k", "by"))
        over = (
            parse_pair(parser, "the grid the blocks are dealt over")
            if parser.parse_optional_keyword("over")
            else None
        )
        return with_attrs(cls(tensor, block, k_tiles, k_block, over), parser)

    def print(self, printer: Printer) -> None:
        printer.print_string(
            f" @{self.tensor.root_reference.data} block {self.block_m.data}x{self.block_n.data}"
            + numbers_text((("k", self.k_tiles.data), ("by", self.k_block.data)))
        )
        if (over := self.over) is not None:
            printer.print_string(f" over {over[0]}x{over[1]}")
        print_attr_dict(self, printer)


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
    traits = section_traits()

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
                "grid_x": IntAttr(grid[0]),
                "grid_y": IntAttr(grid[1]),
                "osh": IntAttr(block[0]),
                "osw": IntAttr(block[1]),
                "packing": StringAttr(packing),
                "multicast": ArrayAttr([StringAttr(m) for m in multicast]) if multicast else None,
                "predicted_cycles": IntAttr(predicted_cycles),
                "bound": StringAttr(bound),
                "runner_up": StringAttr(runner_up[0]) if runner_up else None,
                "runner_up_cycles": IntAttr(runner_up[1]) if runner_up else None,
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
        return with_attrs(op, parser)

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
        print_attr_dict(self, printer)
