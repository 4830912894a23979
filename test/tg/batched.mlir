// The batched decode ops (tg.batch_set_rows, tg.batch_attention; docs/tg.md#batched-decode) parse in
// the custom and the generic form and print back unchanged, contiguous (no table) and paged (a
// block table and block_size), one token per user and a prefill of 4 rows into one user's slot.
// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @step(%q: tensor<3x64xbf16>, %k: tensor<3x32xbf16>, %kc: tensor<48x32xbf16>, %pos: tensor<3xi32>, %table: tensor<3x4xi32>, %q4: tensor<4x64xbf16>, %k4: tensor<4x32xbf16>, %p1: tensor<1xi32>, %t1: tensor<1x4xi32>) -> (tensor<3x64xbf16>, tensor<3x64xf32>, tensor<4x64xbf16>) {
  %c = tg.batch_set_rows %kc, %k, %pos : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>) -> tensor<48x32xbf16>
  %o = tg.batch_attention %q, %c, %c, %pos heads 4 kv_heads 2 head_dim 16 scale 0.25 : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>) -> tensor<3x64xbf16>
  %pc = "tg.batch_set_rows"(%kc, %k, %pos, %table) <{block_size = 4 : i64}> : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<48x32xbf16>
  %po = tg.batch_attention %q, %pc, %pc, %pos, %table heads 4 kv_heads 2 head_dim 16 scale 0.25 block_size 4 : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x64xf32>
  %fc = tg.batch_set_rows %kc, %k4, %p1, %t1 block_size 4 : (tensor<48x32xbf16>, tensor<4x32xbf16>, tensor<1xi32>, tensor<1x4xi32>) -> tensor<48x32xbf16>
  %fo = tg.batch_attention %q4, %fc, %fc, %p1, %t1 heads 4 kv_heads 2 head_dim 16 scale 0.25 block_size 4 : (tensor<4x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<1xi32>, tensor<1x4xi32>) -> tensor<4x64xbf16>
  func.return %o, %po, %fo : tensor<3x64xbf16>, tensor<3x64xf32>, tensor<4x64xbf16>
}
// CHECK: %c = tg.batch_set_rows %kc, %k, %pos : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>) -> tensor<48x32xbf16>
// CHECK: %o = tg.batch_attention %q, %c, %c, %pos heads 4 kv_heads 2 head_dim 16 scale 2.500000e-01 : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>) -> tensor<3x64xbf16>
// CHECK: %pc = tg.batch_set_rows %kc, %k, %pos, %table block_size 4 : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<48x32xbf16>
// CHECK: %po = tg.batch_attention %q, %pc, %pc, %pos, %table heads 4 kv_heads 2 head_dim 16 scale 2.500000e-01 block_size 4 : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x64xf32>
// CHECK: %fc = tg.batch_set_rows %kc, %k4, %p1, %t1 block_size 4 : (tensor<48x32xbf16>, tensor<4x32xbf16>, tensor<1xi32>, tensor<1x4xi32>) -> tensor<48x32xbf16>
// CHECK: %fo = tg.batch_attention %q4, %fc, %fc, %p1, %t1 heads 4 kv_heads 2 head_dim 16 scale 2.500000e-01 block_size 4 : (tensor<4x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<1xi32>, tensor<1x4xi32>) -> tensor<4x64xbf16>
// CHECK-GENERIC: %c = "tg.batch_set_rows"(%kc, %k, %pos) : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>) -> tensor<48x32xbf16>
// CHECK-GENERIC: %o = "tg.batch_attention"(%q, %c, %c, %pos) <{heads = 4 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.500000e-01 : f32}> : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>) -> tensor<3x64xbf16>
// CHECK-GENERIC: %pc = "tg.batch_set_rows"(%kc, %k, %pos, %table) <{block_size = 4 : i64}> : (tensor<48x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<48x32xbf16>
// CHECK-GENERIC: %po = "tg.batch_attention"(%q, %pc, %pc, %pos, %table) <{heads = 4 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, scale = 2.500000e-01 : f32, block_size = 4 : i64}> : (tensor<3x64xbf16>, tensor<48x32xbf16>, tensor<48x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x64xf32>
