// docs/tg.md#mixed-element-types: each mix of float types the tg verifier accepts is a contract,
// computed so (f32 arithmetic, one rounding to the result's type), and runs within tolerance.
// RUN: spatial-run %s --entry norm_weight_f32 --target wormhole_n150 | filecheck %s
// RUN: spatial-run %s --entry layer_norm_mixed --target wormhole_n150 | filecheck %s
// RUN: spatial-run %s --entry head_matmul_f32 --target h100 | filecheck %s
// RUN: spatial-run %s --entry attention_f32 --target blackhole_p150 | filecheck %s
// RUN: spatial-run %s --entry attention_f32 --target h100 --backend triton-interpret | filecheck %s
// CHECK: PASS: 1 output(s) within tolerance

func.func @norm_weight_f32(%x: tensor<1x128xbf16>, %w: tensor<1x128xf32>) -> tensor<1x128xbf16> {
  %y = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<1x128xbf16>, tensor<1x128xf32>) -> tensor<1x128xbf16>
  func.return %y : tensor<1x128xbf16>
}

func.func @layer_norm_mixed(%x: tensor<8x64xbf16>, %w: tensor<1x64xf32>, %b: tensor<1x64xf16>) -> tensor<8x64xbf16> {
  %y = tg.layer_norm %x, %w, %b eps 1.000000e-05 : (tensor<8x64xbf16>, tensor<1x64xf32>, tensor<1x64xf16>) -> tensor<8x64xbf16>
  func.return %y : tensor<8x64xbf16>
}

func.func @head_matmul_f32(%a: tensor<8x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<8x64xf32> {
  %y = tg.head_matmul %a, %b heads 1 : (tensor<8x64xbf16>, tensor<64x64xbf16>) -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}

func.func @attention_f32(%q: tensor<1x128xbf16>, %k: tensor<64x64xbf16>, %v: tensor<64x64xbf16>, %p: tensor<1xi32>) -> tensor<1x128xf32> {
  %o = tg.attention %q, %k, %v, %p heads 4 kv_heads 2 head_dim 32 causal true scale 1.767767e-01 : (tensor<1x128xbf16>, tensor<64x64xbf16>, tensor<64x64xbf16>, tensor<1xi32>) -> tensor<1x128xf32>
  func.return %o : tensor<1x128xf32>
}
