// The head ops (head_slice, join, head_matmul) and the integer ops (int_requant, int_clamp) parse
// in the custom and the generic form and print back unchanged after the round trip.
// RUN: %roundtrip
// RUN: %generic_roundtrip


func.func @heads(%x: tensor<4x192xbf16>, %a: tensor<4x64xf32>, %w: tensor<64x32xf32>) -> tensor<4x256xbf16> {
  %q = tg.head_slice %x head_dim 32 first 0 heads 2 : (tensor<4x192xbf16>) -> tensor<4x64xbf16>
  %k = "tg.head_slice"(%x) <{head_dim = 32 : i64, first = 2 : i64, heads = 4 : i64}> : (tensor<4x192xbf16>) -> tensor<4x128xbf16>
  %j = tg.join %q, %k, %q : (tensor<4x64xbf16>, tensor<4x128xbf16>, tensor<4x64xbf16>) -> tensor<4x256xbf16>
  %m = "tg.head_matmul"(%a, %w) <{heads = 2 : i64}> : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
  func.return %j : tensor<4x256xbf16>
}
// CHECK: %q = tg.head_slice %x head_dim 32 first 0 heads 2 : (tensor<4x192xbf16>) -> tensor<4x64xbf16>
// CHECK: %k = tg.head_slice %x head_dim 32 first 2 heads 4 : (tensor<4x192xbf16>) -> tensor<4x128xbf16>
// CHECK: %j = tg.join %q, %k, %q : (tensor<4x64xbf16>, tensor<4x128xbf16>, tensor<4x64xbf16>) -> tensor<4x256xbf16>
// CHECK: %m = tg.head_matmul %a, %w heads 2 : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>

func.func @integer(%i: tensor<4x64xi32>) -> tensor<4x64xi8> {
  %r = tg.int_requant %i scale 0.5 zero_point -3 : (tensor<4x64xi32>) -> tensor<4x64xi8>
  %r2 = "tg.int_requant"(%i) <{scale = 2.5e-01 : f32}> : (tensor<4x64xi32>) -> tensor<4x64xi8>
  %c = "tg.int_clamp"(%r) <{lo = -100 : i64, hi = 100 : i64}> : (tensor<4x64xi8>) -> tensor<4x64xi8>
  %c2 = tg.int_clamp %i lo 0 hi 1000000 : (tensor<4x64xi32>) -> tensor<4x64xi32>
  func.return %c : tensor<4x64xi8>
}
// CHECK: %r = tg.int_requant %i scale 5.000000e-01 zero_point -3 : (tensor<4x64xi32>) -> tensor<4x64xi8>
// CHECK: %r2 = tg.int_requant %i scale 2.500000e-01 : (tensor<4x64xi32>) -> tensor<4x64xi8>
// CHECK: %c = tg.int_clamp %r lo -100 hi 100 : (tensor<4x64xi8>) -> tensor<4x64xi8>
// CHECK: %c2 = tg.int_clamp %i lo 0 hi 1000000 : (tensor<4x64xi32>) -> tensor<4x64xi32>
// CHECK-GENERIC: %q = "tg.head_slice"(%x) <{head_dim = 32 : i64, first = 0 : i64, heads = 2 : i64}> : (tensor<4x192xbf16>) -> tensor<4x64xbf16>
// CHECK-GENERIC: %j = "tg.join"(%q, %k, %q) : (tensor<4x64xbf16>, tensor<4x128xbf16>, tensor<4x64xbf16>) -> tensor<4x256xbf16>
// CHECK-GENERIC: %m = "tg.head_matmul"(%a, %w) <{heads = 2 : i64}> : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x64xf32>
// CHECK-GENERIC: %r = "tg.int_requant"(%i) <{scale = 5.000000e-01 : f32, zero_point = -3 : i64}> : (tensor<4x64xi32>) -> tensor<4x64xi8>
// CHECK-GENERIC: %c = "tg.int_clamp"(%r) <{lo = -100 : i64, hi = 100 : i64}> : (tensor<4x64xi8>) -> tensor<4x64xi8>
