"""A transformers Qwen3NextForCausalLM written to GGUF the way llama.cpp's converter writes it
(convert_hf_to_gguf.py, Qwen3NextModel over Qwen2MoeModel and TextModel), F32, for the outside
oracle test: the metadata keys it sets and each tensor's name and transformation.

- in_proj_qkvz (per key head [q | k | v | z]) becomes attn_qkv ([q of all heads | k | v]) and
  attn_gate (z);
- A_log is stored as ssm_a = -exp(A_log); dt_bias as ssm_dt.bias; the conv1d kernel squeezed;
- every `*norm.weight` but the gated one (linear_attn.norm) is stored plus one (the
  zero-centred Qwen3NextRMSNorm's effective weight);
- the experts' fused gate_up_proj is split into ffn_gate_exps and ffn_up_exps (the converter
  merges a checkpoint's per-expert gate_proj / up_proj into the same two stacks).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np


def write_qwen3next_gguf(
    c, sd: Mapping[str, np.ndarray], path: str | Path, overrides: Mapping[str, np.ndarray] = {}
) -> Path:
    """Write transformers' Qwen3NextForCausalLM state dict `sd` (f32 arrays by transformers'
    names) of config `c` (a Qwen3NextConfig, or anything with its attributes) to `path`;
    `overrides`: GGUF tensors written in place of the converted ones (for the refusal tests)."""
    import gguf

    w = gguf.GGUFWriter(str(path), "qwen3next")
    head_dim = c.head_dim or c.hidden_size // c.num_attention_heads
    w.add_context_length(c.max_position_embeddings)
    w.add_embedding_length(c.hidden_size)
    w.add_block_count(c.num_hidden_layers)
    w.add_feed_forward_length(c.intermediate_size)
    w.add_head_count(c.num_attention_heads)
    w.add_head_count_kv(c.num_key_value_heads)
    w.add_key_length(head_dim)
    w.add_value_length(head_dim)
    w.add_layer_norm_rms_eps(c.rms_norm_eps)
    w.add_rope_freq_base(c.rope_parameters["rope_theta"])
    w.add_expert_count(c.num_experts)
    w.add_expert_used_count(c.num_experts_per_tok)
    w.add_expert_feed_forward_length(c.moe_intermediate_size)
    w.add_expert_shared_feed_forward_length(c.shared_expert_intermediate_size)
    w.add_ssm_conv_kernel(c.linear_conv_kernel_dim)
    w.add_ssm_state_size(c.linear_key_head_dim)
    w.add_ssm_group_count(c.linear_num_key_heads)
    w.add_ssm_time_step_rank(c.linear_num_value_heads)
    w.add_ssm_inner_size(c.linear_value_head_dim * c.linear_num_value_heads)
    # transformers 5 keeps layer_types (config.json too); llama.cpp's converter reads
    # full_attention_interval (default 4) and llama.cpp derives the layer types from it.
    interval = c.layer_types.index("full_attention") + 1
    expected = [
        "linear_attention" if (i + 1) % interval else "full_attention"
        for i in range(c.num_hidden_layers)
    ]
    assert list(c.layer_types) == expected, f"layer_types {c.layer_types} are not periodic"
    w.add_full_attention_interval(interval)
    partial = c.rope_parameters.get("partial_rotary_factor", 0.25)
    w.add_rope_dimension_count(int(head_dim * partial))
    w.add_file_type(gguf.LlamaFileType.ALL_F32)

    def put(name: str, array: np.ndarray) -> None:
        array = overrides.get(name, array)
        w.add_tensor(name, np.ascontiguousarray(array, dtype=np.float32))

    put("token_embd.weight", sd["model.embed_tokens.weight"])
    hk, hv = c.linear_num_key_heads, c.linear_num_value_heads
    dk, dv = c.linear_key_head_dim, c.linear_value_head_dim
    f = c.moe_intermediate_size
    for i in range(c.num_hidden_layers):
        p, b = f"model.layers.{i}.", f"blk.{i}."
        put(b + "attn_norm.weight", sd[p + "input_layernorm.weight"] + 1)
        put(b + "post_attention_norm.weight", sd[p + "post_attention_layernorm.weight"] + 1)
        if c.layer_types[i] == "full_attention":
            a = p + "self_attn."
            put(b + "attn_q.weight", sd[a + "q_proj.weight"])
            put(b + "attn_k.weight", sd[a + "k_proj.weight"])
            put(b + "attn_v.weight", sd[a + "v_proj.weight"])
            put(b + "attn_output.weight", sd[a + "o_proj.weight"])
            put(b + "attn_q_norm.weight", sd[a + "q_norm.weight"] + 1)
            put(b + "attn_k_norm.weight", sd[a + "k_norm.weight"] + 1)
        else:
            a = p + "linear_attn."
            qkvz = sd[a + "in_proj_qkvz.weight"]  # out x d, per key head [q | k | v | z]
            split = np.cumsum([dk, dk, hv // hk * dv])
            per_head = qkvz.T.reshape(c.hidden_size, hk, -1)
            q, k, v, z = np.split(per_head, split, axis=-1)
            flat = [x.reshape(c.hidden_size, -1) for x in (q, k, v)]
            put(b + "attn_qkv.weight", np.concatenate(flat, axis=-1).T)
            put(b + "attn_gate.weight", z.reshape(c.hidden_size, -1).T)
            put(b + "ssm_ba.weight", sd[a + "in_proj_ba.weight"])
            put(b + "ssm_conv1d.weight", sd[a + "conv1d.weight"].squeeze())
            put(b + "ssm_a", -np.exp(sd[a + "A_log"]))
            put(b + "ssm_dt.bias", sd[a + "dt_bias"])
            put(b + "ssm_norm.weight", sd[a + "norm.weight"])
            put(b + "ssm_out.weight", sd[a + "out_proj.weight"])
        m = p + "mlp."
        put(b + "ffn_gate_inp.weight", sd[m + "gate.weight"])
        gate_up = sd[m + "experts.gate_up_proj"]  # E x 2F x d: [gate | up]
        put(b + "ffn_gate_exps.weight", gate_up[:, :f])
        put(b + "ffn_up_exps.weight", gate_up[:, f:])
        put(b + "ffn_down_exps.weight", sd[m + "experts.down_proj"])
        put(b + "ffn_gate_shexp.weight", sd[m + "shared_expert.gate_proj.weight"])
        put(b + "ffn_up_shexp.weight", sd[m + "shared_expert.up_proj.weight"])
        put(b + "ffn_down_shexp.weight", sd[m + "shared_expert.down_proj.weight"])
        put(b + "ffn_gate_inp_shexp.weight", sd[m + "shared_expert_gate.weight"])
    put("output_norm.weight", sd["model.norm.weight"] + 1)
    if not c.tie_word_embeddings:
        put("output.weight", sd["lm_head.weight"])
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)


def random_state(c, seed: int = 0) -> dict[str, np.ndarray]:
    """A Qwen3NextForCausalLM state dict of config `c` with N(0, 0.15) weights, N(0, 0.3) norms
    and biases, and A_log = log(U(0.01, 16)) as transformers draws it: for the tests that run
    without torch."""
    rng = np.random.default_rng(seed)
    d, hd, e = c.hidden_size, c.head_dim, c.num_experts
    hk, hv = c.linear_num_key_heads, c.linear_num_value_heads
    dk, dv, f, fs = (
        c.linear_key_head_dim,
        c.linear_value_head_dim,
        c.moe_intermediate_size,
        c.shared_expert_intermediate_size,
    )
    conv = 2 * hk * dk + hv * dv
    shapes: dict[str, tuple[int, ...]] = {
        "model.embed_tokens.weight": (c.vocab_size, d),
        "model.norm.weight": (d,),
    }
    if not c.tie_word_embeddings:
        shapes["lm_head.weight"] = (c.vocab_size, d)
    for i, kind in enumerate(c.layer_types):
        p = f"model.layers.{i}."
        shapes |= {p + "input_layernorm.weight": (d,), p + "post_attention_layernorm.weight": (d,)}
        if kind == "full_attention":
            a = p + "self_attn."
            h, kv = c.num_attention_heads, c.num_key_value_heads
            shapes |= {
                a + "q_proj.weight": (2 * h * hd, d),
                a + "k_proj.weight": (kv * hd, d),
                a + "v_proj.weight": (kv * hd, d),
                a + "o_proj.weight": (d, h * hd),
                a + "q_norm.weight": (hd,),
                a + "k_norm.weight": (hd,),
            }
        else:
            a = p + "linear_attn."
            shapes |= {
                a + "in_proj_qkvz.weight": (conv + hv * dv, d),
                a + "in_proj_ba.weight": (2 * hv, d),
                a + "conv1d.weight": (conv, 1, c.linear_conv_kernel_dim),
                a + "dt_bias": (hv,),
                a + "norm.weight": (dv,),
                a + "out_proj.weight": (d, hv * dv),
            }
        m = p + "mlp."
        shapes |= {
            m + "gate.weight": (e, d),
            m + "experts.gate_up_proj": (e, 2 * f, d),
            m + "experts.down_proj": (e, d, f),
            m + "shared_expert.gate_proj.weight": (fs, d),
            m + "shared_expert.up_proj.weight": (fs, d),
            m + "shared_expert.down_proj.weight": (d, fs),
            m + "shared_expert_gate.weight": (1, d),
        }
    state = {
        k: rng.normal(0, 0.3 if len(s) == 1 else 0.15, s).astype(np.float32)
        for k, s in shapes.items()
    }
    for i, kind in enumerate(c.layer_types):
        if kind == "linear_attention":
            state[f"model.layers.{i}.linear_attn.A_log"] = np.log(rng.uniform(0.01, 16, hv)).astype(
                np.float32
            )
    return state
