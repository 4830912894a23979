// spatial-import --step both: the decode states what feeds it (tools/frontend/chaining.py), its
// ids the prefill's token and its position the row after the prefill's; --logits and --hidden
// return the logits and the final hidden state after the caches.
// RUN: %python -c "import sys; sys.path.insert(0, '%S/..'); from tiny_gguf import Tiny, write_gguf; write_gguf('%t.gguf', Tiny('qwen3', 'F16', tied=True))"
// RUN: spatial-import %t.gguf --step both --tokens 4 --cache 32 -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir
// RUN: spatial-import %t.gguf --step both --tokens 4 --cache 32 --logits --hidden -o %t.out.mlir
// RUN: filecheck %s --input-file %t.out.mlir --check-prefix=EXTRA

// CHECK-LABEL: func.func @qwen3_prefill(
// CHECK-NEXT:    %prefill.ids: tensor<4xi32>,
// CHECK-NOT:     chain.
// CHECK:         %prefill.pos: tensor<1xi32>,
// CHECK:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc : tensor<4xi32>,
// CHECK-LABEL: func.func @qwen3_decode(
// CHECK-NEXT:    %decode.ids: tensor<1xi32> {chain.fed_by = "token"},
// CHECK:         %decode.pos: tensor<1xi32> {chain.position = "next"},
// CHECK:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc : tensor<1xi32>,

// EXTRA-LABEL: func.func @qwen3_prefill(
// EXTRA:         ) -> (tensor<4xi32>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<32x64xf16>, tensor<4x256xf16>, tensor<4x128xf16>) {
// EXTRA:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc, %logits, %final : tensor<4xi32>,
// EXTRA-LABEL: func.func @qwen3_decode(
// EXTRA:         func.return %token, %l0_kc, %l0_vc, %l1_kc, %l1_vc, %logits, %final : tensor<1xi32>,
