// tg.moe parses in the custom and the generic form, with and without a shared expert (3 or 4
// operands), and prints back unchanged; renormalize is left out when not set.
// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @routed(%x: tensor<1x64xbf16>, %r: tensor<64x4xbf16>, %g: tensor<256x32xbf16>, %u: tensor<256x32xbf16>, %d: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %y = "tg.moe"(%x, %r, %g, %u, %d) <{top_k = 2 : i64, scores = "softmax", renormalize = true}> : (tensor<1x64xbf16>, tensor<64x4xbf16>, tensor<256x32xbf16>, tensor<256x32xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
  func.return %y : tensor<1x64xbf16>
}
// CHECK: %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" renormalize true : (tensor<1x64xbf16>, tensor<64x4xbf16>, tensor<256x32xbf16>, tensor<256x32xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>

func.func @shared(%x: tensor<8x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>, %sg: tensor<64x48xf32>, %su: tensor<64x48xf32>, %sd: tensor<48x64xf32>, %sw: tensor<64x1xf32>) -> tensor<8x64xf32> {
  %a = tg.moe %x, %r, %g, %u, %d, %sg, %su, %sd top_k 1 scores "sigmoid" : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>) -> tensor<8x64xf32>
  %b = tg.moe %a, %r, %g, %u, %d, %sg, %su, %sd, %sw top_k 4 scores "softmax" renormalize false : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<64x1xf32>) -> tensor<8x64xf32>
  func.return %b : tensor<8x64xf32>
}
// CHECK: %a = tg.moe %x, %r, %g, %u, %d, %sg, %su, %sd top_k 1 scores "sigmoid" : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>) -> tensor<8x64xf32>
// CHECK: %b = tg.moe %a, %r, %g, %u, %d, %sg, %su, %sd, %sw top_k 4 scores "softmax" renormalize false : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<64x1xf32>) -> tensor<8x64xf32>
// CHECK-GENERIC: %y = "tg.moe"(%x, %r, %g, %u, %d) <{top_k = 2 : i64, scores = "softmax", renormalize = true}> : (tensor<1x64xbf16>, tensor<64x4xbf16>, tensor<256x32xbf16>, tensor<256x32xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
// CHECK-GENERIC: %a = "tg.moe"(%x, %r, %g, %u, %d, %sg, %su, %sd) <{top_k = 1 : i64, scores = "sigmoid"}> : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>) -> tensor<8x64xf32>
// CHECK-GENERIC: %b = "tg.moe"(%a, %r, %g, %u, %d, %sg, %su, %sd, %sw) <{top_k = 4 : i64, scores = "softmax", renormalize = false}> : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<64x1xf32>) -> tensor<8x64xf32>

// A chip's share of the experts (the tensor-parallel experts plan): 2 of the router's 4 experts.
func.func @held(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<128x32xf32>, %u: tensor<128x32xf32>, %d: tensor<64x64xf32>) -> tensor<1x64xf32> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" experts_held 2 : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}
// CHECK: %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" experts_held 2 : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
// CHECK-GENERIC: %y = "tg.moe"(%x, %r, %g, %u, %d) <{top_k = 2 : i64, scores = "softmax", experts_held = 2 : i64}> : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
