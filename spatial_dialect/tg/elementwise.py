"""Element-wise tg ops: the unary and binary families, gelu, scale, softcap, softmax, swiglu."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute
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
    shape_str,
    str_property,
)


class UnaryOp(TgOp):
    """Pointwise op: the result has the operand's type."""

    x = operand_def(TensorType)
    res = result_def(TensorType)
    ALLOWS_INT: ClassVar[bool] = False
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value, properties: Mapping[str, Attribute] | None = None):
        self.init_tg([x], properties)

    def verify_shapes(self) -> None:
        if not self.ALLOWS_INT:
            self.require_float("x")


class BinaryOp(TgOp):
    """Elementwise a (op) b; b is a's shape, or 1xC broadcast over a's rows."""

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    RESULT_LIKE: ClassVar[str | None] = "a"

    def __init__(self, a: Value, b: Value):
        self.init_tg([a, b])

    def verify_shapes(self) -> None:
        a, b = self.shape(self.a), self.shape(self.b)
        broadcast = len(a) == 2 and len(b) == 2 and b[0] == 1 and b[1] == a[1]
        if a != b and not broadcast:
            raise self.err(
                f"a is {shape_str(a)} and b is {shape_str(b)}; b must be {shape_str(a)}"
                + (f" or 1x{a[1]} (broadcast over rows)" if len(a) == 2 else "")
            )
        self.require_same_element("a", "b")


@irdl_op_definition
class AddOp(BinaryOp):
    """a + b."""

    name = "tg.add"


@irdl_op_definition
class SubOp(BinaryOp):
    """a - b."""

    name = "tg.sub"


@irdl_op_definition
class MulOp(BinaryOp):
    """a * b."""

    name = "tg.mul"


@irdl_op_definition
class SiluOp(UnaryOp):
    """x * sigmoid(x)."""

    name = "tg.silu"


@irdl_op_definition
class ReluOp(UnaryOp):
    """max(x, 0)."""

    name = "tg.relu"
    ALLOWS_INT: ClassVar[bool] = True


@irdl_op_definition
class SigmoidOp(UnaryOp):
    """1 / (1 + exp(-x))."""

    name = "tg.sigmoid"


@irdl_op_definition
class SoftplusOp(UnaryOp):
    """log(1 + exp(x)), computed without overflow."""

    name = "tg.softplus"


GELU_APPROXIMATIONS = ("none", "tanh")


@irdl_op_definition
class GeluOp(UnaryOp):
    """gelu(x), exact (erf) for approximate = "none", the tanh form for "tanh"."""

    name = "tg.gelu"
    approximate = opt_prop_def(StringAttr, default_value=StringAttr("none"))
    assembly_format = (
        "$x (`approximate` $approximate^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        approximate: str | StringAttr | None = None,
        *,
        properties: Mapping[str, Attribute] | None = None,
    ):
        """approximate is "none" (the default, left out of the IR when not given) or "tanh"."""
        props = dict(properties or {})
        if approximate is not None:
            props["approximate"] = str_property(self.name, "approximate", approximate)
        self.init_tg([x], props)

    def verify_shapes(self) -> None:
        super().verify_shapes()
        if self.approximate.data not in GELU_APPROXIMATIONS:
            raise self.err(f'approximate must be "none" or "tanh", got "{self.approximate.data}"')


@irdl_op_definition
class ScaleOp(UnaryOp):
    """x * factor."""

    name = "tg.scale"
    factor = prop_def(FloatAttr[Float32Type])
    assembly_format = "$x `factor` $factor attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        x: Value,
        factor: float | FloatAttr | None = None,
        *,
        properties: Mapping[str, Attribute] | None = None,
    ):
        props = dict(properties or {})
        if factor is not None:
            props["factor"] = f32_property(self.name, "factor", factor)
        if "factor" not in props:
            raise TypeError("tg.scale: factor is required")
        self.init_tg([x], props)


@irdl_op_definition
class SoftcapOp(UnaryOp):
    """cap * tanh(x / cap)."""

    name = "tg.softcap"
    cap = prop_def(FloatAttr[Float32Type])
    assembly_format = "$x `cap` $cap attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        x: Value,
        cap: float | FloatAttr | None = None,
        *,
        properties: Mapping[str, Attribute] | None = None,
    ):
        props = dict(properties or {})
        if cap is not None:
            props["cap"] = f32_property(self.name, "cap", cap)
        if "cap" not in props:
            raise TypeError("tg.softcap: cap is required")
        self.init_tg([x], props)

    def verify_shapes(self) -> None:
        super().verify_shapes()
        if self.cap.value.data == 0.0:
            raise self.err("cap must be non-zero")


@irdl_op_definition
class SoftmaxOp(UnaryOp):
    """Row softmax, computed in f32."""

    name = "tg.softmax"

    def verify_shapes(self) -> None:
        self.require_rank("x", 2)
        super().verify_shapes()


@irdl_op_definition
class SwigluOp(TgOp):
    """silu(gate) * up."""

    name = "tg.swiglu"
    gate = operand_def(TensorType)
    up = operand_def(TensorType)
    res = result_def(TensorType)
    RESULT_LIKE: ClassVar[str | None] = "gate"
    assembly_format = "$gate `,` $up attr-dict `:` functional-type(operands, results)"

    def __init__(self, gate: Value, up: Value):
        self.init_tg([gate, up])

    def verify_shapes(self) -> None:
        self.require_float("gate")
        self.require_same_type("up", "gate")
