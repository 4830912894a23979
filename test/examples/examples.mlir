// The shipped examples parse and verify at their real dimensions.
// RUN: spatial-opt %examples/llama3_8b_prefill.mlir | filecheck %s --check-prefix=LLAMA-PREFILL
// LLAMA-PREFILL: func.func @llama3_8b_layer(%x: tensor<128x4096xbf16>
// LLAMA-PREFILL: tg.attention %qr, %kc, %vc, %pos heads 32 kv_heads 8 head_dim 128 causal true {{.*}} : (tensor<128x4096xbf16>, tensor<4096x1024xbf16>, tensor<4096x1024xbf16>, tensor<1xi32>) -> tensor<128x4096xbf16>
// LLAMA-PREFILL: tg.matmul %n2, %w_gate : (tensor<128x4096xbf16>, tensor<4096x14336xbf16>) -> tensor<128x14336xbf16>
//
// RUN: spatial-opt %examples/llama3_8b_decode.mlir | filecheck %s --check-prefix=LLAMA-DECODE
// LLAMA-DECODE: func.func @llama3_8b_layer(%x: tensor<1x4096xbf16>
// LLAMA-DECODE: tg.set_rows %k_cache, %kr, %pos : (tensor<4096x1024xbf16>, tensor<1x1024xbf16>, tensor<1xi32>) -> tensor<4096x1024xbf16>
// LLAMA-DECODE: tg.matmul %act, %w_down : (tensor<1x14336xbf16>, tensor<14336x4096xbf16>) -> tensor<1x4096xbf16>
//
// RUN: spatial-opt %examples/qwen3_8b_prefill.mlir | filecheck %s --check-prefix=QWEN-PREFILL
// QWEN-PREFILL: tg.rms_norm %q, %q_norm eps 1.000000e-06 width 128 : (tensor<128x4096xbf16>, tensor<1x128xbf16>) -> tensor<128x4096xbf16>
// QWEN-PREFILL: tg.matmul %n2, %w_up : (tensor<128x4096xbf16>, tensor<4096x12288xbf16>) -> tensor<128x12288xbf16>
//
// RUN: spatial-opt %examples/qwen3_8b_decode.mlir | filecheck %s --check-prefix=QWEN-DECODE
// QWEN-DECODE: tg.rms_norm %k, %k_norm eps 1.000000e-06 width 128 : (tensor<1x1024xbf16>, tensor<1x128xbf16>) -> tensor<1x1024xbf16>
// QWEN-DECODE: tg.attention {{.*}} heads 32 kv_heads 8 head_dim 128 {{.*}} -> tensor<1x4096xbf16>
//
// RUN: spatial-opt %examples/tiny_decode.mlir | filecheck %s --check-prefix=TINY
// TINY: tg.gather_rows %embedding, %ids : (tensor<512x128xbf16>, tensor<1xi32>) -> tensor<1x128xbf16>
// TINY: tg.argmax %logits : (tensor<1x512xbf16>) -> tensor<1xi32>
//
// RUN: spatial-opt %examples/tiny_prefill.mlir | filecheck %s --check-prefix=TINY-PREFILL
// TINY-PREFILL: func.func @tiny_step(%ids: tensor<8xi32>
//
// RUN: spatial-opt %examples/qwen3_30b_a3b_decode.mlir | filecheck %s --check-prefix=MOE-DECODE
// MOE-DECODE: func.func @qwen3_30b_a3b_layer(%x: tensor<1x2048xbf16>
// MOE-DECODE: tg.attention {{.*}} heads 32 kv_heads 4 head_dim 128 {{.*}} -> tensor<1x4096xbf16>
// MOE-DECODE: %moe = tg.moe %n2, %router, %experts_gate, %experts_up, %experts_down top_k 8 scores "softmax" renormalize true : (tensor<1x2048xbf16>, tensor<2048x128xbf16>, tensor<262144x768xbf16>, tensor<262144x768xbf16>, tensor<98304x2048xbf16>) -> tensor<1x2048xbf16>
//
// RUN: spatial-opt %examples/qwen3_30b_a3b_prefill_f32.mlir | filecheck %s --check-prefix=MOE-PREFILL
// MOE-PREFILL: %moe = tg.moe {{.*}} : (tensor<128x2048xf32>, {{.*}}) -> tensor<128x2048xf32>
//
// RUN: spatial-opt %examples/tiny_moe_prefill.mlir | filecheck %s --check-prefix=TINY-MOE
// TINY-MOE: %l0_moe = tg.moe %l0_n2, %l0_router, %l0_experts_gate, %l0_experts_up, %l0_experts_down top_k 2 scores "softmax" renormalize true : (tensor<8x128xbf16>, tensor<128x8xbf16>, tensor<1024x64xbf16>, tensor<1024x64xbf16>, tensor<512x128xbf16>) -> tensor<8x128xbf16>
//
// RUN: spatial-opt %examples/gemm_small.mlir | filecheck %s --check-prefix=GEMM
// GEMM: tg.matmul %a, %b : (tensor<96x200xf32>, tensor<200x160xf32>) -> tensor<96x160xf32>
//
// RUN: spatial-opt %examples/qwen3_next_80b_a3b_prefill.mlir | filecheck %s --check-prefix=NEXT-PREFILL
// NEXT-PREFILL: func.func @qwen3_next_80b_a3b_layer(%x: tensor<128x2048xbf16>
// NEXT-PREFILL: %conv, %conv_state_next = tg.causal_conv %qkv, %conv_weight, %conv_state activation "silu" : (tensor<128x8192xbf16>, tensor<4x8192xbf16>, tensor<3x8192xbf16>) -> (tensor<128x8192xbf16>, tensor<3x8192xbf16>)
// NEXT-PREFILL: tg.l2_norm %q eps 1.000000e-06 width 128 : (tensor<128x2048xbf16>) -> tensor<128x2048xbf16>
// NEXT-PREFILL: tg.decay %a, %A_log, %dt_bias : (tensor<128x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<128x32xf32>
// NEXT-PREFILL: %core, %recurrent_state_next = tg.gated_delta %qn, %kn, %v, %g, %beta, %recurrent_state heads 32 k_heads 16 head_dim 128 {{.*}} -> (tensor<128x4096xbf16>, tensor<4096x128xbf16>)
//
// RUN: spatial-opt %examples/qwen3_next_80b_a3b_decode.mlir | filecheck %s --check-prefix=NEXT-DECODE
// NEXT-DECODE: tg.causal_conv {{.*}} : (tensor<1x8192xbf16>, tensor<4x8192xbf16>, tensor<3x8192xbf16>) -> (tensor<1x8192xbf16>, tensor<3x8192xbf16>)
// NEXT-DECODE: tg.gated_delta {{.*}} -> (tensor<1x4096xbf16>, tensor<4096x128xbf16>)
//
// RUN: spatial-opt %examples/tiny_qwen3_next_prefill.mlir | filecheck %s --check-prefix=SMALL-NEXT
// SMALL-NEXT: func.func @tiny_qwen3_next_layer(%x: tensor<40x128xbf16>
