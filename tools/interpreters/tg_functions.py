"""The reference meaning of each tg op, registered with xDSL's interpreter: one `@impl(tg.XOp)`
per op on `TgFunctions`, as xDSL's own dialects register theirs (xdsl/interpreters/<dialect>.py).

Why xDSL's interpreter framework rather than a dict of our own: `@impl` is the one registration
per op, `register_impls` builds the op class -> implementation table from it, and the same class
lets any xDSL flow evaluate tg (`Interpreter.register_implementations(TgFunctions())`, and
`python -m spatial_dialect.tools.xdsl_run`, xdsl-run with tg added).

An implementation receives its operands as numpy arrays in their element types (numerics.py's
representation) and returns each result rounded once to its element type (`rounded`), so what
the interpreter stores for a value is exactly the tensor the compiled program must write. The
math itself is numerics.py's, shared with the simulator. Overflow to inf is a defined result
here (a float rounds to inf), so callers run the interpreter under numpy's
`errstate(over="ignore", under="ignore")` (reference.py and xdsl_run.py do).

`REFUSED_OPS` names the tg ops the reference gives no meaning, each with its reason; a tg op is
in exactly one of the two (test/interpreters/test_reference_coverage.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    PythonValues,
    impl,
    impl_attr,
    register_impls,
)
from xdsl.ir import Attribute, Operation

from spatial_dialect import tg
from spatial_dialect.tools.interpreters import q8_0
from spatial_dialect.tools.interpreters.numerics import (
    F32,
    EvaluationError,
    argmax_rows,
    attention,
    causal_conv,
    check_distinct_writes,
    check_ids,
    check_pos,
    decay,
    gated_delta,
    gelu,
    int_requant,
    is_float_dtype,
    l2_norm,
    layer_norm,
    matmul,
    moe_expert,
    moe_route,
    numpy_dtype,
    relu,
    rms_apply,
    rms_norm,
    rms_stats,
    rope,
    round_to,
    sigmoid,
    silu,
    softmax_rows,
    softplus,
    user_rows,
    value_type,
    widen,
)

REFUSED_OPS: dict[type[Operation], str] = {}
"""tg ops without reference semantics, each with the reason a run gives. None today: every tg op
has a meaning, and an op the reference cannot evaluate could not be checked by spatial-run."""


def rounded(op: Operation, *results: np.ndarray) -> PythonValues:
    """The op's results, each rounded once to its element type (`round_to`)."""
    return tuple(round_to(r, value_type(v)[1]) for r, v in zip(results, op.results, strict=True))


def implemented_ops(functions: type[InterpreterFunctions]) -> frozenset[type[Operation]]:
    """The op classes `functions` has an `@impl` for. (`register_impls` keeps that table behind
    `_impls`, which xDSL's interpreter itself reads the same way.)"""
    return frozenset(op for op, _ in functions._impls())  # pyright: ignore[reportPrivateUsage]


def _moe(op: tg.MoeOp, x, router, w_gate, w_up, w_down, *shared) -> np.ndarray:
    """Per token, a sum in f32: the shared expert first (times the sigmoid of its gate
    projection, where given), then each of the token's top-k experts in rank order, weight times
    its FFN."""
    t, d, _, f = op.sizes()
    k, renorm = op.top_k.value.data, op.renormalized()
    ids, weights = moe_route(matmul(x, router), k, op.scores.data, renorm)
    y = np.zeros((t, d), F32)
    if shared:
        y = moe_expert(x, *shared[:3])
        if len(shared) == 4:
            y = y * sigmoid(matmul(x, shared[3]))
    for row in range(t):
        xr = x[row : row + 1]
        for e, w in zip(ids[row], weights[row], strict=True):
            gate, up = w_gate[e * d : (e + 1) * d], w_up[e * d : (e + 1) * d]
            o = moe_expert(xr, gate, up, w_down[e * f : (e + 1) * f])
            y[row] += w * o[0]
    return y


def _elementwise(fn: Callable[[np.ndarray, np.ndarray], np.ndarray], args: PythonValues):
    a, b = args
    return fn(widen(a), widen(b))


Args = PythonValues
"""An implementation's operands: numpy arrays in their element types, in operand order."""


@register_impls
class TgFunctions(InterpreterFunctions):
    """Every tg op's reference semantics (module docstring)."""

    @impl(tg.MatmulOp)
    def run_matmul(self, interp: Interpreter, op: tg.MatmulOp, args: Args) -> PythonValues:
        a, b = args
        return rounded(op, matmul(a, b.T if op.transposes_b else b))

    @impl(tg.AddOp)
    def run_add(self, interp: Interpreter, op: tg.AddOp, args: Args) -> PythonValues:
        return rounded(op, _elementwise(np.add, args))

    @impl(tg.SubOp)
    def run_sub(self, interp: Interpreter, op: tg.SubOp, args: Args) -> PythonValues:
        return rounded(op, _elementwise(np.subtract, args))

    @impl(tg.MulOp)
    def run_mul(self, interp: Interpreter, op: tg.MulOp, args: Args) -> PythonValues:
        return rounded(op, _elementwise(np.multiply, args))

    @impl(tg.SiluOp)
    def run_silu(self, interp: Interpreter, op: tg.SiluOp, args: Args) -> PythonValues:
        return rounded(op, silu(args[0]))

    @impl(tg.ReluOp)
    def run_relu(self, interp: Interpreter, op: tg.ReluOp, args: Args) -> PythonValues:
        return rounded(op, relu(args[0]))

    @impl(tg.SigmoidOp)
    def run_sigmoid(self, interp: Interpreter, op: tg.SigmoidOp, args: Args) -> PythonValues:
        return rounded(op, sigmoid(args[0]))

    @impl(tg.SoftplusOp)
    def run_softplus(self, interp: Interpreter, op: tg.SoftplusOp, args: Args) -> PythonValues:
        return rounded(op, softplus(args[0]))

    @impl(tg.GeluOp)
    def run_gelu(self, interp: Interpreter, op: tg.GeluOp, args: Args) -> PythonValues:
        return rounded(op, gelu(args[0], op.approximate.data))

    @impl(tg.ScaleOp)
    def run_scale(self, interp: Interpreter, op: tg.ScaleOp, args: Args) -> PythonValues:
        return rounded(op, widen(args[0]) * F32(op.factor.value.data))

    @impl(tg.SoftcapOp)
    def run_softcap(self, interp: Interpreter, op: tg.SoftcapOp, args: Args) -> PythonValues:
        cap = F32(op.cap.value.data)
        return rounded(op, cap * np.tanh(widen(args[0]) / cap))

    @impl(tg.SwigluOp)
    def run_swiglu(self, interp: Interpreter, op: tg.SwigluOp, args: Args) -> PythonValues:
        gate, up = args
        return rounded(op, silu(gate) * widen(up))

    @impl(tg.RmsNormOp)
    def run_rms_norm(self, interp: Interpreter, op: tg.RmsNormOp, args: Args) -> PythonValues:
        x, weight, *residual = args
        r = residual[0] if residual else None
        return rounded(op, rms_norm(x, weight, r, op.eps.value.data, op.group_width()))

    @impl(tg.RmsStatsOp)
    def run_rms_stats(self, interp: Interpreter, op: tg.RmsStatsOp, args: Args) -> PythonValues:
        x, *residual = args
        return rounded(op, rms_stats(x, residual[0] if residual else None))

    @impl(tg.RmsApplyOp)
    def run_rms_apply(self, interp: Interpreter, op: tg.RmsApplyOp, args: Args) -> PythonValues:
        x, stats, weight, *residual = args
        r = residual[0] if residual else None
        return rounded(op, rms_apply(x, stats, weight, r, op.eps.value.data, op.n.value.data))

    @impl(tg.LayerNormOp)
    def run_layer_norm(self, interp: Interpreter, op: tg.LayerNormOp, args: Args) -> PythonValues:
        x, weight, bias = args
        return rounded(op, layer_norm(x, weight, bias, op.eps.value.data))

    @impl(tg.RopeOp)
    def run_rope(self, interp: Interpreter, op: tg.RopeOp, args: Args) -> PythonValues:
        x, cos, sin = args
        return rounded(op, rope(x, cos, sin, op.head_dim.value.data, op.style.data))

    @impl(tg.AttentionOp)
    def run_attention(self, interp: Interpreter, op: tg.AttentionOp, args: Args) -> PythonValues:
        q, k, v, *pos = args  # pos, the optional operand: a 1-element tensor
        t, s = q.shape[0], k.shape[0]
        p = int(pos[0][0]) if pos else s - t  # without pos the queries are the last t keys
        check_pos(op.name, p, t, s)
        heads, kv_heads = op.heads.value.data, op.kv_heads.value.data
        causal = op.causal.value.data != 0
        out = attention(
            q, k, v, p, heads, kv_heads, op.head_dim.value.data, causal, op.scale.value.data
        )
        return rounded(op, out)

    @impl(tg.SoftmaxOp)
    def run_softmax(self, interp: Interpreter, op: tg.SoftmaxOp, args: Args) -> PythonValues:
        return rounded(op, softmax_rows(args[0]))

    @impl(tg.TransposeOp)
    def run_transpose(self, interp: Interpreter, op: tg.TransposeOp, args: Args) -> PythonValues:
        return rounded(op, args[0].T)

    @impl(tg.GatherRowsOp)
    def run_gather_rows(self, interp: Interpreter, op: tg.GatherRowsOp, args: Args) -> PythonValues:
        table, ids = args
        check_ids(op.name, ids, table.shape[0])
        return rounded(op, table[ids])

    @impl(tg.SetRowsOp)
    def run_set_rows(self, interp: Interpreter, op: tg.SetRowsOp, args: Args) -> PythonValues:
        cache, rows, pos = args
        p = int(pos[0])
        check_pos(op.name, p, rows.shape[0], cache.shape[0])
        out = cache.copy()
        out[p : p + rows.shape[0]] = rows
        return rounded(op, out)

    @impl(tg.BatchSetRowsOp)
    def run_batch_set_rows(
        self, interp: Interpreter, op: tg.BatchSetRowsOp, args: Args
    ) -> PythonValues:
        cache, rows, pos, *paged = args  # paged: the optional block table
        table = paged[0] if paged else None
        bs = op.block_size.value.data if op.block_size is not None else 0
        t = op.tokens()
        slots = user_rows(op.name, pos, t, cache.shape[0], table, bs, prefix=False)
        check_distinct_writes(op.name, slots)  # every check before the first write
        out = cache.copy()
        for b, slot in enumerate(slots):
            if slot is not None:
                out[slot] = rows[b * t : (b + 1) * t]
        return rounded(op, out)

    @impl(tg.BatchAttentionOp)
    def run_batch_attention(
        self, interp: Interpreter, op: tg.BatchAttentionOp, args: Args
    ) -> PythonValues:
        """User b's T rows are tg.attention (causal, at pos[b]) of its queries over exactly its
        keys 0 .. pos[b] + T - 1, gathered from either layout, so paged and contiguous agree
        bitwise; an idle user's rows are 0."""
        q, k, v, pos, *paged = args
        table = paged[0] if paged else None
        heads, kv_heads, head_dim, v_dim = op.numbers()
        bs = op.block_size.value.data if op.block_size is not None else 0
        scale = op.scale.value.data
        t = op.tokens()
        out = np.zeros((q.shape[0], heads * v_dim), F32)
        users = user_rows(op.name, pos, t, k.shape[0], table, bs, prefix=True)
        for b, rows in enumerate(users):
            if rows is not None:
                qb = q[b * t : (b + 1) * t]
                p = len(rows) - t  # the first query's position: the last sees every key
                o = attention(qb, k[rows], v[rows], p, heads, kv_heads, head_dim, True, scale)
                out[b * t : (b + 1) * t] = o
        return rounded(op, out)

    @impl(tg.ArgmaxOp)
    def run_argmax(self, interp: Interpreter, op: tg.ArgmaxOp, args: Args) -> PythonValues:
        return rounded(op, argmax_rows(args[0]))

    @impl(tg.HeadSliceOp)
    def run_head_slice(self, interp: Interpreter, op: tg.HeadSliceOp, args: Args) -> PythonValues:
        start, width = op.column_range()
        return rounded(op, args[0][:, start : start + width])

    @impl(tg.JoinOp)
    def run_join(self, interp: Interpreter, op: tg.JoinOp, args: Args) -> PythonValues:
        return rounded(op, np.concatenate(args, axis=1))

    @impl(tg.HeadMatmulOp)
    def run_head_matmul(self, interp: Interpreter, op: tg.HeadMatmulOp, args: Args) -> PythonValues:
        a, b = args
        h, k, _ = op.head_sizes()
        heads = [matmul(a[:, i * k : (i + 1) * k], b[i * k : (i + 1) * k]) for i in range(h)]
        return rounded(op, np.concatenate(heads, axis=1))

    @impl(tg.IntRequantOp)
    def run_int_requant(self, interp: Interpreter, op: tg.IntRequantOp, args: Args) -> PythonValues:
        return rounded(op, int_requant(args[0], op.scale.value.data, op.zero()))

    @impl(tg.IntClampOp)
    def run_int_clamp(self, interp: Interpreter, op: tg.IntClampOp, args: Args) -> PythonValues:
        return rounded(op, np.clip(widen(args[0]), *op.bounds()))

    @impl(tg.L2NormOp)
    def run_l2_norm(self, interp: Interpreter, op: tg.L2NormOp, args: Args) -> PythonValues:
        return rounded(op, l2_norm(args[0], op.eps.value.data, op.group_width()))

    @impl(tg.DecayOp)
    def run_decay(self, interp: Interpreter, op: tg.DecayOp, args: Args) -> PythonValues:
        a, a_log, dt_bias = args
        return rounded(op, decay(a, a_log, dt_bias))

    @impl(tg.CausalConvOp)
    def run_causal_conv(self, interp: Interpreter, op: tg.CausalConvOp, args: Args) -> PythonValues:
        x, weight, state = args
        return rounded(op, *causal_conv(x, weight, state, op.act()))  # (out, new state)

    @impl(tg.GatedDeltaOp)
    def run_gated_delta(self, interp: Interpreter, op: tg.GatedDeltaOp, args: Args) -> PythonValues:
        heads, _, head_dim, _ = op.numbers()
        out = gated_delta(*args, heads, head_dim, op.scale.value.data)
        return rounded(op, *out)  # (o, new state)

    @impl(tg.DequantizeQ8_0Op)
    def run_dequantize_q8_0(
        self, interp: Interpreter, op: tg.DequantizeQ8_0Op, args: Args
    ) -> PythonValues:
        values, scales = args
        return rounded(op, q8_0.dequantize(values, scales, op.block_axis()))

    @impl(tg.MatmulQ8_0Op)
    def run_matmul_q8_0(self, interp: Interpreter, op: tg.MatmulQ8_0Op, args: Args) -> PythonValues:
        a, values, scales = args
        if op.transposes_b:  # the N x K weight (blocks along its rows' K) is the K x N one's T
            values, scales = values.T, scales.T
        return rounded(op, q8_0.matmul_q8_0(a, values, scales, op.activation.data))

    @impl(tg.MoeOp)
    def run_moe(self, interp: Interpreter, op: tg.MoeOp, args: Args) -> PythonValues:
        return rounded(op, _moe(op, *args))

    @impl_attr(TensorType)
    def tensor_value(
        self, interp: Interpreter, attr: Attribute, attr_type: TensorType[Any]
    ) -> np.ndarray:
        """A tensor given as an attribute (xdsl-run's `--args 'dense<...> : tensor<...>'`): its
        array in the element type of `attr_type`, floats rounded through f32 as an .npz input
        is (inputs.py)."""
        if not isinstance(attr, DenseIntOrFPElementsAttr):
            raise EvaluationError(f"a tensor argument must be dense<...>, got {attr}")
        shape = tuple(attr_type.get_shape())
        if tuple(attr.get_shape()) != shape:
            raise EvaluationError(f"{attr} does not have the shape {attr_type}")
        dtype = numpy_dtype(attr_type.element_type)
        values = np.array(attr.get_values()).reshape(shape)
        if is_float_dtype(dtype):
            return values.astype(np.float32).astype(dtype)
        return values.astype(dtype)
