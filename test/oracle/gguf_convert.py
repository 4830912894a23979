"""A Hugging Face directory as llama.cpp's converter (convert_hf_to_gguf.py) writes it as GGUF:
for LlamaForCausalLM (`LlamaModel`), Qwen3ForCausalLM (`Qwen3Model`, a `Qwen2Model`) and
Qwen3MoeForCausalLM (`Qwen3MoeModel`, a `Qwen2MoeModel`), and nothing else.

The converter is a script in llama.cpp's repository, not part of the `gguf` package, so the
oracle tests cannot call it; this module does what its classes do for these three
architectures, written here from reading it, and calls the `gguf` package for everything the
script itself delegates to it: the tensor names (`gguf.get_tensor_name_map`, gguf-py's
tensor_mapping), the quantizers (`gguf.quants.quantize`), the general.* metadata
(`gguf.Metadata`, the parameter count and size label) and the special tokens and merges
(`gguf.SpecialVocab`). What it decides, as the script does:

- Tensors in the checkpoint's order (the shards sorted by name, each in its own order); a
  tensor of another float type than F16/F32 (BF16) is widened to F32 first.
- Llama's q_proj and k_proj rows are permuted per head (`LlamaModel.permute`: rows reshaped to
  heads x 2 x head_dim/2 and the two inner axes swapped; k over the KV heads), because
  llama.cpp's LLM_ARCH_LLAMA ropes adjacent pairs where transformers ropes (i, i + D/2).
  Qwen3 keeps its rows (neox rope in llama.cpp too).
- Qwen3-MoE's experts are stacked per layer and projection into one E x out x in tensor
  (`blk.N.ffn_{gate,up,down}_exps.weight`), from per-expert tensors or from transformers'
  fused `mlp.experts.gate_up_proj` (split in half along its rows: gate, then up).
- Types: 1-D tensors and every `*_norm.weight` stay F32, and so does the router
  (`ffn_gate_inp.weight`, MODEL_TENSOR.FFN_GATE_INP, which the converter never quantizes); every
  other weight takes the file type: F32, F16, BF16 or Q8_0 (token_embd.weight and
  output.weight included). A tensor the quantizer cannot block (a row not a multiple of 32 for
  Q8_0) falls back to F16, as the script's QuantError handler does.
- Metadata, in the script's order: general.architecture (the writer's), general.type "model",
  general.* from `gguf.Metadata` (name: the directory's name; size_label from the parameter
  count), then `TextModel.set_gguf_parameters` (block_count, context_length, embedding_length,
  feed_forward_length, head_count, head_count_kv, rope.freq_base, the rms epsilon,
  expert_count / expert_used_count, key_length / value_length where config.json has head_dim,
  file_type), Llama's vocab_size and rope.dimension_count, Qwen2-MoE's
  expert_feed_forward_length (and expert_shared_feed_forward_length where present),
  general.quantization_version, then the vocabulary.
- Vocabulary (`_set_vocab_gpt2`, the path all three take for a tokenizer.json without a
  sentencepiece model or a byte-fallback Llama BPE): tokenizer.ggml.model "gpt2",
  tokenizer.ggml.pre, the tokens (padded to config.json's vocab_size with "[PADi]"),
  their types (NORMAL; an added token CONTROL when special or looking special "<|...|>",
  else USER_DEFINED; padding UNUSED), then `gguf.SpecialVocab(dir, load_merges=True)`: merges,
  bos/eos/... ids, add_*_token flags and the chat template where the directory has them.

One difference, by necessity: the script names tokenizer.ggml.pre by a hash of a fixed text's
token ids, from a table of published tokenizers (`get_vocab_base_pre`), and refuses an unknown
hash. The oracle tests' tokenizer is trained here, so no table knows it; its pre-tokenizer is
GPT-2's byte-level split, which llama.cpp calls "gpt-2", and that is written unless `pre`
names another (what a new model's entry in convert_hf_to_gguf_update.py would say).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np

ARCHITECTURES = {
    "LlamaForCausalLM": "llama",
    "Qwen3ForCausalLM": "qwen3",
    "Qwen3MoeForCausalLM": "qwen3moe",
}
"""The Hugging Face architectures converted, and the GGUF architecture each becomes."""

WTYPES = ("F32", "F16", "BF16", "Q8_0")
"""The output types (the converter's --outtype f32, f16, bf16, q8_0)."""

SKIPPED = (".attention.masked_bias", ".attention.bias", ".rotary_emb.inv_freq")
"""Tensors the converter drops by name."""


def permute(weights: np.ndarray, heads: int) -> np.ndarray:
    """LlamaModel.permute: each head's rows from transformers' (first half, second half) order
    to llama.cpp's interleaved pairs: row h*D + 2i + s comes from row h*D + s*D/2 + i."""
    rows = weights.shape[0]
    return (
        weights.reshape(heads, 2, rows // heads // 2, *weights.shape[1:])
        .swapaxes(1, 2)
        .reshape(weights.shape)
    )


def _tensors(hf_dir: Path) -> Iterator[tuple[str, np.ndarray]]:
    """(name, f32 or f16 array) of every tensor, the shards sorted by name, each in its order."""
    import torch
    from safetensors import safe_open

    parts = sorted(p.name for p in hf_dir.iterdir() if p.name.startswith("model"))
    parts = [p for p in parts if p.endswith(".safetensors")]
    if not parts:
        raise FileNotFoundError(f"{hf_dir} has no model*.safetensors")
    for part in parts:
        with safe_open(str(hf_dir / part), framework="pt") as f:
            for name in f.keys():
                t = f.get_tensor(name)
                if t.dtype not in (torch.float16, torch.float32):
                    t = t.to(torch.float32)
                yield name, t.numpy()


def _block(name: str) -> int | None:
    """The converter's block id: the first all-digit part of the name."""
    return next((int(p) for p in name.split(".") if p.isdecimal()), None)


class _Converter:
    def __init__(self, hf_dir: Path, wtype: str, pre: str) -> None:
        import gguf
        from transformers import AutoConfig

        self.dir = hf_dir
        self.hp = AutoConfig.from_pretrained(hf_dir).to_dict()
        hf_arch = (self.hp.get("architectures") or [None])[0]
        if hf_arch not in ARCHITECTURES:
            raise ValueError(f"architecture {hf_arch!r} is not converted here")
        if wtype not in WTYPES:
            raise ValueError(f"wtype {wtype!r}: one of {', '.join(WTYPES)}")
        self.arch = ARCHITECTURES[hf_arch]
        self.model_arch = next(k for k, v in gguf.MODEL_ARCH_NAMES.items() if v == self.arch)
        self.ftype = {
            "F32": gguf.LlamaFileType.ALL_F32,
            "F16": gguf.LlamaFileType.MOSTLY_F16,
            "BF16": gguf.LlamaFileType.MOSTLY_BF16,
            "Q8_0": gguf.LlamaFileType.MOSTLY_Q8_0,
        }[wtype]
        self.qtype = gguf.GGMLQuantizationType[wtype]
        self.pre = pre
        self.layers = self.hp["num_hidden_layers"]
        self.names = gguf.get_tensor_name_map(self.model_arch, self.layers)
        self.writer = gguf.GGUFWriter(path=None, arch=self.arch)
        self.experts: dict[int, dict[str, np.ndarray]] = {}

    # -- tensors (ModelBase.prepare_tensors, modify_tensors) --

    def modify(self, name: str, data: np.ndarray, bid: int | None):
        if self.arch == "llama":  # LlamaModel.undo_permute
            heads, kv = self.hp["num_attention_heads"], self.hp["num_key_value_heads"]
            if name.endswith(("q_proj.weight", "q_proj.bias")):
                data = permute(data, heads)
            if name.endswith(("k_proj.weight", "k_proj.bias")):
                data = permute(data, kv)
        if self.arch == "qwen3moe":
            if name.endswith(("mlp.experts.gate_up_proj", "mlp.experts.gate_up_proj.weight")):
                ff = data.shape[-2] // 2
                stem = name.removesuffix(".weight").removesuffix(".gate_up_proj")
                yield self.map(f"{stem}.gate_proj.weight"), np.ascontiguousarray(data[..., :ff, :])
                yield self.map(f"{stem}.up_proj.weight"), np.ascontiguousarray(data[..., ff:, :])
                return
            if name.endswith("mlp.experts.down_proj"):
                yield self.map(f"{name}.weight"), data
                return
            if "experts" in name and not name.endswith("mlp.experts.down_proj.weight"):
                assert bid is not None
                n = self.hp.get("num_local_experts", self.hp.get("num_experts"))
                layer = self.experts.setdefault(bid, {})
                layer[name] = data
                if len(layer) < n * 3:
                    return
                for w in ("down_proj", "gate_proj", "up_proj"):
                    names = [f"model.layers.{bid}.mlp.experts.{x}.{w}.weight" for x in range(n)]
                    stacked = np.stack([layer.pop(e) for e in names])
                    yield self.map(f"model.layers.{bid}.mlp.experts.{w}.weight"), stacked
                return
        yield self.map(name), data

    def map(self, name: str) -> str:
        new = self.names.get_name(name, try_suffixes=(".weight", ".bias"))
        if new is None:
            raise ValueError(f"cannot map tensor {name!r}")
        return new

    def tensor_type(self, new_name: str, bid: int | None, n_dims: int):
        import gguf

        if n_dims <= 1 or new_name.endswith("_norm.weight"):
            return gguf.GGMLQuantizationType.F32
        router = gguf.TENSOR_NAMES[gguf.MODEL_TENSOR.FFN_GATE_INP].format(bid=bid) + ".weight"
        if new_name == router or not new_name.endswith(".weight"):
            return gguf.GGMLQuantizationType.F32
        return self.qtype

    def prepare_tensors(self) -> None:
        import gguf

        for name, data in _tensors(self.dir):
            if name.endswith(SKIPPED):
                continue
            bid = _block(name)
            for new_name, array in self.modify(name, data, bid):
                qtype = self.tensor_type(new_name, bid, array.ndim)
                try:
                    raw = gguf.quants.quantize(array, qtype)
                except gguf.QuantError:
                    qtype = gguf.GGMLQuantizationType.F16
                    raw = gguf.quants.quantize(array, qtype)
                self.writer.add_tensor(new_name, raw, raw_dtype=qtype)
        left = [k for d in self.experts.values() for k in d]
        if left:
            raise ValueError(f"unprocessed experts: {left}")

    # -- metadata (prepare_metadata, set_gguf_parameters, set_vocab) --

    def prepare_metadata(self) -> None:
        import gguf

        total, shared, expert, count = self.writer.get_total_parameter_count()
        meta = gguf.Metadata.load(None, self.dir, None, total)
        if meta.name is None:
            meta.name = self.dir.name
        if meta.size_label is None and total > 0:
            meta.size_label = gguf.size_label(total, shared, expert, count)
        self.writer.add_type(gguf.GGUFType.MODEL)
        meta.set_gguf_meta_model(self.writer)
        self.set_gguf_parameters()
        self.writer.add_quantization_version(gguf.GGML_QUANT_VERSION)
        self.set_vocab()

    def set_gguf_parameters(self) -> None:
        hp, w = self.hp, self.writer
        w.add_block_count(self.layers)
        w.add_context_length(hp["max_position_embeddings"])
        w.add_embedding_length(hp["hidden_size"])
        w.add_feed_forward_length(hp["intermediate_size"])
        w.add_head_count(hp["num_attention_heads"])
        w.add_head_count_kv(hp["num_key_value_heads"])
        rope = hp.get("rope_parameters") or {"rope_theta": hp.get("rope_theta")}
        if rope.get("rope_type", "default") not in ("default", None):
            # the script writes rope.scaling.* here; no tiny checkpoint has a scaled rope
            raise ValueError(f"rope_type {rope['rope_type']!r} is not converted here")
        if rope.get("rope_theta") is not None:
            w.add_rope_freq_base(rope["rope_theta"])
        w.add_layer_norm_rms_eps(hp["rms_norm_eps"])
        if (experts := hp.get("num_local_experts", hp.get("num_experts"))) is not None:
            w.add_expert_count(experts)
        if (used := hp.get("num_experts_per_tok")) is not None:
            w.add_expert_used_count(used)
        if (head_dim := hp.get("head_dim")) is not None:
            w.add_key_length(head_dim)
            w.add_value_length(head_dim)
        w.add_file_type(self.ftype)
        if self.arch == "llama":  # LlamaModel.set_gguf_parameters
            w.add_vocab_size(hp["vocab_size"])
            rope_dim = hp.get("head_dim") or hp["hidden_size"] // hp["num_attention_heads"]
            w.add_rope_dimension_count(rope_dim)
        if self.arch == "qwen3moe":  # Qwen2MoeModel.set_gguf_parameters
            if (ff := hp.get("moe_intermediate_size")) is not None:
                w.add_expert_feed_forward_length(ff)
            if (ff := hp.get("shared_expert_intermediate_size")) is not None:
                w.add_expert_shared_feed_forward_length(ff)

    def set_vocab(self) -> None:
        """TextModel._set_vocab_gpt2 over get_vocab_base."""
        import gguf
        from transformers import AutoTokenizer

        tokenizer = AutoTokenizer.from_pretrained(self.dir)
        n = self.hp.get("vocab_size", len(tokenizer.vocab))
        assert max(tokenizer.vocab.values()) < n
        reverse = {i: tok for tok, i in tokenizer.vocab.items()}
        added = tokenizer.get_added_vocab()
        decoder = tokenizer.added_tokens_decoder
        tokens: list[str] = []
        types: list[int] = []
        for i in range(n):
            if i not in reverse:
                tokens.append(f"[PAD{i}]")
                types.append(gguf.TokenType.UNUSED)
                continue
            token = reverse[i]
            if token in added:
                if not decoder[i].normalized:
                    token = tokenizer.decode(tokenizer.encode(token, add_special_tokens=False))
                if decoder[i].special or _looks_special(token):
                    types.append(gguf.TokenType.CONTROL)
                else:
                    token = token.replace("\u2581", " ")
                    types.append(gguf.TokenType.USER_DEFINED)
            else:
                types.append(gguf.TokenType.NORMAL)
            tokens.append(token)
        w = self.writer
        w.add_tokenizer_model("gpt2")
        w.add_tokenizer_pre(self.pre)
        w.add_token_list(tokens)
        w.add_token_types(types)
        gguf.SpecialVocab(self.dir, load_merges=True).add_to_gguf(w, quiet=True)

    def write(self, out: Path) -> None:
        self.prepare_tensors()
        self.prepare_metadata()
        self.writer.write_header_to_file(path=out)
        self.writer.write_kv_data_to_file()
        self.writer.write_tensors_to_file()
        self.writer.close()


def _looks_special(token: str) -> bool:
    """TextModel.does_token_look_special."""
    return (
        token in ("<pad>", "<mask>", "<2mass>", "[@BOS@]")
        or (token.startswith("<|") and token.endswith("|>"))
        or (token.startswith("<\uff5c") and token.endswith("\uff5c>"))
        or (token.startswith("<unused") and token.endswith(">"))
    )


def convert(
    hf_dir: str | Path, out_path: str | Path, wtype: str = "F32", pre: str = "gpt-2"
) -> Path:
    """Write the GGUF llama.cpp's converter writes for the Hugging Face directory `hf_dir`
    with `--outtype wtype` (F32, F16, BF16 or Q8_0) to `out_path`."""
    out = Path(out_path)
    _Converter(Path(hf_dir), wtype, pre).write(out)
    return out


__all__ = ["ARCHITECTURES", "WTYPES", "convert", "permute"]
