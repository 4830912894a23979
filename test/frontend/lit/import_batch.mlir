// spatial-import --batch B [--paged BLOCK] (docs/tg.md#batched-decode): the decode is B users of
// one token each, at their own positions (%pos: tensor<Bxi32>) in their own KV cache, B x cache
// rows contiguous or a pool of blocks with a block table; with --step both the prefill is one
// user's admission into its slot of the same cache tensors (one deployment: the caches keep their
// names and shapes in both functions), addressed through its table row: a contiguous cache is
// one block of --cache rows per user. The decode's ids and position carry the chain marks, per
// user (spatial-run --chain admits each user, then decodes them together).
// RUN: %python -c "import sys; sys.path.insert(0, '%S/..'); from tiny_gguf import Tiny, write_gguf; write_gguf('%t.gguf', Tiny('qwen3', 'F16', tied=True))"
// RUN: spatial-import %t.gguf --step decode --cache 32 --batch 3 -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: spatial-import %t.gguf --step both --tokens 4 --cache 32 --batch 3 --paged 8 -o %t.paged.mlir
// RUN: filecheck %s --input-file %t.paged.mlir --check-prefix=PAGED
// RUN: spatial-import %t.gguf --step both --tokens 4 --cache 32 --batch 3 -o %t.both.mlir
// RUN: filecheck %s --input-file %t.both.mlir --check-prefix=BOTH

// CHECK:       over a 32-row cache per user, 3 user(s), contiguous
// CHECK-LABEL: func.func @qwen3_decode(
// CHECK-NEXT:    %ids: tensor<3xi32>,
// CHECK:         %l0_k_cache: tensor<96x64xf16>,
// CHECK:         %cos: tensor<3x16xf32>
// CHECK:         %pos: tensor<3xi32>,
// CHECK-NOT:     block_table
// CHECK:         %l0_kc = tg.batch_set_rows %l0_k_cache, %l0_kr, %pos : (tensor<96x64xf16>, tensor<3x64xf16>, tensor<3xi32>) -> tensor<96x64xf16>
// CHECK-NEXT:    %l0_vc = tg.batch_set_rows %l0_v_cache, %l0_v, %pos : (tensor<96x64xf16>, tensor<3x64xf16>, tensor<3xi32>) -> tensor<96x64xf16>
// CHECK-NEXT:    %l0_attn = tg.batch_attention %l0_qr, %l0_kc, %l0_vc, %pos heads 4 kv_heads 2 head_dim 32 scale 1.767767e-01 : (tensor<3x128xf16>, tensor<96x64xf16>, tensor<96x64xf16>, tensor<3xi32>) -> tensor<3x128xf16>
// CHECK:         %token = tg.argmax %logits : (tensor<3x256xf16>) -> tensor<3xi32>
// CHECK-NEXT:    func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc : tensor<3xi32>, tensor<96x64xf16>,

// PAGED:       over a 32-row cache per user, 3 user(s), paged in blocks of 8 rows
// PAGED-LABEL: func.func @qwen3_prefill(
// PAGED-NEXT:    %prefill.ids: tensor<4xi32>,
// PAGED:         %l0_k_cache: tensor<96x64xf16>,
// PAGED:         %prefill.pos: tensor<1xi32>,
// PAGED-NEXT:    %prefill.block_table: tensor<1x4xi32>,
// PAGED:         %l0_kc = tg.batch_set_rows %l0_k_cache, %l0_kr, %prefill.pos, %prefill.block_table block_size 8 : (tensor<96x64xf16>, tensor<4x64xf16>, tensor<1xi32>, tensor<1x4xi32>) -> tensor<96x64xf16>
// PAGED:         %l0_attn = tg.batch_attention %l0_qr, %l0_kc, %l0_vc, %prefill.pos, %prefill.block_table heads 4 kv_heads 2 head_dim 32 scale 1.767767e-01 block_size 8 : (tensor<4x128xf16>,
// PAGED:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc : tensor<4xi32>, tensor<96x64xf16>,
// PAGED-LABEL: func.func @qwen3_decode(
// PAGED-NEXT:    %decode.ids: tensor<3xi32> {chain.fed_by = "token"},
// PAGED:         %l0_k_cache: tensor<96x64xf16>,
// PAGED:         %decode.pos: tensor<3xi32> {chain.position = "next"},
// PAGED-NEXT:    %decode.block_table: tensor<3x4xi32>,
// PAGED:         %l0_kc = tg.batch_set_rows %l0_k_cache, %l0_kr, %decode.pos, %decode.block_table block_size 8 : (tensor<96x64xf16>, tensor<3x64xf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<96x64xf16>
// PAGED:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc : tensor<3xi32>, tensor<96x64xf16>,

// BOTH-LABEL: func.func @qwen3_prefill(
// BOTH:         %prefill.block_table: tensor<1x1xi32>,
// BOTH:         %l0_kc = tg.batch_set_rows %l0_k_cache, %l0_kr, %prefill.pos, %prefill.block_table block_size 32 : (tensor<96x64xf16>, tensor<4x64xf16>, tensor<1xi32>, tensor<1x1xi32>) -> tensor<96x64xf16>
// BOTH-LABEL: func.func @qwen3_decode(
// BOTH-NOT:     block_table
// BOTH:         %l0_kc = tg.batch_set_rows %l0_k_cache, %l0_kr, %decode.pos : (tensor<96x64xf16>, tensor<3x64xf16>, tensor<3xi32>) -> tensor<96x64xf16>
