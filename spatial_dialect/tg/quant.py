"""Q8_0 weights in tg: ggml's block format (32 int8 values and one f16 scale per block, 34 bytes
per 32 elements) declared as two tensors, an i8 `values` tensor and an f16 `scales` tensor with
one scale per 32 values along the block axis (docs/tg.md#q8_0-weights).

- tg.dequantize_q8_0(values, scales) {axis}: the float tensor `f32(scale) * value`, exactly as
  `gguf.quants.dequantize`, rounded to the result type.
- tg.matmul_q8_0(a, values, scales) {activation}: a @ W for a Q8_0 weight W of K x N blocked
  along K; activation "q8_0" quantizes each row of a to Q8_0 along K as llama.cpp does on x86
  (ggml-cpu's AVX2 quantize_row_q8_0: x * (127 / max|x|), rounded half to even) and computes
  ggml's Q8_0 x Q8_0 dot (what ggml does for every Q8_0 weight product), "q8_0_ref" the same
  with ggml's reference rounding (quantize_row_q8_0_ref: x * (1 / d), rounded half away from
  zero), "float" multiplies a by the dequantized weight in f32. The activation names the Q8_0
  format the activation is quantized into (sp/kinds.py Q8_0_FORMATS). With `transpose_b` the weight is stored N x K, still blocked along
  K (values N x K, scales N x K/32: ggml's own layout of a [vocab, d] embedding table), and the
  product is a @ W^T: a tied LM head reads the Q8_0 table its gather reads.
"""

from __future__ import annotations

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    Float16Type,
    Float32Type,
    IntegerAttr,
    IntegerType,
    StringAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    b_dims,
    bool_property,
    i64_property,
    is_float,
    str_property,
    tensor_operand,
)

Q8_0_BLOCK = 32
"""Values per Q8_0 block (one f16 scale each)."""

Q8_0_ACTIVATIONS = ("q8_0", "q8_0_ref", "float")
"""How tg.matmul_q8_0 reads its activation: quantized to Q8_0 (ggml's dot) by llama.cpp's x86
rule or by ggml's reference rule (tools/interpreters/q8_0.py), or as it is."""


def q8_0_scales_shape(values: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """One scale per 32 values along `axis`."""
    shape = list(values)
    shape[axis] //= Q8_0_BLOCK
    return tuple(shape)


def _check_q8_0(op: TgOp, axis: int) -> tuple[int, int]:
    """values i8 and rank 2, its `axis` a multiple of 32, scales f16 of the matching shape."""
    rows, cols = op.require_rank("values", 2)
    ev = op.elt(op.values)
    if not (isinstance(ev, IntegerType) and ev.width.data == 8):
        raise op.err(f"values must hold i8 (the Q8_0 quants), got {ev}")
    length = (rows, cols)[axis]
    if length % Q8_0_BLOCK:
        raise op.err(
            f"values is {rows}x{cols}; its block axis {axis} has {length} elements, not a "
            f"multiple of the Q8_0 block of {Q8_0_BLOCK}"
        )
    es = op.elt(op.scales)
    if not isinstance(es, Float16Type):
        raise op.err(f"scales must hold f16 (one per Q8_0 block), got {es}")
    sr, sc = op.require_rank("scales", 2)
    want = q8_0_scales_shape((rows, cols), axis)
    if (sr, sc) != want:
        raise op.err(
            f"values is {rows}x{cols} in blocks of {Q8_0_BLOCK} along axis {axis}, so scales "
            f"must be {want[0]}x{want[1]}, got {sr}x{sc}"
        )
    return rows, cols


@irdl_op_definition
class DequantizeQ8_0Op(TgOp):
    """The float tensor of a Q8_0 weight: f32(scale) * value, rounded to the result type."""

    name = "tg.dequantize_q8_0"
    values = operand_def(TensorType)
    scales = operand_def(TensorType)
    res = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$values `,` $scales `axis` $axis attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        values: Value,
        scales: Value,
        *,
        axis: int | IntegerAttr = 0,
        element_type: Attribute | None = None,
    ):
        """The result has values' shape and `element_type` (default f32, where it is exact)."""
        t = tensor_operand(self.name, "values", SSAValue.get(values), 2)
        result = TensorType(element_type or Float32Type(), t.get_shape())
        props = {"axis": i64_property(self.name, "axis", axis)}
        self.init_tg([values, scales], props, result_type=result)

    def block_axis(self) -> int:
        return self.axis.value.data

    def verify_shapes(self) -> None:
        axis = self.block_axis()
        if axis not in (0, 1):
            raise self.err(f"axis must be 0 or 1 (the axis the blocks run along), got {axis}")
        rows, cols = _check_q8_0(self, axis)
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != (rows, cols):
            raise self.err(f"the result is {rr}x{rc}; values is {rows}x{cols}")
        if not is_float(self.elt(self.res)):
            raise self.err(f"the result must be a float type, got {self.elt(self.res)}")


@irdl_op_definition
class MatmulQ8_0Op(TgOp):
    """a @ W for the Q8_0 weight W (values K x N i8, scales K/32 x N f16, blocks along K); with
    `transpose_b`, a @ W^T for W stored N x K (values N x K, scales N x K/32, blocks along K)."""

    name = "tg.matmul_q8_0"
    a = operand_def(TensorType)
    values = operand_def(TensorType)
    scales = operand_def(TensorType)
    res = result_def(TensorType)
    activation = prop_def(StringAttr)
    transpose_b = opt_prop_def(BoolAttr)
    assembly_format = (
        "$a `,` $values `,` $scales `activation` $activation (`transpose_b` $transpose_b^)?"
        " attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        a: Value,
        values: Value,
        scales: Value,
        *,
        activation: str | StringAttr = "q8_0",
        element_type: Attribute | None = None,
        transpose_b: bool | IntegerAttr | None = None,
    ):
        """The result is M x N of `element_type`, by default a's element type. `transpose_b` is
        left out of the IR when not given."""
        flag = None if transpose_b is None else bool_property(self.name, "transpose_b", transpose_b)
        ta = tensor_operand(self.name, "a", SSAValue.get(a), 2)
        tv = tensor_operand(self.name, "values", SSAValue.get(values), 2)
        n = b_dims(tv.get_shape(), flag is not None and bool(flag.value.data))[1]
        result = TensorType(element_type or ta.element_type, (ta.get_shape()[0], n))
        props = {
            "activation": str_property(self.name, "activation", activation),
            "transpose_b": flag,
        }
        self.init_tg([a, values, scales], props, result_type=result)

    @property
    def quantizes_activation(self) -> bool:
        """Each row of `a` is rounded to Q8_0 levels before the product (ggml's CPU dot)."""
        return self.activation.data != "float"

    @property
    def transposes_b(self) -> bool:
        """The weight is stored N x K (blocks along its rows' K), read transposed."""
        return self.transpose_b is not None and bool(self.transpose_b.value.data)

    def block_axis(self) -> int:
        """The axis of `values` its blocks run along: K, its rows (0) or with transpose_b its
        columns (1)."""
        return 1 if self.transposes_b else 0

    def verify_shapes(self) -> None:
        act = self.activation.data
        if act not in Q8_0_ACTIVATIONS:
            raise self.err(f"activation must be one of {', '.join(Q8_0_ACTIVATIONS)}, got {act!r}")
        m, k = self.require_rank("a", 2)
        self.require_float("a")
        vr, vc = _check_q8_0(self, self.block_axis())
        k2, n = b_dims((vr, vc), self.transposes_b)
        if k != k2:
            if self.transposes_b:
                raise self.err(
                    f"a is {m}x{k} and values is {vr}x{vc} read transposed (transpose_b); a's "
                    f"columns {k} and values' columns {vc} differ"
                )
            raise self.err(
                f"a is {m}x{k} and values is {k2}x{n}; the inner dimensions {k} and {k2} differ"
            )
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != (m, n):
            product = "a @ W^T" if self.transposes_b else "a @ W"
            raise self.err(f"the result is {rr}x{rc} but {product} is {m}x{n}")
        if not is_float(self.elt(self.res)):
            raise self.err(f"the result must be a float type, got {self.elt(self.res)}")
