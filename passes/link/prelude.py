"""The prelude: what link decides about a whole function before it links any op of it.

Two facts are decided once per tensor, for the whole function, so that no two sections can
disagree on them:

- **Layout.** A tensor lives in DRAM either `tiled` (32x32 tiles in row-major tile order,
  tt-metal's TILE layout) or as `rows` (row-major, ROW_MAJOR). Each op has a layout it wants for
  each tensor it touches; where a section wants the other layout than the one decided here, link
  inserts ONE bridge section (tilize or untilize) for that tensor and every later reader shares it.
  The rules (docs/passes.md#link-layout-is-decided-once-per-tensor): a matmul's operands and result are tiled when they have
  more than one row; a flash attention reads K and V as tiles, and with more than one query row
  its queries and result too; a pointwise op over a matrix is tiled throughout. A row norm (and a
  row softmax) has no layout of its own: it reads and writes in one layout, so it takes its
  tensors' (tiled when any of them is) and ties the rest to it. A block of several rows written
  into a tiled cache moves whole tile rows, so it is tiled too. The ties run to a fixed point,
  since a norm's input may be another norm's output. A cache and the cache set_rows returns are
  one piece of carried state, updated in place: they share a layout and are never bridged. Everything else is rows. A tensor of one row
  is the same bytes in both layouts (one tile row, read from its first row), so it is never
  bridged and is recorded as rows.
  The decision starts from the deployment's (link/deployment.py): an argument that the module's
  functions share by name and agree to lay out tiled is tiled here too, before the ties run.
- **Value intervals of integer tensors.** An integer product's operand precision is the narrowest
  that holds its operands' interval, so the interval each integer tensor is proven to hold is
  computed from the function's arguments (their element type's range) through every op.
"""

from __future__ import annotations

import functools
from collections.abc import Collection
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Operation, SSAValue

from spatial_dialect import tg
from spatial_dialect.mesh import CollectiveOp
from spatial_dialect.sp import Layout


@dataclass(frozen=True)
class Interval:
    """A closed integer interval [lo, hi]."""

    lo: int
    hi: int

    def hull(self, other: Interval) -> Interval:
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def bits(self) -> int:
        """The narrowest signed integer width (8, 16 or 32) that holds every value."""
        for width in (8, 16, 32):
            if -(2 ** (width - 1)) <= self.lo and self.hi < 2 ** (width - 1):
                return width
        return 64

    def __str__(self) -> str:
        return f"[{self.lo}, {self.hi}]"


def type_interval(t: IntegerType) -> Interval:
    width = t.width.data
    return Interval(-(2 ** (width - 1)), 2 ** (width - 1) - 1)


def rows_of(value: SSAValue) -> int:
    assert isinstance(value.type, TensorType)
    shape = value.type.get_shape()
    return shape[0] if len(shape) == 2 else 1


POINTWISE = (
    tg.UnaryOp,
    tg.BinaryOp,
    tg.SwigluOp,
    tg.TransposeOp,
    tg.HeadSliceOp,
    tg.JoinOp,
    tg.IntRequantOp,
    tg.IntClampOp,
)
"""Ops that read and write whole matrices element by element (the transpose, slices and joins
tile by tile)."""

ROW_REDUCTIONS = (tg.RmsNormOp, tg.LayerNormOp, tg.SoftmaxOp, tg.L2NormOp)
"""Ops with no layout of their own: they take their tensors' (the fixed-point tie below)."""


def wanted_tiled(op: Operation) -> list[SSAValue]:
    """The tensors `op` itself wants tiled, before any tie."""
    if isinstance(op, tg.MatmulOp | tg.MatmulQ8_0Op):
        m, k = op.a.type.get_shape()  # type: ignore[union-attr]
        b = op.b if isinstance(op, tg.MatmulOp) else op.values
        return [v for v, many in ((op.a, m > 1), (b, k > 1), (op.res, m > 1)) if many]
    if isinstance(op, tg.HeadMatmulOp):
        m = rows_of(op.a)
        return [v for v, many in ((op.a, m > 1), (op.b, True), (op.res, m > 1)) if many]
    if isinstance(op, tg.AttentionOp | tg.BatchAttentionOp):
        if rows_of(op.q) > 1:
            return [op.q, op.k, op.v, op.res]
        return [op.k, op.v]
    if isinstance(op, tg.MoeOp):
        # x and the result are GEMM operands (link/moe.py); the weights have D or F rows
        rows = [op.x, op.res] if rows_of(op.x) > 1 else []
        return [*rows, op.router, op.w_gate, op.w_up, op.w_down, *op.shared]
    if isinstance(op, ROW_REDUCTIONS):
        return []
    if isinstance(op, tg.RmsStatsOp | tg.RmsApplyOp):
        # the distributed norm's rows x 1 f32 sums move as a column of f32 tiles (the blocked
        # form's partials, link/rows.py): each tile row's sums in its tile's first column
        stats = op.res if isinstance(op, tg.RmsStatsOp) else op.stats
        return [stats] if rows_of(stats) > 1 else []
    if isinstance(op, tg.CausalConvOp | tg.GatedDeltaOp | tg.DecayOp):
        # read in tile blocks down the rows (time); the states are carried in tiles
        return [*op.operands, *op.results]
    if isinstance(op, POINTWISE) and rows_of(op.results[0]) > 1:
        return [*op.operands, *op.results]
    return []


def tied_tensors(op: Operation) -> list[SSAValue]:
    """Tensors that must share one layout: what a row reduction reads and writes (not its 1-row
    weights), and a cache with its updated self (carried state is never bridged)."""
    if isinstance(op, tg.SetRowsOp | tg.BatchSetRowsOp):
        return [op.cache, op.res]
    if isinstance(op, tg.RmsNormOp | tg.RmsApplyOp):
        return [v for v in (op.x, op.residual, op.res) if v is not None]
    if isinstance(op, tg.RmsStatsOp):
        return [v for v in (op.x, op.residual) if v is not None]
    if isinstance(op, tg.LayerNormOp):
        return [op.x, op.res]
    if isinstance(op, tg.SoftmaxOp | tg.L2NormOp):
        return [op.x, op.res]
    if isinstance(op, CollectiveOp):
        # A step moves a chip's local tensor as it lies: what it writes keeps its input's layout.
        return [op.input, op.result]
    return []


@dataclass
class Prelude:
    """The whole-function decisions: each tensor's layout and each integer tensor's interval."""

    layouts: dict[SSAValue, Layout]
    intervals: dict[SSAValue, Interval]

    @staticmethod
    def of(function: func.FuncOp, agreed: Collection[SSAValue] = ()) -> Prelude:
        """`agreed`: the arguments the deployment lays out tiled (link/deployment.py)."""
        ops = tg_ops(function)
        layouts = decide_layouts(function, layout_ops(function), agreed)
        return Prelude(layouts, value_intervals(function, ops))

    def layout(self, value: SSAValue) -> Layout:
        return self.layouts[value]


def tg_ops(function: func.FuncOp) -> list[Operation]:
    """The tg ops of `function`, in program order: what link lowers and the prelude decides for."""
    return [op for op in function.body.walk() if isinstance(op, tg.TgOp)]


def layout_ops(function: func.FuncOp) -> list[Operation]:
    """The ops whose tensors the prelude lays out: the tg ops and a per-chip function's
    collectives (docs/mesh.md#the-linked-deployment), in program order."""
    return [op for op in function.body.walk() if isinstance(op, tg.TgOp | CollectiveOp)]


def tiled_values(ops: list[Operation], seeds: Collection[SSAValue] = ()) -> set[SSAValue]:
    """The tensors the ops lay out tiled: those an op wants tiled and `seeds` (what the
    deployment agreed), with the ties run to a fixed point (a one-row tensor in it is still
    recorded as rows)."""
    tiled: set[SSAValue] = set(seeds)
    for op in ops:
        tiled.update(wanted_tiled(op))
    while True:
        before = len(tiled)
        for op in ops:
            # A block of rows written into a tiled table moves whole tile rows.
            if isinstance(op, tg.SetRowsOp) and op.cache in tiled and rows_of(op.rows) > 1:
                tiled.add(op.rows)
            tied = [v for v in tied_tensors(op) if rows_of(v) > 1]
            if any(v in tiled for v in tied):
                tiled.update(tied)
        if len(tiled) == before:
            return tiled


def decide_layouts(
    function: func.FuncOp, ops: list[Operation], agreed: Collection[SSAValue] = ()
) -> dict[SSAValue, Layout]:
    tiled = tiled_values(ops, agreed)
    values = [*function.body.block.args, *(r for op in ops for r in op.results)]
    return {
        v: Layout.TILED if v in tiled and rows_of(v) > 1 else Layout.ROWS
        for v in values
        if isinstance(v.type, TensorType)
    }


def value_intervals(function: func.FuncOp, ops: list[Operation]) -> dict[SSAValue, Interval]:
    """Intervals of integer tensors: arguments hold their type's range; ops propagate them."""
    intervals: dict[SSAValue, Interval] = {}
    for arg in function.body.block.args:
        elt = arg.type.element_type if isinstance(arg.type, TensorType) else None
        if isinstance(elt, IntegerType):
            intervals[arg] = type_interval(elt)
    for op in ops:
        result = op.results[0]
        elt = result.type.element_type  # type: ignore[union-attr]
        if not isinstance(elt, IntegerType):
            continue
        interval = propagate(op, intervals)
        # Whatever the arithmetic says, the result cannot leave its own type's range (it wraps or
        # saturates there), so the proven interval is clipped to it.
        bound = type_interval(elt)
        intervals[result] = Interval(max(interval.lo, bound.lo), min(interval.hi, bound.hi))
    return intervals


def propagate(op: Operation, known: dict[SSAValue, Interval]) -> Interval:
    """The interval of `op`'s integer result from its operands' intervals."""
    if isinstance(op, tg.ArgmaxOp):
        cols = op.x.type.get_shape()[1]  # type: ignore[union-attr]
        return Interval(0, cols - 1)
    if isinstance(op, (tg.AddOp, tg.SubOp, tg.MulOp)):
        a, b = known[op.a], known[op.b]
        if isinstance(op, tg.AddOp):
            return Interval(a.lo + b.lo, a.hi + b.hi)
        if isinstance(op, tg.SubOp):
            return Interval(a.lo - b.hi, a.hi - b.lo)
        products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Interval(min(products), max(products))
    if isinstance(op, tg.MatmulOp):
        a, b = known[op.a], known[op.b]
        k = op.a.type.get_shape()[1]  # type: ignore[union-attr]
        products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Interval(k * min(min(products), 0), k * max(max(products), 0))
    if isinstance(op, tg.HeadMatmulOp):
        a, b = known[op.a], known[op.b]
        k = op.head_sizes()[1]
        products = [x * y for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
        return Interval(k * min(min(products), 0), k * max(max(products), 0))
    if isinstance(op, tg.HeadSliceOp):
        return known[op.x]
    if isinstance(op, tg.JoinOp):
        parts = [known[p] for p in op.parts]
        return functools.reduce(Interval.hull, parts)
    if isinstance(op, tg.IntRequantOp):
        # x * scale is monotonic (scale > 0), so the ends map to the ends. numpy is imported
        # here, not with the module: it is a third of spatial-opt's start-up, and only a
        # requantization needs its float32 rounding.
        import numpy as np

        scale, zp = float(np.float32(op.scale.value.data)), op.zero()
        x = known[op.x]
        lo, hi = (int(np.rint(v * scale)) + zp for v in (x.lo, x.hi))
        return Interval(max(lo, -128), min(hi, 127))
    if isinstance(op, tg.IntClampOp):
        x, (lo, hi) = known[op.x], op.bounds()
        return Interval(min(max(x.lo, lo), hi), max(min(x.hi, hi), lo))
    if isinstance(op, tg.ReluOp):
        x = known[op.x]
        return Interval(max(x.lo, 0), max(x.hi, 0))
    if isinstance(op, tg.TransposeOp):
        return known[op.x]
    if isinstance(op, tg.GatherRowsOp):
        return known[op.table]
    if isinstance(op, tg.SetRowsOp | tg.BatchSetRowsOp):
        return known[op.cache].hull(known[op.rows])
    raise AssertionError(f"{op.name} has no integer result rule")  # verifiers keep ints out
