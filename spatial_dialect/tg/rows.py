"""Row ops of tg: rms_norm (and its two halves, rms_stats and rms_apply, for a row split over
chips), layer_norm and rope, each over the rows of a 2-D tensor."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from spatial_dialect.sp.kinds import ROPE_STYLES
from spatial_dialect.tg.base import (
    TgOp,
    Value,
    f32_property,
    i64_property,
    shape_str,
    str_property,
    tensor_operand,
)


@irdl_op_definition
class RmsNormOp(TgOp):
    """h = x (+ residual); each group of `width` columns: h / sqrt(mean(h^2) + eps) * weight.

    width < C is Qwen3's per-head q/k norm: the same weight applies to every head.
    """

    name = "tg.rms_norm"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    res = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    width = opt_prop_def(IntegerAttr[I64])
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = (
        "operands `eps` $eps (`width` $width^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        weight: Value,
        residual: Value | None = None,
        *,
        eps: float | FloatAttr,
        width: int | IntegerAttr | None = None,
    ):
        """width (per-head groups) is left out of the IR when not given: the whole row."""
        props = {
            "eps": f32_property(self.name, "eps", eps),
            "width": None if width is None else i64_property(self.name, "width", width),
        }
        self.init_tg([x, weight, residual], props)

    def group_width(self) -> int:
        """The normalized group's width: the property, or the whole row."""
        return self.width.value.data if self.width is not None else self.shape(self.x)[1]

    def verify_shapes(self) -> None:
        _, cols = self.require_rank("x", 2)
        self.require_float("x", "weight")
        if self.width is not None:
            width = self.require_positive("width")
            if cols % width:
                raise self.err(f"x has {cols} columns, not a multiple of width {width}")
        width = self.group_width()
        w_rows, w_cols = self.require_rank("weight", 2)
        if (w_rows, w_cols) != (1, width):
            raise self.err(f"weight is {w_rows}x{w_cols}; it must be 1x{width}")
        if self.residual is not None:
            self.require_same_type("residual", "x")


@irdl_op_definition
class RmsStatsOp(TgOp):
    """stats = sum over each row of h^2, h = x (+ residual), in f32: the first half of a
    distributed rms_norm (docs/tensor-parallel.md#the-distributed-rms_norm).

    On a chip holding some of a row's columns it is that chip's share of the row's sum, a
    partial sum over the chips: an all_reduce of these rows x 1 statistics, not of x, gives every
    chip the whole row's sum of squares. A sum, not a mean, so that the shares add.
    """

    name = "tg.rms_stats"
    x = operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value, residual: Value | None = None):
        t = tensor_operand(self.name, "x", SSAValue.get(x), 2)
        rows = t.get_shape()[0]
        self.init_tg([x, residual], result_type=TensorType(Float32Type(), [rows, 1]))

    def verify_shapes(self) -> None:
        rows, _ = self.require_rank("x", 2)
        self.require_float("x")
        if self.residual is not None:
            self.require_same_type("residual", "x")
        t = self.res.type
        assert isinstance(t, TensorType)
        if tuple(t.get_shape()) != (rows, 1) or not isinstance(t.element_type, Float32Type):
            raise self.err(f"x has {rows} rows, so the result must be tensor<{rows}x1xf32>")


@irdl_op_definition
class RmsApplyOp(TgOp):
    """h / sqrt(stats / n + eps) * weight, h = x (+ residual), stats a row's sum of h^2 over
    all ``n`` columns of the whole row (tg.rms_stats, all-reduced): the second half of a
    distributed rms_norm. x may hold only some of the row's columns (a chip's shard); ``n`` is
    the whole row's width, so the mean is the whole row's. Equals tg.rms_norm where x is the
    whole row and stats its own."""

    name = "tg.rms_apply"
    x = operand_def(TensorType)
    stats = operand_def(TensorType)
    weight = operand_def(TensorType)
    residual = opt_operand_def(TensorType)
    res = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    n = prop_def(IntegerAttr[I64])
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = "operands `eps` $eps `n` $n attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        x: Value,
        stats: Value,
        weight: Value,
        residual: Value | None = None,
        *,
        eps: float | FloatAttr,
        n: int | IntegerAttr,
    ):
        props = {
            "eps": f32_property(self.name, "eps", eps),
            "n": i64_property(self.name, "n", n),
        }
        self.init_tg([x, stats, weight, residual], props)

    def verify_shapes(self) -> None:
        rows, cols = self.require_rank("x", 2)
        self.require_float("x", "weight")
        n = self.require_positive("n")
        if cols > n:
            raise self.err(f"x has {cols} columns, more than the row's width n {n}")
        s = self.require_rank("stats", 2)
        t = self.stats.type
        assert isinstance(t, TensorType)
        if s != (rows, 1) or not isinstance(t.element_type, Float32Type):
            raise self.err(f"x has {rows} rows, so stats must be tensor<{rows}x1xf32>")
        w = self.require_rank("weight", 2)
        if w != (1, cols):
            raise self.err(f"weight is {shape_str(w)}; it must be 1x{cols}")
        if self.residual is not None:
            self.require_same_type("residual", "x")


@irdl_op_definition
class LayerNormOp(TgOp):
    """(h - mean) / sqrt(var + eps) * weight + bias, per row."""

    name = "tg.layer_norm"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    bias = operand_def(TensorType)
    res = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = "operands `eps` $eps attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value, weight: Value, bias: Value, *, eps: float | FloatAttr):
        self.init_tg([x, weight, bias], {"eps": f32_property(self.name, "eps", eps)})

    def verify_shapes(self) -> None:
        _, cols = self.require_rank("x", 2)
        self.require_float("x", "weight", "bias")
        for field in ("weight", "bias"):
            shape = self.require_rank(field, 2)
            if shape != (1, cols):
                raise self.err(f"{field} is {shape_str(shape)}; it must be 1x{cols}")


@irdl_op_definition
class RopeOp(TgOp):
    """Rotates each head of x by (cos, sin) of its row's position.

    neox pairs column i with i + D/2; interleaved pairs 2i with 2i + 1.
    """

    name = "tg.rope"
    x = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    res = result_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    style = prop_def(StringAttr)
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = (
        "operands `head_dim` $head_dim `style` $style attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        cos: Value,
        sin: Value,
        *,
        head_dim: int | IntegerAttr | None = None,
        style: str | StringAttr = "neox",
    ):
        """head_dim defaults to twice the width of cos (the tables hold head_dim / 2 columns)."""
        if head_dim is None:
            head_dim = 2 * tensor_operand(self.name, "cos", SSAValue.get(cos), 2).get_shape()[1]
        props = {
            "head_dim": i64_property(self.name, "head_dim", head_dim),
            "style": str_property(self.name, "style", style),
        }
        self.init_tg([x, cos, sin], props)

    def verify_shapes(self) -> None:
        rows, cols = self.require_rank("x", 2)
        self.require_float("x", "cos", "sin")
        d = self.require_positive("head_dim")
        if d % 2:
            raise self.err(f"head_dim must be even, got {d}")
        if cols % d:
            raise self.err(f"x has {cols} columns, not a multiple of head_dim {d}")
        for field in ("cos", "sin"):
            shape = self.require_rank(field, 2)
            if shape != (rows, d // 2):
                raise self.err(f"{field} is {shape_str(shape)}; it must be {rows}x{d // 2}")
        if self.style.data not in ROPE_STYLES:
            raise self.err(f'style must be "neox" or "interleaved", got "{self.style.data}"')
