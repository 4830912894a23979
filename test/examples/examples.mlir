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
// RUN: spatial-opt %examples/gemm_small.mlir | filecheck %s --check-prefix=GEMM
// GEMM: tg.matmul %a, %b : (tensor<96x200xf32>, tensor<200x160xf32>) -> tensor<96x160xf32>
