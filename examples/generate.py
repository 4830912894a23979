"""Writes the example tg programs of examples/ from the models' published dimensions.

    python examples/generate.py        # rewrites examples/*.mlir

The programs themselves are built in one place, spatial_dialect/tools/frontend/layers.py, which
`spatial-import` builds a GGUF checkpoint's step with too: a decoder layer for any dimensions, so
the real-shape layers (Llama-3-8B, Qwen3-8B, Qwen3-30B-A3B, Qwen3-Next-80B-A3B) and the
scaled-down ones that simulate in seconds are the same program at different sizes. This file
holds only what the examples add: the dimensions, with where each comes from, and which program
each file is. The tiny steps also come in f32 (`tiny_*_f32.mlir`), for chips without bf16
(Plasticine).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from spatial_dialect.tools.frontend.layers import (
    Batch,
    ExampleNames,
    Model,
    MoeBlock,
    NextModel,
    delta_layer_function,
    gemm_function,
    layer_function,
    stacked_layers_function,
    step_function,
)
from spatial_dialect.tools.frontend.tg_builder import print_functions

# Llama-3-8B: config.json of meta-llama/Meta-Llama-3-8B (hidden 4096, 32 heads, 8 kv heads,
# intermediate 14336, rms_norm_eps 1e-5).
LLAMA3_8B = Model("llama3_8b", 4096, 32, 8, 128, 14336, 1e-5, qk_norm=False)
# Qwen3-8B: config.json of Qwen/Qwen3-8B (hidden 4096, 32 heads, 8 kv heads, head_dim 128,
# intermediate 12288, rms_norm_eps 1e-6, q_norm/k_norm per head).
QWEN3_8B = Model("qwen3_8b", 4096, 32, 8, 128, 12288, 1e-6, qk_norm=True)
# Qwen3-30B-A3B: config.json of Qwen/Qwen3-30B-A3B (hidden 2048, 32 heads, 4 kv heads, head_dim
# 128, 128 experts, 8 per token, moe_intermediate_size 768, norm_topk_prob true, rms_norm_eps
# 1e-6, q_norm/k_norm per head; no shared expert; vocab 151936, untied LM head; 48 layers).
QWEN3_30B_A3B = Model(
    "qwen3_30b_a3b",
    2048,
    32,
    4,
    128,
    0,
    1e-6,
    qk_norm=True,
    moe=MoeBlock(128, 8, 768),
    vocab=151936,
)
# Llama-3.1-8B: config.json of meta-llama/Llama-3.1-8B (the Llama-3-8B dimensions, vocab 128256);
# rope scaling changes the cos/sin inputs, not the program.
LLAMA31_8B = replace(LLAMA3_8B, name="llama3_1_8b", vocab=128256)
# Llama-3-70B: config.json of meta-llama/Meta-Llama-3-70B (hidden 8192, 64 heads, 8 kv heads,
# intermediate 28672, 80 layers, rms_norm_eps 1e-5, vocab 128256); the compile-speed bench's
# largest program.
LLAMA3_70B = Model("llama3_70b", 8192, 64, 8, 128, 28672, 1e-5, qk_norm=False, vocab=128256)
# Llama-3.1-70B: config.json of meta-llama/Llama-3.1-70B (the Llama-3-70B dimensions and vocab);
# as for the 8B, rope scaling changes the cos/sin inputs, not the program.
LLAMA31_70B = replace(LLAMA3_70B, name="llama3_1_70b")
# Small enough to simulate in seconds, with every feature of the real ones (GQA 4:2, q/k norm).
TINY = Model("tiny", 128, 4, 2, 32, 256, 1e-6, qk_norm=True, vocab=512)
# The same in f32, for chips without bf16 (Plasticine's datapath is 32-bit).
TINY_F32 = replace(TINY, name="tiny_f32", elt="f32")
# The tiny model with Qwen3-30B-A3B's kind of FFN: 8 experts, 2 per token, expert FFN 64.
TINY_MOE = replace(TINY, name="tiny_moe", ffn=0, moe=MoeBlock(8, 2, 64))


def layer_program(m: Model, t: int, cache: int) -> str:
    return print_functions([layer_function(m, t, cache)])


def stacked_layers_program(m: Model, t: int, cache: int, layers: int) -> str:
    """`layers` decoder layers in a row, each with its own weights and cache (compile-speed bench)."""
    return print_functions([stacked_layers_function(m, t, cache, layers)])


def decode_step_program(
    m: Model,
    t: int,
    cache: int,
    layers: int = 1,
    users: int | None = None,
    block_size: int | None = None,
) -> str:
    """Embedding, `layers` decoder layers (each with its own weights and cache), final norm, LM
    head and greedy arg-max: a whole decode step. With `users`, the batched step `spatial-import
    --batch` writes (tg.batch_set_rows, tg.batch_attention): that many users, one token each, each
    with its own `cache`-row KV cache: contiguous, or with `block_size` a pool of blocks addressed
    by the step's block table (`--paged`)."""
    batch = None if users is None else Batch.decode(users, cache, block_size)
    return print_functions(
        [step_function(m, ExampleNames(m.q8_0), t, cache, layers, f"{m.name}_step", batch)]
    )


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


def delta_layer_program(m: NextModel, t: int) -> str:
    return print_functions([delta_layer_function(m, t)])


def gemm_program(name: str, m: int, k: int, n: int, elt: str = "bf16") -> str:
    return print_functions([gemm_function(name, m, k, n, elt)])


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
