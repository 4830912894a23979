"""Tiny Hugging Face checkpoint directories written here with numpy alone (config.json as
transformers 5 writes it, model.safetensors or shards with an index), for the importer's and the
fuzzer's tests; test/oracle/checkpoints.py makes ones with transformers itself."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import ml_dtypes
import numpy as np

CLASSES = {
    "llama": "LlamaForCausalLM",
    "qwen3": "Qwen3ForCausalLM",
    "qwen3moe": "Qwen3MoeForCausalLM",
    "qwen3next": "Qwen3NextForCausalLM",
}
DTYPES = {
    "F32": (np.float32, "float32"),
    "F16": (np.float16, "float16"),
    "BF16": (ml_dtypes.bfloat16, "bfloat16"),
}
D, FFN, HEADS, KV, HD, VOCAB, EXPERTS, MOE_FFN = 64, 128, 4, 2, 32, 96, 4, 32
# Qwen3-Next's Gated DeltaNet: key heads, value heads, their dims, the conv taps; every 2nd layer
# is full attention (the first a DeltaNet layer)
HK, HV, DK, DV, TAPS = 2, 4, 32, 32, 4


def safetensors_bytes(tensors: dict[str, np.ndarray], metadata: dict | None = None) -> bytes:
    """The safetensors encoding of `tensors` (names sorted, data contiguous)."""
    names = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16"}
    header: dict[str, object] = {"__metadata__": metadata or {"format": "pt"}}
    data, offset = [], 0
    for name, a in sorted(tensors.items()):
        raw = np.ascontiguousarray(a).tobytes()
        dtype = "BF16" if a.dtype == ml_dtypes.bfloat16 else names[a.dtype]
        header[name] = {
            "dtype": dtype,
            "shape": list(a.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        data.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + b"".join(data)


def tiny_config(arch: str, dtype: str = "F32", tied: bool = False, layers: int = 2) -> dict:
    cfg: dict[str, object] = {
        "architectures": [CLASSES[arch]],
        "hidden_size": D,
        "intermediate_size": FFN,
        "num_hidden_layers": layers,
        "num_attention_heads": HEADS,
        "num_key_value_heads": KV,
        "head_dim": HD,
        "hidden_act": "silu",
        "max_position_embeddings": 128,
        "rms_norm_eps": 1e-6,
        "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
        "tie_word_embeddings": tied,
        "vocab_size": VOCAB,
        "dtype": DTYPES[dtype][1],
        "attention_bias": False,
    }
    if arch == "qwen3moe":
        cfg |= {"num_experts": EXPERTS, "num_experts_per_tok": 2, "moe_intermediate_size": MOE_FFN}
        cfg |= {"norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": []}
    if arch == "qwen3next":
        cfg |= {"num_experts": EXPERTS, "num_experts_per_tok": 2, "moe_intermediate_size": MOE_FFN}
        cfg |= {"norm_topk_prob": True, "decoder_sparse_step": 1, "mlp_only_layers": []}
        cfg |= {"shared_expert_intermediate_size": MOE_FFN, "full_attention_interval": 2}
        cfg |= {"linear_num_key_heads": HK, "linear_num_value_heads": HV}
        cfg |= {"linear_key_head_dim": DK, "linear_value_head_dim": DV}
        cfg["linear_conv_kernel_dim"] = TAPS
        cfg["rope_parameters"] |= {"partial_rotary_factor": 0.25}
        cfg["layer_types"] = [("linear_attention", "full_attention")[i % 2] for i in range(layers)]
    return cfg


def tiny_tensors(arch: str, dtype: str = "F32", tied: bool = False, layers: int = 2, seed: int = 0):
    rng = np.random.default_rng(seed)

    def w(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.1).astype(DTYPES[dtype][0])

    t = {"model.embed_tokens.weight": w(VOCAB, D), "model.norm.weight": 1 + w(D)}
    if not tied:
        t["lm_head.weight"] = w(VOCAB, D)
    for i in range(layers):
        p = f"model.layers.{i}."
        t |= {
            p + "input_layernorm.weight": 1 + w(D),
            p + "post_attention_layernorm.weight": 1 + w(D),
        }
        if arch == "qwen3next":
            t |= next_layer(p, i, w)
            continue
        t |= {
            p + "self_attn.q_proj.weight": w(HEADS * HD, D),
            p + "self_attn.o_proj.weight": w(D, HEADS * HD),
        }
        t |= {
            p + "self_attn.k_proj.weight": w(KV * HD, D),
            p + "self_attn.v_proj.weight": w(KV * HD, D),
        }
        if arch != "llama":
            t |= {
                p + "self_attn.q_norm.weight": 1 + w(HD),
                p + "self_attn.k_norm.weight": 1 + w(HD),
            }
        if arch == "qwen3moe":
            t[p + "mlp.gate.weight"] = w(EXPERTS, D)
            for e in range(EXPERTS):
                q = f"{p}mlp.experts.{e}."
                t |= {q + "gate_proj.weight": w(MOE_FFN, D), q + "up_proj.weight": w(MOE_FFN, D)}
                t[q + "down_proj.weight"] = w(D, MOE_FFN)
        else:
            t |= {p + "mlp.gate_proj.weight": w(FFN, D), p + "mlp.up_proj.weight": w(FFN, D)}
            t[p + "mlp.down_proj.weight"] = w(D, FFN)
    return t


def next_layer(p: str, i: int, w) -> dict[str, np.ndarray]:
    """Layer i of a Qwen3NextForCausalLM as transformers saves it: a Gated DeltaNet layer (i
    even) or a gated full attention layer, then the MoE block with its gated shared expert."""
    if i % 2:
        a = p + "self_attn."
        t = {a + "q_proj.weight": w(2 * HEADS * HD, D), a + "o_proj.weight": w(D, HEADS * HD)}
        t |= {a + "k_proj.weight": w(KV * HD, D), a + "v_proj.weight": w(KV * HD, D)}
        t |= {a + "q_norm.weight": w(HD), a + "k_norm.weight": w(HD)}
    else:
        a, conv = p + "linear_attn.", 2 * HK * DK + HV * DV
        t = {a + "in_proj_qkvz.weight": w(conv + HV * DV, D), a + "in_proj_ba.weight": w(2 * HV, D)}
        t |= {a + "conv1d.weight": w(conv, 1, TAPS), a + "out_proj.weight": w(D, HV * DV)}
        t |= {a + "A_log": w(HV), a + "dt_bias": w(HV), a + "norm.weight": 1 + w(DV)}
    m = p + "mlp."
    t |= {m + "gate.weight": w(EXPERTS, D), m + "shared_expert_gate.weight": w(1, D)}
    for e in range(EXPERTS):
        q = f"{m}experts.{e}."
        t |= {q + "gate_proj.weight": w(MOE_FFN, D), q + "up_proj.weight": w(MOE_FFN, D)}
        t[q + "down_proj.weight"] = w(D, MOE_FFN)
    q = m + "shared_expert."
    t |= {q + "gate_proj.weight": w(MOE_FFN, D), q + "up_proj.weight": w(MOE_FFN, D)}
    return t | {q + "down_proj.weight": w(D, MOE_FFN)}


def write_tiny_hf(
    path: str | Path,
    arch: str = "llama",
    dtype: str = "F32",
    tied: bool = False,
    shards: int = 1,
    layers: int = 2,
    seed: int = 0,
) -> Path:
    """A checkpoint directory: config.json and model.safetensors (shards > 1: that many
    model-0000i-of-0000n.safetensors and model.safetensors.index.json)."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    (out / "config.json").write_text(json.dumps(tiny_config(arch, dtype, tied, layers), indent=2))
    tensors = tiny_tensors(arch, dtype, tied, layers, seed)
    if shards == 1:
        (out / "model.safetensors").write_bytes(safetensors_bytes(tensors))
        return out
    names = sorted(tensors)
    weight_map = {}
    for s in range(shards):
        file = f"model-{s + 1:05d}-of-{shards:05d}.safetensors"
        part = {n: tensors[n] for n in names[s::shards]}
        (out / file).write_bytes(safetensors_bytes(part))
        weight_map |= dict.fromkeys(part, file)
    index = {"metadata": {"total_size": 0}, "weight_map": weight_map}
    (out / "model.safetensors.index.json").write_text(json.dumps(index, indent=2))
    return out
