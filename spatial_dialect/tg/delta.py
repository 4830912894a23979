"""The ops of Qwen3-Next's Gated DeltaNet layer (docs/tg.md#gated-deltanet): the causal depthwise
convolution over q, k and v, the L2 norm of q and k per head, the per-head decay, and the gated
delta rule itself.

The two ops that carry state from one step to the next (`tg.causal_conv`, `tg.gated_delta`) take
the state as their last operand and return the new state as their second result, as the KV cache
is carried: state in, new state out, nothing updated behind the program's back. They are the only
tg ops with two results; every other rule of the dialect holds for both results.
"""

from __future__ import annotations

import math
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
    opt_prop_def,
    prop_def,
    result_def,
)

from spatial_dialect.sp.kinds import CONV_ACTIVATIONS
from spatial_dialect.tg.base import (
    TgOp,
    Value,
    f32_property,
    i64_property,
    shape_str,
    str_property,
    tensor_operand,
)


def conv_state_shape(weight: tuple[int, ...], x: tuple[int, ...]) -> tuple[int, int]:
    """The carried convolution state: the last K - 1 input rows, K the kernel (weight's rows)."""
    return (weight[0] - 1, x[1])


def delta_state_shape(v: tuple[int, ...], heads: int, head_dim: int) -> tuple[int, int]:
    """The recurrent state: one head_dim x Dv matrix per (value) head, stacked by rows."""
    return (heads * head_dim, v[1] // heads)


@irdl_op_definition
class L2NormOp(TgOp):
    """Each group of `width` columns of a row: x / sqrt(sum(x^2) + eps)."""

    name = "tg.l2_norm"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    width = opt_prop_def(IntegerAttr[I64])
    ALLOWS_INT: ClassVar[bool] = False
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = (
        "$x `eps` $eps (`width` $width^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, x: Value, *, eps: float | FloatAttr = 1e-6, width: int | IntegerAttr | None = None
    ):
        """eps defaults to fla's and transformers' 1e-6; width (per-head groups) is left out of
        the IR when not given: the whole row."""
        props = {
            "eps": f32_property(self.name, "eps", eps),
            "width": None if width is None else i64_property(self.name, "width", width),
        }
        self.init_tg([x], props)

    def group_width(self) -> int:
        return self.width.value.data if self.width is not None else self.shape(self.x)[1]

    def verify_shapes(self) -> None:
        _, cols = self.require_rank("x", 2)
        self.require_float("x")
        if self.width is not None:
            width = self.require_positive("width")
            if cols % width:
                raise self.err(f"x has {cols} columns, not a multiple of width {width}")


@irdl_op_definition
class DecayOp(TgOp):
    """g = -exp(a_log) * softplus(a + dt_bias), per row and head (column)."""

    name = "tg.decay"
    a = operand_def(TensorType)
    a_log = operand_def(TensorType)
    dt_bias = operand_def(TensorType)
    res = result_def(TensorType)
    ALLOWS_INT: ClassVar[bool] = False
    RESULT_LIKE: ClassVar[str | None] = "a"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, a: Value, a_log: Value, dt_bias: Value):
        self.init_tg([a, a_log, dt_bias])

    def verify_shapes(self) -> None:
        _, heads = self.require_rank("a", 2)
        self.require_float("a", "a_log", "dt_bias")
        for field in ("a_log", "dt_bias"):
            shape = self.require_rank(field, 2)
            if shape != (1, heads):
                raise self.err(f"{field} is {shape_str(shape)}; it must be 1x{heads}")
            self.require_same_element(field, "a")


@irdl_op_definition
class CausalConvOp(TgOp):
    """Causal depthwise conv1d over the rows (time) of x, continuing from a carried state.

    xx = [state; x]; out[t, c] = act(sum_j weight[j, c] * xx[t + j, c]); new_state = the last
    K - 1 rows of xx.
    """

    name = "tg.causal_conv"
    x = operand_def(TensorType)
    weight = operand_def(TensorType)
    state = operand_def(TensorType)
    res = result_def(TensorType)
    new_state = result_def(TensorType)
    activation = opt_prop_def(StringAttr)
    ALLOWS_INT: ClassVar[bool] = False
    assembly_format = (
        "operands (`activation` $activation^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self, x: Value, weight: Value, state: Value, *, activation: str | StringAttr | None = None
    ):
        """activation is left out of the IR when not given: "silu", as Qwen3-Next applies it."""
        tx = tensor_operand(self.name, "x", SSAValue.get(x))
        ts = tensor_operand(self.name, "state", SSAValue.get(state))
        props = {
            "activation": None
            if activation is None
            else str_property(self.name, "activation", activation)
        }
        self.init_tg([x, weight, state], props, [tx, ts])

    def act(self) -> str:
        return self.activation.data if self.activation is not None else "silu"

    def kernel(self) -> int:
        return self.shape(self.weight)[0]

    def verify_shapes(self) -> None:
        _, cols = self.require_rank("x", 2)
        k, w_cols = self.require_rank("weight", 2)
        self.require_rank("state", 2)
        self.require_float("x", "weight", "state")
        if w_cols != cols:
            raise self.err(f"weight is {k}x{w_cols}; it must have x's {cols} columns")
        if k < 2:
            raise self.err(f"weight has {k} row(s); a kernel of K >= 2 taps carries K - 1 rows")
        self.require_same_element("weight", "x")
        self.require_same_element("state", "x")
        want = conv_state_shape((k, w_cols), self.shape(self.x))
        if self.shape(self.state) != want:
            raise self.err(
                f"state is {shape_str(self.shape(self.state))}; it must be {shape_str(want)} "
                "(the last K - 1 rows of the input)"
            )
        if self.act() not in CONV_ACTIVATIONS:
            raise self.err(f'activation must be "silu" or "none", got "{self.act()}"')
        self.require_same_type("res", "x")
        self.require_same_type("new_state", "state")


@irdl_op_definition
class GatedDeltaOp(TgOp):
    """The gated delta rule of Qwen3-Next / fla, recurrent meaning, per value head h (key head
    h // (heads / k_heads)), S its head_dim x Dv state, for each row t in order:

        S = S * exp(g[t, h]);  S = S + k_t^T (beta[t, h] (v_t - k_t S));  o_t = (scale q_t) S
    """

    name = "tg.gated_delta"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    g = operand_def(TensorType)
    beta = operand_def(TensorType)
    state = operand_def(TensorType)
    res = result_def(TensorType)
    new_state = result_def(TensorType)
    heads = prop_def(IntegerAttr[I64])
    k_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    scale = prop_def(FloatAttr[Float32Type])
    ALLOWS_INT: ClassVar[bool] = False
    assembly_format = (
        "operands `heads` $heads `k_heads` $k_heads `head_dim` $head_dim `scale` $scale "
        "attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        q: Value,
        k: Value,
        v: Value,
        g: Value,
        beta: Value,
        state: Value,
        *,
        heads: int | IntegerAttr,
        k_heads: int | IntegerAttr,
        head_dim: int | IntegerAttr | None = None,
        scale: float | FloatAttr | None = None,
    ):
        """head_dim defaults to q's columns / k_heads, scale to 1 / sqrt(head_dim) (the model's
        query scale). The output has v's type, the new state the state's."""
        tq = tensor_operand(self.name, "q", SSAValue.get(q), 2)
        tv = tensor_operand(self.name, "v", SSAValue.get(v), 2)
        ts = tensor_operand(self.name, "state", SSAValue.get(state))
        hk = i64_property(self.name, "k_heads", k_heads)
        if head_dim is None:
            head_dim = tq.get_shape()[1] // max(hk.value.data, 1)
        d = i64_property(self.name, "head_dim", head_dim)
        if scale is None:
            scale = 1.0 / math.sqrt(max(d.value.data, 1))
        props = {
            "heads": i64_property(self.name, "heads", heads),
            "k_heads": hk,
            "head_dim": d,
            "scale": f32_property(self.name, "scale", scale),
        }
        self.init_tg([q, k, v, g, beta, state], props, [tv, ts])

    def numbers(self) -> tuple[int, int, int, int]:
        """(heads, k_heads, head_dim, v head dim)."""
        h = self.heads.value.data
        return h, self.k_heads.value.data, self.head_dim.value.data, self.shape(self.v)[1] // h

    def verify_shapes(self) -> None:
        t, q_cols = self.require_rank("q", 2)
        self.require_float("q", "k", "v", "g", "beta", "state")
        h, hk, d = (self.require_positive(p) for p in ("heads", "k_heads", "head_dim"))
        if h % hk:
            raise self.err(f"heads {h} is not a multiple of k_heads {hk}")
        for field in ("q", "k"):
            rows, cols = self.require_rank(field, 2)
            if cols != hk * d:
                raise self.err(
                    f"{field} is {rows}x{cols}; it must have k_heads * head_dim = {hk * d} columns"
                )
        rows, v_cols = self.require_rank("v", 2)
        if v_cols % h:
            raise self.err(f"v has {v_cols} columns, not a multiple of heads {h}")
        for field in ("k", "v", "g", "beta"):
            rows, cols = self.require_rank(field, 2)
            if rows != t:
                raise self.err(f"q has {t} rows but {field} has {rows}; they must agree")
        for field in ("g", "beta"):
            shape = self.shape(getattr(self, field))
            if shape != (t, h):
                raise self.err(f"{field} is {shape_str(shape)}; it must be {t}x{h} (T x heads)")
        self.require_same_element("k", "q")
        self.require_same_element("v", "q")
        want = delta_state_shape((t, v_cols), h, d)
        state = self.require_rank("state", 2)
        if state != want:
            raise self.err(
                f"state is {shape_str(state)}; it must be {shape_str(want)} "
                "(heads * head_dim x v head dim)"
            )
        self.require_same_type("res", "v")
        self.require_same_type("new_state", "state")
