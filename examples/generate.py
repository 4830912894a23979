"""Writes the example tg programs of examples/ from the models' published dimensions.

    python examples/generate.py        # rewrites examples/*.mlir

One function writes a decoder layer for any dimensions, so the real-shape layers (Llama-3-8B,
Qwen3-8B, Qwen3-30B-A3B) and the scaled-down ones that simulate in seconds are the same program at
different sizes. A layer is pre-norm attention with GQA and rope, a KV-cache write at the runtime
position, then a SwiGLU feed-forward block, or a mixture-of-experts block (`MoeBlock`,
`moe_block`: one tg.moe, reusable by any layer that ends in one); Qwen3 adds the per-head
rms_norm of q and k. The tiny steps also come in f32 (`tiny_*_f32.mlir`), for chips without bf16
(Plasticine).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

from spatial_dialect.tools.frontend.tg_writer import Writer, tensor


@dataclass(frozen=True)
class MoeBlock:
    """A mixture-of-experts FFN block (tg.moe, docs/tg.md#tgmoe)."""

    experts: int
    top_k: int
    ffn: int  # one expert's FFN width (moe_intermediate_size)
    shared_ffn: int = 0  # the shared expert's FFN width; 0: no shared expert
    shared_gate: bool = False  # the shared expert's sigmoid gate (Qwen3-Next)
    scores: str = "softmax"
    renormalize: bool = True  # norm_topk_prob


@dataclass(frozen=True)
class Model:
    name: str
    d: int  # hidden size
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    eps: float
    qk_norm: bool  # Qwen3's per-head rms_norm of q and k
    vocab: int = 0  # only the whole decode step uses the embedding and the LM head
    elt: str = "bf16"  # the element type of weights and activations
    q8_0: bool = False  # the projections' weights stored Q8_0 (i8 values and f16 scales)
    moe: MoeBlock | None = None  # the FFN is a mixture of experts (`ffn` is then unused)


# Llama-3-8B: config.json of meta-llama/Meta-Llama-3-8B (hidden 4096, 32 heads, 8 kv heads,
# intermediate 14336, rms_norm_eps 1e-5).
LLAMA3_8B = Model("llama3_8b", 4096, 32, 8, 128, 14336, 1e-5, qk_norm=False)
# Qwen3-8B: config.json of Qwen/Qwen3-8B (hidden 4096, 32 heads, 8 kv heads, head_dim 128,
# intermediate 12288, rms_norm_eps 1e-6, q_norm/k_norm per head).
QWEN3_8B = Model("qwen3_8b", 4096, 32, 8, 128, 12288, 1e-6, qk_norm=True)
# Qwen3-30B-A3B: config.json of Qwen/Qwen3-30B-A3B (hidden 2048, 32 heads, 4 kv heads, head_dim
# 128, 128 experts, 8 per token, moe_intermediate_size 768, norm_topk_prob true, rms_norm_eps
# 1e-6, q_norm/k_norm per head; no shared expert).
QWEN3_30B_A3B = Model(
    "qwen3_30b_a3b", 2048, 32, 4, 128, 0, 1e-6, qk_norm=True, moe=MoeBlock(128, 8, 768)
)
# Llama-3.1-8B: config.json of meta-llama/Llama-3.1-8B (the Llama-3-8B dimensions, vocab 128256);
# rope scaling changes the cos/sin inputs, not the program.
LLAMA31_8B = replace(LLAMA3_8B, name="llama3_1_8b", vocab=128256)
# Llama-3-70B: config.json of meta-llama/Meta-Llama-3-70B (hidden 8192, 64 heads, 8 kv heads,
# intermediate 28672, 80 layers, rms_norm_eps 1e-5, vocab 128256); the compile-speed bench's
# largest program.
LLAMA3_70B = Model("llama3_70b", 8192, 64, 8, 128, 28672, 1e-5, qk_norm=False, vocab=128256)
# Small enough to simulate in seconds, with every feature of the real ones (GQA 4:2, q/k norm).
TINY = Model("tiny", 128, 4, 2, 32, 256, 1e-6, qk_norm=True, vocab=512)
# The same in f32, for chips without bf16 (Plasticine's datapath is 32-bit).
TINY_F32 = replace(TINY, name="tiny_f32", elt="f32")
# The tiny model with Qwen3-30B-A3B's kind of FFN: 8 experts, 2 per token, expert FFN 64.
TINY_MOE = replace(TINY, name="tiny_moe", ffn=0, moe=MoeBlock(8, 2, 64))


def float_tensors(m: Model) -> Callable[..., str]:
    """`tensor` with the model's element type as the default (ids and positions stay i32)."""
    return partial(tensor, elt=m.elt)


def weight_arg(w: Writer, m: Model, name: str, k: int, n: int) -> tuple[str, ...]:
    """A K x N weight: one argument, or a Q8_0 weight's values and scales (blocks along K)."""
    if not m.q8_0:
        return (w.arg(name, float_tensors(m)(k, n)),)
    values = w.arg(name, tensor(k, n, elt="i8"))
    return values, w.arg(f"{name}_scales", tensor(k // 32, n, elt="f16"))


def matmul(
    w: Writer,
    m: Model,
    name: str,
    a: str,
    b: tuple[str, ...],
    at: str,
    kn: tuple[int, int],
    out: str,
) -> str:
    """`name` = a @ b, b from weight_arg: tg.matmul, or tg.matmul_q8_0 for a Q8_0 weight."""
    k, n = kn
    if len(b) == 2:  # Q8_0: the activation is quantized too, as ggml does
        types = f"{at}, {tensor(k, n, elt='i8')}, {tensor(k // 32, n, elt='f16')}"
        return w.op(
            name, f'tg.matmul_q8_0 {a}, {b[0]}, {b[1]} activation "q8_0" : ({types}) -> {out}'
        )
    return w.op(name, f"tg.matmul {a}, {b[0]} : ({at}, {float_tensors(m)(k, n)}) -> {out}")


def layer(
    w: Writer, m: Model, x: str, t: int, cache: int, prefix: str = ""
) -> tuple[str, str, str]:
    """One decoder layer on x (t x d); returns (out, k_cache', v_cache')."""
    tensor = float_tensors(m)
    d, h, kv, hd = m.d, m.heads, m.kv_heads, m.head_dim
    p = prefix
    act = tensor(t, d)
    qt, kt = tensor(t, h * hd), tensor(t, kv * hd)
    attn_norm = w.arg(f"{p}attn_norm", tensor(1, d))

    def weight(name: str, k: int, n: int) -> tuple[str, ...]:
        return weight_arg(w, m, f"{p}{name}", k, n)

    wq = weight("wq", d, h * hd)
    wk = weight("wk", d, kv * hd)
    wv = weight("wv", d, kv * hd)
    wo = weight("wo", h * hd, d)
    ffn_norm = w.arg(f"{p}ffn_norm", tensor(1, d))
    if m.moe is None:
        w_gate = weight("w_gate", d, m.ffn)
        w_up = weight("w_up", d, m.ffn)
        w_down = weight("w_down", m.ffn, d)
    k_cache = w.arg(f"{p}k_cache", tensor(cache, kv * hd))
    v_cache = w.arg(f"{p}v_cache", tensor(cache, kv * hd))
    cos = w.shared_arg("cos", tensor(t, hd // 2))
    sin = w.shared_arg("sin", tensor(t, hd // 2))
    pos = w.shared_arg("pos", tensor(1, elt="i32"))

    def mm(r: str, a: str, b: tuple[str, ...], at: str, kn: tuple[int, int], out: str) -> str:
        return matmul(w, m, f"{p}{r}", a, b, at, kn, out)

    hn = w.op(
        f"{p}h",
        f"tg.rms_norm {x}, {attn_norm} eps {m.eps:.6e} : ({act}, {tensor(1, d)}) -> {act}",
    )
    q = mm("q", hn, wq, act, (d, h * hd), qt)
    k = mm("k", hn, wk, act, (d, kv * hd), kt)
    v = mm("v", hn, wv, act, (d, kv * hd), kt)
    if m.qk_norm:
        q_norm = w.arg(f"{p}q_norm", tensor(1, hd))
        k_norm = w.arg(f"{p}k_norm", tensor(1, hd))
        q = w.op(
            f"{p}qn",
            f"tg.rms_norm {q}, {q_norm} eps {m.eps:.6e} width {hd} : "
            f"({qt}, {tensor(1, hd)}) -> {qt}",
        )
        k = w.op(
            f"{p}kn",
            f"tg.rms_norm {k}, {k_norm} eps {m.eps:.6e} width {hd} : "
            f"({kt}, {tensor(1, hd)}) -> {kt}",
        )
    cs = tensor(t, hd // 2)
    rope = f'head_dim {hd} style "neox"'
    q = w.op(f"{p}qr", f"tg.rope {q}, {cos}, {sin} {rope} : ({qt}, {cs}, {cs}) -> {qt}")
    k = w.op(f"{p}kr", f"tg.rope {k}, {cos}, {sin} {rope} : ({kt}, {cs}, {cs}) -> {kt}")
    ct = tensor(cache, kv * hd)
    pt = tensor(1, elt="i32")
    kc = w.op(f"{p}kc", f"tg.set_rows {k_cache}, {k}, {pos} : ({ct}, {kt}, {pt}) -> {ct}")
    vc = w.op(f"{p}vc", f"tg.set_rows {v_cache}, {v}, {pos} : ({ct}, {kt}, {pt}) -> {ct}")
    attn = f"heads {h} kv_heads {kv} head_dim {hd} causal true scale {1 / math.sqrt(hd):.6e}"
    # Attention reads the updated cache: the rows before pos are the past, the T new rows sit at
    # pos .. pos + T - 1, and causal masking hides everything after each query's own position.
    a = w.op(
        f"{p}attn",
        f"tg.attention {q}, {kc}, {vc}, {pos} {attn} : ({qt}, {ct}, {ct}, {pt}) -> {qt}",
    )
    o = mm("o", a, wo, qt, (h * hd, d), act)
    h2 = w.op(f"{p}h2", f"tg.add {x}, {o} : ({act}, {act}) -> {act}")
    n2 = w.op(
        f"{p}n2",
        f"tg.rms_norm {h2}, {ffn_norm} eps {m.eps:.6e} : ({act}, {tensor(1, d)}) -> {act}",
    )
    if m.moe is not None:
        ff = moe_block(w, m, m.moe, n2, t, p)
    else:
        ft = tensor(t, m.ffn)
        g = mm("gate", n2, w_gate, act, (d, m.ffn), ft)
        u = mm("up", n2, w_up, act, (d, m.ffn), ft)
        s = w.op(f"{p}act", f"tg.swiglu {g}, {u} : ({ft}, {ft}) -> {ft}")
        ff = mm("down", s, w_down, ft, (m.ffn, d), act)
    out = w.op(f"{p}out", f"tg.add {h2}, {ff} : ({act}, {act}) -> {act}")
    return out, kc, vc


def moe_block(w: Writer, m: Model, moe: MoeBlock, x: str, t: int, prefix: str = "") -> str:
    """A mixture-of-experts FFN on x (t x m.d): its weights as arguments (`{prefix}router`, the
    experts' stacked `{prefix}experts_gate/up/down`, the shared expert's), one tg.moe; returns
    its result (t x m.d)."""
    tensor = float_tensors(m)
    d, e, f, p = m.d, moe.experts, moe.ffn, prefix
    weights = [
        (w.arg(f"{p}router", tensor(d, e)), tensor(d, e)),
        (w.arg(f"{p}experts_gate", tensor(e * d, f)), tensor(e * d, f)),
        (w.arg(f"{p}experts_up", tensor(e * d, f)), tensor(e * d, f)),
        (w.arg(f"{p}experts_down", tensor(e * f, d)), tensor(e * f, d)),
    ]
    if moe.shared_ffn:
        fs = moe.shared_ffn
        shared = [("gate", (d, fs)), ("up", (d, fs)), ("down", (fs, d))]
        if moe.shared_gate:
            shared.append(("gate_weight", (d, 1)))
        weights += [(w.arg(f"{p}shared_{n}", tensor(*s)), tensor(*s)) for n, s in shared]
    act = tensor(t, d)
    operands = ", ".join([x, *(v for v, _ in weights)])
    types = ", ".join([act, *(ty for _, ty in weights)])
    props = f'top_k {moe.top_k} scores "{moe.scores}"'
    if moe.renormalize:
        props += " renormalize true"
    return w.op(f"{p}moe", f"tg.moe {operands} {props} : ({types}) -> {act}")


def layer_program(m: Model, t: int, cache: int) -> str:
    tensor = float_tensors(m)
    w = Writer()
    x = w.arg("x", tensor(t, m.d))
    out, kc, vc = layer(w, m, x, t, cache)
    ct = tensor(cache, m.kv_heads * m.head_dim)
    return w.func(f"{m.name}_layer", [(out, tensor(t, m.d)), (kc, ct), (vc, ct)])


def stacked_layers_program(m: Model, t: int, cache: int, layers: int) -> str:
    """`layers` decoder layers in a row, each with its own weights and cache (compile-speed bench)."""
    tensor = float_tensors(m)
    w = Writer()
    x = w.arg("x", tensor(t, m.d))
    results: list[tuple[str, str]] = []
    ct = tensor(cache, m.kv_heads * m.head_dim)
    for i in range(layers):
        x, kc, vc = layer(w, m, x, t, cache, prefix=f"l{i}_")
        results += [(kc, ct), (vc, ct)]
    return w.func(f"{m.name}_{layers}_layers", [(x, tensor(t, m.d)), *results])


def decode_step_program(m: Model, t: int, cache: int, layers: int = 1) -> str:
    """Embedding, `layers` decoder layers (each with its own weights and cache), final norm, LM
    head and greedy arg-max: a whole decode step."""
    tensor = float_tensors(m)
    w = Writer()
    ids = w.arg("ids", tensor(t, elt="i32"))
    table = w.arg("embedding", tensor(m.vocab, m.d))
    x = w.op(
        "x",
        f"tg.gather_rows {table}, {ids} : ({tensor(m.vocab, m.d)}, {tensor(t, elt='i32')}) -> {tensor(t, m.d)}",
    )
    ct = tensor(cache, m.kv_heads * m.head_dim)
    caches: list[tuple[str, str]] = []
    for i in range(layers):
        x, kc, vc = layer(w, m, x, t, cache, prefix=f"l{i}_")
        caches += [(kc, ct), (vc, ct)]
    act = tensor(t, m.d)
    final_norm = w.arg("final_norm", tensor(1, m.d))
    # A Q8_0 checkpoint quantizes the LM head too (llama.cpp's Q8_0 type covers output.weight).
    lm_head = weight_arg(w, m, "lm_head", m.d, m.vocab)
    n = w.op(
        "final",
        f"tg.rms_norm {x}, {final_norm} eps {m.eps:.6e} : ({act}, {tensor(1, m.d)}) -> {act}",
    )
    logits = matmul(w, m, "logits", n, lm_head, act, (m.d, m.vocab), tensor(t, m.vocab))
    token = w.op("token", f"tg.argmax {logits} : ({tensor(t, m.vocab)}) -> {tensor(t, elt='i32')}")
    return w.func(f"{m.name}_step", [(token, tensor(t, elt="i32")), *caches])


@dataclass(frozen=True)
class NextModel:
    """A Qwen3-Next linear-attention (Gated DeltaNet) decoder layer's dimensions."""

    name: str
    d: int  # hidden size
    k_heads: int  # linear_num_key_heads
    v_heads: int  # linear_num_value_heads
    head_dim: int  # linear_key_head_dim
    v_head_dim: int  # linear_value_head_dim
    conv_kernel: int  # linear_conv_kernel_dim
    moe: MoeBlock  # the feed-forward block (Qwen3NextSparseMoeBlock)
    eps: float
    elt: str = "bf16"


# Qwen3-Next-80B-A3B: transformers' Qwen3NextConfig, whose defaults are the checkpoint
# Qwen/Qwen3-Next-80B-A3B-Instruct (hidden 2048, linear_num_key_heads 16,
# linear_num_value_heads 32, linear_key_head_dim 128, linear_value_head_dim 128,
# linear_conv_kernel_dim 4, rms_norm_eps 1e-6; num_experts 512, num_experts_per_tok 10,
# moe_intermediate_size 512, shared_expert_intermediate_size 512, norm_topk_prob true, softmax
# router, the shared expert behind a sigmoid gate: Qwen3NextSparseMoeBlock).
QWEN3_NEXT_80B = NextModel(
    "qwen3_next_80b_a3b",
    2048,
    16,
    32,
    128,
    128,
    4,
    MoeBlock(512, 10, 512, shared_ffn=512, shared_gate=True),
    1e-6,
)
# Small enough to simulate in seconds, with every feature of the real one (2 value heads per
# key head, whole-tile heads, a 4-tap convolution, routed experts and a gated shared expert).
TINY_NEXT = NextModel(
    "tiny_qwen3_next",
    128,
    2,
    4,
    32,
    32,
    4,
    MoeBlock(8, 2, 64, shared_ffn=64, shared_gate=True),
    1e-6,
)
TINY_NEXT_F32 = replace(TINY_NEXT, name="tiny_qwen3_next_f32", elt="f32")


def delta_layer(w: Writer, m: NextModel, x: str, t: int, p: str = "") -> tuple[str, str, str]:
    """One Qwen3-Next linear-attention decoder layer on x (t x d) (transformers'
    Qwen3NextGatedDeltaNet and Qwen3NextDecoderLayer): returns (out, conv_state', state').

    The projections are laid out as [q | k | v] (the convolution's channels), z, b and a
    (transformers interleaves them per key head; a permutation of the weight's columns). The
    zero-centred norms' weights are the effective ones (1 + w)."""
    tensor = partial(globals()["tensor"], elt=m.elt)
    f32 = partial(globals()["tensor"], elt="f32")
    d, hk, hv, dk, dv = m.d, m.k_heads, m.v_heads, m.head_dim, m.v_head_dim
    conv_dim = 2 * hk * dk + hv * dv
    act, ct, vt = tensor(t, d), tensor(t, conv_dim), tensor(t, hv * dv)
    qt, ht = tensor(t, hk * dk), f32(t, hv)
    taps = m.conv_kernel
    # The recurrent state in the layer's element type: spatial-run holds a result to its own
    # type's tolerance, and an f32 state fed by bf16 projections carries their bf16 rounding
    # (about 2^-8, over f32's 2^-14); the f32 twins carry it in f32 as the model does.
    st_conv, st_rec = tensor(taps - 1, conv_dim), tensor(hv * dk, dv)
    attn_norm = w.arg(f"{p}attn_norm", tensor(1, d))
    w_qkv = w.arg(f"{p}w_qkv", tensor(d, conv_dim))
    w_z = w.arg(f"{p}w_z", tensor(d, hv * dv))
    w_b = w.arg(f"{p}w_b", tensor(d, hv))
    w_a = w.arg(f"{p}w_a", tensor(d, hv))
    conv_w = w.arg(f"{p}conv_weight", tensor(taps, conv_dim))
    a_log = w.arg(f"{p}A_log", f32(1, hv))
    dt_bias = w.arg(f"{p}dt_bias", f32(1, hv))
    norm_w = w.arg(f"{p}delta_norm", tensor(1, dv))
    w_out = w.arg(f"{p}w_out", tensor(hv * dv, d))
    ffn_norm = w.arg(f"{p}ffn_norm", tensor(1, d))
    conv_state = w.arg(f"{p}conv_state", st_conv)
    state = w.arg(f"{p}recurrent_state", st_rec)

    def norm(r: str, v: str, weight: str, vt_: str, width: int | None = None) -> str:
        extra = f" width {width}" if width else ""
        wt = tensor(1, width or d)
        return w.op(
            f"{p}{r}", f"tg.rms_norm {v}, {weight} eps {m.eps:.6e}{extra} : ({vt_}, {wt}) -> {vt_}"
        )

    def mm(r: str, a: str, b: str, bt: str, out: str) -> str:
        return w.op(f"{p}{r}", f"tg.matmul {a}, {b} : ({act}, {bt}) -> {out}")

    h = norm("h", x, attn_norm, act)
    qkv = mm("qkv", h, w_qkv, tensor(d, conv_dim), ct)
    z = mm("z", h, w_z, tensor(d, hv * dv), vt)
    b = mm("b", h, w_b, tensor(d, hv), ht)  # the gates in f32, as the model computes them
    a = mm("a", h, w_a, tensor(d, hv), ht)
    conv, conv_state2 = w.ops(
        [f"{p}conv", f"{p}conv_state_next"],
        f'tg.causal_conv {qkv}, {conv_w}, {conv_state} activation "silu" : '
        f"({ct}, {tensor(taps, conv_dim)}, {st_conv}) -> ({ct}, {st_conv})",
    )

    def heads(r: str, first: int, n: int, out: str) -> str:
        return w.op(
            f"{p}{r}",
            f"tg.head_slice {conv} head_dim {dk} first {first} heads {n} : ({ct}) -> {out}",
        )

    q = heads("q", 0, hk, qt)
    k = heads("k", hk, hk, qt)
    v = heads("v", 2 * hk, hv * dv // dk, vt)
    q = w.op(f"{p}qn", f"tg.l2_norm {q} eps 1.000000e-06 width {dk} : ({qt}) -> {qt}")
    k = w.op(f"{p}kn", f"tg.l2_norm {k} eps 1.000000e-06 width {dk} : ({qt}) -> {qt}")
    g = w.op(
        f"{p}g", f"tg.decay {a}, {a_log}, {dt_bias} : ({ht}, {f32(1, hv)}, {f32(1, hv)}) -> {ht}"
    )
    beta = w.op(f"{p}beta", f"tg.sigmoid {b} : ({ht}) -> {ht}")
    o, state2 = w.ops(
        [f"{p}core", f"{p}recurrent_state_next"],
        f"tg.gated_delta {q}, {k}, {v}, {g}, {beta}, {state} heads {hv} k_heads {hk} "
        f"head_dim {dk} scale {1 / math.sqrt(dk):.6e} : ({qt}, {qt}, {vt}, {ht}, {ht}, {st_rec}) "
        f"-> ({vt}, {st_rec})",
    )
    # the gated RMS norm: norm(o) per value head, times silu(z)
    on = norm("core_norm", o, norm_w, vt, dv)
    zs = w.op(f"{p}z_act", f"tg.silu {z} : ({vt}) -> {vt}")
    og = w.op(f"{p}gated", f"tg.mul {on}, {zs} : ({vt}, {vt}) -> {vt}")
    out = w.op(f"{p}attn_out", f"tg.matmul {og}, {w_out} : ({vt}, {tensor(hv * dv, d)}) -> {act}")
    h2 = w.op(f"{p}h2", f"tg.add {x}, {out} : ({act}, {act}) -> {act}")
    n2 = norm("n2", h2, ffn_norm, act)
    ffn = moe_block(w, m, m.moe, n2, t, p)  # type: ignore[arg-type]  # it reads d and elt
    y = w.op(f"{p}out", f"tg.add {h2}, {ffn} : ({act}, {act}) -> {act}")
    return y, conv_state2, state2


def delta_layer_program(m: NextModel, t: int) -> str:
    tensor = partial(globals()["tensor"], elt=m.elt)
    w = Writer()
    x = w.arg("x", tensor(t, m.d))
    out, conv_state, state = delta_layer(w, m, x, t)
    conv_dim = 2 * m.k_heads * m.head_dim + m.v_heads * m.v_head_dim
    results = [
        (out, tensor(t, m.d)),
        (conv_state, tensor(m.conv_kernel - 1, conv_dim)),
        (state, tensor(m.v_heads * m.head_dim, m.v_head_dim)),
    ]
    return w.func(f"{m.name}_layer", results)


def gemm_program(name: str, m: int, k: int, n: int, elt: str = "bf16") -> str:
    return (
        f"func.func @{name}(%a: {tensor(m, k, elt=elt)}, %b: {tensor(k, n, elt=elt)}) -> {tensor(m, n, elt=elt)} {{\n"
        f"  %c = tg.matmul %a, %b : ({tensor(m, k, elt=elt)}, {tensor(k, n, elt=elt)}) -> {tensor(m, n, elt=elt)}\n"
        f"  func.return %c : {tensor(m, n, elt=elt)}\n}}\n"
    )


HEADER = "// Generated by examples/generate.py ({what}); do not edit by hand.\n"


def real_layers() -> dict[str, tuple[str, Callable[[], str]]]:
    """Both real models, prefill of 128 tokens and decode of 1 over a 4096-row cache, in bf16 and
    in f32 (the precision of chips without bf16, such as Plasticine's 32-bit datapath)."""
    programs: dict[str, tuple[str, Callable[[], str]]] = {}
    models = ((LLAMA3_8B, "Llama-3-8B"), (QWEN3_8B, "Qwen3-8B"), (QWEN3_30B_A3B, "Qwen3-30B-A3B"))
    for model, title in models:
        for variant, suffix in (
            (model, ""),
            (replace(model, name=f"{model.name}_f32", elt="f32"), "_f32"),
        ):
            for phase, t, what in (
                ("prefill", 128, "prefill of 128 tokens into"),
                ("decode", 1, "decode of 1 token over"),
            ):
                programs[f"{model.name}_{phase}{suffix}.mlir"] = (
                    f"{title} decoder layer{' in f32' if suffix else ''}, {what} a 4096-row KV cache",
                    partial(layer_program, variant, t, 4096),
                )
    return programs


PROGRAMS = {
    **real_layers(),
    "llama3_8b_decode_q8_0.mlir": (
        "Llama-3-8B decoder layer with Q8_0 weights (i8 values, f16 scales per 32 along K; "
        "activations quantized as ggml does), decode of 1 token over a 4096-row KV cache",
        partial(layer_program, replace(LLAMA3_8B, name="llama3_8b_q8_0", q8_0=True), 1, 4096),
    ),
    "tiny_decode.mlir": (
        "a whole greedy decode step of a tiny model, d = 128, over a 64-row cache",
        lambda: decode_step_program(TINY, 1, 64),
    ),
    "tiny_prefill.mlir": (
        "a whole prefill step of a tiny model, d = 128, 8 tokens into a 64-row cache",
        lambda: decode_step_program(TINY, 8, 64),
    ),
    "tiny_decode_f32.mlir": (
        "the tiny decode step in f32, for chips without bf16",
        lambda: decode_step_program(TINY_F32, 1, 64),
    ),
    "tiny_prefill_f32.mlir": (
        "the tiny prefill step in f32, for chips without bf16",
        lambda: decode_step_program(TINY_F32, 8, 64),
    ),
    "tiny_moe_decode.mlir": (
        "a whole greedy decode step of the tiny model with a mixture-of-experts FFN (8 experts, "
        "2 per token), over a 64-row cache",
        lambda: decode_step_program(TINY_MOE, 1, 64),
    ),
    "tiny_moe_prefill.mlir": (
        "a whole prefill step of the tiny mixture-of-experts model, 8 tokens into a 64-row cache",
        lambda: decode_step_program(TINY_MOE, 8, 64),
    ),
    "tiny_moe_decode_f32.mlir": (
        "the tiny mixture-of-experts decode step in f32, for chips without bf16",
        lambda: decode_step_program(replace(TINY_MOE, name="tiny_moe_f32", elt="f32"), 1, 64),
    ),
    "tiny_moe_prefill_f32.mlir": (
        "the tiny mixture-of-experts prefill step in f32, for chips without bf16",
        lambda: decode_step_program(replace(TINY_MOE, name="tiny_moe_f32", elt="f32"), 8, 64),
    ),
    "qwen3_next_80b_a3b_decode.mlir": (
        "a Qwen3-Next-80B-A3B Gated DeltaNet decoder layer with its MoE block, decode of 1 "
        "token carrying the conv and recurrent states",
        lambda: delta_layer_program(QWEN3_NEXT_80B, 1),
    ),
    "qwen3_next_80b_a3b_prefill.mlir": (
        "a Qwen3-Next-80B-A3B Gated DeltaNet decoder layer with its MoE block, prefill of 128 "
        "tokens",
        lambda: delta_layer_program(QWEN3_NEXT_80B, 128),
    ),
    "qwen3_next_80b_a3b_decode_f32.mlir": (
        "the Qwen3-Next-80B-A3B decode layer in f32, for chips without bf16",
        lambda: delta_layer_program(
            replace(QWEN3_NEXT_80B, name="qwen3_next_80b_a3b_f32", elt="f32"), 1
        ),
    ),
    "qwen3_next_80b_a3b_prefill_f32.mlir": (
        "the Qwen3-Next-80B-A3B prefill layer in f32, for chips without bf16",
        lambda: delta_layer_program(
            replace(QWEN3_NEXT_80B, name="qwen3_next_80b_a3b_f32", elt="f32"), 128
        ),
    ),
    "tiny_qwen3_next_decode.mlir": (
        "a tiny Qwen3-Next Gated DeltaNet layer, d = 128, decode of 1 token",
        lambda: delta_layer_program(TINY_NEXT, 1),
    ),
    "tiny_qwen3_next_prefill.mlir": (
        "a tiny Qwen3-Next Gated DeltaNet layer, d = 128, prefill of 40 tokens (two chunks of 32 rows, or one of 64)",
        lambda: delta_layer_program(TINY_NEXT, 40),
    ),
    "tiny_qwen3_next_decode_f32.mlir": (
        "the tiny Qwen3-Next decode layer in f32, for chips without bf16",
        lambda: delta_layer_program(TINY_NEXT_F32, 1),
    ),
    "tiny_qwen3_next_prefill_f32.mlir": (
        "the tiny Qwen3-Next prefill layer in f32, for chips without bf16",
        lambda: delta_layer_program(TINY_NEXT_F32, 40),
    ),
    "gemm_2048.mlir": (
        "a 2048x2048x2048 bf16 GEMM",
        lambda: gemm_program("gemm", 2048, 2048, 2048),
    ),
    "gemm_small.mlir": (
        "a 96x200x160 f32 GEMM with partial tiles, small enough to simulate",
        lambda: gemm_program("gemm", 96, 200, 160, "f32"),
    ),
}


def main() -> None:
    here = Path(__file__).resolve().parent
    for file, (what, build) in PROGRAMS.items():
        (here / file).write_text(HEADER.format(what=what) + build())


if __name__ == "__main__":
    main()
