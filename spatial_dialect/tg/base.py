"""The tg op base: the element and shape rules every op shares, property coercion for the
builders, and `TgOp`, whose verifier checks operand kinds, dominance and shapes (docs/tg.md)."""

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
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    VerificationContext,
    irdl_to_attr_constraint,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

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


def b_dims(b: Sequence[int], transpose_b: bool = False) -> tuple[int, int]:
    """(K, N) of a product's right operand: b is K x N, or with `transpose_b` N x K, read
    transposed (a @ b^T: a tied LM head reads the [vocab, d] embedding table as it is stored)."""
    return (b[1], b[0]) if transpose_b else (b[0], b[1])


def matmul_shape(a: Sequence[int], b: Sequence[int], transpose_b: bool = False) -> tuple[int, int]:
    """a @ b is M x N for a of M x K and b of K x N (a @ b^T for b of N x K)."""
    return (a[0], b_dims(b, transpose_b)[1])


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


def tensor_operand(
    op_name: str, field: str, value: SSAValue, rank: int | None = None
) -> TensorType:
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


def f32_property(op_name: str, prop: str, v: float | FloatAttr) -> FloatAttr:
    if isinstance(v, FloatAttr):
        return v
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise TypeError(f"{op_name}: {prop} must be a float, got {v!r}")
    return FloatAttr(float(v), Float32Type())


def i64_property(op_name: str, prop: str, v: int | IntegerAttr) -> IntegerAttr:
    if isinstance(v, IntegerAttr):
        return v
    if isinstance(v, bool) or not isinstance(v, int):
        raise TypeError(f"{op_name}: {prop} must be an int, got {v!r}")
    return IntegerAttr(v, i64)


def bool_property(op_name: str, prop: str, v: bool | IntegerAttr) -> IntegerAttr:
    if isinstance(v, IntegerAttr):
        return v
    if not isinstance(v, bool):
        raise TypeError(f"{op_name}: {prop} must be a bool, got {v!r}")
    return IntegerAttr.from_bool(v)


def str_property(op_name: str, prop: str, v: str | StringAttr) -> StringAttr:
    if isinstance(v, StringAttr):
        return v
    if not isinstance(v, str):
        raise TypeError(f"{op_name}: {prop} must be a str, got {v!r}")
    return StringAttr(v)


def operand_values(*values: Value | None) -> list[SSAValue | None]:
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
        result_type: Attribute | Sequence[Attribute] | None = None,
    ) -> None:
        """Initialize from operands in declaration order; the result type defaults to that of the
        operand RESULT_LIKE names (ops whose result shape is computed pass it; the ops of two
        results, the output and a carried state, pass both)."""
        values = operand_values(*operands)
        if isinstance(result_type, Sequence):
            IRDLOperation.__init__(
                self, operands=values, result_types=list(result_type), properties=properties or {}
            )
            return
        if result_type is None:
            assert self.RESULT_LIKE is not None, f"{self.name} computes its result type"
            names = [n for n, _ in type(self).get_irdl_definition().operands]
            like = values[names.index(self.RESULT_LIKE)]
            assert like is not None
            result_type = tensor_operand(self.name, self.RESULT_LIKE, like)
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
