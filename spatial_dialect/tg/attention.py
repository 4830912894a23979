"""tg.attention: causal or full grouped-query attention over a KV cache."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import (
    I64,
    BoolAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    attention_shape,
    bool_property,
    f32_property,
    i64_property,
    tensor_operand,
)


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
        props, result_type = head_properties(
            self.name, q, v, heads, kv_heads, head_dim, scale, element_type
        )
        props["causal"] = bool_property(self.name, "causal", causal)
        self.init_tg([q, k, v, pos], props, result_type)

    def v_head_dim(self) -> int:
        return self.shape(self.v)[1] // self.kv_heads.value.data

    def verify_shapes(self) -> None:
        t, q_cols, s, s_v, v_cols, h, kv = verify_heads(self)
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


def verify_heads(op: TgOp) -> tuple[int, int, int, int, int, int, int]:
    """The head rules tg.attention and tg.batch_attention share: q, k and v are matrices of one
    float type, heads a multiple of kv_heads, q heads x head_dim wide, k kv_heads x head_dim, v's
    rows k's and its width a multiple of kv_heads. Returns (q rows, q cols, k rows, v rows, v cols,
    heads, kv_heads)."""
    t, q_cols = op.require_rank("q", 2)
    s, k_cols = op.require_rank("k", 2)
    s_v, v_cols = op.require_rank("v", 2)
    op.require_float("q", "k", "v", "res")
    elts = {f: op.elt(getattr(op, f)) for f in ("q", "k", "v")}
    if len(set(elts.values())) > 1:
        raise op.err(
            f"q holds {elts['q']}, k {elts['k']} and v {elts['v']}; they must hold one "
            "element type: the scores q k^T "
            "and their product with v are tile matmuls, which read both operands in one "
            "format (keep the KV cache in q's type; the result may differ)"
        )
    h, kv, d = (op.require_positive(p) for p in ("heads", "kv_heads", "head_dim"))
    if h % kv:
        raise op.err(f"heads {h} is not a multiple of kv_heads {kv}")
    if q_cols != h * d:
        raise op.err(f"q is {t}x{q_cols}; it must have heads * head_dim = {h * d} columns")
    if k_cols != kv * d:
        raise op.err(f"k is {s}x{k_cols}; it must have kv_heads * head_dim = {kv * d} columns")
    if s_v != s:
        raise op.err(f"k has {s} rows but v has {s_v}; they must agree")
    if v_cols % kv:
        raise op.err(f"v has {v_cols} columns, not a multiple of kv_heads {kv}")
    return t, q_cols, s, s_v, v_cols, h, kv


def head_properties(
    name: str,
    q: Value,
    v: Value,
    heads: int | IntegerAttr,
    kv_heads: int | IntegerAttr,
    head_dim: int | IntegerAttr | None,
    scale: float | FloatAttr | None,
    element_type: Attribute | None,
) -> tuple[dict[str, Attribute | None], TensorType]:
    """The head properties and the result type tg.attention's and tg.batch_attention's builders
    share: head_dim defaults to q's columns / heads, scale to 1 / sqrt(head_dim), the result is
    `attention_shape` of `element_type` (by default q's element type)."""
    tq = tensor_operand(name, "q", SSAValue.get(q), 2)
    tv = tensor_operand(name, "v", SSAValue.get(v), 2)
    h = i64_property(name, "heads", heads)
    kv = i64_property(name, "kv_heads", kv_heads)
    if kv.value.data <= 0:
        raise VerifyException(f"{name}: kv_heads must be positive, got {kv.value.data}")
    if head_dim is None:
        head_dim = tq.get_shape()[1] // max(h.value.data, 1)
    d = i64_property(name, "head_dim", head_dim)
    if scale is None:
        scale = 1.0 / math.sqrt(max(d.value.data, 1))
    props: dict[str, Attribute | None] = {
        "heads": h,
        "kv_heads": kv,
        "head_dim": d,
        "scale": f32_property(name, "scale", scale),
    }
    shape = attention_shape(tq.get_shape(), tv.get_shape(), h.value.data, kv.value.data)
    return props, TensorType(element_type or tq.element_type, shape)
