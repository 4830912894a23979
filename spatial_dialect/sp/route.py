"""The stage of a mixture of experts' router (tg.moe): the top-k experts of each row, their
scores, and what a section pushes of them (`pick`)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    Float32Type,
    IntegerType,
    StringAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    ON_ENGINE,
    StageOp,
    section_traits,
)
from spatial_dialect.sp.attrs import (
    BufferType,
)
from spatial_dialect.sp.errors import TypeMismatch
from spatial_dialect.sp.formats import Engine
from spatial_dialect.sp.stage_checks import fifo_of
from spatial_dialect.sp.syntax import (
    IntValue,
    int_attr,
    int_prop,
    opt_int_prop,
)

ROUTE_PICKS = ("id", "weight", "expert")
"""What an sp.route pushes per row (its `pick`): the `at`-th chosen expert's id (i32) or weight
(f32), or expert `at`'s combine weight (f32, zero where the row did not choose it)."""


@irdl_op_definition
class RouteOp(StageOp):
    """`sp.route %x -> %out top_k 8 scores "softmax" renormalize pick "id" at 3 cols 128 rows 1`.

    A mixture of experts' router (tg.moe), per item (h tile rows of the f32 logits): pop one
    [h, kw] page of x holding whole rows (one K block, kw = the row's tiles) and route each of
    its real rows (before `rows`) over its real columns (before `cols`, the experts) exactly as
    the reference's `moe_route` does: the experts ranked by logit, largest first, equal logits by
    the lower index; the top_k weights are the scores (softmax over the row, or sigmoid) of the
    chosen, divided by their sum with `renormalize`. Push one [h, 1] page whose column 0 holds,
    per row, what `pick` names (ROUTE_PICKS), zero elsewhere and past `rows`.

    `first %f held H` (a chip of the tensor-parallel `experts` plan, which holds the router's
    experts first .. first + H - 1; %f pops one [1, 1] page of i32 whose element [0, 0] is
    `first`, the chip's own input): the experts are still ranked over all `cols` (every chip
    picks the same global top_k), but ids are counted from `first` and a chosen expert the chip
    does not hold has weight 0 and id 0 (a held block, read for nothing: an indexed load never
    runs past the chip's H experts); pick "expert" at i is expert first + i.
    """

    name = "sp.route"
    x = operand_def(BufferType)
    first = opt_operand_def(BufferType)
    out = operand_def(BufferType)
    top_k_attr = int_prop("top_k")
    scores = prop_def(StringAttr)
    renormalize = opt_prop_def(UnitAttr)
    pick = prop_def(StringAttr)
    at_attr = int_prop("at")
    cols_attr = int_prop("cols")
    rows_attr = int_prop("rows")
    held_attr = opt_int_prop("held")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = section_traits()
    custom_directives = (Engine,)
    assembly_format = (
        "$x (`first` $first^)? `->` $out `top_k` $top_k `scores` $scores (`renormalize` "
        "$renormalize^)? `pick` $pick `at` $at `cols` $cols `rows` $rows (`held` $held^)? "
        + ON_ENGINE
    )

    top_k = IntValue("top_k")
    at = IntValue("at")
    cols = IntValue("cols")
    rows = IntValue("rows")
    held = IntValue("held")

    def __init__(
        self,
        x: SSAValue,
        out: SSAValue,
        top_k: int,
        scores: str,
        renormalize: bool,
        pick: str,
        at: int,
        cols: int,
        rows: int,
        engine: Attribute | None = None,
        first: SSAValue | None = None,
        held: int | None = None,
    ):
        super().__init__(
            operands=[x, first, out],
            properties={
                "top_k": int_attr(top_k),
                "scores": StringAttr(scores),
                "renormalize": UnitAttr() if renormalize else None,
                "pick": StringAttr(pick),
                "at": int_attr(at),
                "cols": int_attr(cols),
                "rows": int_attr(rows),
                "held": None if held is None else int_attr(held),
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"route {self.pick.data} {self.at}"

    def verify_(self) -> None:
        x = fifo_of(self, self.x, "x")
        if x.elt != Float32Type():
            raise TypeMismatch(f"{self.stage_name()}: routes f32 logits, not {x.elt}")
        pick = self.pick.data
        if pick not in ROUTE_PICKS:
            raise VerifyException(
                f"sp.route: pick must be one of {', '.join(ROUTE_PICKS)}, got {pick}"
            )
        want = IntegerType(32) if pick == "id" else Float32Type()
        if fifo_of(self, self.out, "the output").elt != want:
            raise TypeMismatch(f"{self.stage_name()}: pushes {want}")
        if not 0 < self.top_k <= self.cols:
            raise VerifyException(
                f"{self.stage_name()}: top_k {self.top_k} outside [1, {self.cols}]"
            )
        if (self.first is None) != (self.held_attr is None):
            raise VerifyException(f"{self.stage_name()}: `first` and `held` come together")
        if self.first is not None:
            if fifo_of(self, self.first, "first").elt != IntegerType(32):
                raise TypeMismatch(f"{self.stage_name()}: reads its first expert as i32")
            if not 0 < self.held < self.cols:
                raise VerifyException(
                    f"{self.stage_name()}: held {self.held} outside [1, {self.cols})"
                )
        bound = self.cols if pick == "expert" else self.top_k
        if pick == "expert" and self.first is not None:
            bound = self.held
        if not 0 <= self.at < bound:
            raise VerifyException(f"{self.stage_name()}: at {self.at} outside [0, {bound})")

    def renormalized(self) -> bool:
        return self.renormalize is not None
