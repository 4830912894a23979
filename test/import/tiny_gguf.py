"""Tiny llama- and qwen3-shaped GGUF files, written with llama.cpp's `gguf` writer (nothing is
downloaded): 2 layers, d = 128, F16 or Q8_0 weights (norms F32, as llama.cpp writes them), or
any other type gguf.quants can write (Q4_0: one spatial-import refuses)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

D, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB, LAYERS = 128, 4, 2, 32, 256, 256, 2


def write_tiny(
    path: str | Path,
    arch: str = "llama",
    wtype: str = "F16",
    tied: bool = False,
    seed: int = 0,
    ffn: int = FFN,
) -> Path:
    import gguf
    from gguf.quants import quantize

    rng = np.random.default_rng(seed)
    w = gguf.GGUFWriter(str(path), arch)
    w.add_block_count(LAYERS)
    w.add_context_length(512)
    w.add_embedding_length(D)
    w.add_feed_forward_length(ffn)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV_HEADS)
    w.add_key_length(HEAD_DIM)
    w.add_value_length(HEAD_DIM)
    w.add_layer_norm_rms_eps(1e-6 if arch == "qwen3" else 1e-5)
    w.add_rope_freq_base(1e6 if arch == "qwen3" else 5e5)
    w.add_rope_dimension_count(HEAD_DIM)

    def add(name: str, data: np.ndarray) -> None:
        if wtype == "F16":
            w.add_tensor(name, data.astype(np.float16))
        else:
            qtype = gguf.GGMLQuantizationType[wtype]
            w.add_tensor(name, quantize(data, qtype), raw_dtype=qtype)

    def matrix(name: str, out: int, inp: int) -> None:
        add(name, (rng.standard_normal((out, inp)) / np.sqrt(inp)).astype(np.float32))

    def norm(name: str, n: int) -> None:
        w.add_tensor(name, (1 + 0.1 * rng.standard_normal(n)).astype(np.float32))

    add("token_embd.weight", rng.standard_normal((VOCAB, D)).astype(np.float32))
    q, kv = HEADS * HEAD_DIM, KV_HEADS * HEAD_DIM
    for i in range(LAYERS):
        b = f"blk.{i}."
        norm(b + "attn_norm.weight", D)
        matrix(b + "attn_q.weight", q, D)
        matrix(b + "attn_k.weight", kv, D)
        matrix(b + "attn_v.weight", kv, D)
        matrix(b + "attn_output.weight", D, q)
        if arch == "qwen3":
            norm(b + "attn_q_norm.weight", HEAD_DIM)
            norm(b + "attn_k_norm.weight", HEAD_DIM)
        norm(b + "ffn_norm.weight", D)
        matrix(b + "ffn_gate.weight", ffn, D)
        matrix(b + "ffn_up.weight", ffn, D)
        matrix(b + "ffn_down.weight", D, ffn)
    norm("output_norm.weight", D)
    if not tied:
        matrix("output.weight", VOCAB, D)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)
