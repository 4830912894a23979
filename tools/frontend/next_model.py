"""Qwen3-Next (transformers' Qwen3NextForCausalLM, llama.cpp's `qwen3next`) as a whole greedy
step: its dimensions, where each weight comes from, and the program.

The model interleaves two token mixers by `full_attention_interval` (layer i is full attention
when (i + 1) % interval == 0, else a Gated DeltaNet; transformers' layer_types and llama.cpp's
recurrent_layer_arr agree), each followed by the sparse MoE block with the gated shared expert
(tg.moe). The Gated DeltaNet layer is layers.py's `delta_layer`; the full attention layer
(Qwen3NextAttention) is `gated_attention_layer` here, built from existing tg ops:

- q_proj gives per head [query | gate] (2 x head_dim rows): the two halves are two weights, taken
  at load time (`gguf.slice = [2 hd, 0, hd]` and `[2 hd, hd, hd]`), so the program has two
  plain matmuls; the attention output is multiplied by sigmoid(gate) before o_proj.
- Rope is partial: transformers rotates the pairs (i, i + r/2) of the first
  r = partial_rotary_factor x head_dim columns and passes the rest. tg.rope's neox style
  rotates (i, i + D/2) of the whole head, so the head's columns of wq, wk and the q/k norm weights are permuted at load time
  (`gguf.partial_rope = [D, r]`, `rope_permutation`) to put transformers' pair (i, i + r/2) at
  (i, i + D/2) and the unrotated columns in the other places, and the rope tables hold angle 0
  (cos 1, sin 0) in the columns j >= r/2 (`gguf.rope_dims = r` on %cos / %sin). q.k is invariant
  under one permutation of both, and v is not permuted, so the attention is transformers'; the
  per-head rms norm is invariant too. The K cache therefore holds each head's k in the permuted
  column order: a comparison with another implementation's cache un-permutes it
  (`rope_permutation`'s inverse).
- Qwen3NextRMSNorm is zero-centred (x * (1 + w)); llama.cpp's converter stores 1 + w for every
  such norm (attn_norm, post_attention_norm, output_norm, attn_q_norm, attn_k_norm), so the
  program reads the effective weights with tg.rms_norm. The gated norm of the DeltaNet
  (ssm_norm, Qwen3NextRMSNormGated) is not zero-centred and is stored as it is.

The GGUF is read as llama.cpp's converter (Qwen3NextModel in convert_hf_to_gguf.py) writes it:
in_proj_qkvz becomes attn_qkv ([q | k | v] of all heads, the convolution's channels) and
attn_gate (z); in_proj_ba stays ssm_ba (per key head [b | a] of its value heads: two weights by
`gguf.slice`); A_log is stored as ssm_a = -exp(A_log), which the program's tg.decay reads back as
log(-ssm_a) (`gguf.value = "log(-x)"`: exp of it is ssm_a to f32 rounding); dt_bias is
ssm_dt.bias; the conv1d kernel is squeezed to channels x taps ("kn": taps x channels, as
tg.causal_conv reads it). `TENSORS` is the role -> GGUF name table.

A Hugging Face directory (hf_model.py's Qwen3NextForCausalLM entry) gets the same step:
`HF_TENSORS` names the roles after transformers' tensors and `HF_FORMAT` (beside `GGUF_FORMAT`)
the parts and value maps its arguments take (`hf.slice` of the fused in_proj_qkvz, "1+x" for
the zero-centred norms stored as w, A_log as it is); `NextNames` takes the format.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, StringAttr, f64, i64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, SSAValue

from spatial_dialect import tg
from spatial_dialect.tools.frontend.gguf_file import shown
from spatial_dialect.tools.frontend.gguf_model import (
    ARCHITECTURES,
    GGUFError,
    ModelHeader,
    TensorInfo,
    check_shapes,
    metadata,
    metadata_float,
    metadata_int,
    metadata_str,
    open_reader,
    read_header,
    tensor_infos,
)
from spatial_dialect.tools.frontend.gguf_program import TABLES
from spatial_dialect.tools.frontend.layers import (
    Argument,
    Layer,
    MoeBlock,
    Naming,
    NextModel,
    Program,
    Role,
    decimal,
    delta_layer,
    moe_block,
)
from spatial_dialect.tools.frontend.tg_builder import tensor

ARCH = "qwen3next"

TENSORS: dict[Role, tuple[str, str]] = {
    Role.TABLE: ("token_embd.weight", "rows"),
    Role.FINAL_NORM: ("output_norm.weight", "rows"),
    Role.LM_HEAD: ("output.weight", "kn"),
    Role.ATTN_NORM: ("attn_norm.weight", "rows"),
    Role.FFN_NORM: ("post_attention_norm.weight", "rows"),
    # the full attention layer
    Role.Q: ("attn_q.weight", "kn"),
    Role.Q_GATE: ("attn_q.weight", "kn"),
    Role.K: ("attn_k.weight", "kn"),
    Role.V: ("attn_v.weight", "kn"),
    Role.O: ("attn_output.weight", "kn"),
    Role.Q_NORM: ("attn_q_norm.weight", "rows"),
    Role.K_NORM: ("attn_k_norm.weight", "rows"),
    # the Gated DeltaNet layer
    Role.W_QKV: ("attn_qkv.weight", "kn"),
    Role.W_Z: ("attn_gate.weight", "kn"),
    Role.W_B: ("ssm_ba.weight", "kn"),
    Role.W_A: ("ssm_ba.weight", "kn"),
    Role.CONV_WEIGHT: ("ssm_conv1d.weight", "kn"),
    Role.A_LOG: ("ssm_a", "rows"),
    Role.DT_BIAS: ("ssm_dt.bias", "rows"),
    Role.DELTA_NORM: ("ssm_norm.weight", "rows"),
    Role.W_OUT: ("ssm_out.weight", "kn"),
    # the sparse MoE block with its gated shared expert
    Role.ROUTER: ("ffn_gate_inp.weight", "kn"),
    Role.EXPERTS_GATE: ("ffn_gate_exps.weight", "experts"),
    Role.EXPERTS_UP: ("ffn_up_exps.weight", "experts"),
    Role.EXPERTS_DOWN: ("ffn_down_exps.weight", "experts"),
    Role.SHARED_GATE: ("ffn_gate_shexp.weight", "kn"),
    Role.SHARED_UP: ("ffn_up_shexp.weight", "kn"),
    Role.SHARED_DOWN: ("ffn_down_shexp.weight", "kn"),
    Role.SHARED_GATE_WEIGHT: ("ffn_gate_inp_shexp.weight", "kn"),
}
"""The GGUF tensor of each weight (after the layer's `blk.N.`) and its layout."""

HF_TENSORS: dict[Role, tuple[str, str]] = {
    Role.TABLE: ("model.embed_tokens.weight", "rows"),
    Role.FINAL_NORM: ("model.norm.weight", "rows"),
    Role.LM_HEAD: ("lm_head.weight", "kn"),
    Role.ATTN_NORM: ("input_layernorm.weight", "rows"),
    Role.FFN_NORM: ("post_attention_layernorm.weight", "rows"),
    # the full attention layer (Qwen3NextAttention)
    Role.Q: ("self_attn.q_proj.weight", "kn"),
    Role.Q_GATE: ("self_attn.q_proj.weight", "kn"),
    Role.K: ("self_attn.k_proj.weight", "kn"),
    Role.V: ("self_attn.v_proj.weight", "kn"),
    Role.O: ("self_attn.o_proj.weight", "kn"),
    Role.Q_NORM: ("self_attn.q_norm.weight", "rows"),
    Role.K_NORM: ("self_attn.k_norm.weight", "rows"),
    # the Gated DeltaNet layer (Qwen3NextGatedDeltaNet)
    Role.W_QKV: ("linear_attn.in_proj_qkvz.weight", "kn"),
    Role.W_Z: ("linear_attn.in_proj_qkvz.weight", "kn"),
    Role.W_B: ("linear_attn.in_proj_ba.weight", "kn"),
    Role.W_A: ("linear_attn.in_proj_ba.weight", "kn"),
    Role.CONV_WEIGHT: ("linear_attn.conv1d.weight", "conv"),
    Role.A_LOG: ("linear_attn.A_log", "rows"),
    Role.DT_BIAS: ("linear_attn.dt_bias", "rows"),
    Role.DELTA_NORM: ("linear_attn.norm.weight", "rows"),
    Role.W_OUT: ("linear_attn.out_proj.weight", "kn"),
    # the sparse MoE block: one tensor per expert ({e}), stacked as "experts"
    Role.ROUTER: ("mlp.gate.weight", "kn"),
    Role.EXPERTS_GATE: ("mlp.experts.{e}.gate_proj.weight", "experts"),
    Role.EXPERTS_UP: ("mlp.experts.{e}.up_proj.weight", "experts"),
    Role.EXPERTS_DOWN: ("mlp.experts.{e}.down_proj.weight", "experts"),
    Role.SHARED_GATE: ("mlp.shared_expert.gate_proj.weight", "kn"),
    Role.SHARED_UP: ("mlp.shared_expert.up_proj.weight", "kn"),
    Role.SHARED_DOWN: ("mlp.shared_expert.down_proj.weight", "kn"),
    Role.SHARED_GATE_WEIGHT: ("mlp.shared_expert_gate.weight", "kn"),
}
"""The Hugging Face tensor of each weight (after the layer's `model.layers.N.`) and its layout
(transformers' Qwen3NextForCausalLM as save_pretrained writes it)."""

PARTS: dict[Role, str] = {
    Role.Q: "query",
    Role.Q_GATE: "gate",
    Role.W_B: "b",
    Role.W_A: "a",
    Role.W_QKV: "qkv",
    Role.W_Z: "z",
}
"""The weights that may be part of a tensor: the argument is the tensor's name and the part."""

ZERO_CENTRED = (Role.ATTN_NORM, Role.FFN_NORM, Role.FINAL_NORM, Role.Q_NORM, Role.K_NORM)
"""The Qwen3NextRMSNorm weights (x * (1 + w)); the gated DeltaNet norm is not one."""


def _halves(c: NextConfig) -> dict[Role, tuple[int, ...]]:
    """Per head [query | gate] of q_proj, per key head [b | a] of in_proj_ba (both formats)."""
    hd, r = c.head_dim, c.v_heads // c.k_heads
    return {
        Role.Q: (2 * hd, 0, hd),
        Role.Q_GATE: (2 * hd, hd, hd),
        Role.W_B: (2 * r, 0, r),
        Role.W_A: (2 * r, r, r),
    }


def _hf_slices(c: NextConfig) -> dict[Role, tuple[int, ...]]:
    """And in_proj_qkvz, per key head [q | k | v | z] (dk, dk, r x dv, r x dv rows): the conv's
    channels are [q of all key heads | k | v] (three triples), z the rest."""
    dk, rv = c.k_dim, c.v_heads // c.k_heads * c.v_dim
    g = 2 * dk + 2 * rv
    qkv = (g, 0, dk, g, dk, dk, g, 2 * dk, rv)
    return _halves(c) | {Role.W_QKV: qkv, Role.W_Z: (g, 2 * dk + rv, rv)}


@dataclass(frozen=True)
class Format:
    """How one kind of checkpoint stores Qwen3-Next: its tensors by role, the attributes'
    namespace, the parts of fused tensors (`slice` triples) and the value maps
    (arguments.VALUES) a role's argument takes at load time (arguments.selected_rows)."""

    ns: str  # "gguf" or "hf"
    layer: str  # a layer's tensor prefix
    tensors: dict[Role, tuple[str, str]]
    slices: Callable[[NextConfig], dict[Role, tuple[int, ...]]]
    values: dict[Role, str]
    rope_base: str  # the rope tables' base attribute (after the namespace)


GGUF_FORMAT = Format(
    "gguf", "blk.{i}.", TENSORS, _halves, {Role.A_LOG: "log(-x)"}, "rope_freq_base"
)
"""llama.cpp's converter: q/k/v and z already split, ssm_a = -exp(A_log), norms stored 1 + w."""

HF_FORMAT = Format(
    "hf", "model.layers.{i}.", HF_TENSORS, _hf_slices, dict.fromkeys(ZERO_CENTRED, "1+x"),
    "rope_theta",
)  # fmt: skip
"""transformers' save_pretrained: fused in_proj_qkvz, A_log as is, zero-centred norms as w."""

STATES = (Role.K_CACHE, Role.V_CACHE, Role.CONV_STATE, Role.RECURRENT_STATE)
"""A layer's carried state: one tensor in a deployment, named as the examples name it."""

OWN_INPUTS = (Role.IDS, Role.POS, Role.COS, Role.SIN)
"""The step's own inputs: a deployment prefixes them with the step."""


@dataclass
class NextConfig:
    """Qwen3-Next's dimensions (from a GGUF header or a config.json) and, from a file, its
    tensors by name."""

    d: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    rope_dims: int  # the rotated columns of a head (partial_rotary_factor x head_dim)
    rope_base: float
    eps: float
    vocab: int
    context: int
    interval: int  # full_attention_interval
    k_heads: int  # linear_num_key_heads
    v_heads: int  # linear_num_value_heads
    k_dim: int  # linear_key_head_dim
    v_dim: int  # linear_value_head_dim
    conv_kernel: int
    experts: int
    experts_used: int
    expert_ffn: int  # moe_intermediate_size
    shared_ffn: int  # shared_expert_intermediate_size
    tied: bool = False
    path: str = ""
    arch: str = ARCH
    tensors: dict[str, TensorInfo] = field(default_factory=dict)

    def full_attention(self, i: int) -> bool:
        return (i + 1) % self.interval == 0

    @property
    def conv_dim(self) -> int:
        return 2 * self.k_heads * self.k_dim + self.v_heads * self.v_dim

    def moe(self) -> MoeBlock:
        # llama.cpp's qwen3next renormalizes the top-k weights (norm_topk_prob) and gates the
        # shared expert; every layer's FFN is the sparse block.
        return MoeBlock(
            self.experts, self.experts_used, self.expert_ffn, self.shared_ffn, shared_gate=True
        )

    def delta(self, elt: str) -> NextModel:
        return NextModel(
            ARCH,
            self.d,
            self.k_heads,
            self.v_heads,
            self.k_dim,
            self.v_dim,
            self.conv_kernel,
            self.moe(),
            self.eps,
            elt,
        )

    def check(self) -> None:
        """The dimensions the program can express; GGUFError names the first that is not."""
        rules = [
            (self.heads % self.kv_heads == 0, "head_count is not a multiple of head_count_kv"),
            (self.v_heads % self.k_heads == 0,
             "ssm.time_step_rank is not a multiple of group_count"),
            (self.rope_dims % 2 == 0 and 0 < self.rope_dims <= self.head_dim,
             "rope.dimension_count must be even and at most the head dimension"),
            (self.head_dim % 2 == 0, "the head dimension must be even"),
            (self.experts_used <= self.experts, "expert_used_count exceeds expert_count"),
            ((self.v_heads * self.v_dim) % self.k_dim == 0,
             "ssm.inner_size is not a multiple of ssm.state_size"),
        ]  # fmt: skip
        for ok, why in rules:
            if not ok:
                raise GGUFError(
                    f"qwen3next: {why} (head_count {self.heads}, head_count_kv {self.kv_heads}, "
                    f"key_length {self.head_dim}, rope.dimension_count {self.rope_dims}, "
                    f"ssm.group_count {self.k_heads}, ssm.time_step_rank {self.v_heads}, "
                    f"ssm.state_size {self.k_dim}, expert_count {self.experts}, "
                    f"expert_used_count {self.experts_used})"
                )


def hf_config(cfg: Mapping[str, Any]) -> NextConfig:
    """The dimensions of a Hugging Face Qwen3NextForCausalLM's config.json (transformers'
    Qwen3NextConfig keys), for an importer of its safetensors; GGUFError (one line) for what the
    program does not express: a dense layer (mlp_only_layers, decoder_sparse_step), top-k
    weights not renormalized, attention biases, another activation, a scaled rope, layer types
    that are not every full_attention_interval-th."""

    def get(key: str, default: Any = None) -> Any:
        v = cfg.get(key, default)
        if v is None:
            raise GGUFError(f"config.json has no '{key}'")
        return v

    rope = cfg.get("rope_parameters") or {}
    rope_type = rope.get("rope_type") or (cfg.get("rope_scaling") or {}).get("rope_type", "default")
    refusals = [
        (rope_type == "default", f"rope type '{rope_type}' (only unscaled rope)"),
        (not cfg.get("mlp_only_layers"), "mlp_only_layers (dense layers)"),
        (cfg.get("decoder_sparse_step", 1) == 1, "decoder_sparse_step other than 1"),
        (cfg.get("norm_topk_prob", True), "norm_topk_prob false"),
        (not cfg.get("attention_bias", False), "attention_bias"),
        (cfg.get("hidden_act", "silu") == "silu", f"hidden_act '{cfg.get('hidden_act')}'"),
    ]
    for ok, what in refusals:
        if not ok:
            raise GGUFError(f"Qwen3NextForCausalLM with {what} is not supported")
    d, heads, layers = get("hidden_size"), get("num_attention_heads"), get("num_hidden_layers")
    head_dim = cfg.get("head_dim") or d // heads
    partial = rope.get("partial_rotary_factor", cfg.get("partial_rotary_factor", 0.25))
    types = cfg.get("layer_types")
    interval = types.index("full_attention") + 1 if types else get("full_attention_interval", 4)
    c = NextConfig(
        d=d,
        layers=layers,
        heads=heads,
        kv_heads=get("num_key_value_heads", heads),
        head_dim=head_dim,
        rope_dims=int(head_dim * partial),
        rope_base=float(rope.get("rope_theta", cfg.get("rope_theta", 10000.0))),
        eps=float(get("rms_norm_eps", 1e-6)),
        vocab=get("vocab_size"),
        context=get("max_position_embeddings"),
        interval=interval,
        k_heads=get("linear_num_key_heads"),
        v_heads=get("linear_num_value_heads"),
        k_dim=get("linear_key_head_dim"),
        v_dim=get("linear_value_head_dim"),
        conv_kernel=get("linear_conv_kernel_dim"),
        experts=get("num_experts"),
        experts_used=get("num_experts_per_tok"),
        expert_ffn=get("moe_intermediate_size"),
        shared_ffn=get("shared_expert_intermediate_size"),
        tied=bool(cfg.get("tie_word_embeddings", False)),
        arch=ARCH,
    )
    if types and list(types) != [
        "full_attention" if c.full_attention(i) else "linear_attention" for i in range(layers)
    ]:
        raise GGUFError(f"layer_types {list(types)} are not every {interval}-th full attention")
    c.check()
    return c


def architecture(path: str | Path) -> str:
    """general.architecture of the GGUF file at `path` (GGUFError if it cannot be read)."""
    return metadata_str(open_reader(path), "general.architecture")


def read_checkpoint(path: str | Path) -> tuple[Any, ModelHeader | NextConfig]:
    """(the reader, the header) of any GGUF checkpoint spatial-import writes."""
    arch = architecture(path)
    if arch == ARCH:
        return read_next_header(path)
    if arch not in ARCHITECTURES:
        raise GGUFError(
            f"architecture '{shown(arch)}' is not supported; spatial-import writes "
            f"{', '.join((*ARCHITECTURES, ARCH))}"
        )
    return read_header(path)


def read_next_header(path: str | Path) -> tuple[Any, NextConfig]:
    """(the reader, the dimensions and tensors) of a qwen3next GGUF file, with every tensor the
    step reads checked for presence, shape and type."""
    reader = open_reader(path)
    a = ARCH
    tensors = tensor_infos(reader)
    if "token_embd.weight" not in tensors:
        raise GGUFError("the file has no tensor 'token_embd.weight' (the embedding table)")
    d, heads = (
        metadata_int(reader, f"{a}.embedding_length"),
        metadata_int(reader, f"{a}.attention.head_count"),
    )
    head_dim = metadata_int(
        reader, f"{a}.attention.key_length", d // heads if d % heads == 0 else None
    )
    v_heads = metadata_int(reader, f"{a}.ssm.time_step_rank")
    inner = metadata_int(reader, f"{a}.ssm.inner_size")
    if inner % v_heads:
        raise GGUFError(f"ssm.inner_size {inner} is not a multiple of ssm.time_step_rank {v_heads}")
    c = NextConfig(
        d=d,
        layers=metadata_int(reader, f"{a}.block_count"),
        heads=heads,
        kv_heads=metadata_int(reader, f"{a}.attention.head_count_kv", heads),
        head_dim=head_dim,
        rope_dims=metadata_int(reader, f"{a}.rope.dimension_count", head_dim),
        rope_base=metadata_float(reader, f"{a}.rope.freq_base", 10000.0),
        eps=metadata_float(reader, f"{a}.attention.layer_norm_rms_epsilon", 1e-6),
        vocab=tensors["token_embd.weight"].shape[0],
        context=metadata_int(reader, f"{a}.context_length", 2048),
        interval=metadata_int(reader, f"{a}.full_attention_interval", 4),
        k_heads=metadata_int(reader, f"{a}.ssm.group_count"),
        v_heads=v_heads,
        k_dim=metadata_int(reader, f"{a}.ssm.state_size"),
        v_dim=inner // v_heads,
        conv_kernel=metadata_int(reader, f"{a}.ssm.conv_kernel"),
        experts=metadata_int(reader, f"{a}.expert_count"),
        experts_used=metadata_int(reader, f"{a}.expert_used_count"),
        expert_ffn=metadata_int(reader, f"{a}.expert_feed_forward_length"),
        shared_ffn=metadata_int(reader, f"{a}.expert_shared_feed_forward_length"),
        tied="output.weight" not in tensors,
        path=str(path),
        tensors=tensors,
    )
    vl = metadata_int(reader, f"{a}.attention.value_length", head_dim)
    if vl != head_dim:
        raise GGUFError(f"value_length {vl} differs from key_length {head_dim}; not supported")
    scaling = metadata(reader, f"{a}.rope.scaling.type", "none")
    if scaling != "none":
        raise GGUFError(f"rope scaling '{scaling}' is not supported (only unscaled rope)")
    c.check()
    if c.layers > len(tensors):  # before a per-layer table is built: each layer has tensors
        raise GGUFError(f"block_count {c.layers} exceeds the file's {len(tensors)} tensors")
    check_next_tensors(c)
    return reader, c


def stored_shapes(c: NextConfig, layer: int | None) -> dict[Role, tuple[int, ...]]:
    """The stored (numpy) shape of the tensor each weight role of `layer` (None: the step's own
    weights) reads, as llama.cpp's converter writes it."""
    d, hd, e, f, fs = c.d, c.head_dim, c.experts, c.expert_ffn, c.shared_ffn
    if layer is None:
        own = {Role.TABLE: (c.vocab, d), Role.FINAL_NORM: (d,)}
        return own if c.tied else {**own, Role.LM_HEAD: (c.vocab, d)}
    shapes = {Role.ATTN_NORM: (d,), Role.FFN_NORM: (d,)}
    if c.full_attention(layer):
        q = (2 * c.heads * hd, d)  # per head [query | gate]
        shapes |= {Role.Q: q, Role.Q_GATE: q, Role.K: (c.kv_heads * hd, d)}
        shapes |= {Role.V: (c.kv_heads * hd, d), Role.O: (d, c.heads * hd)}
        shapes |= {Role.Q_NORM: (hd,), Role.K_NORM: (hd,)}
    else:
        hv, vd = c.v_heads, c.v_heads * c.v_dim
        shapes |= {Role.W_QKV: (c.conv_dim, d), Role.W_Z: (vd, d), Role.W_OUT: (d, vd)}
        shapes |= {Role.W_B: (2 * hv, d), Role.W_A: (2 * hv, d)}  # per key head [b | a]
        shapes |= {Role.CONV_WEIGHT: (c.conv_dim, c.conv_kernel), Role.DELTA_NORM: (c.v_dim,)}
        shapes |= {Role.A_LOG: (hv,), Role.DT_BIAS: (hv,)}
    shapes |= {Role.ROUTER: (e, d), Role.EXPERTS_GATE: (e, f, d), Role.EXPERTS_UP: (e, f, d)}
    shapes |= {Role.EXPERTS_DOWN: (e, d, f), Role.SHARED_GATE: (fs, d), Role.SHARED_UP: (fs, d)}
    shapes |= {Role.SHARED_DOWN: (d, fs), Role.SHARED_GATE_WEIGHT: (1, d)}
    return shapes


def check_next_tensors(c: NextConfig, layers: int | None = None) -> None:
    """Every tensor the step of the first `layers` layers reads is in the file, of the shape
    the metadata implies, of a supported type."""
    shapes: dict[str, tuple[int, ...]] = {}
    for i in [None, *range(c.layers if layers is None else layers)]:
        for role, shape in stored_shapes(c, i).items():
            name = TENSORS[role][0]
            shapes[name if i is None else f"blk.{i}.{name}"] = shape
    check_shapes(c.tensors, shapes)


def rope_permutation(head_dim: int, rope_dims: int) -> list[int]:
    """The head's column order that puts transformers' partial-rope pair (i, i + r/2), i < r/2,
    at tg.rope's neox pair (i, i + D/2): new column j holds old column perm[j]. The D - r
    unrotated columns fill the rest of each half, in order."""
    half, rh = head_dim // 2, rope_dims // 2
    rest = list(range(rope_dims, head_dim))
    return [*range(rh), *rest[: half - rh], *range(rh, rope_dims), *rest[half - rh :]]


def _array(*values: int) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, list(values))


class NextNames:
    """The arguments of a Qwen3-Next step, named and tagged after the checkpoint's tensors in
    `fmt` (GGUF_FORMAT or HF_FORMAT); a part of a tensor is `NAME.PART`, a stack of per-expert
    tensors the pattern without its `{e}.` and `.weight`."""

    def __init__(self, c: NextConfig, own: str = "", fmt: Format = GGUF_FORMAT) -> None:
        self.c = c
        self.own = own
        self.fmt = fmt

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        c, ns = self.c, self.fmt.ns
        if role in STATES:
            assert layer is not None
            return Argument(layer.prefix + role.value, {})
        if role in OWN_INPUTS:
            attrs: dict[str, Attribute] = {}
            if role in (Role.COS, Role.SIN):
                attrs = {
                    f"{ns}.rope": StringAttr(role.value),
                    f"{ns}.{self.fmt.rope_base}": FloatAttr(float(f"{c.rope_base:.8e}"), f64),
                    f"{ns}.rope_dims": IntegerAttr(c.rope_dims, i64),
                }
            return Argument(self.own + role.value, attrs)
        name, layout = self.fmt.tensors[role]
        tname = self.fmt.layer.format(i=layer.index) + name if layer else name
        attrs = {f"{ns}.tensor": StringAttr(tname), f"{ns}.layout": StringAttr(layout)}
        slices = self.fmt.slices(c)
        if role in slices:
            attrs[f"{ns}.slice"] = _array(*slices[role])
        if role in (Role.Q, Role.K, Role.Q_NORM, Role.K_NORM) and c.rope_dims < c.head_dim:
            attrs[f"{ns}.partial_rope"] = _array(c.head_dim, c.rope_dims)
        if role in self.fmt.values:
            attrs[f"{ns}.value"] = StringAttr(self.fmt.values[role])
        if "{e}" in tname:
            return Argument(tname.replace("{e}.", "").removesuffix(".weight"), attrs)
        return Argument(f"{tname}.{PARTS[role]}" if role in slices else tname, attrs)

    def q8_0(self, role: Role, layer: Layer | None) -> None:
        return None  # the program declares every weight in its float type (--weights dequantizes)


def gated_attention_layer(
    p: Program, c: NextConfig, x: SSAValue, t: int, cache: int, layer: Layer
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """One Qwen3-Next full attention decoder layer on x (t x d) (Qwen3NextAttention, then the
    sparse MoE block): returns (out, k_cache', v_cache')."""
    d, h, kv, hd, pre = c.d, c.heads, c.kv_heads, c.head_dim, layer.prefix
    attn_norm = p.arg(Role.ATTN_NORM, layer, p.table(1, d))
    wq = p.arg(Role.Q, layer, p.ten(d, h * hd))
    wg = p.arg(Role.Q_GATE, layer, p.ten(d, h * hd))
    wk = p.arg(Role.K, layer, p.ten(d, kv * hd))
    wv = p.arg(Role.V, layer, p.ten(d, kv * hd))
    wo = p.arg(Role.O, layer, p.ten(h * hd, d))
    q_norm = p.arg(Role.Q_NORM, layer, p.table(1, hd))
    k_norm = p.arg(Role.K_NORM, layer, p.table(1, hd))
    ffn_norm = p.arg(Role.FFN_NORM, layer, p.table(1, d))
    k_cache = p.arg(Role.K_CACHE, layer, p.ten(cache, kv * hd))
    v_cache = p.arg(Role.V_CACHE, layer, p.ten(cache, kv * hd))
    cos = p.shared(Role.COS, p.table(t, hd // 2))
    sin = p.shared(Role.SIN, p.table(t, hd // 2))
    pos = p.shared(Role.POS, tensor(1, elt="i32"))

    hn = p.rms_norm(f"{pre}h", x, attn_norm)
    q = p.matmul(f"{pre}q", hn, wq)
    gate = p.matmul(f"{pre}gate", hn, wg)
    k = p.matmul(f"{pre}k", hn, wk)
    v = p.matmul(f"{pre}v", hn, wv)
    q = p.rms_norm(f"{pre}qn", q, q_norm, width=hd)
    k = p.rms_norm(f"{pre}kn", k, k_norm, width=hd)
    q = p.op(f"{pre}qr", tg.RopeOp(q, cos, sin, head_dim=hd, style="neox"))
    k = p.op(f"{pre}kr", tg.RopeOp(k, cos, sin, head_dim=hd, style="neox"))
    kc = p.op(f"{pre}kc", tg.SetRowsOp(k_cache, k, pos))
    vc = p.op(f"{pre}vc", tg.SetRowsOp(v_cache, v, pos))
    scale = decimal(1 / math.sqrt(hd))
    attention = tg.AttentionOp(
        q, kc, vc, pos, heads=h, kv_heads=kv, head_dim=hd, causal=True, scale=scale
    )
    a = p.op(f"{pre}attn", attention)
    gs = p.op(f"{pre}gate_act", tg.SigmoidOp(gate))
    ag = p.op(f"{pre}gated", tg.MulOp(a, gs))
    o = p.matmul(f"{pre}o", ag, wo)
    h2 = p.op(f"{pre}h2", tg.AddOp(x, o))
    n2 = p.rms_norm(f"{pre}n2", h2, ffn_norm)
    ff = moe_block(p, d, c.moe(), n2, layer)
    out = p.op(f"{pre}out", tg.AddOp(h2, ff))
    return out, kc, vc


STEP_OUTPUTS = ("logits", "final")
"""What a step may return after its states: the LM head's logits and the final norm's output
(the last hidden state, as transformers reports it)."""


def next_step_function(
    c: NextConfig,
    names: Naming,
    elt: str,
    t: int,
    cache: int,
    layers: int,
    name: str,
    extra: tuple[str, ...] = (),
) -> FuncOp:
    """The whole greedy step of the first `layers` layers for t tokens: the embedding gather,
    the layers by type (a full attention layer carries its K and V caches of `cache` rows, a
    Gated DeltaNet layer its conv and recurrent states), the final norm, the LM head (the
    table, transposed, when tied) and the arg-max. Returns the token and every layer's states,
    then the `extra` of STEP_OUTPUTS asked for. `names`: the checkpoint's (NextNames for a
    GGUF file; another format's Naming names the same roles)."""
    p = Program(elt, c.eps, names, TABLES)
    ids = p.arg(Role.IDS, None, tensor(t, elt="i32"))
    table = p.arg(Role.TABLE, None, p.ten(c.vocab, c.d))
    x = p.op("x", tg.GatherRowsOp(table, ids))
    delta = c.delta(elt)
    states: list[SSAValue] = []
    for i in range(layers):
        layer = Layer(i, f"l{i}_")
        if c.full_attention(i):
            x, s1, s2 = gated_attention_layer(p, c, x, t, cache, layer)
        else:
            x, s1, s2 = delta_layer(p, delta, x, layer)
        states += [s1, s2]
    final_norm = p.arg(Role.FINAL_NORM, None, p.table(1, c.d))
    n = p.rms_norm("final", x, final_norm)
    if c.tied:
        logits = p.matmul("logits", n, table, transpose_b=True)
    else:
        logits = p.matmul("logits", n, p.arg(Role.LM_HEAD, None, p.ten(c.d, c.vocab)))
    token = p.op("token", tg.ArgmaxOp(logits))
    values = {"logits": logits, "final": n}
    return p.function(name, [token, *states, *(values[e] for e in STEP_OUTPUTS if e in extra)])


def next_checkpoint_step(
    c: NextConfig,
    t: int,
    cache: int,
    layers: int,
    elt: str,
    name: str,
    own: str = "",
    extra: tuple[str, ...] = (),
) -> FuncOp:
    """The step spatial-import writes for a qwen3next checkpoint (`own`: the prefix of the
    step's own inputs in a deployment; `extra`: STEP_OUTPUTS returned after the states)."""
    return next_step_function(c, NextNames(c, own), elt, t, cache, layers, name, extra)
