"""The work of a section and the plan that chose it (tile's decisions): `sp.work` (the work
items and the K loop) and `sp.plan` (the block plan, its predicted cycles and its runner-up)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    ArrayAttr,
    FlatSymbolRefAttr,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.irdl import irdl_op_definition, opt_prop_def, prop_def
from xdsl.irdl.declarative_assembly_format import AttributeVariable, irdl_custom_directive
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import SectionOp, section_traits
from spatial_dialect.sp.enums import (
    BoundAttr,
    OperandAttr,
    PackingAttr,
    PlanKind,
    PlanKindAttr,
    SplitAxis,
    SplitAxisAttr,
)
from spatial_dialect.sp.formats import EnumList, Pair
from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.sp.kinds import Bound, Operand, Packing
from spatial_dialect.sp.syntax import (
    IntValue,
    PairValue,
    int_attr,
    int_prop,
    opt_int_prop,
    opt_pair_prop,
    pair_attr,
    pair_prop,
)

if TYPE_CHECKING:
    from spatial_dialect.sp.program import TensorOp


@irdl_op_definition
class WorkOp(SectionOp):
    """`sp.work @c block 16x16 k 128 by 2 [split 2 along y] [over 8x8]`: the work items and the
    K loop (tile's decision).

    The items cut the named result into blocks of the given tiles (`ItemSpace`); every item runs
    the K loop over `k` tiles in blocks of `by` tiles (the size symbol kw). With `over GXxGY` the
    blocks are dealt round-robin over a GX x GY grid of sites, several to a site, and numbered
    site by site (`ItemSpace`); the grid is at most the block columns by the block rows.

    `split S along x|y` (split-K): K is cut into S slices of k / S tiles; every block is S
    items, one per slice (`ItemSpace.k_slice`), each walking only its slice's K blocks. The
    slices run on S copies of the grid stacked along the mesh axis named, and each block's
    partial sums pass from slice to slice (`sp.matmul_tiles ... partials`); only the last
    slice's items store.
    """

    name = "sp.work"
    tensor = prop_def(FlatSymbolRefAttr)
    block_attr = pair_prop("block")
    k_tiles_attr = int_prop("k_tiles")
    k_block_attr = int_prop("k_block")
    over_attr = opt_pair_prop("over")
    split_attr = opt_int_prop("split")
    along = opt_prop_def(SplitAxisAttr)
    traits = section_traits()
    custom_directives = (Pair,)
    assembly_format = (
        "$tensor `block` custom<Pair>($block) `k` $k_tiles `by` $k_block"
        " (`split` $split^ `along` $along)? (`over` custom<Pair>($over)^)? attr-dict-with-keyword"
    )

    block = PairValue("block")
    """The tiles of an item's block (rows x cols)."""
    k_tiles = IntValue("k_tiles")
    k_block = IntValue("k_block")
    over = PairValue("over")
    """The grid GX x GY the blocks are dealt over, if any."""
    split_value = IntValue("split")

    def __init__(
        self,
        tensor: str,
        block: tuple[int, int],
        k_tiles: int,
        k_block: int,
        over: tuple[int, int] | None = None,
        split: tuple[int, str] | None = None,
    ):
        super().__init__(
            properties={
                "tensor": SymbolRefAttr(tensor),
                "block": pair_attr(block),
                "k_tiles": int_attr(k_tiles),
                "k_block": int_attr(k_block),
                "over": pair_attr(over),
                "split": int_attr(split[0]) if split else None,
                "along": SplitAxisAttr(SplitAxis(split[1])) if split else None,
            }
        )

    def space(self, result: TensorOp) -> ItemSpace:
        return ItemSpace(*result.tiles, *self.block, self.over, self.k_slices)

    @property
    def k_slices(self) -> int:
        """The K slices (split-K); 1 where K is not split."""
        return self.split_value if self.split_attr is not None else 1

    @property
    def split_axis(self) -> str | None:
        return None if self.along is None else self.along.data.value

    @property
    def k_slice_tiles(self) -> int:
        """K tiles an item walks: its slice's."""
        return self.k_tiles // self.k_slices

    @property
    def k_blocks(self) -> int:
        """K blocks an item walks (of its slice)."""
        return self.k_slice_tiles // self.k_block

    def verify_(self) -> None:
        if min(*self.block, self.k_tiles, self.k_block) <= 0:
            raise VerifyException("sp.work: blocks and K tiles must be positive")
        if (self.split_attr is None) != (self.along is None):
            raise VerifyException("sp.work: a split names its slices and the axis they lie along")
        if self.k_slices <= 0 or self.k_tiles % self.k_slices:
            raise VerifyException(
                f"sp.work: {self.k_slices} K slices do not divide the {self.k_tiles} K tiles"
            )
        if self.k_slice_tiles % self.k_block:
            raise VerifyException(
                f"sp.work: the K block of {self.k_block} tiles does not divide the "
                f"{self.k_slice_tiles} K tiles of an item"
            )
        if self.over is not None and min(self.over) <= 0:
            raise VerifyException("sp.work: the grid the blocks are dealt over must have sites")


@irdl_custom_directive
class Operands(EnumList):
    """`a, b`: the operands a plan multicasts."""

    attr: AttributeVariable
    ENUM = OperandAttr
    BRACKETS = False


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
    tt-metal's pairing of in1 with the writer, docs/passes.md#place-engines-and-nocs), `split` (A, B and the store each on
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
    grid_attr = pair_prop("grid")
    sub_block_attr = pair_prop("sub_block")
    packing = prop_def(PackingAttr)
    multicast = opt_prop_def(ArrayAttr[OperandAttr])
    predicted_cycles_attr = int_prop("predicted_cycles")
    bound = prop_def(BoundAttr)
    runner_up = opt_prop_def(StringAttr)
    runner_up_cycles_attr = opt_int_prop("runner_up_cycles")
    traits = section_traits()
    custom_directives = (Pair, Operands)
    assembly_format = (
        "$kind (`line` $line^)? `grid` custom<Pair>($grid) `block` custom<Pair>($sub_block)"
        " `packing` $packing (`multicast` custom<Operands>($multicast)^)?"
        " `predicted` $predicted_cycles `bound` $bound"
        " (`runner_up` $runner_up^ $runner_up_cycles)? attr-dict-with-keyword"
    )

    grid = PairValue("grid")
    """The grid of sites the plan uses (GX x GY)."""
    sub_block = PairValue("sub_block")
    """The output sub-block (osh x osw tiles held in the accumulator at once)."""
    predicted_cycles = IntValue("predicted_cycles")
    runner_up_cycles = IntValue("runner_up_cycles")

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
                "grid": pair_attr(grid),
                "sub_block": pair_attr(block),
                "packing": PackingAttr(Packing(packing)),
                "multicast": (
                    ArrayAttr([OperandAttr(Operand(m)) for m in multicast]) if multicast else None
                ),
                "predicted_cycles": int_attr(predicted_cycles),
                "bound": BoundAttr(Bound(bound)),
                "runner_up": StringAttr(runner_up[0]) if runner_up else None,
                "runner_up_cycles": int_attr(runner_up[1]) if runner_up else None,
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
        return () if self.multicast is None else tuple(str(m.data) for m in self.multicast.data)

    def verify_(self) -> None:
        if min(*self.grid, *self.sub_block) <= 0:
            raise VerifyException("sp.plan: grid and block must be positive")
        if (self.runner_up is None) != (self.runner_up_cycles is None):
            raise VerifyException("sp.plan: a runner-up has a description and its cycles")
        ops = self.multicast_operands
        if len(set(ops)) != len(ops):
            raise VerifyException(f"sp.plan: multicast names operands a and b, got {list(ops)}")
        if self.is_line and (self.streaming or min(self.grid) != 1):
            gx, gy = self.grid
            raise VerifyException(f"sp.plan: a line is a blocked grid GXx1 or 1xGY, got {gx}x{gy}")
