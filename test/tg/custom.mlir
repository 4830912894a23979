// The custom form of every tg op parses, and prints back unchanged after the round trip.
// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @custom(%a: tensor<64x128xbf16>, %b: tensor<128x32xbf16>, %w: tensor<1x32xf32>,
                   %i: tensor<8x32xi8>, %ids: tensor<4xi32>, %pos: tensor<1xi32>,
                   %cache: tensor<64x32xbf16>, %cs: tensor<64x8xbf16>,
                   %i2: tensor<32x8xi8>, %k1: tensor<64x16xbf16>) -> tensor<64x32xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xbf16>
  %f = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
  %ii = tg.matmul %i, %i2 : (tensor<8x32xi8>, tensor<32x8xi8>) -> tensor<8x8xi32>
  %add = tg.add %f, %w : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %sub = tg.sub %add, %f : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %mul = tg.mul %sub, %w : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %silu = tg.silu %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %relu = tg.relu %i : (tensor<8x32xi8>) -> tensor<8x32xi8>
  %sig = tg.sigmoid %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %sp = tg.softplus %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %g0 = tg.gelu %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %g1 = tg.gelu %c approximate "tanh" : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %sc = tg.scale %c factor 1.250000e-01 : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %cap = tg.softcap %c cap 3.000000e+01 : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %sw = tg.swiglu %c, %silu : (tensor<64x32xbf16>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %n0 = tg.rms_norm %f, %w eps 1.000000e-06 : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %n1 = tg.rms_norm %f, %w, %add eps 1.000000e-05 : (tensor<64x32xf32>, tensor<1x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  %n2 = tg.rms_norm %c, %w eps 1.000000e-06 width 32 : (tensor<64x32xbf16>, tensor<1x32xf32>) -> tensor<64x32xbf16>
  %ln = tg.layer_norm %f, %w, %w eps 1.000000e-05 : (tensor<64x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
  %r0 = tg.rope %c, %cs, %cs head_dim 16 style "neox" : (tensor<64x32xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) -> tensor<64x32xbf16>
  %r1 = tg.rope %c, %cs, %cs head_dim 16 style "interleaved" : (tensor<64x32xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) -> tensor<64x32xbf16>
  %at0 = tg.attention %c, %k1, %c heads 2 kv_heads 1 head_dim 16 causal true scale 2.500000e-01 : (tensor<64x32xbf16>, tensor<64x16xbf16>, tensor<64x32xbf16>) -> tensor<64x64xbf16>
  %at1 = tg.attention %c, %c, %c, %pos heads 2 kv_heads 2 head_dim 16 causal false scale 2.500000e-01 : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<1xi32>) -> tensor<64x32xbf16>
  %sm = tg.softmax %f : (tensor<64x32xf32>) -> tensor<64x32xf32>
  %t = tg.transpose %c : (tensor<64x32xbf16>) -> tensor<32x64xbf16>
  %emb = tg.gather_rows %cache, %ids : (tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x32xbf16>
  %kv = tg.set_rows %cache, %emb, %pos : (tensor<64x32xbf16>, tensor<4x32xbf16>, tensor<1xi32>) -> tensor<64x32xbf16>
  %am = tg.argmax %f : (tensor<64x32xf32>) -> tensor<64xi32>
  %v = tg.add %ids, %ids : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return %kv : tensor<64x32xbf16>
}

// CHECK-LABEL: func.func @custom
// CHECK-NEXT: %c = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %f = tg.matmul %a, %b : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xf32>
// CHECK-NEXT: %ii = tg.matmul %i, %i2 : (tensor<8x32xi8>, tensor<32x8xi8>) -> tensor<8x8xi32>
// CHECK-NEXT: %add = tg.add %f, %w : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %sub = tg.sub %add, %f : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %mul = tg.mul %sub, %w : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %silu = tg.silu %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %relu = tg.relu %i : (tensor<8x32xi8>) -> tensor<8x32xi8>
// CHECK-NEXT: %sig = tg.sigmoid %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %sp = tg.softplus %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %g0 = tg.gelu %c : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %g1 = tg.gelu %c approximate "tanh" : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %sc = tg.scale %c factor 1.250000e-01 : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %cap = tg.softcap %c cap 3.000000e+01 : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %sw = tg.swiglu %c, %silu : (tensor<64x32xbf16>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %n0 = tg.rms_norm %f, %w eps 1.000000e-06 : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %n1 = tg.rms_norm %f, %w, %add eps 1.000000e-05 : (tensor<64x32xf32>, tensor<1x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %n2 = tg.rms_norm %c, %w eps 1.000000e-06 width 32 : (tensor<64x32xbf16>, tensor<1x32xf32>) -> tensor<64x32xbf16>
// CHECK-NEXT: %ln = tg.layer_norm %f, %w, %w eps 1.000000e-05 : (tensor<64x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %r0 = tg.rope %c, %cs, %cs head_dim 16 style "neox" : (tensor<64x32xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %r1 = tg.rope %c, %cs, %cs head_dim 16 style "interleaved" : (tensor<64x32xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) -> tensor<64x32xbf16>
// CHECK-NEXT: %at0 = tg.attention %c, %k1, %c heads 2 kv_heads 1 head_dim 16 causal true scale 2.500000e-01 : (tensor<64x32xbf16>, tensor<64x16xbf16>, tensor<64x32xbf16>) -> tensor<64x64xbf16>
// CHECK-NEXT: %at1 = tg.attention %c, %c, %c, %pos heads 2 kv_heads 2 head_dim 16 causal false scale 2.500000e-01 : (tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<64x32xbf16>, tensor<1xi32>) -> tensor<64x32xbf16>
// CHECK-NEXT: %sm = tg.softmax %f : (tensor<64x32xf32>) -> tensor<64x32xf32>
// CHECK-NEXT: %t = tg.transpose %c : (tensor<64x32xbf16>) -> tensor<32x64xbf16>
// CHECK-NEXT: %emb = tg.gather_rows %cache, %ids : (tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x32xbf16>
// CHECK-NEXT: %kv = tg.set_rows %cache, %emb, %pos : (tensor<64x32xbf16>, tensor<4x32xbf16>, tensor<1xi32>) -> tensor<64x32xbf16>
// CHECK-NEXT: %am = tg.argmax %f : (tensor<64x32xf32>) -> tensor<64xi32>
// CHECK-NEXT: %v = tg.add %ids, %ids : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK-NEXT: func.return %kv : tensor<64x32xbf16>
// CHECK-GENERIC: %c = "tg.matmul"(%a, %b) : (tensor<64x128xbf16>, tensor<128x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %add = "tg.add"(%f, %w) : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %sub = "tg.sub"(%add, %f) : (tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %mul = "tg.mul"(%sub, %w) : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %silu = "tg.silu"(%c) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %relu = "tg.relu"(%i) : (tensor<8x32xi8>) -> tensor<8x32xi8>
// CHECK-GENERIC: %sig = "tg.sigmoid"(%c) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %sp = "tg.softplus"(%c) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %g0 = "tg.gelu"(%c) : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %sc = "tg.scale"(%c) <{factor = 1.250000e-01 : f32}> : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %cap = "tg.softcap"(%c) <{cap = 3.000000e+01 : f32}> : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %sw = "tg.swiglu"(%c, %silu) : (tensor<64x32xbf16>, tensor<64x32xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %n0 = "tg.rms_norm"(%f, %w) <{eps = 1.000000e-06 : f32}> : (tensor<64x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %ln = "tg.layer_norm"(%f, %w, %w) <{eps = 1.000000e-05 : f32}> : (tensor<64x32xf32>, tensor<1x32xf32>, tensor<1x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %r0 = "tg.rope"(%c, %cs, %cs) <{head_dim = 16 : i64, style = "neox"}> : (tensor<64x32xbf16>, tensor<64x8xbf16>, tensor<64x8xbf16>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %at0 = "tg.attention"(%c, %k1, %c) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 2.500000e-01 : f32}> : (tensor<64x32xbf16>, tensor<64x16xbf16>, tensor<64x32xbf16>) -> tensor<64x64xbf16>
// CHECK-GENERIC: %sm = "tg.softmax"(%f) : (tensor<64x32xf32>) -> tensor<64x32xf32>
// CHECK-GENERIC: %t = "tg.transpose"(%c) : (tensor<64x32xbf16>) -> tensor<32x64xbf16>
// CHECK-GENERIC: %emb = "tg.gather_rows"(%cache, %ids) : (tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x32xbf16>
// CHECK-GENERIC: %kv = "tg.set_rows"(%cache, %emb, %pos) : (tensor<64x32xbf16>, tensor<4x32xbf16>, tensor<1xi32>) -> tensor<64x32xbf16>
// CHECK-GENERIC: %am = "tg.argmax"(%f) : (tensor<64x32xf32>) -> tensor<64xi32>
