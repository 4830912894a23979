"""Integer tg ops of a quantized pipeline: int_requant (an i32 accumulator to i8 with a scale
and a zero point, saturating) and int_clamp."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    i8,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    f32_property,
    i64_property,
    tensor_operand,
)

I8_RANGE = (-128, 127)


def int_range(elt: IntegerType) -> tuple[int, int]:
    """The values a signless i8 or i32 holds."""
    bits = elt.width.data
    return -(2 ** (bits - 1)), 2 ** (bits - 1) - 1


@irdl_op_definition
class IntRequantOp(TgOp):
    """i8 = clamp(round_half_even(x * scale) + zero_point, -128, 127) of an i32 x."""

    name = "tg.int_requant"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    scale = prop_def(FloatAttr[Float32Type])
    zero_point = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "$x `scale` $scale (`zero_point` $zero_point^)? attr-dict `:`"
        " functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        *,
        scale: float | FloatAttr,
        zero_point: int | IntegerAttr | None = None,
    ):
        """The result has x's shape and holds i8; zero_point is left out of the IR when not
        given (0)."""
        t = tensor_operand(self.name, "x", SSAValue.get(x))
        props = {
            "scale": f32_property(self.name, "scale", scale),
            "zero_point": None
            if zero_point is None
            else i64_property(self.name, "zero_point", zero_point),
        }
        self.init_tg([x], props, result_type=TensorType(i8, t.get_shape()))

    def zero(self) -> int:
        return self.zero_point.value.data if self.zero_point is not None else 0

    def verify_shapes(self) -> None:
        ex, er = self.elt(self.x), self.elt(self.res)
        if not (isinstance(ex, IntegerType) and ex.width.data == 32):
            raise self.err(f"x must hold i32 (an integer accumulator), got {ex}")
        if not (isinstance(er, IntegerType) and er.width.data == 8):
            raise self.err(f"the result must hold i8, got {er}")
        if self.shape(self.res) != self.shape(self.x):
            raise self.err(
                f"x is {self.x.type} but the result is {self.res.type}; the shapes must agree"
            )
        scale = self.scale.value.data
        if scale <= 0:
            raise self.err(f"scale must be positive, got {scale}")
        zp = self.zero()
        if not I8_RANGE[0] <= zp <= I8_RANGE[1]:
            raise self.err(f"zero_point {zp} is outside i8's [-128, 127]")


@irdl_op_definition
class IntClampOp(TgOp):
    """min(max(x, lo), hi) of an integer x."""

    name = "tg.int_clamp"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    lo = prop_def(IntegerAttr[I64])
    hi = prop_def(IntegerAttr[I64])
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = "$x `lo` $lo `hi` $hi attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value, *, lo: int | IntegerAttr, hi: int | IntegerAttr):
        props = {
            "lo": i64_property(self.name, "lo", lo),
            "hi": i64_property(self.name, "hi", hi),
        }
        self.init_tg([x], props)

    def bounds(self) -> tuple[int, int]:
        return self.lo.value.data, self.hi.value.data

    def verify_shapes(self) -> None:
        ex = self.elt(self.x)
        if not isinstance(ex, IntegerType):
            raise self.err(f"x has element type {ex}; this op needs i8 or i32")
        lo, hi = self.bounds()
        if lo > hi:
            raise self.err(f"lo {lo} is above hi {hi}")
        tlo, thi = int_range(ex)
        for prop, v in (("lo", lo), ("hi", hi)):
            if not tlo <= v <= thi:
                raise self.err(f"{prop} {v} is outside {ex}'s [{tlo}, {thi}]")
