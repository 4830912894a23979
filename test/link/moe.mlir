// link of tg.moe: the router GEMM into f32 logits, then per expert instance the route sections,
// the gate/up/down GEMMs, swiglu and moe_combine. A decode step (T = 1) reads its k chosen experts
// by indexed loads (`by @id stride D/32`); a step of T > 1 reads every expert at a fixed offset.
// The decision and its numbers are on every expert GEMM (`moe`). (Expert blocks that are not
// whole tiles are refused by name: link/refusals.mlir.)
// RUN: spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' 2>&1 | filecheck %s

func.func @decode(%x: tensor<1x64xbf16>, %r: tensor<64x4xbf16>, %g: tensor<256x32xbf16>, %u: tensor<256x32xbf16>, %d: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" renormalize true : (tensor<1x64xbf16>, tensor<64x4xbf16>, tensor<256x32xbf16>, tensor<256x32xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
  func.return %y : tensor<1x64xbf16>
}
// CHECK-LABEL: sp.entry @decode(@x, @r, @g, @u, @d) -> (@y)
// CHECK:       sp.program @y__logits op "tg.moe" kind gemm
// CHECK:         sp.tensor @y__logits : tensor<1x4xf32> tiles 1x1 scratch tiled
// CHECK:       sp.program @y__id0 op "tg.moe" kind route
// CHECK:         sp.load @y__logits[r0, k0] x [h, kw] -> %in0
// CHECK-NEXT:    sp.route %in0 -> %out top_k 2 scores "softmax" renormalize pick "id" at 0 cols 4 rows 1
// CHECK-NEXT:    sp.store %out -> @y__id0[r0, c0] x [h, 1]
// CHECK:       sp.program @y__weight0 op "tg.moe" kind route
// CHECK:         sp.route %in0 -> %out top_k 2 scores "softmax" renormalize pick "weight" at 0 cols 4 rows 1
// One expert is 3 matrices of 2 x 1 tiles of 2048 bytes: 12288 bytes.
// CHECK:       sp.program @y__gate0 op "tg.moe" kind gemm {{.*}}moe = "slot 0: gathered: T = 1 token reads its 2 of 4 experts, 2 x 12288 = 24576 bytes; dense would read 4 x 12288 = 49152"
// CHECK:         sp.tensor @y__id0 : tensor<1x1xi32> tiles 1x1 input tiled
// CHECK:         sp.load @g[k0, c0] x [kw, w] by @y__id0 stride 2 -> %in1
// CHECK:       sp.program @y__up0
// CHECK:         sp.load @u[k0, c0] x [kw, w] by @y__id0 stride 2 -> %in1
// CHECK:       sp.program @y__act0 op "tg.moe" kind map
// CHECK:         sp.map swiglu %in0, %in1 [full, full] -> %out valid 1x32
// CHECK:       sp.program @y__down0
// CHECK:         sp.tensor @y__down0 : tensor<1x64xf32> tiles 1x2 scratch tiled
// CHECK:         sp.load @d[k0, c0] x [kw, w] by @y__id0 stride 1 -> %in1
// The first slot starts the running f32 sum; the last writes the result.
// CHECK:       sp.program @y__sum0 op "tg.moe" kind map
// CHECK:         sp.load @y__weight0[r0, 0] x [h, 1] -> %in1
// CHECK-NEXT:    sp.map moe_combine %in0, %in1 [full, cols] -> %out valid 1x64
// CHECK:       sp.program @y__gate1 {{.*}}moe = "slot 1: gathered
// CHECK:         sp.load @g[k0, c0] x [kw, w] by @y__id1 stride 2 -> %in1
// CHECK:       sp.program @y op "tg.moe" kind map
// CHECK:         sp.tensor @y : tensor<1x64xbf16> tiles 1x2 output rows
// CHECK:         sp.map moe_combine %in0, %in1, %in2 [full, cols, full] -> %out valid 1x64

// -----

// Prefill: T * k = 16 >= E = 4 experts, each read once at its fixed tile row; the shared expert
// (with Qwen3-Next's sigmoid gate) starts the sum.
func.func @prefill(%x: tensor<8x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>, %sg: tensor<64x48xf32>, %su: tensor<64x48xf32>, %sd: tensor<48x64xf32>, %sw: tensor<64x1xf32>) -> tensor<8x64xf32> {
  %y = tg.moe %x, %r, %g, %u, %d, %sg, %su, %sd, %sw top_k 2 scores "sigmoid" : (tensor<8x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<64x1xf32>) -> tensor<8x64xf32>
  func.return %y : tensor<8x64xf32>
}
// CHECK-LABEL: sp.entry @prefill
// CHECK:       sp.program @y__logits op "tg.moe" kind gemm
// CHECK:       sp.program @y__gate_shared op "tg.moe" kind gemm
// CHECK:         sp.load @sg[k0, c0] x [kw, w] -> %in1
// CHECK:       sp.program @y__down_shared
// CHECK:       sp.program @y__shared_logit op "tg.moe" kind gemm
// CHECK:       sp.program @y__shared_scale op "tg.moe" kind map
// CHECK:         sp.map sigmoid
// CHECK:       sp.program @y__sum_shared op "tg.moe" kind map
// CHECK:         sp.map moe_combine %in0, %in1 [full, cols]
// CHECK:       sp.program @y__weight0 op "tg.moe" kind route
// CHECK:         sp.route %in0 -> %out top_k 2 scores "sigmoid" pick "expert" at 0 cols 4 rows 8
// CHECK:       sp.program @y__gate0 {{.*}}moe = "expert 0: dense: T = 8 tokens read every expert once, 4 x 24576 = 98304 bytes (min(E, T*k) = min(4, 16) = 4); gathering would read T*k = 16 experts"
// CHECK:         sp.load @g[k0, c0] x [kw, w] -> %in1
// CHECK:       sp.program @y__sum0
// CHECK:         sp.map moe_combine %in0, %in1, %in2 [full, cols, full]
// Expert 3's gate block starts at tile row 3 x 64 / 32 = 6, its down block at 3 x 32 / 32 = 3.
// CHECK:       sp.program @y__gate3 {{.*}}moe = "expert 3: dense
// CHECK:         sp.load @g[k0 + 6, c0] x [kw, w] -> %in1
// CHECK:       sp.program @y__down3
// CHECK:         sp.load @d[k0 + 3, c0] x [kw, w] -> %in1
// CHECK:       sp.program @y op "tg.moe" kind map
// CHECK:         sp.tensor @y : tensor<8x64xf32> tiles 1x2 output tiled
