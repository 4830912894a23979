"""tg: the tensor-graph dialect, the input language of spatial-dialect.

A program is a `func.func` of tg ops over ranked tensors of rank 1 or 2 with static shapes and
element types bf16, f16, f32, i8 or i32. Op names, operand order and property names are a contract
(docs/tg.md): importers and other tools write the generic form, e.g.

    %c = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %y = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32}> : (...) -> ...

The custom form is the generic one without quotes, with properties written as keywords:

    %y = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>

From Python, every op has a builder that infers the result type from the operands by the same
rule its verifier checks, and takes the properties as Python values:

    y = RmsNormOp(x, w, eps=1e-6)            # the result has x's type
    o = AttentionOp(q, k, v, heads=4, kv_heads=2, causal=True)   # T x heads * v head dim

Every verifier names the op, the operand that breaks the rule and the numbers involved, because
the user reads these messages without a debugger: "tg.matmul: a is 64x100 and b is 128x32; the
inner dimensions 100 and 128 differ".
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    BFloat16Type,
    BoolAttr,
    Float16Type,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i32,
    i64,
)
from xdsl.ir import Attribute, Dialect, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VerificationContext,
    irdl_op_definition,
    irdl_to_attr_constraint,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.kinds import ROPE_STYLES

__all__ = [
    "TG",
    "FLOAT_TYPES",
    "GELU_APPROXIMATIONS",
    "ROPE_STYLES",
    "TgOp",
    "UnaryOp",
    "BinaryOp",
    "MatmulOp",
    "AddOp",
    "SubOp",
    "MulOp",
    "SiluOp",
    "ReluOp",
    "SigmoidOp",
    "GeluOp",
    "ScaleOp",
    "SoftcapOp",
    "SwigluOp",
    "RmsNormOp",
    "LayerNormOp",
    "RopeOp",
    "AttentionOp",
    "SoftmaxOp",
    "TransposeOp",
    "GatherRowsOp",
    "SetRowsOp",
    "ArgmaxOp",
    "is_float",
    "is_int",
    "shape_str",
    "matmul_shape",
    "transpose_shape",
    "gather_rows_shape",
    "attention_shape",
    "argmax_shape",
]

FLOAT_TYPES = (BFloat16Type, Float16Type, Float32Type)
"""Element types an op with float semantics (norms, attention, activations) accepts."""


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_int(t: Attribute) -> bool:
    return (
        isinstance(t, IntegerType)
        and t.width.data in (8, 32)
        and (t.signedness.data == Signedness.SIGNLESS)
    )


def shape_str(shape: Sequence[int]) -> str:
    return "x".join(str(d) for d in shape)


# Result shapes -----------------------------------------------------------------------------
# One definition of each rule: the builders compute the result type with these functions and the
# verifiers compare the result against them. The operands' ranks are checked before either calls.


def matmul_shape(a: Sequence[int], b: Sequence[int]) -> tuple[int, int]:
    """a @ b is M x N for a of M x K and b of K x N."""
    return (a[0], b[1])


def transpose_shape(x: Sequence[int]) -> tuple[int, int]:
    """x^T is C x R for x of R x C."""
    return (x[1], x[0])


def gather_rows_shape(table: Sequence[int], ids: Sequence[int]) -> tuple[int, int]:
    """table[ids] has one row per id, of the table's width."""
    return (ids[0], table[1])


def attention_shape(
    q: Sequence[int], v: Sequence[int], heads: int, kv_heads: int
) -> tuple[int, int]:
    """One row per query, heads * (v's head width) columns: T x heads * (v columns / kv_heads)."""
    return (q[0], heads * (v[1] // kv_heads))


def argmax_shape(x: Sequence[int]) -> tuple[int]:
    """One i32 index per row of x."""
    return (x[0],)


ARGMAX_ELEMENT = i32
"""The element type of tg.argmax's result."""


MAX_DIMENSION = 2**63 - 1
"""The largest dimension (and element count) of a tg tensor: int64, as MLIR's shapes."""


def _defined_before(definition: Operation, use: Operation) -> bool:
    """Whether `definition` comes before `use` in their common block (walks backwards from the
    use, so a well-ordered program costs the distance between the two)."""
    op = use.prev_op
    while op is not None:
        if op is definition:
            return True
        op = op.prev_op
    return False


def _value_name(value: SSAValue) -> str:
    return f"%{value.name_hint}" if value.name_hint else f"a result of {value.owner.name}"


def _location_phrase(op: Operation) -> str:
    """' at line L' when the parser recorded where the op was written, else ''."""
    loc = op.location
    line = getattr(loc, "line", None)
    return f" at line {line.data}" if line is not None else ""


# Builder helpers ---------------------------------------------------------------------------

Value = SSAValue | Operation
"""What a builder accepts as an operand: a value, or an op of one result."""


def _tensor(op_name: str, field: str, value: SSAValue, rank: int | None = None) -> TensorType:
    """The value's tensor type, refused by the op's and the operand's names when a builder cannot
    read a shape from it (the verifier later gives the full diagnostic for the other rules)."""
    t = value.type
    if not isinstance(t, TensorType):
        raise VerifyException(f"{op_name}: {field} must be a ranked tensor, got {t}")
    if rank is not None and len(t.get_shape()) != rank:
        raise VerifyException(f"{op_name}: {field} {rank_phrase(rank)}, got {t}")
    return t


def rank_phrase(rank: int) -> str:
    return "must be a matrix (rank 2)" if rank == 2 else "must be a vector (rank 1)"


def _f32(op_name: str, prop: str, v: float | FloatAttr) -> FloatAttr:
    if isinstance(v, FloatAttr):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{op_name}: {prop} must be a float, got {v!r}")
    return FloatAttr(float(v), Float32Type())


def _i64(op_name: str, prop: str, v: int | IntegerAttr) -> IntegerAttr:
    if isinstance(v, IntegerAttr):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op_name}: {prop} must be an int, got {v!r}")
    return IntegerAttr(v, i64)


def _bool(op_name: str, prop: str, v: bool | IntegerAttr) -> IntegerAttr:
    if isinstance(v, IntegerAttr):
        return v
    if not isinstance(v, bool):
        raise TypeError(f"{op_name}: {prop} must be a bool, got {v!r}")
    return IntegerAttr.from_bool(v)


def _str(op_name: str, prop: str, v: str | StringAttr) -> StringAttr:
    if isinstance(v, StringAttr):
        return v
    if not isinstance(v, str):
        raise TypeError(f"{op_name}: {prop} must be a str, got {v!r}")
    return StringAttr(v)


def _values(*values: Value | None) -> list[SSAValue | None]:
    return [None if v is None else SSAValue.get(v) for v in values]


PROPERTY_KINDS = (
    (irdl_to_attr_constraint(FloatAttr[Float32Type]), "an f32 float (e.g. 1.0e-06 : f32)"),
    (irdl_to_attr_constraint(IntegerAttr[I64]), "an i64 integer (e.g. 128 : i64)"),
    (irdl_to_attr_constraint(BoolAttr), "a bool (true or false)"),
    (irdl_to_attr_constraint(StringAttr), 'a string (e.g. "neox")'),
)
"""How a property's expected kind reads in a diagnostic."""


class TgOp(IRDLOperation):
    """Shared checks of every tg op: tensors of rank 1 or 2, static shapes, supported elements.

    Subclasses implement `verify_shapes`, called only once every operand and result is a
    well-formed tensor, so the shape rules never trip over a dynamic or rank-3 type.
    """

    traits = traits_def(Pure())

    # Which element types the op's tensors may hold. Float-only ops override it.
    ALLOWS_INT: ClassVar[bool] = True

    # The operand whose type the result has (pointwise ops, norms, rope, the cache update), or
    # None where the result's shape is computed (matmul, attention, transpose, gather, argmax).
    # The builder gives the result this operand's type and the verifier checks it, last.
    RESULT_LIKE: ClassVar[str | None] = None

    def err(self, message: str) -> VerifyException:
        return VerifyException(f"{self.name}: {message}")

    def named_values(self) -> list[tuple[str, SSAValue]]:
        """Operands and results with their field names, in declaration order."""
        named: list[tuple[str, SSAValue]] = []
        for name in type(self).get_irdl_definition().operands:
            value = getattr(self, name[0])
            if value is not None:
                named.append((name[0], value))
        for name in type(self).get_irdl_definition().results:
            named.append((name[0], getattr(self, name[0])))
        return named

    def verify_(self) -> None:
        self.verify_dominance()
        self.verify_float_properties()
        for name, value in self.named_values():
            t = value.type
            assert isinstance(t, TensorType)  # the operand constraints ran before verify_
            shape = t.get_shape()
            if len(shape) not in (1, 2):
                raise self.err(f"{name} must have rank 1 or 2, got rank {len(shape)} ({t})")
            if any(d < 0 for d in shape):
                raise self.err(f"{name} must have a static shape, got {t}")
            if any(d == 0 for d in shape):
                raise self.err(f"{name} has an empty dimension ({t})")
            if any(d > MAX_DIMENSION for d in shape):
                raise self.err(
                    f"{name} has a dimension beyond int64 ({t}); the largest is {MAX_DIMENSION}"
                )
            elements = math.prod(shape)
            if elements > MAX_DIMENSION:
                raise self.err(
                    f"{name} holds {elements} elements ({t}), beyond int64 ({MAX_DIMENSION})"
                )
            elt = t.element_type
            if not (is_float(elt) or is_int(elt)):
                raise self.err(
                    f"{name} has element type {elt}; supported are bf16, f16, f32, i8, i32"
                )
        self.verify_shapes()
        if self.RESULT_LIKE is not None:
            self.require_same_type("res", self.RESULT_LIKE)

    def verify_dominance(self) -> None:
        """Every operand is defined before its use: a value computed by an op of the same block
        further down (a swapped pair of lines) is refused at the use, naming both values. xDSL
        accepts such forward references in any block (graph regions); a tg function is a
        sequence, so a tg op is the place to say it."""
        block = self.parent_block()
        if block is None:
            return
        for index, operand in enumerate(self.operands):
            owner = operand.owner
            if not isinstance(owner, Operation) or owner.parent_block() is not block:
                continue
            if owner is self or not _defined_before(owner, self):
                field = self._operand_field(index)
                raise self.err(
                    f"operand {field} ({_value_name(operand)}) is used before its definition: "
                    f"{_value_name(operand)} is defined by {owner.name}"
                    f"{_location_phrase(owner)} after this use"
                )

    def _operand_field(self, index: int) -> str:
        names = [n for n, _ in type(self).get_irdl_definition().operands]
        present = [n for n in names if getattr(self, n) is not None]
        return present[index] if index < len(present) else f"#{index}"

    def verify_float_properties(self) -> None:
        """Float properties are finite; eps is positive (docs/tg.md)."""
        for prop, value in self.properties.items():
            if not isinstance(value, FloatAttr):
                continue
            v = value.value.data
            if not math.isfinite(v):
                raise self.err(f"property {prop} must be finite, got {v}")
            if prop == "eps" and v <= 0:
                raise self.err(f"eps must be positive, got {v}")

    def init_tg(
        self,
        operands: Sequence[Value | None],
        properties: Mapping[str, Attribute | None] | None = None,
        result_type: Attribute | None = None,
    ) -> None:
        """Initialize from operands in declaration order; the result type defaults to that of the
        operand RESULT_LIKE names (ops whose result shape is computed pass it)."""
        values = _values(*operands)
        if result_type is None:
            assert self.RESULT_LIKE is not None, f"{self.name} computes its result type"
            names = [n for n, _ in type(self).get_irdl_definition().operands]
            like = values[names.index(self.RESULT_LIKE)]
            assert like is not None
            result_type = _tensor(self.name, self.RESULT_LIKE, like)
        IRDLOperation.__init__(
            self, operands=values, result_types=[result_type], properties=properties or {}
        )

    def verify_shapes(self) -> None:
        raise NotImplementedError

    def verify_property_kinds(self) -> None:
        """Refuse a property of the wrong kind by its name (xDSL's own check runs first but its
        message names neither the op nor the property, e.g. "2 : i64 should be of base attribute
        float"); so this runs from `verify` below, before the IRDL constraints."""
        for prop, definition in type(self).get_irdl_definition().properties.items():
            value = self.properties.get(prop)
            if value is None:
                continue
            try:
                definition.constr.verify(value, VerificationContext())
            except VerifyException:
                kind = next(
                    (k for c, k in PROPERTY_KINDS if c == definition.constr), str(definition.constr)
                )
                raise self.err(f"property {prop} must be {kind}, got {value}") from None

    def verify(self, verify_nested_ops: bool = True) -> None:
        try:
            self.verify_property_kinds()
        except VerifyException as err:
            self.emit_error(f"Operation does not verify: {err}", err)
        super().verify(verify_nested_ops)

    # Helpers for the shape rules -----------------------------------------------------------

    @staticmethod
    def shape(value: SSAValue) -> tuple[int, ...]:
        assert isinstance(value.type, TensorType)
        return tuple(value.type.get_shape())

    @staticmethod
    def elt(value: SSAValue) -> Attribute:
        assert isinstance(value.type, TensorType)
        return value.type.element_type

    def describe(self, field: str) -> str:
        value = getattr(self, field)
        return f"{field} is {shape_str(self.shape(value))}"

    def require_rank(self, field: str, rank: int) -> tuple[int, ...]:
        shape = self.shape(getattr(self, field))
        if len(shape) != rank:
            raise self.err(f"{field} {rank_phrase(rank)}, got {shape_str(shape)}")
        return shape

    def require_float(self, *fields: str) -> None:
        for field in fields:
            elt = self.elt(getattr(self, field))
            if not is_float(elt):
                raise self.err(f"{field} has element type {elt}; this op needs bf16, f16 or f32")

    def require_same_type(self, field: str, other: str) -> None:
        a, b = getattr(self, field).type, getattr(self, other).type
        if a != b:
            raise self.err(f"{field} is {a} but {other} is {b}; they must be the same type")

    def require_same_element(self, field: str, other: str) -> None:
        ea, eb = self.elt(getattr(self, field)), self.elt(getattr(self, other))
        if ea != eb:
            raise self.err(f"{field} holds {ea} but {other} holds {eb}; they must agree")

    def require_i32_vector(self, field: str, length: int | None = None) -> int:
        value = getattr(self, field)
        shape = self.require_rank(field, 1)
        elt = self.elt(value)
        if not (isinstance(elt, IntegerType) and elt.width.data == 32):
            raise self.err(f"{field} must hold i32, got {elt}")
        if length is not None and shape[0] != length:
            raise self.err(f"{field} must be tensor<{length}xi32>, got {value.type}")
        return shape[0]

    def require_positive(self, prop: str) -> int:
        value = getattr(self, prop).value.data
        if value <= 0:
            raise self.err(f"{prop} must be positive, got {value}")
        return value


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
class MatmulOp(TgOp):
    """a @ b, accumulated in f32 (i32 for integer operands), rounded to the result type."""

    name = "tg.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$a `,` $b attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        a: Value,
        b: Value,
        result_type: Attribute | None = None,
        *,
        element_type: Attribute | None = None,
    ):
        """The result is M x N (`matmul_shape`) of `element_type`, by default a's element type;
        pass f32 for bf16 operands kept in f32, i32 for i8 ones. `result_type` gives it whole."""
        if result_type is None:
            ta = _tensor(self.name, "a", SSAValue.get(a), 2)
            tb = _tensor(self.name, "b", SSAValue.get(b), 2)
            shape = matmul_shape(ta.get_shape(), tb.get_shape())
            result_type = TensorType(element_type or ta.element_type, shape)
        elif element_type is not None:
            raise TypeError("tg.matmul: give result_type or element_type, not both")
        self.init_tg([a, b], result_type=result_type)

    def verify_shapes(self) -> None:
        m, k = self.require_rank("a", 2)
        k2, n = self.require_rank("b", 2)
        if k != k2:
            raise self.err(
                f"a is {m}x{k} and b is {k2}x{n}; the inner dimensions {k} and {k2} differ"
            )
        self.require_same_element("a", "b")
        ea = self.elt(self.a)
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != matmul_shape((m, k), (k2, n)):
            raise self.err(f"the result is {rows}x{cols} but a @ b is {m}x{n}")
        er = self.elt(self.res)
        if is_float(ea) != is_float(er):
            kind = "a float" if is_float(ea) else "an integer"
            raise self.err(f"operands hold {ea}, so the result must be {kind} type, got {er}")


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
            props["approximate"] = _str(self.name, "approximate", approximate)
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
            props["factor"] = _f32(self.name, "factor", factor)
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
            props["cap"] = _f32(self.name, "cap", cap)
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
            "eps": _f32(self.name, "eps", eps),
            "width": None if width is None else _i64(self.name, "width", width),
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
        self.init_tg([x, weight, bias], {"eps": _f32(self.name, "eps", eps)})

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
            head_dim = 2 * _tensor(self.name, "cos", SSAValue.get(cos), 2).get_shape()[1]
        props = {
            "head_dim": _i64(self.name, "head_dim", head_dim),
            "style": _str(self.name, "style", style),
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


@irdl_op_definition
class AttentionOp(TgOp):
    """Grouped-query attention, softmax in f32.

    Head h reads kv head h // (heads / kv_heads); query row i sits at position p + i with
    p = pos (default S - T); causal masks keys j > p + i.
    """

    name = "tg.attention"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    pos = opt_operand_def(TensorType)
    res = result_def(TensorType)
    heads = prop_def(IntegerAttr[I64])
    kv_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    causal = prop_def(BoolAttr)
    scale = prop_def(FloatAttr[Float32Type])
    assembly_format = (
        "operands `heads` $heads `kv_heads` $kv_heads `head_dim` $head_dim `causal` $causal "
        "`scale` $scale attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        q: Value,
        k: Value,
        v: Value,
        pos: Value | None = None,
        *,
        heads: int | IntegerAttr,
        kv_heads: int | IntegerAttr,
        causal: bool | IntegerAttr,
        head_dim: int | IntegerAttr | None = None,
        scale: float | FloatAttr | None = None,
        element_type: Attribute | None = None,
    ):
        """head_dim defaults to q's columns / heads, scale to 1 / sqrt(head_dim). The result is
        `attention_shape` of `element_type`, by default q's element type."""
        tq = _tensor(self.name, "q", SSAValue.get(q), 2)
        tv = _tensor(self.name, "v", SSAValue.get(v), 2)
        h = _i64(self.name, "heads", heads)
        kv = _i64(self.name, "kv_heads", kv_heads)
        if head_dim is None:
            head_dim = tq.get_shape()[1] // max(h.value.data, 1)
        d = _i64(self.name, "head_dim", head_dim)
        if scale is None:
            scale = 1.0 / math.sqrt(max(d.value.data, 1))
        props = {
            "heads": h,
            "kv_heads": kv,
            "head_dim": d,
            "causal": _bool(self.name, "causal", causal),
            "scale": _f32(self.name, "scale", scale),
        }
        if kv.value.data <= 0:
            raise VerifyException(f"{self.name}: kv_heads must be positive, got {kv.value.data}")
        shape = attention_shape(tq.get_shape(), tv.get_shape(), h.value.data, kv.value.data)
        result_type = TensorType(element_type or tq.element_type, shape)
        self.init_tg([q, k, v, pos], props, result_type)

    def v_head_dim(self) -> int:
        return self.shape(self.v)[1] // self.kv_heads.value.data

    def verify_shapes(self) -> None:
        t, q_cols = self.require_rank("q", 2)
        s, k_cols = self.require_rank("k", 2)
        s_v, v_cols = self.require_rank("v", 2)
        self.require_float("q", "k", "v", "res")
        h, kv, d = (self.require_positive(p) for p in ("heads", "kv_heads", "head_dim"))
        if h % kv:
            raise self.err(f"heads {h} is not a multiple of kv_heads {kv}")
        if q_cols != h * d:
            raise self.err(f"q is {t}x{q_cols}; it must have heads * head_dim = {h * d} columns")
        if k_cols != kv * d:
            raise self.err(
                f"k is {s}x{k_cols}; it must have kv_heads * head_dim = {kv * d} columns"
            )
        if s_v != s:
            raise self.err(f"k has {s} rows but v has {s_v}; they must agree")
        if v_cols % kv:
            raise self.err(f"v has {v_cols} columns, not a multiple of kv_heads {kv}")
        if self.pos is not None:
            self.require_i32_vector("pos", 1)
        elif t > s:
            raise self.err(
                f"q has {t} rows but k only {s}; without pos the queries sit at the last "
                "T positions, so T <= S"
            )
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != attention_shape((t, q_cols), (s_v, v_cols), h, kv):
            raise self.err(
                f"the result is {rows}x{cols}; it must be {t}x{h * self.v_head_dim()} "
                "(T x heads * v head dim)"
            )


@irdl_op_definition
class TransposeOp(TgOp):
    """x^T."""

    name = "tg.transpose"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value):
        t = _tensor(self.name, "x", SSAValue.get(x), 2)
        self.init_tg([x], result_type=TensorType(t.element_type, transpose_shape(t.get_shape())))

    def verify_shapes(self) -> None:
        r, c = self.require_rank("x", 2)
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != transpose_shape((r, c)):
            raise self.err(f"x is {r}x{c}, so the result must be {c}x{r}, got {rr}x{rc}")
        self.require_same_element("res", "x")


@irdl_op_definition
class GatherRowsOp(TgOp):
    """table[ids]: embedding lookup. An id outside [0, V) is a runtime error."""

    name = "tg.gather_rows"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$table `,` $ids attr-dict `:` functional-type(operands, results)"

    def __init__(self, table: Value, ids: Value):
        tt = _tensor(self.name, "table", SSAValue.get(table), 2)
        ti = _tensor(self.name, "ids", SSAValue.get(ids), 1)
        shape = gather_rows_shape(tt.get_shape(), ti.get_shape())
        self.init_tg([table, ids], result_type=TensorType(tt.element_type, shape))

    def verify_shapes(self) -> None:
        v, d = self.require_rank("table", 2)
        t = self.require_i32_vector("ids")
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != gather_rows_shape((v, d), (t,)):
            raise self.err(f"the result is {rows}x{cols}; it must be {t}x{d} (ids x table width)")
        self.require_same_element("res", "table")


@irdl_op_definition
class SetRowsOp(TgOp):
    """cache with rows written at pos .. pos + T - 1 (the KV-cache update)."""

    name = "tg.set_rows"
    cache = operand_def(TensorType)
    rows = operand_def(TensorType)
    pos = operand_def(TensorType)
    res = result_def(TensorType)
    RESULT_LIKE: ClassVar[str | None] = "cache"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, cache: Value, rows: Value, pos: Value):
        self.init_tg([cache, rows, pos])

    def verify_shapes(self) -> None:
        s, d = self.require_rank("cache", 2)
        t, d2 = self.require_rank("rows", 2)
        if d2 != d:
            raise self.err(f"cache is {s}x{d} and rows is {t}x{d2}; the widths {d} and {d2} differ")
        if t > s:
            raise self.err(f"rows has {t} rows, more than the cache's {s}")
        self.require_same_element("rows", "cache")
        self.require_i32_vector("pos", 1)


@irdl_op_definition
class ArgmaxOp(TgOp):
    """The index of the first maximum of each row."""

    name = "tg.argmax"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value):
        t = _tensor(self.name, "x", SSAValue.get(x), 2)
        self.init_tg([x], result_type=TensorType(ARGMAX_ELEMENT, argmax_shape(t.get_shape())))

    def verify_shapes(self) -> None:
        rows, cols = self.require_rank("x", 2)
        n = self.require_i32_vector("res")
        if (n,) != argmax_shape((rows, cols)):
            raise self.err(f"x has {rows} rows, so the result must be tensor<{rows}xi32>")


TG = Dialect(
    "tg",
    [
        MatmulOp,
        AddOp,
        SubOp,
        MulOp,
        SiluOp,
        ReluOp,
        SigmoidOp,
        GeluOp,
        ScaleOp,
        SoftcapOp,
        SwigluOp,
        RmsNormOp,
        LayerNormOp,
        RopeOp,
        AttentionOp,
        SoftmaxOp,
        TransposeOp,
        GatherRowsOp,
        SetRowsOp,
        ArgmaxOp,
    ],
    [],
)
