"""tg.matmul and tg.transpose: the product and the layout change of 2-D tensors.

tg.matmul's `transpose_b` (linalg.matmul_transpose_b's contract) takes b as N x K and computes
a @ b^T: a tied LM head multiplies by the [vocab, d] embedding table its gather reads, one tensor
in DRAM, instead of a transposed copy (docs/tg.md#tgmatmul)."""

from __future__ import annotations

from xdsl.dialects.builtin import (
    BoolAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    result_def,
)

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    b_dims,
    bool_property,
    is_float,
    matmul_shape,
    tensor_operand,
    transpose_shape,
)


@irdl_op_definition
class MatmulOp(TgOp):
    """a @ b (a @ b^T with `transpose_b`), accumulated in f32 (i32 for integer operands),
    rounded to the result type."""

    name = "tg.matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    res = result_def(TensorType)
    transpose_b = opt_prop_def(BoolAttr)
    assembly_format = (
        "$a `,` $b (`transpose_b` $transpose_b^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        a: Value,
        b: Value,
        result_type: Attribute | None = None,
        *,
        element_type: Attribute | None = None,
        transpose_b: bool | IntegerAttr | None = None,
    ):
        """The result is M x N (`matmul_shape`) of `element_type`, by default a's element type;
        pass f32 for bf16 operands kept in f32, i32 for i8 ones. `result_type` gives it whole.
        `transpose_b`: b is N x K and the product a @ b^T; left out of the IR when not given."""
        flag = None if transpose_b is None else bool_property(self.name, "transpose_b", transpose_b)
        if result_type is None:
            ta = tensor_operand(self.name, "a", SSAValue.get(a), 2)
            tb = tensor_operand(self.name, "b", SSAValue.get(b), 2)
            t = flag is not None and bool(flag.value.data)
            shape = matmul_shape(ta.get_shape(), tb.get_shape(), t)
            result_type = TensorType(element_type or ta.element_type, shape)
        elif element_type is not None:
            raise TypeError("tg.matmul: give result_type or element_type, not both")
        self.init_tg([a, b], {"transpose_b": flag}, result_type=result_type)

    @property
    def transposes_b(self) -> bool:
        """b is N x K, read transposed."""
        return self.transpose_b is not None and bool(self.transpose_b.value.data)

    def verify_shapes(self) -> None:
        m, k = self.require_rank("a", 2)
        br, bc = self.require_rank("b", 2)
        k2, n = b_dims((br, bc), self.transposes_b)
        if k != k2:
            if self.transposes_b:
                raise self.err(
                    f"a is {m}x{k} and b is {br}x{bc} read transposed (transpose_b); a's "
                    f"columns {k} and b's columns {bc} differ"
                )
            raise self.err(
                f"a is {m}x{k} and b is {k2}x{n}; the inner dimensions {k} and {k2} differ"
            )
        self.require_same_element("a", "b")
        ea = self.elt(self.a)
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != matmul_shape((m, k), (br, bc), self.transposes_b):
            product = "a @ b^T" if self.transposes_b else "a @ b"
            raise self.err(f"the result is {rows}x{cols} but {product} is {m}x{n}")
        er = self.elt(self.res)
        if is_float(ea) != is_float(er):
            kind = "a float" if is_float(ea) else "an integer"
            raise self.err(f"operands hold {ea}, so the result must be {kind} type, got {er}")


@irdl_op_definition
class TransposeOp(TgOp):
    """x^T."""

    name = "tg.transpose"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value):
        t = tensor_operand(self.name, "x", SSAValue.get(x), 2)
        self.init_tg([x], result_type=TensorType(t.element_type, transpose_shape(t.get_shape())))

    def verify_shapes(self) -> None:
        r, c = self.require_rank("x", 2)
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != transpose_shape((r, c)):
            raise self.err(f"x is {r}x{c}, so the result must be {c}x{r}, got {rr}x{rc}")
        self.require_same_element("res", "x")
