"""The model programs, written once: a decoder layer (pre-norm GQA attention with rope and a
KV-cache write at the runtime position, then a SwiGLU or a mixture-of-experts feed-forward
block; Qwen3's per-head q/k norms), Qwen3-Next's Gated DeltaNet layer, and the whole greedy step
around them (embedding gather, layers, final norm, LM head, arg-max) for prefill and decode.

The shipped examples (examples/generate.py, from published dimensions) and `spatial-import`
(from a GGUF checkpoint's header) are the same programs: they differ only in what the arguments
are called and what they carry, so that is the one thing each supplies, a `Naming`. A layer asks
the naming for each weight by its `Role` (its place in the layer) and its layer; the examples
call a layer's query projection `%l0_wq`, a checkpoint `%blk.0.attn_q.weight` with the GGUF
tensor's name and layout attached. The naming also says which weights stay Q8_0 (i8 values and
f16 scales per 32 along K, read by tg.matmul_q8_0 with the activation quantized as ggml does).

Every op is built with its tg builder (spatial_dialect/tg), so the result types are the ones the
op infers. The op results are named as the examples always named them (`%l0_q`, `%l0_attn`,
`%final`, `%token`): a plan and a report name their sections after them.

Decimal constants are rounded as the programs have always spelled them (attention's scale
1/sqrt(head_dim) to 7 significant digits): the f32 a property holds is the f32 of that decimal,
and the shipped plans were computed with it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from enum import Enum
from typing import Protocol

from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType
from xdsl.ir import Attribute, SSAValue

from spatial_dialect import tg
from spatial_dialect.tools.frontend.tg_builder import ELEMENT_TYPES, FunctionBuilder, tensor


class Role(Enum):
    """A tensor's place in the program; the value is the examples' name for it (after the
    layer's prefix)."""

    # the step's own inputs
    X = "x"  # a lone layer's input activation
    IDS = "ids"
    POS = "pos"
    COS = "cos"
    SIN = "sin"
    BLOCK_TABLE = "block_table"  # a batched step's paged KV layout: each user's blocks
    # the embedding and the head
    TABLE = "embedding"
    FINAL_NORM = "final_norm"
    LM_HEAD = "lm_head"
    # an attention layer
    ATTN_NORM = "attn_norm"
    Q = "wq"
    Q_GATE = "wq_gate"  # Qwen3-Next's full attention: the output gate's half of q_proj
    K = "wk"
    V = "wv"
    O = "wo"  # noqa: E741  (the output projection's usual name)
    Q_NORM = "q_norm"
    K_NORM = "k_norm"
    K_CACHE = "k_cache"
    V_CACHE = "v_cache"
    FFN_NORM = "ffn_norm"
    GATE = "w_gate"
    UP = "w_up"
    DOWN = "w_down"
    # a mixture-of-experts block
    ROUTER = "router"
    EXPERTS_GATE = "experts_gate"
    EXPERTS_UP = "experts_up"
    EXPERTS_DOWN = "experts_down"
    SHARED_GATE = "shared_gate"
    SHARED_UP = "shared_up"
    SHARED_DOWN = "shared_down"
    SHARED_GATE_WEIGHT = "shared_gate_weight"
    # a Gated DeltaNet layer
    W_QKV = "w_qkv"
    W_Z = "w_z"
    W_B = "w_b"
    W_A = "w_a"
    CONV_WEIGHT = "conv_weight"
    A_LOG = "A_log"
    DT_BIAS = "dt_bias"
    DELTA_NORM = "delta_norm"
    W_OUT = "w_out"
    CONV_STATE = "conv_state"
    RECURRENT_STATE = "recurrent_state"


@dataclass(frozen=True)
class Layer:
    """Which layer a tensor belongs to: its index (a checkpoint's `blk.N.`) and the prefix of the
    program's own names (`l0_`; "" for a program of one layer)."""

    index: int
    prefix: str


@dataclass(frozen=True)
class Argument:
    name: str
    attributes: dict[str, Attribute]


class Naming(Protocol):
    """What a program's arguments are called and carry: the one thing the examples and an
    imported checkpoint do not share."""

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        """The argument of `role` (of `layer`, or of the step when None)."""
        ...

    def q8_0(self, role: Role, layer: Layer | None) -> tuple[Argument, Argument] | None:
        """The values and scales arguments when the weight stays Q8_0, else None."""
        ...


class ExampleNames:
    """The examples' names: the layer's prefix and the role (`%l0_wq`, `%cos`), no attributes;
    with `q8_0`, every projection and the LM head stay Q8_0 (`%l0_wq`, `%l0_wq_scales`)."""

    Q8_0_ROLES = frozenset({Role.Q, Role.K, Role.V, Role.O, Role.GATE, Role.UP, Role.DOWN})

    def __init__(self, q8_0: bool = False) -> None:
        self.quantized = q8_0

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        return Argument((layer.prefix if layer else "") + role.value, {})

    def q8_0(self, role: Role, layer: Layer | None) -> tuple[Argument, Argument] | None:
        if not self.quantized or role not in self.Q8_0_ROLES | {Role.LM_HEAD}:
            return None
        values = self.argument(role, layer)
        return values, Argument(f"{values.name}_scales", {})


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
    """An attention decoder's dimensions."""

    name: str
    d: int  # hidden size
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    eps: float
    qk_norm: bool  # Qwen3's per-head rms_norm of q and k
    vocab: int = 0  # only the whole step uses the embedding and the LM head
    elt: str = "bf16"  # the element type of weights and activations
    # The norm weights' and rope tables' element type where it is not `elt`: an imported
    # checkpoint keeps them f32 beside 16-bit activations, as llama.cpp does (None: `elt`).
    tables: str | None = None
    q8_0: bool = False  # the projections' weights stored Q8_0 (i8 values and f16 scales)
    moe: MoeBlock | None = None  # the FFN is a mixture of experts (`ffn` is then unused)
    rope_style: str = "neox"  # "interleaved": llama.cpp's llama ropes adjacent pairs
    tied: bool = False  # the LM head is the embedding table, read transposed


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


@dataclass(frozen=True)
class Batch:
    """A batched step's users and KV layout (docs/tg.md#batched-decode): `users` users of
    `tokens` rows each write a cache of `rows` rows (tg.batch_set_rows, tg.batch_attention),
    contiguous (`block_size` None) or paged (blocks of `block_size`, a table of `max_blocks` per
    user, an own input of the step)."""

    users: int
    tokens: int
    rows: int
    block_size: int | None = None
    max_blocks: int = 0

    @staticmethod
    def decode(users: int, cache: int, block_size: int | None, tokens: int = 1) -> Batch:
        """B users, `tokens` rows each (a decode: 1), `cache` positions each: B x `cache` rows,
        or a pool of exactly B x cache / block_size blocks."""
        blocks = 0 if block_size is None else cache // block_size
        return Batch(users, tokens, users * cache, block_size, blocks)

    @staticmethod
    def admission(users: int, cache: int, tokens: int, block_size: int | None) -> Batch:
        """One user's prefill of `tokens` rows into its slot of the decode's cache: through its
        table row (a contiguous cache: one block of `cache` rows, the user's slot)."""
        block = cache if block_size is None else block_size
        return Batch(1, tokens, users * cache, block, cache // block)

    def rows_in(self) -> int:
        """The step's new rows: tokens per user times users."""
        return self.users * self.tokens


Weight = SSAValue | tuple[SSAValue, SSAValue]
"""A weight operand: one tensor, or a Q8_0 weight's values and scales."""


def decimal(value: float) -> float:
    """`value` to the 7 significant digits the programs spell constants with."""
    return float(f"{value:.6e}")


class Program:
    """A function being built for one model (its element type, its eps) under one naming."""

    def __init__(self, elt: str, eps: float, names: Naming, tables: str | None = None) -> None:
        self.f = FunctionBuilder()
        self.elt = elt
        self.tables = tables or elt
        self.eps = decimal(eps)
        self.names = names

    def ten(self, *shape: int) -> Attribute:
        return tensor(*shape, elt=self.elt)

    def table(self, *shape: int) -> Attribute:
        """A norm weight's or a rope table's type (tg.rms_norm and tg.rope widen either to f32
        beside activations of another float type: docs/tg.md#mixed-element-types)."""
        return tensor(*shape, elt=self.tables)

    def arg(self, role: Role, layer: Layer | None, type: Attribute) -> SSAValue:
        a = self.names.argument(role, layer)
        return self.f.argument(a.name, type, a.attributes)

    def shared(self, role: Role, type: Attribute) -> SSAValue:
        a = self.names.argument(role, None)
        return self.f.shared_argument(a.name, type, a.attributes)

    def weight(self, role: Role, layer: Layer | None, k: int, n: int) -> Weight:
        """A K x N weight (`role` LM_HEAD of a tied model: the N x K table), or a Q8_0 weight's
        values and scales, blocked along K."""
        q8 = self.names.q8_0(role, layer)
        if q8 is None:
            return self.arg(role, layer, self.ten(k, n))
        (values, scales), rows = q8, role is Role.TABLE
        # blocks along ggml's ne0: down the columns of a table stored [vocab, d], else the rows
        scales_shape = (k, n // 32) if rows else (k // 32, n)
        v = self.f.argument(values.name, tensor(k, n, elt="i8"), values.attributes)
        s = self.f.argument(scales.name, tensor(*scales_shape, elt="f16"), scales.attributes)
        return v, s

    def op(self, name: str, op) -> SSAValue:
        return self.f.op(name, op)

    def rms_norm(self, name: str, x: SSAValue, w: SSAValue, width: int | None = None):
        return self.op(name, tg.RmsNormOp(x, w, eps=self.eps, width=width))

    def matmul(self, name: str, a: SSAValue, b: Weight, transpose_b: bool = False, elt=None):
        """a @ b (a @ b^T with `transpose_b`): tg.matmul, or tg.matmul_q8_0 for a Q8_0 weight
        (ggml quantizes the activation of every such product)."""
        flag = True if transpose_b else None
        result_elt = ELEMENT_TYPES[elt or self.elt]
        if isinstance(b, tuple):
            op = tg.MatmulQ8_0Op(a, *b, element_type=result_elt, transpose_b=flag)
        else:
            op = tg.MatmulOp(a, b, element_type=result_elt, transpose_b=flag)
        return self.op(name, op)

    def function(self, name: str, results: list[SSAValue]) -> func.FuncOp:
        return self.f.function(name, results)


def attention_layer(
    p: Program, m: Model, x: SSAValue, t: int, cache: int, layer: Layer, batch: Batch | None = None
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """One decoder layer on x (t x d); returns (out, k_cache', v_cache'). With `batch`, the
    rows are its users' and the cache is theirs (`cache` is then unused)."""
    d, h, kv, hd, pre = m.d, m.heads, m.kv_heads, m.head_dim, layer.prefix
    attn_norm = p.arg(Role.ATTN_NORM, layer, p.table(1, d))
    wq = p.weight(Role.Q, layer, d, h * hd)
    wk = p.weight(Role.K, layer, d, kv * hd)
    wv = p.weight(Role.V, layer, d, kv * hd)
    wo = p.weight(Role.O, layer, h * hd, d)
    ffn_norm = p.arg(Role.FFN_NORM, layer, p.table(1, d))
    if m.moe is None:
        w_gate = p.weight(Role.GATE, layer, d, m.ffn)
        w_up = p.weight(Role.UP, layer, d, m.ffn)
        w_down = p.weight(Role.DOWN, layer, m.ffn, d)
    cache_rows = cache if batch is None else batch.rows
    k_cache = p.arg(Role.K_CACHE, layer, p.ten(cache_rows, kv * hd))
    v_cache = p.arg(Role.V_CACHE, layer, p.ten(cache_rows, kv * hd))
    cos = p.shared(Role.COS, p.table(t, hd // 2))
    sin = p.shared(Role.SIN, p.table(t, hd // 2))
    pos = p.shared(Role.POS, tensor(1 if batch is None else batch.users, elt="i32"))
    table = None  # a paged batch's block table, beside the positions it maps
    if batch is not None and batch.block_size is not None:
        table = p.shared(Role.BLOCK_TABLE, tensor(batch.users, batch.max_blocks, elt="i32"))

    hn = p.rms_norm(f"{pre}h", x, attn_norm)
    q = p.matmul(f"{pre}q", hn, wq)
    k = p.matmul(f"{pre}k", hn, wk)
    v = p.matmul(f"{pre}v", hn, wv)
    if m.qk_norm:
        q_norm = p.arg(Role.Q_NORM, layer, p.table(1, hd))
        k_norm = p.arg(Role.K_NORM, layer, p.table(1, hd))
        q = p.rms_norm(f"{pre}qn", q, q_norm, width=hd)
        k = p.rms_norm(f"{pre}kn", k, k_norm, width=hd)
    q = p.op(f"{pre}qr", tg.RopeOp(q, cos, sin, head_dim=hd, style=m.rope_style))
    k = p.op(f"{pre}kr", tg.RopeOp(k, cos, sin, head_dim=hd, style=m.rope_style))
    scale = decimal(1 / math.sqrt(hd))
    if batch is None:
        kc = p.op(f"{pre}kc", tg.SetRowsOp(k_cache, k, pos))
        vc = p.op(f"{pre}vc", tg.SetRowsOp(v_cache, v, pos))
        # Attention reads the updated cache: the rows before pos are the past, the T new rows
        # sit at pos .. pos + T - 1, and causal masking hides everything after each query's own
        # position.
        attention = tg.AttentionOp(
            q, kc, vc, pos, heads=h, kv_heads=kv, head_dim=hd, causal=True, scale=scale
        )
    else:  # the same, per user, in the users' cache
        bs = batch.block_size
        kc = p.op(f"{pre}kc", tg.BatchSetRowsOp(k_cache, k, pos, table, block_size=bs))
        vc = p.op(f"{pre}vc", tg.BatchSetRowsOp(v_cache, v, pos, table, block_size=bs))
        attention = tg.BatchAttentionOp(
            q, kc, vc, pos, table, heads=h, kv_heads=kv, head_dim=hd, scale=scale, block_size=bs
        )
    a = p.op(f"{pre}attn", attention)
    o = p.matmul(f"{pre}o", a, wo)
    h2 = p.op(f"{pre}h2", tg.AddOp(x, o))
    n2 = p.rms_norm(f"{pre}n2", h2, ffn_norm)
    if m.moe is not None:
        ff = moe_block(p, m.d, m.moe, n2, layer)
    else:
        g = p.matmul(f"{pre}gate", n2, w_gate)
        u = p.matmul(f"{pre}up", n2, w_up)
        s = p.op(f"{pre}act", tg.SwigluOp(g, u))
        ff = p.matmul(f"{pre}down", s, w_down)
    out = p.op(f"{pre}out", tg.AddOp(h2, ff))
    return out, kc, vc


def moe_block(p: Program, d: int, moe: MoeBlock, x: SSAValue, layer: Layer) -> SSAValue:
    """A mixture-of-experts FFN on x (t x d): its weights as arguments (the router, the experts'
    gate, up and down stacked along K, the shared expert's), one tg.moe; returns its result.
    The experts are declared in the program's float type: tg.moe has no Q8_0 form."""
    e, f = moe.experts, moe.ffn
    router = p.arg(Role.ROUTER, layer, p.ten(d, e))
    gate = p.arg(Role.EXPERTS_GATE, layer, p.ten(e * d, f))
    up = p.arg(Role.EXPERTS_UP, layer, p.ten(e * d, f))
    down = p.arg(Role.EXPERTS_DOWN, layer, p.ten(e * f, d))
    shared: list[SSAValue] = []
    if moe.shared_ffn:
        fs = moe.shared_ffn
        roles = [(Role.SHARED_GATE, d, fs), (Role.SHARED_UP, d, fs), (Role.SHARED_DOWN, fs, d)]
        if moe.shared_gate:
            roles.append((Role.SHARED_GATE_WEIGHT, d, 1))
        shared = [p.arg(role, layer, p.ten(k, n)) for role, k, n in roles]
    op = tg.MoeOp(
        x,
        router,
        gate,
        up,
        down,
        shared,
        top_k=moe.top_k,
        scores=moe.scores,
        renormalize=True if moe.renormalize else None,
    )
    return p.op(f"{layer.prefix}moe", op)


STEP_OUTPUTS = ("logits", "final")
"""The values a step may return besides its token and caches: the LM head's logits and the final
norm's output (the last hidden state, as transformers reports it), for checking against another
implementation."""


def step_function(
    m: Model,
    names: Naming,
    t: int,
    cache: int,
    layers: int,
    name: str,
    batch: Batch | None = None,
) -> func.FuncOp:
    """The whole greedy step of `layers` layers for t tokens over a `cache`-row KV cache (with
    `batch`: its users' rows over their cache, `t` and `cache` unused): the embedding gather of
    the ids, the layers (each with its own weights and cache), the final norm, the LM head (the
    table itself, transposed, for a tied model) and the arg-max. Returns the token (per row) and
    every layer's updated caches (`also_return` adds STEP_OUTPUTS)."""
    t = t if batch is None else batch.rows_in()
    p = Program(m.elt, m.eps, names, m.tables)
    ids = p.arg(Role.IDS, None, tensor(t, elt="i32"))
    table = p.weight(Role.TABLE, None, m.vocab, m.d)
    if isinstance(table, tuple):  # a Q8_0 table: the ids' rows of its values and scales, widened
        rows = p.op("x.values", tg.GatherRowsOp(table[0], ids))
        scales = p.op("x.scales", tg.GatherRowsOp(table[1], ids))
        dequantize = tg.DequantizeQ8_0Op(rows, scales, axis=1, element_type=ELEMENT_TYPES[m.elt])
        x = p.op("x", dequantize)
    else:
        x = p.op("x", tg.GatherRowsOp(table, ids))
    caches: list[SSAValue] = []
    for i in range(layers):
        x, kc, vc = attention_layer(p, m, x, t, cache, Layer(i, f"l{i}_"), batch)
        caches += [kc, vc]
    final_norm = p.arg(Role.FINAL_NORM, None, p.table(1, m.d))
    if m.tied:  # the LM head is the embedding table itself, [vocab, d], read transposed
        n = p.rms_norm("final", x, final_norm)
        logits = p.matmul("logits", n, table, transpose_b=True)
    else:
        # A Q8_0 checkpoint quantizes the LM head too (llama.cpp's Q8_0 covers output.weight).
        lm_head = p.weight(Role.LM_HEAD, None, m.d, m.vocab)
        n = p.rms_norm("final", x, final_norm)
        logits = p.matmul("logits", n, lm_head)
    token = p.op("token", tg.ArgmaxOp(logits))
    return p.function(name, [token, *caches])


def also_return(fn: func.FuncOp, extra: tuple[str, ...]) -> None:
    """`fn` returns, after what it returns, the values of STEP_OUTPUTS named in `extra` (in
    STEP_OUTPUTS' order): found by their names in the built function, so a step of any
    architecture or importer (whatever it called its arguments) returns them alike."""
    if not extra:
        return
    values = {r.name_hint: r for op in fn.body.block.ops for r in op.results}
    if missing := [e for e in STEP_OUTPUTS if e in extra and e not in values]:
        raise ValueError(f"@{fn.sym_name.data} computes no %{missing[0]}")
    ret = fn.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    results = [*ret.arguments, *(values[e] for e in STEP_OUTPUTS if e in extra)]
    fn.body.block.erase_op(ret)
    fn.body.block.add_op(func.ReturnOp(*results))
    fn.function_type = FunctionType.from_lists(
        fn.function_type.inputs.data, [r.type for r in results]
    )


def layer_function(m: Model, t: int, cache: int) -> func.FuncOp:
    """One decoder layer of its own: `%x` in, (out, k_cache', v_cache') out."""
    p = Program(m.elt, m.eps, ExampleNames(m.q8_0), m.tables)
    x = p.arg(Role.X, None, p.ten(t, m.d))
    return p.function(f"{m.name}_layer", list(attention_layer(p, m, x, t, cache, Layer(0, ""))))


def stacked_layers_function(m: Model, t: int, cache: int, layers: int) -> func.FuncOp:
    """`layers` decoder layers in a row, each with its own weights and cache (the compile-speed
    bench)."""
    p = Program(m.elt, m.eps, ExampleNames(m.q8_0), m.tables)
    x = p.arg(Role.X, None, p.ten(t, m.d))
    caches: list[SSAValue] = []
    for i in range(layers):
        x, kc, vc = attention_layer(p, m, x, t, cache, Layer(i, f"l{i}_"))
        caches += [kc, vc]
    return p.function(f"{m.name}_{layers}_layers", [x, *caches])


def delta_layer(
    p: Program, m: NextModel, x: SSAValue, layer: Layer
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """One Qwen3-Next linear-attention decoder layer on x (t x d) (transformers'
    Qwen3NextGatedDeltaNet and Qwen3NextDecoderLayer): returns (out, conv_state', state').

    The projections are laid out as [q | k | v] (the convolution's channels), z, b and a
    (transformers interleaves them per key head; a permutation of the weight's columns). The
    zero-centred norms' weights are the effective ones (1 + w)."""
    d, hk, hv, dk, dv, pre = m.d, m.k_heads, m.v_heads, m.head_dim, m.v_head_dim, layer.prefix
    conv_dim = 2 * hk * dk + hv * dv
    taps = m.conv_kernel
    # The recurrent state in the layer's element type: spatial-run holds a result to its own
    # type's tolerance, and an f32 state fed by bf16 projections carries their bf16 rounding
    # (about 2^-8, over f32's 2^-14); the f32 twins carry it in f32 as the model does.
    attn_norm = p.arg(Role.ATTN_NORM, layer, p.table(1, d))
    w_qkv = p.arg(Role.W_QKV, layer, p.ten(d, conv_dim))
    w_z = p.arg(Role.W_Z, layer, p.ten(d, hv * dv))
    w_b = p.arg(Role.W_B, layer, p.ten(d, hv))
    w_a = p.arg(Role.W_A, layer, p.ten(d, hv))
    conv_w = p.arg(Role.CONV_WEIGHT, layer, p.ten(taps, conv_dim))
    a_log = p.arg(Role.A_LOG, layer, tensor(1, hv, elt="f32"))
    dt_bias = p.arg(Role.DT_BIAS, layer, tensor(1, hv, elt="f32"))
    norm_w = p.arg(Role.DELTA_NORM, layer, p.table(1, dv))
    w_out = p.arg(Role.W_OUT, layer, p.ten(hv * dv, d))
    ffn_norm = p.arg(Role.FFN_NORM, layer, p.table(1, d))
    conv_state = p.arg(Role.CONV_STATE, layer, p.ten(taps - 1, conv_dim))
    state = p.arg(Role.RECURRENT_STATE, layer, p.ten(hv * dk, dv))

    h = p.rms_norm(f"{pre}h", x, attn_norm)
    qkv = p.matmul(f"{pre}qkv", h, w_qkv)
    z = p.matmul(f"{pre}z", h, w_z)
    b = p.matmul(f"{pre}b", h, w_b, elt="f32")  # the gates in f32, as the model computes them
    a = p.matmul(f"{pre}a", h, w_a, elt="f32")
    conv_op = tg.CausalConvOp(qkv, conv_w, conv_state, activation="silu")
    conv, conv_state2 = p.f.ops([f"{pre}conv", f"{pre}conv_state_next"], conv_op)

    def heads(name: str, first: int, n: int) -> SSAValue:
        return p.op(f"{pre}{name}", tg.HeadSliceOp(conv, head_dim=dk, first=first, heads=n))

    q = heads("q", 0, hk)
    k = heads("k", hk, hk)
    v = heads("v", 2 * hk, hv * dv // dk)
    q = p.op(f"{pre}qn", tg.L2NormOp(q, eps=1e-6, width=dk))
    k = p.op(f"{pre}kn", tg.L2NormOp(k, eps=1e-6, width=dk))
    g = p.op(f"{pre}g", tg.DecayOp(a, a_log, dt_bias))
    beta = p.op(f"{pre}beta", tg.SigmoidOp(b))
    scale = decimal(1 / math.sqrt(dk))
    delta = tg.GatedDeltaOp(q, k, v, g, beta, state, heads=hv, k_heads=hk, head_dim=dk, scale=scale)
    o, state2 = p.f.ops([f"{pre}core", f"{pre}recurrent_state_next"], delta)
    # the gated RMS norm: norm(o) per value head, times silu(z)
    on = p.rms_norm(f"{pre}core_norm", o, norm_w, width=dv)
    zs = p.op(f"{pre}z_act", tg.SiluOp(z))
    og = p.op(f"{pre}gated", tg.MulOp(on, zs))
    out = p.matmul(f"{pre}attn_out", og, w_out)
    h2 = p.op(f"{pre}h2", tg.AddOp(x, out))
    n2 = p.rms_norm(f"{pre}n2", h2, ffn_norm)
    ffn = moe_block(p, m.d, m.moe, n2, layer)
    y = p.op(f"{pre}out", tg.AddOp(h2, ffn))
    return y, conv_state2, state2


def delta_layer_function(m: NextModel, t: int) -> func.FuncOp:
    """One Gated DeltaNet layer of its own: `%x` in, (out, conv_state', state') out."""
    p = Program(m.elt, m.eps, ExampleNames())
    x = p.arg(Role.X, None, p.ten(t, m.d))
    return p.function(f"{m.name}_layer", list(delta_layer(p, m, x, Layer(0, ""))))


def gemm_function(name: str, m: int, k: int, n: int, elt: str = "bf16") -> func.FuncOp:
    """`%c = %a @ %b`, a m x k and b k x n."""
    f = FunctionBuilder()
    a = f.argument("a", tensor(m, k, elt=elt))
    b = f.argument("b", tensor(k, n, elt=elt))
    return f.function(name, [f.op("c", tg.MatmulOp(a, b))])
