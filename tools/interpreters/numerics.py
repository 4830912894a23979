"""The numerics of tg's reference semantics: element types, the one rounding, and the math of
each op in numpy, on operand arrays (no IR beyond an op's attributes read by its caller).

The precision is the design's and nothing finer or coarser:

- Arrays hold their element type exactly: bf16 as `ml_dtypes.bfloat16`, f16, f32, i8, i32.
- Float ops compute in f32 (operands widened exactly) and the result is rounded once, to nearest
  even, to the result element type. A matmul accumulates in f32.
- Integer ops compute exactly and wrap to i32 (a matmul of i8 or i32 operands accumulates in
  i32); an i8 result saturates to [-128, 127].
- A runtime index out of range (an id of `tg.gather_rows`, a position of `tg.set_rows` or
  `tg.attention`, a position or a block id of the batched ops) raises `OutOfRange`, naming the
  op, the value and the valid range; it never reads or writes outside a tensor. Two users of
  `tg.batch_set_rows` writing one row raise `SlotConflict`, a kind of OutOfRange.

The functions here return unrounded results; `round_to` is the one rounding, which the reference's
op implementations (tg_functions.py) apply to every result. They live apart from those
implementations so that the simulator computes pages with the very same functions (today
`matmul` and `round_to`): a difference between the two is then a difference in data movement or
in a precision the compiled program chose, never in arithmetic.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue

F32 = np.float32


class OutOfRange(Exception):
    """A runtime index outside its tensor: the message names the op, the value and the range."""


class SlotConflict(OutOfRange):
    """Two users of one batched cache write to the same row (a paged table that maps two
    users' written positions to one slot): the message names both users and the row. A kind of
    OutOfRange, so every caller that reports a bad runtime index reports it too."""


class EvaluationError(Exception):
    """The function cannot be evaluated: a missing or ill-typed input, an op that is not tg."""


def numpy_dtype(elt: Attribute) -> np.dtype:
    """The numpy dtype that holds a tg element type exactly."""
    if isinstance(elt, BFloat16Type):
        return np.dtype(ml_dtypes.bfloat16)
    if isinstance(elt, Float16Type):
        return np.dtype(np.float16)
    if isinstance(elt, Float32Type):
        return np.dtype(np.float32)
    if isinstance(elt, IntegerType) and elt.width.data in (8, 32):
        return np.dtype(np.int8 if elt.width.data == 8 else np.int32)
    raise EvaluationError(f"element type {elt} is not one of bf16, f16, f32, i8, i32")


_NAMES = {
    np.dtype(ml_dtypes.bfloat16): "bf16",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.int8): "i8",
    np.dtype(np.int32): "i32",
}


def element_name(dtype: np.dtype) -> str:
    """The tg name of a numpy dtype that holds an element type: bf16, f16, f32, i8, i32."""
    return _NAMES[np.dtype(dtype)]


def value_type(value: SSAValue) -> tuple[tuple[int, ...], np.dtype]:
    """Shape and numpy dtype of a tensor value."""
    t = value.type
    if not isinstance(t, TensorType):
        raise EvaluationError(f"%{value.name_hint} is {t}, not a tensor")
    return tuple(t.get_shape()), numpy_dtype(t.element_type)


def is_float_dtype(dtype: np.dtype) -> bool:
    """f16/f32 (kind "f") or ml_dtypes' bf16 (kind "V")."""
    return dtype.kind in "fV"


def round_to(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """The one rounding of a result to its element type: floats to nearest even; integers wrap
    to i32 (the accumulator) and then saturate to the result's range (i8)."""
    if is_float_dtype(dtype):
        return np.asarray(x).astype(dtype)
    wide = np.asarray(x).astype(np.int64).astype(np.int32)  # i32 wrap-around
    info = np.iinfo(dtype)
    return np.clip(wide, info.min, info.max).astype(dtype)


def widen(x: np.ndarray) -> np.ndarray:
    """An operand in its compute type: f32 for floats, i64 for integers (wrapped later)."""
    return x.astype(F32) if is_float_dtype(x.dtype) else x.astype(np.int64)


# The math of each op, on widened operands. Each returns the unrounded result.


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return widen(a) @ widen(b)


def silu(x: np.ndarray) -> np.ndarray:
    x = widen(x)
    return x / (F32(1) + np.exp(-x))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return F32(1) / (F32(1) + np.exp(-widen(x)))


_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x: np.ndarray, approximate: str) -> np.ndarray:
    x = widen(x)
    if approximate == "tanh":
        inner = F32(math.sqrt(2 / math.pi)) * (x + F32(0.044715) * x * x * x)
        return F32(0.5) * x * (F32(1) + np.tanh(inner))
    # erf in f64 (numpy has none), then back to the f32 compute type.
    return (F32(0.5) * x * (F32(1) + _erf(x / math.sqrt(2)).astype(F32))).astype(F32)


def relu(x: np.ndarray) -> np.ndarray:
    x = widen(x)
    return np.maximum(x, x.dtype.type(0))


def softmax_rows(x: np.ndarray) -> np.ndarray:
    """Row softmax in f32; -inf entries (masked keys) get probability 0."""
    x = widen(x)
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def rms_norm(
    x: np.ndarray, weight: np.ndarray, residual: np.ndarray | None, eps: float, width: int
) -> np.ndarray:
    h = widen(x) if residual is None else widen(x) + widen(residual)
    rows, cols = h.shape
    groups = h.reshape(rows, cols // width, width)
    inv = F32(1) / np.sqrt(np.mean(groups * groups, axis=-1, keepdims=True) + F32(eps))
    return (groups * inv * widen(weight).reshape(1, 1, width)).reshape(rows, cols)


def rms_stats(x: np.ndarray, residual: np.ndarray | None) -> np.ndarray:
    """Each row's sum of h^2 (f32, rows x 1): tg.rms_stats."""
    h = widen(x) if residual is None else widen(x) + widen(residual)
    return np.sum(h * h, axis=-1, keepdims=True, dtype=F32)


def rms_apply(
    x: np.ndarray,
    stats: np.ndarray,
    weight: np.ndarray,
    residual: np.ndarray | None,
    eps: float,
    n: int,
) -> np.ndarray:
    """h / sqrt(stats / n + eps) * weight: tg.rms_apply, the whole row's mean from its sum."""
    h = widen(x) if residual is None else widen(x) + widen(residual)
    inv = F32(1) / np.sqrt(widen(stats) / F32(n) + F32(eps))
    return h * inv * widen(weight)


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    h = widen(x)
    centered = h - h.mean(axis=-1, keepdims=True)
    var = np.mean(centered * centered, axis=-1, keepdims=True)
    return centered / np.sqrt(var + F32(eps)) * widen(weight) + widen(bias)


def rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, head_dim: int, style: str) -> np.ndarray:
    """Rotates pairs of each head: neox (i, i + D/2), interleaved (2i, 2i + 1)."""
    rows, cols = x.shape
    heads = widen(x).reshape(rows, cols // head_dim, head_dim)
    c, s = widen(cos)[:, None, :], widen(sin)[:, None, :]
    i = np.arange(head_dim // 2)
    first, second = (i, i + head_dim // 2) if style == "neox" else (2 * i, 2 * i + 1)
    out = np.empty_like(heads)
    out[..., first] = heads[..., first] * c - heads[..., second] * s
    out[..., second] = heads[..., second] * c + heads[..., first] * s
    return out.reshape(rows, cols)


def attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    p: int,
    heads: int,
    kv_heads: int,
    head_dim: int,
    causal: bool,
    scale: float,
) -> np.ndarray:
    """GQA: head h reads kv head h // (heads / kv_heads); query row i sits at position p + i."""
    t, s = q.shape[0], k.shape[0]
    v_dim = v.shape[1] // kv_heads
    qh = widen(q).reshape(t, heads, head_dim).transpose(1, 0, 2)
    kv_of = np.arange(heads) // (heads // kv_heads)
    kh = widen(k).reshape(s, kv_heads, head_dim).transpose(1, 0, 2)[kv_of]
    vh = widen(v).reshape(s, kv_heads, v_dim).transpose(1, 0, 2)[kv_of]
    scores = (qh @ kh.transpose(0, 2, 1)) * F32(scale)
    if causal:
        masked = np.arange(s)[None, :] > (p + np.arange(t))[:, None]
        scores = np.where(masked[None], F32(-np.inf), scores)
    out = softmax_rows(scores) @ vh  # heads x t x v_dim
    return out.transpose(1, 0, 2).reshape(t, heads * v_dim)


def l2_norm(x: np.ndarray, eps: float, width: int) -> np.ndarray:
    """Each group of `width` columns: x / sqrt(sum(x^2) + eps) (fla's and transformers' l2norm,
    x * rsqrt(sum(x * x) + eps))."""
    h = widen(x)
    rows, cols = h.shape
    groups = h.reshape(rows, cols // width, width)
    inv = F32(1) / np.sqrt(np.sum(groups * groups, axis=-1, keepdims=True) + F32(eps))
    return (groups * inv).reshape(rows, cols)


def softplus(x: np.ndarray) -> np.ndarray:
    """log(1 + exp(x)), without overflow (torch's threshold-20 linear branch agrees with it to
    f32 rounding: log1p(exp(-20)) is 2e-9)."""
    return np.logaddexp(F32(0), widen(x)).astype(F32)


def decay(a: np.ndarray, a_log: np.ndarray, dt_bias: np.ndarray) -> np.ndarray:
    """g = -exp(A_log) * softplus(a + dt_bias): Qwen3NextGatedDeltaNet's log-space decay."""
    return -np.exp(widen(a_log)) * softplus(widen(a) + widen(dt_bias))


def causal_conv(
    x: np.ndarray, weight: np.ndarray, state: np.ndarray, activation: str
) -> tuple[np.ndarray, np.ndarray]:
    """(out, new_state): the causal depthwise conv1d of the rows of x continuing the K - 1 rows of
    `state` (xx = [state; x], out[t] = sum_j weight[j] * xx[t + j]), then `activation`; the new
    state is the last K - 1 rows of xx (transformers' torch_causal_conv1d_update)."""
    w = widen(weight)
    taps, t = w.shape[0], x.shape[0]
    xx = np.concatenate([widen(state), widen(x)], axis=0)
    out = np.zeros(widen(x).shape, F32)
    for j in range(taps):
        out += w[j][None, :] * xx[j : j + t]
    if activation == "silu":
        out = silu(out)
    return out, xx[t:]


def _delta_heads(q, k, v, g, beta, state, heads: int, head_dim: int, scale: float):
    """Per value head, in f32: q (scaled) and k of its key head (head h reads key head
    h // (heads / k_heads), transformers' repeat_interleave), v, g, beta and the state."""
    t = q.shape[0]
    k_heads = q.shape[1] // head_dim
    key_of = np.arange(heads) // (heads // k_heads)
    qh = widen(q).reshape(t, k_heads, head_dim).transpose(1, 0, 2)[key_of] * F32(scale)
    kh = widen(k).reshape(t, k_heads, head_dim).transpose(1, 0, 2)[key_of]
    dv = v.shape[1] // heads
    vh = widen(v).reshape(t, heads, dv).transpose(1, 0, 2)
    s = widen(state).reshape(heads, head_dim, dv).copy()
    return qh, kh, vh, widen(g).T, widen(beta).T, s


def _delta_result(o: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    heads, t, dv = o.shape
    return o.transpose(1, 0, 2).reshape(t, heads * dv), s.reshape(-1, dv)


def gated_delta(
    q, k, v, g, beta, state, heads: int, head_dim: int, scale: float
) -> tuple[np.ndarray, np.ndarray]:
    """(o, new_state) of the gated delta rule in its recurrent form (transformers'
    torch_recurrent_gated_delta_rule), one row at a time, f32 throughout:
    S = S exp(g_t); S += k_t^T (beta_t (v_t - k_t S)); o_t = (scale q_t) S."""
    qh, kh, vh, gh, bh, s = _delta_heads(q, k, v, g, beta, state, heads, head_dim, scale)
    o = np.zeros(vh.shape, F32)
    for t in range(q.shape[0]):
        s = s * np.exp(gh[:, t])[:, None, None]
        kv = np.einsum("hd,hde->he", kh[:, t], s)
        delta = (vh[:, t] - kv) * bh[:, t][:, None]
        s = s + kh[:, t][:, :, None] * delta[:, None, :]
        o[:, t] = np.einsum("hd,hde->he", qh[:, t], s)
    return _delta_result(o, s)


def delta_chunk(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, g: np.ndarray, beta: np.ndarray, s: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """One chunk of the chunked gated delta rule for ONE head (q already scaled), f32: the
    chunk's C rows from state s (head_dim x Dv) to (o, new state), the WY form of fla's
    chunk_gated_delta_rule as transformers' torch_chunk_gated_delta_rule writes it:

        G = cumsum(g); D[i, j] = exp(G_i - G_j) for j <= i;
        A = -(beta k k^T * D) strictly below the diagonal; T = (I - A)^-1 by forward
        substitution (lower triangular), so U = T (beta v), W = T (beta exp(G) k);
        v' = U - W s; o = (q exp(G)) s + (q k^T * D, j <= i) v';
        s' = exp(G_last) s + (k exp(G_last - G))^T v'.

    Rows past the data are zero with g = 0 and beta = 0, so they change nothing."""
    c = q.shape[0]
    gc = np.cumsum(g, dtype=F32)
    below = np.tril(np.ones((c, c), bool))
    with np.errstate(over="ignore"):
        dmask = np.where(below, np.exp(np.where(below, gc[:, None] - gc[None, :], F32(0))), 0)
    kb = k * beta[:, None]
    a = np.where(np.tril(below, -1), -(kb @ k.T) * dmask, F32(0)).astype(F32)
    t_inv = np.eye(c, dtype=F32)
    for i in range(1, c):  # T = I + A T: row i is e_i + A[i, :i] T[:i]
        t_inv[i, :i] = a[i, :i] @ t_inv[:i, :i]
    u = t_inv @ (v * beta[:, None])
    w = t_inv @ (kb * np.exp(gc)[:, None])
    v_new = u - w @ s
    attn = np.where(below, (q @ k.T) * dmask, F32(0)).astype(F32)
    o = (q * np.exp(gc)[:, None]) @ s + attn @ v_new
    last = gc[-1]
    s_new = np.exp(last) * s + (k * np.exp(last - gc)[:, None]).T @ v_new
    return o.astype(F32), s_new.astype(F32)


def gated_delta_chunked(
    q, k, v, g, beta, state, heads: int, head_dim: int, scale: float, chunk: int
) -> tuple[np.ndarray, np.ndarray]:
    """The gated delta rule in chunks of `chunk` rows (`delta_chunk`), the last chunk padded
    with zero rows: equal to `gated_delta` up to f32 rounding (test/run/test_delta.py)."""
    qh, kh, vh, gh, bh, s = _delta_heads(q, k, v, g, beta, state, heads, head_dim, scale)
    t = q.shape[0]
    o = np.zeros(vh.shape, F32)
    for h in range(heads):
        for c0 in range(0, t, chunk):
            n = min(chunk, t - c0)
            part = (_pad_rows(x[h, c0 : c0 + n], chunk) for x in (qh, kh, vh, gh, bh))
            out, s[h] = delta_chunk(*part, s[h])
            o[h, c0 : c0 + n] = out[:n]
    return _delta_result(o, s)


def _pad_rows(x: np.ndarray, rows: int) -> np.ndarray:
    pad = [(0, rows - x.shape[0])] + [(0, 0)] * (x.ndim - 1)
    return np.pad(x, pad)


def argmax_rows(x: np.ndarray) -> np.ndarray:
    """Index of the first maximum of each row (numpy's argmax takes the first)."""
    return np.argmax(widen(x), axis=-1).astype(np.int32)


def moe_route(
    logits: np.ndarray, top_k: int, scores: str, renormalize: bool
) -> tuple[np.ndarray, np.ndarray]:
    """tg.moe's routing of each row of f32 router logits: (ids, weights), both T x top_k.

    The experts are ranked by logit, largest first, equal logits by the lower expert index (a
    stable sort of -logits); ranking the logits rather than the scores keeps ties the scores'
    rounding would create (a saturated sigmoid) from deciding. A weight is the expert's score,
    softmax over all experts or sigmoid, in f32; with `renormalize` the k weights are divided by
    their sum."""
    x = widen(logits)
    ids = np.argsort(-x, axis=-1, kind="stable")[:, :top_k]
    probs = softmax_rows(x) if scores == "softmax" else sigmoid(x)
    weights = np.take_along_axis(probs, ids, axis=-1)
    if renormalize:
        weights = weights / weights.sum(axis=-1, keepdims=True)
    return ids, weights


def moe_expert(x: np.ndarray, gate: np.ndarray, up: np.ndarray, down: np.ndarray) -> np.ndarray:
    """One expert's SwiGLU FFN as tg.moe computes it: the gate and up products and their swiglu
    rounded to x's element type (the tensors the compiled program writes), the down product in
    f32 (unrounded: it is summed in f32)."""
    dtype = x.dtype
    g = round_to(matmul(x, gate), dtype)
    u = round_to(matmul(x, up), dtype)
    h = round_to(silu(g) * widen(u), dtype)
    return matmul(h, down)


# Range checks of runtime indices -----------------------------------------------------------


def check_ids(op_name: str, ids: np.ndarray, rows: int) -> None:
    bad = np.flatnonzero((ids < 0) | (ids >= rows))
    if bad.size:
        i = int(bad[0])
        raise OutOfRange(f"{op_name}: id {int(ids[i])} outside [0, {rows}) (ids[{i}])")


def check_pos(op_name: str, pos: int, count: int, rows: int) -> None:
    """pos .. pos + count - 1 must be rows of a `rows`-row tensor."""
    if not 0 <= pos <= rows - count:
        raise OutOfRange(
            f"{op_name}: pos {pos} outside [0, {rows - count}] "
            f"({count} rows from pos in a {rows}-row tensor)"
        )


IDLE = -1
"""The position of an idle user of a batched step (tg.batch_set_rows, tg.batch_attention)."""


def user_rows(
    op_name: str,
    pos: np.ndarray,
    tokens: int,
    rows: int,
    table: np.ndarray | None,
    block_size: int,
    *,
    prefix: bool,
) -> list[np.ndarray | None]:
    """Per user b of a batched cache of `rows` rows, the rows of its positions 0 .. pos[b] +
    tokens - 1 (`prefix`) or of pos[b] .. pos[b] + tokens - 1 (the ones written); None for an
    idle user (pos -1). Contiguous (no `table`): user b's position j is row b * S + j,
    S = rows / users; paged: table[b, j // block_size] * block_size + j % block_size. Every
    position and every block id used is checked, for all users, before the caller reads or
    writes anything."""
    users = pos.shape[0]
    capacity = rows // users if table is None else table.shape[1] * block_size
    out: list[np.ndarray | None] = []
    for b, p in enumerate(int(x) for x in pos):
        if p == IDLE:
            out.append(None)
            continue
        if not 0 <= p <= capacity - tokens:
            raise OutOfRange(
                f"{op_name}: pos {p} of user {b} outside [0, {capacity - tokens}] (pos[{b}]; "
                f"{tokens} row(s) from pos, a user holds {capacity} positions, -1 marks an "
                "idle user)"
            )
        last = p + tokens - 1
        j = np.arange(last + 1) if prefix else np.arange(p, last + 1)
        if table is None:
            out.append(b * capacity + j)
            continue
        first = 0 if prefix else p // block_size
        blocks = table[b, first : last // block_size + 1].astype(np.int64)
        pool = rows // block_size
        bad = np.flatnonzero((blocks < 0) | (blocks >= pool))
        if bad.size:
            i = first + int(bad[0])
            raise OutOfRange(
                f"{op_name}: block id {int(table[b, i])} of user {b} (table[{b}, {i}]) outside "
                f"the pool's [0, {pool}) ({pool} blocks of {block_size} rows)"
            )
        out.append(blocks[j // block_size - first] * block_size + j % block_size)
    return out


def check_distinct_writes(op_name: str, slots: list[np.ndarray | None]) -> None:
    """No two rows written land on one cache row: which would win is no contract a parallel chip
    can keep."""
    seen: dict[int, int] = {}
    for b, rows in enumerate(slots):
        for row in [] if rows is None else rows.tolist():
            if row in seen:
                who = f"users {seen[row]} and {b} both" if seen[row] != b else f"user {b} twice"
                raise SlotConflict(
                    f"{op_name}: {who} write cache row {row}; each position must map to its "
                    "own slot"
                )
            seen[row] = b


def int_requant(x: np.ndarray, scale: float, zero_point: int) -> np.ndarray:
    """round_half_even(x * scale) + zero_point, in f64 (x exact, scale its f32 value), saturated
    to i8's [-128, 127] (the saturation is also `round_to`'s, made explicit here)."""
    scaled = np.rint(x.astype(np.float64) * np.float64(F32(scale)))
    return np.clip(scaled.astype(np.int64) + zero_point, -128, 127)
