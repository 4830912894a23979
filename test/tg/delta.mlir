// The Gated DeltaNet ops (l2_norm, decay, causal_conv, gated_delta) parse in the custom and the
// generic form and print back unchanged; the two that carry state return two results.
// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @delta(%x: tensor<8x192xbf16>, %w: tensor<4x192xbf16>, %cs: tensor<3x192xbf16>, %a: tensor<8x4xf32>, %al: tensor<1x4xf32>, %dt: tensor<1x4xf32>, %v: tensor<8x128xbf16>, %st: tensor<128x32xf32>) -> (tensor<8x128xbf16>, tensor<128x32xf32>, tensor<3x192xbf16>) {
  %y, %ns = tg.causal_conv %x, %w, %cs activation "silu" : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
  %y2, %ns2 = "tg.causal_conv"(%x, %w, %cs) : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
  %q = tg.head_slice %y head_dim 32 first 0 heads 2 : (tensor<8x192xbf16>) -> tensor<8x64xbf16>
  %qn = tg.l2_norm %q eps 1.0e-06 width 32 : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %kn = "tg.l2_norm"(%q) <{eps = 1.0e-06 : f32}> : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
  %g = tg.decay %a, %al, %dt : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
  %b = tg.sigmoid %a : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %o, %s = tg.gated_delta %qn, %kn, %v, %g, %b, %st heads 4 k_heads 2 head_dim 32 scale 0.176776692 : (tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x128xbf16>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xbf16>, tensor<128x32xf32>)
  func.return %o, %s, %ns : tensor<8x128xbf16>, tensor<128x32xf32>, tensor<3x192xbf16>
}
// CHECK: %y, %ns = tg.causal_conv %x, %w, %cs activation "silu" : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
// CHECK: %y2, %ns2 = tg.causal_conv %x, %w, %cs : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
// CHECK: %qn = tg.l2_norm %q eps 1.000000e-06 width 32 : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK: %kn = tg.l2_norm %q eps 1.000000e-06 : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK: %g = tg.decay %a, %al, %dt : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
// CHECK: %o, %s = tg.gated_delta %qn, %kn, %v, %g, %b, %st heads 4 k_heads 2 head_dim 32 scale 0.176776692 : (tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x128xbf16>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xbf16>, tensor<128x32xf32>)
// CHECK-GENERIC: %y, %ns = "tg.causal_conv"(%x, %w, %cs) <{activation = "silu"}> : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
// CHECK-GENERIC: %y2, %ns2 = "tg.causal_conv"(%x, %w, %cs) : (tensor<8x192xbf16>, tensor<4x192xbf16>, tensor<3x192xbf16>) -> (tensor<8x192xbf16>, tensor<3x192xbf16>)
// CHECK-GENERIC: %qn = "tg.l2_norm"(%q) <{eps = 1.000000e-06 : f32, width = 32 : i64}> : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK-GENERIC: %kn = "tg.l2_norm"(%q) <{eps = 1.000000e-06 : f32}> : (tensor<8x64xbf16>) -> tensor<8x64xbf16>
// CHECK-GENERIC: %g = "tg.decay"(%a, %al, %dt) : (tensor<8x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<8x4xf32>
// CHECK-GENERIC: %o, %s = "tg.gated_delta"(%qn, %kn, %v, %g, %b, %st) <{heads = 4 : i64, k_heads = 2 : i64, head_dim = 32 : i64, scale = 0.176776692 : f32}> : (tensor<8x64xbf16>, tensor<8x64xbf16>, tensor<8x128xbf16>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xbf16>, tensor<128x32xf32>)
