"""Tiny llama- and qwen3-shaped GGUF files, written with llama.cpp's `gguf` writer (nothing is
downloaded): by default 2 layers, d = 128, F16 or Q8_0 weights (norms F32, as llama.cpp writes
them), or any other type gguf.quants can write (Q4_0: one spatial-import refuses).

`Tiny`'s other fields write what llama.cpp's converter (convert_hf_to_gguf.py) puts in real
files, and what breaks a file, so the importer is tested on files this project did not shape:
the general.* and tokenizer.ggml.* metadata, a data alignment other than 32, optional keys left
out, another tensor order, Llama 3.1's rope_freqs.weight, mixed tensor types, a head dimension
with heads * head_dim != d, tensors dropped or of another shape."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

D, HEADS, KV_HEADS, HEAD_DIM, FFN, VOCAB, LAYERS = 128, 4, 2, 32, 256, 256, 2


@dataclass(frozen=True)
class Tiny:
    """What one tiny file holds."""

    arch: str = "llama"
    wtype: str = "F16"  # the layers' 2-D weights
    tied: bool = False  # no output.weight: the LM head is the embedding table
    seed: int = 0
    ffn: int = FFN
    d: int = D
    heads: int = HEADS
    kv_heads: int = KV_HEADS
    head_dim: int = HEAD_DIM
    vocab: int = VOCAB
    embd_type: str | None = None  # token_embd.weight's type (default wtype)
    output_type: str | None = None  # output.weight's type (default wtype)
    norm_type: str = "F32"
    converter: bool = False  # general.*, tokenizer.ggml.*, file_type as convert_hf_to_gguf
    alignment: int | None = None  # general.alignment (the writer's default is 32)
    rope_freqs: bool = False  # Llama 3.1's per-frequency rope factors
    shuffled: bool = False  # tensors written in another order than the converter's
    omit: tuple[str, ...] = ()  # metadata keys not written (without the "ARCH." prefix)
    keys: tuple[tuple[str, int | float | str], ...] = ()  # keys written with these values
    drop: tuple[str, ...] = ()  # tensors not written
    shapes: tuple[tuple[str, tuple[int, ...]], ...] = ()  # tensors written of these shapes
    experts: int = 8  # qwen3moe: experts a layer (of ffn rows each), experts_used a token
    experts_used: int = 2
    # the converter's tokenizer: these tokens (default t0, t1, ...) and merges, `special` ids of
    # type CONTROL, tokenizer.ggml.pre (default by architecture)
    tokens: tuple[str, ...] = ()
    merges: tuple[str, ...] = ("t 1", "t 2")
    special: tuple[int, ...] = ()
    pre: str | None = None


def write_tiny(
    path: str | Path,
    arch: str = "llama",
    wtype: str = "F16",
    tied: bool = False,
    seed: int = 0,
    ffn: int = FFN,
) -> Path:
    return write_gguf(path, Tiny(arch, wtype, tied, seed, ffn))


def write_gguf(path: str | Path, m: Tiny) -> Path:
    import gguf
    from gguf.quants import quantize

    rng = np.random.default_rng(m.seed)
    w = gguf.GGUFWriter(str(path), m.arch)
    if m.alignment is not None:
        w.add_custom_alignment(m.alignment)
    overrides = dict(m.keys)

    def key(name: str, add, value) -> None:
        if name not in m.omit:
            add(overrides.pop(name, value))

    if m.converter:
        w.add_type("model")
        w.add_name("Tiny")
        w.add_size_label("1M")
        w.add_license("apache-2.0")
        w.add_tags(["text-generation"])
        w.add_languages(["en"])
    key("block_count", w.add_block_count, LAYERS)
    key("context_length", w.add_context_length, 512)
    key("embedding_length", w.add_embedding_length, m.d)
    moe = m.arch == "qwen3moe"
    if moe:
        key("expert_feed_forward_length", w.add_expert_feed_forward_length, m.ffn)
        key("expert_count", w.add_expert_count, m.experts)
        key("expert_used_count", w.add_expert_used_count, m.experts_used)
    else:
        key("feed_forward_length", w.add_feed_forward_length, m.ffn)
    key("attention.head_count", w.add_head_count, m.heads)
    key("attention.head_count_kv", w.add_head_count_kv, m.kv_heads)
    key("attention.key_length", w.add_key_length, m.head_dim)
    key("attention.value_length", w.add_value_length, m.head_dim)
    key("attention.layer_norm_rms_epsilon", w.add_layer_norm_rms_eps,
        1e-5 if m.arch == "llama" else 1e-6)  # fmt: skip
    key("rope.freq_base", w.add_rope_freq_base, 5e5 if m.arch == "llama" else 1e6)
    key("rope.dimension_count", w.add_rope_dimension_count, m.head_dim)
    if m.converter:
        key("vocab_size", w.add_vocab_size, m.vocab)
        w.add_file_type(gguf.LlamaFileType.MOSTLY_Q8_0 if m.wtype == "Q8_0" else 1)
        w.add_quantization_version(gguf.GGML_QUANT_VERSION)
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(m.pre or ("qwen2" if m.arch == "qwen3" else "llama-bpe"))
        w.add_token_list(list(m.tokens) or [f"t{i}" for i in range(m.vocab)])
        types = [gguf.TokenType.NORMAL] * m.vocab
        for i in m.special:
            types[i] = gguf.TokenType.CONTROL
        w.add_token_types(types)
        w.add_token_scores([0.0] * m.vocab)
        w.add_token_merges(list(m.merges))
        w.add_bos_token_id(1)
        w.add_eos_token_id(2)
        w.add_chat_template("{{ messages }}")

    for name, value in overrides.items():  # keys the converter writes only for some models
        add = {int: w.add_uint32, float: w.add_float32, str: w.add_string}[type(value)]
        add(f"{m.arch}.{name}", value)

    tensors: list[tuple[str, np.ndarray, str]] = []  # name, f32 data, type

    def matrix(name: str, out: int, inp: int, wtype: str | None = None, experts: int = 0) -> None:
        data = rng.standard_normal((experts, out, inp) if experts else (out, inp)) / np.sqrt(inp)
        tensors.append((name, data.astype(np.float32), wtype or m.wtype))

    def norm(name: str, n: int) -> None:
        tensors.append((name, (1 + 0.1 * rng.standard_normal(n)).astype(np.float32), m.norm_type))

    if m.rope_freqs:  # Llama 3.1: per-frequency divisors (>= 1) of the rope angles
        factors = 1 + rng.uniform(0, 4, m.head_dim // 2)
        tensors.append(("rope_freqs.weight", factors.astype(np.float32), "F32"))
    embd = rng.standard_normal((m.vocab, m.d)).astype(np.float32)
    tensors.append(("token_embd.weight", embd, m.embd_type or m.wtype))
    q, kv = m.heads * m.head_dim, m.kv_heads * m.head_dim
    for i in range(LAYERS):
        b = f"blk.{i}."
        norm(b + "attn_norm.weight", m.d)
        matrix(b + "attn_q.weight", q, m.d)
        matrix(b + "attn_k.weight", kv, m.d)
        matrix(b + "attn_v.weight", kv, m.d)
        matrix(b + "attn_output.weight", m.d, q)
        if m.arch != "llama":
            norm(b + "attn_q_norm.weight", m.head_dim)
            norm(b + "attn_k_norm.weight", m.head_dim)
        norm(b + "ffn_norm.weight", m.d)
        if moe:  # the router, and the experts stacked along ggml's last axis (E x out x in)
            matrix(b + "ffn_gate_inp.weight", m.experts, m.d)
            matrix(b + "ffn_gate_exps.weight", m.ffn, m.d, experts=m.experts)
            matrix(b + "ffn_up_exps.weight", m.ffn, m.d, experts=m.experts)
            matrix(b + "ffn_down_exps.weight", m.d, m.ffn, experts=m.experts)
        else:
            matrix(b + "ffn_gate.weight", m.ffn, m.d)
            matrix(b + "ffn_up.weight", m.ffn, m.d)
            matrix(b + "ffn_down.weight", m.d, m.ffn)
    norm("output_norm.weight", m.d)
    if not m.tied:
        matrix("output.weight", m.vocab, m.d, m.output_type)
    if m.shuffled:
        tensors = [tensors[i] for i in rng.permutation(len(tensors))]
    shapes = dict(m.shapes)
    for name, data, wtype in tensors:
        if name in m.drop:
            continue
        if name in shapes:
            data = rng.standard_normal(shapes[name]).astype(np.float32)
        if wtype == "F32":
            w.add_tensor(name, data)
        elif wtype == "F16":
            w.add_tensor(name, data.astype(np.float16))
        else:
            qtype = gguf.GGMLQuantizationType[wtype]
            try:
                raw = quantize(data, qtype)
            except NotImplementedError:  # K-quants: gguf.quants has no quantizer: zero bytes
                block, size = gguf.GGML_QUANT_SIZES[qtype]
                raw = np.zeros((*data.shape[:-1], data.shape[-1] // block * size), np.uint8)
            w.add_tensor(name, raw, raw_dtype=qtype)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return Path(path)


__all__ = ["Tiny", "write_gguf", "write_tiny"]
