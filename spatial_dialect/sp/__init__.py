"""sp: spatial programs, the IR every pass after link reads and writes (docs/sp.md).

A module holds `sp.entry` (which DRAM tensors are the function's arguments and results) and one
`sp.program` per section, in execution order. A section is a dataflow program: DRAM tensors,
buffers (FIFOs in each site's local memory, a K-block spill, the accumulator), stages (load,
compute, store) joined by the buffers, and, as the passes run, its work items and plan (tile),
its mesh, site ranges and engines (place), its multicast groups or sharing decisions
(fuse-operands), and its depths and memory map (size-buffers). The `phase` says how far it got.

Everything in a section is a TEMPLATE that every site instantiates. Shapes are written with the
size symbols h, w, sh, sw, kw, subs (attrs.py), which each `sp.sites` range binds, so the IR
costs one copy of the stages plus one line per distinct site shape: a 13x10 mesh costs a few
lines more than an 8x8 one, not a copy of every stage per site (docs/passes.md#place-site-ranges-not-per-site-copies). The per-site instance of buffer `in0` on site (3, 4) is `in0@3,4` (docs/sp.md#sections;
naming); a simulator expands the ranges lazily.

Execution semantics (what spatial-run executes; each op's docstring adds its own part, and the
stages of the sections that are not GEMMs, in compute.py, delta.py and route.py, theirs):

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

from xdsl.ir import Dialect

from spatial_dialect.sp.abstract_ops import (
    BufferOp,
    ComputeStage,
    IndexedStage,
    MemoryBufferOp,
    SectionOp,
    StageOp,
    buffer_of,
)
from spatial_dialect.sp.attrs import (
    BUFFER,
    LOOP_VARS,
    SITE_VARS,
    SIZE_SYMBOLS,
    AccessAttr,
    BufferType,
    EngineAttr,
    PairAttr,
    RectAttr,
    SizesAttr,
    SizeTerm,
    format_expr,
    linear_site_map,
    loop_var,
    parse_exprs,
    parse_pair,
    parse_site_map,
    site_map_text,
    size_expr,
)
from spatial_dialect.sp.buffers import AccOp, FifoOp, IntermOp
from spatial_dialect.sp.compute import (
    COMPUTE_STAGES,
    ArgmaxOp,
    AttentionCombineOp,
    AttentionOp,
    MapOp,
    RopeOp,
    RowReduceOp,
)
from spatial_dialect.sp.delta import CausalConvOp, GatedDeltaOp
from spatial_dialect.sp.enums import (
    BoundAttr,
    EngineKindAttr,
    FidelityAttr,
    GroupAxis,
    GroupAxisAttr,
    Layout,
    LayoutAttr,
    MapKindAttr,
    ModeAttr,
    OperandAttr,
    PackingAttr,
    Phase,
    PhaseAttr,
    PlanKind,
    PlanKindAttr,
    RopeStyleAttr,
    RowFormAttr,
    RowKindAttr,
    SectionKind,
    SectionKindAttr,
    Sharing,
    SharingAttr,
    SplitAxis,
    SplitAxisAttr,
    TensorRole,
    TensorRoleAttr,
)
from spatial_dialect.sp.item_space import ItemRect, ItemSpace, ItemSpaceError, ceil_div
from spatial_dialect.sp.kinds import (
    MAP_KINDS,
    PARTIALS_RINGS,
    ROPE_STYLES,
    ROW_FORMS,
    ROW_KINDS,
    Bound,
    EngineKind,
    Fidelity,
    MapKind,
    MapKindName,
    Mode,
    Operand,
    Packing,
    RopeStyle,
    RowForm,
    RowKindName,
)
from spatial_dialect.sp.placement import GroupOp, MeshOp, ShareOp, SitesOp
from spatial_dialect.sp.program import EntryOp, ProgramOp, TensorOp
from spatial_dialect.sp.route import ROUTE_PICKS, RouteOp
from spatial_dialect.sp.stages import (
    GatherOp,
    LoadOp,
    MatmulTilesOp,
    ScatterOp,
    StoreOp,
    partials_depth,
)
from spatial_dialect.sp.work import PlanOp, WorkOp

SP = Dialect(
    "sp",
    [
        MapOp,
        RowReduceOp,
        RopeOp,
        AttentionOp,
        AttentionCombineOp,
        ArgmaxOp,
        CausalConvOp,
        GatedDeltaOp,
        RouteOp,
        GatherOp,
        ScatterOp,
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
        PairAttr,
        ModeAttr,
        MapKindAttr,
        RowKindAttr,
        RowFormAttr,
        RopeStyleAttr,
        PackingAttr,
        BoundAttr,
        OperandAttr,
        FidelityAttr,
        EngineKindAttr,
        SizesAttr,
        AccessAttr,
        RectAttr,
        EngineAttr,
        PhaseAttr,
        SectionKindAttr,
        TensorRoleAttr,
        LayoutAttr,
        PlanKindAttr,
        GroupAxisAttr,
        SplitAxisAttr,
        SharingAttr,
    ],
)

__all__ = [
    # The dialect
    "SP",
    # Ops
    "AccOp",
    "ArgmaxOp",
    "AttentionCombineOp",
    "RouteOp",
    "ROUTE_PICKS",
    "AttentionOp",
    "CausalConvOp",
    "EntryOp",
    "GatedDeltaOp",
    "FifoOp",
    "GatherOp",
    "GroupOp",
    "IntermOp",
    "LoadOp",
    "MapOp",
    "MatmulTilesOp",
    "MeshOp",
    "PlanOp",
    "ProgramOp",
    "RopeOp",
    "RowReduceOp",
    "ScatterOp",
    "ShareOp",
    "SitesOp",
    "StoreOp",
    "TensorOp",
    "WorkOp",
    # Abstract op bases
    "BufferOp",
    "ComputeStage",
    "IndexedStage",
    "MemoryBufferOp",
    "SectionOp",
    "StageOp",
    "COMPUTE_STAGES",
    # Attributes and types
    "AccessAttr",
    "BufferType",
    "BUFFER",
    "EngineAttr",
    "GroupAxisAttr",
    "SplitAxisAttr",
    "LayoutAttr",
    "PhaseAttr",
    "SectionKindAttr",
    "PlanKindAttr",
    "RectAttr",
    "SharingAttr",
    "SizesAttr",
    "TensorRoleAttr",
    "BoundAttr",
    "EngineKindAttr",
    "FidelityAttr",
    "MapKindAttr",
    "ModeAttr",
    "OperandAttr",
    "PackingAttr",
    "PairAttr",
    "RopeStyleAttr",
    "RowFormAttr",
    "RowKindAttr",
    # Enums
    "Bound",
    "EngineKind",
    "Fidelity",
    "MapKindName",
    "Operand",
    "Packing",
    "RopeStyle",
    "RowForm",
    "RowKindName",
    "GroupAxis",
    "SplitAxis",
    "Layout",
    "Phase",
    "SectionKind",
    "PlanKind",
    "Sharing",
    "TensorRole",
    # Kinds of the compute stages
    "MAP_KINDS",
    "MapKind",
    "Mode",
    "ROPE_STYLES",
    "ROW_FORMS",
    "ROW_KINDS",
    "PARTIALS_RINGS",
    "partials_depth",
    # Size symbols, loop variables and their syntax
    "LOOP_VARS",
    "SITE_VARS",
    "SIZE_SYMBOLS",
    "SizeTerm",
    "format_expr",
    "linear_site_map",
    "loop_var",
    "parse_exprs",
    "parse_pair",
    "parse_site_map",
    "site_map_text",
    "size_expr",
    # Work items
    "ItemRect",
    "ItemSpace",
    "ItemSpaceError",
    "ceil_div",
    # Helpers
    "buffer_of",
]
