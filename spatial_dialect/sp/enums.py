"""The closed vocabularies of sp as enum attributes: phases, section kinds, roles, layouts, plan
kinds, group axes, sharing, and the stage vocabularies of `kinds` (map and row kinds, rope
styles, packing, bounds, operands, fidelities, engine kinds). Each prints as its bare word in
the custom form (`phase sized`, `bound dram`) and as `#sp<name word>` in the generic form.
"""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum

from spatial_dialect.sp.kinds import (
    Bound,
    EngineKind,
    Fidelity,
    MapKindName,
    Mode,
    Operand,
    Packing,
    RopeStyle,
    RowForm,
    RowKindName,
)


class Phase(StrEnum):
    """How far the passes have taken a section; each phase adds to the one before."""

    LINKED = "linked"
    TILED = "tiled"
    PLACED = "placed"
    FUSED = "fused"
    SIZED = "sized"

    @property
    def rank(self) -> int:
        return list(Phase).index(self)


class SectionKind(StrEnum):
    """What a section computes, recorded once by link when it builds the section
    (`sp.program @y op "tg.mul" kind map ...`); every later pass reads it instead of asking the
    stages. A layout bridge is a map that is a tilize or an untilize."""

    GEMM = "gemm"
    MAP = "map"
    TILIZE = "tilize"
    UNTILIZE = "untilize"
    ROW_REDUCE = "row_reduce"
    ROPE = "rope"
    ATTENTION = "attention"
    ATTENTION_COMBINE = "attention_combine"
    ARGMAX = "argmax"
    GATHER = "gather"
    SCATTER = "scatter"
    ROUTE = "route"
    CAUSAL_CONV = "causal_conv"
    GATED_DELTA = "gated_delta"

    @property
    def is_gemm(self) -> bool:
        return self is SectionKind.GEMM


class TensorRole(StrEnum):
    INPUT = "input"
    OUTPUT = "output"
    SCRATCH = "scratch"


class Layout(StrEnum):
    TILED = "tiled"
    ROWS = "rows"


class PlanKind(StrEnum):
    BLOCKED = "blocked"
    STREAMING = "streaming"


class GroupAxis(StrEnum):
    ROWS = "rows"
    COLUMNS = "columns"
    LINE = "line"


class SplitAxis(StrEnum):
    """The mesh axis split-K stacks a GEMM's K slices along (sp.work ... split S along x)."""

    X = "x"
    Y = "y"


class Sharing(StrEnum):
    """How a shared operand panel reaches its consumers (sp.share). The cost model has its own
    enum with the same values (targets.sharing.Sharing); fuse-operands maps its answer by value."""

    REPLICATED = "replicated"  # every consumer streams its own copy from memory
    BROADCAST = "broadcast"  # one consumer streams it and fans it out over the fabric


@irdl_attr_definition
class PhaseAttr(EnumAttribute[Phase], SpacedOpaqueSyntaxAttribute):
    name = "sp.phase"


@irdl_attr_definition
class SectionKindAttr(EnumAttribute[SectionKind], SpacedOpaqueSyntaxAttribute):
    name = "sp.section_kind"


@irdl_attr_definition
class TensorRoleAttr(EnumAttribute[TensorRole], SpacedOpaqueSyntaxAttribute):
    name = "sp.role"


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    name = "sp.layout"


@irdl_attr_definition
class PlanKindAttr(EnumAttribute[PlanKind], SpacedOpaqueSyntaxAttribute):
    name = "sp.plan_kind"


@irdl_attr_definition
class GroupAxisAttr(EnumAttribute[GroupAxis], SpacedOpaqueSyntaxAttribute):
    name = "sp.axis"


@irdl_attr_definition
class SplitAxisAttr(EnumAttribute[SplitAxis], SpacedOpaqueSyntaxAttribute):
    name = "sp.split_axis"


@irdl_attr_definition
class SharingAttr(EnumAttribute[Sharing], SpacedOpaqueSyntaxAttribute):
    name = "sp.sharing"


@irdl_attr_definition
class ModeAttr(EnumAttribute[Mode], SpacedOpaqueSyntaxAttribute):
    name = "sp.mode"


@irdl_attr_definition
class MapKindAttr(EnumAttribute[MapKindName], SpacedOpaqueSyntaxAttribute):
    name = "sp.map_kind"


@irdl_attr_definition
class RowKindAttr(EnumAttribute[RowKindName], SpacedOpaqueSyntaxAttribute):
    name = "sp.row_kind"


@irdl_attr_definition
class RowFormAttr(EnumAttribute[RowForm], SpacedOpaqueSyntaxAttribute):
    name = "sp.row_form"


@irdl_attr_definition
class RopeStyleAttr(EnumAttribute[RopeStyle], SpacedOpaqueSyntaxAttribute):
    name = "sp.rope_style"


@irdl_attr_definition
class PackingAttr(EnumAttribute[Packing], SpacedOpaqueSyntaxAttribute):
    name = "sp.packing"


@irdl_attr_definition
class BoundAttr(EnumAttribute[Bound], SpacedOpaqueSyntaxAttribute):
    name = "sp.bound"


@irdl_attr_definition
class OperandAttr(EnumAttribute[Operand], SpacedOpaqueSyntaxAttribute):
    name = "sp.operand"


@irdl_attr_definition
class FidelityAttr(EnumAttribute[Fidelity], SpacedOpaqueSyntaxAttribute):
    name = "sp.fidelity"


@irdl_attr_definition
class EngineKindAttr(EnumAttribute[EngineKind], SpacedOpaqueSyntaxAttribute):
    name = "sp.engine_kind"
