"""Tiny Hugging Face checkpoints made by transformers itself, for the outside-oracle tests.

Each is what `save_pretrained` writes for a seeded, randomly initialised `XForCausalLM(config)` of
one of the four architectures spatial-import reads (llama, qwen3, qwen3moe, qwen3next), in f32,
with a byte-level BPE tokenizer trained here on a fixed text (tokenizer.json and
tokenizer_config.json, as a checkpoint on the Hub carries them). Nothing is downloaded.

The dimensions are the smallest that still exercise what differs between real models: grouped
query attention (4 heads over 2 KV heads), a head dimension whose product with the heads is not
the hidden size (qwen3), tied and untied heads, a mixture of experts (8 experts, 2 a token), and
Qwen3-Next's alternation of Gated DeltaNet and gated full-attention layers with partial rope.
Sizes are multiples of 32 (one tile) so the compiled programs run on every target.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

ARCHITECTURES = ("llama", "qwen3", "qwen3moe", "qwen3next")

VOCAB = 320
"""The model's vocabulary: the tokenizer's 256 byte symbols, its merges and special tokens, padded
to a tile multiple (the padding ids are never produced by the tokenizer)."""

CORPUS = (
    "The quick brown fox jumps over the lazy dog. A spatial accelerator is a mesh of cores, "
    "each with a small local memory, movement engines and an on-chip network that multicasts. "
    "Once upon a time there was a compiler that laid tensor programs out on such a mesh, and "
    "every program it printed was the plan its report priced. Tokens in, tokens out, the same "
    "as the model's reference implementation."
)
"""What the tokenizer is trained on (fixed, so every run makes the same merges)."""

PROMPT = "Once upon a time there was"
"""A prompt the tests generate from."""


@dataclass(frozen=True)
class Tiny:
    arch: str = "llama"
    tied: bool = False
    seed: int = 0
    layers: int = 2
    head_dim: int | None = None  # another head dimension than the architecture's below


def train_tokenizer(path: Path) -> None:
    """A byte-level BPE tokenizer (GPT-2's scheme, which Llama 3 and Qwen use) of at most VOCAB
    tokens, written as tokenizer.json and tokenizer_config.json in `path`."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB - 8,
        special_tokens=["<|endoftext|>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator([CORPUS], trainer)
    tok.save(str(path / "tokenizer.json"))
    (path / "tokenizer_config.json").write_text(
        '{"tokenizer_class": "PreTrainedTokenizerFast", "eos_token": "<|endoftext|>", '
        '"model_max_length": 256}\n'
    )


def config(t: Tiny):
    """The transformers config of a tiny model of `t.arch`."""

    cfg = arch_config(t)
    if t.head_dim is not None:
        cfg.head_dim = t.head_dim
    return cfg


def arch_config(t: Tiny):
    import transformers

    common = dict(
        vocab_size=VOCAB,
        hidden_size=128,
        num_hidden_layers=t.layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        rms_norm_eps=1e-6,
        tie_word_embeddings=t.tied,
        eos_token_id=0,
        bos_token_id=None,
        pad_token_id=None,
        # Weights of std 0.1 (not the 0.02 of training from scratch) give logits of std about 1,
        # so the greedy choices of 16 steps are at least 1e-2 apart for every architecture and
        # two f32 implementations cannot pick differently by rounding.
        initializer_range=0.1,
    )
    if t.arch == "llama":
        return transformers.LlamaConfig(
            **common, intermediate_size=256, head_dim=32, rope_theta=10000.0
        )
    if t.arch == "qwen3":
        # heads x head_dim = 4 x 64 = 256 != d: Qwen3's projections are not square
        return transformers.Qwen3Config(
            **common, intermediate_size=256, head_dim=64, rope_theta=1000000.0
        )
    if t.arch == "qwen3moe":
        return transformers.Qwen3MoeConfig(
            **common,
            intermediate_size=256,
            head_dim=32,
            num_experts=8,
            num_experts_per_tok=2,
            moe_intermediate_size=64,
            norm_topk_prob=True,
            decoder_sparse_step=1,
            mlp_only_layers=[],
        )
    if t.arch == "qwen3next":
        # one full-attention layer after three Gated DeltaNet layers, as the real model alternates
        layers = max(t.layers, 4)
        return transformers.Qwen3NextConfig(
            **{**common, "num_hidden_layers": layers},
            intermediate_size=256,
            head_dim=64,
            partial_rotary_factor=0.25,
            linear_conv_kernel_dim=4,
            linear_key_head_dim=32,
            linear_value_head_dim=32,
            linear_num_key_heads=2,
            linear_num_value_heads=4,
            num_experts=8,
            num_experts_per_tok=2,
            moe_intermediate_size=64,
            shared_expert_intermediate_size=64,
            norm_topk_prob=True,
            decoder_sparse_step=1,
            mlp_only_layers=[],
            full_attention_interval=4,
        )
    raise ValueError(f"no tiny {t.arch}; one of {', '.join(ARCHITECTURES)}")


def model(t: Tiny):
    """The seeded, randomly initialised f32 model (eval mode). Norm weights are drawn too (not
    left at their initial 1 or 0), so a checker that ignored one would be caught."""
    import torch
    import transformers

    torch.manual_seed(t.seed)
    cfg = config(t)
    cls = {
        "llama": transformers.LlamaForCausalLM,
        "qwen3": transformers.Qwen3ForCausalLM,
        "qwen3moe": transformers.Qwen3MoeForCausalLM,
        "qwen3next": transformers.Qwen3NextForCausalLM,
    }[t.arch]
    m = cls(cfg).to(torch.float32).eval()
    with torch.no_grad():
        for name, p in m.named_parameters():
            if "norm" in name or name.endswith(("A_log", "dt_bias")):
                p.copy_(p + 0.1 * torch.randn_like(p))
    return m


def save(m, path: str | Path) -> Path:
    """`m` as a Hugging Face directory: config.json, model.safetensors and the tokenizer, as
    `save_pretrained` writes them."""
    out = Path(path)
    out.mkdir(parents=True, exist_ok=True)
    m.save_pretrained(out, safe_serialization=True)
    train_tokenizer(out)
    return out


def hf_checkpoint(path: str | Path, t: Tiny = Tiny()) -> Path:
    """A Hugging Face directory of the tiny model of `t`."""
    return save(model(t), path)
