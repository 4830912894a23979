// tg.moe's experts plan linked (docs/passes.md#link-a-mixture-of-experts-reads-only-what-it-
// routes-to): chip c of n300 holds experts 2c and 2c + 1, and its route sections read its first
// held expert from an input the host supplies per chip (c x 2), listed after the function's
// arguments in the entry, split by rows, and named in mesh.chip_firsts.
// RUN: spatial-opt %s -p 'tensor-parallel{mesh=n300 prefer-experts=true},link{target=n300}' | filecheck %s

// Decode (T = 1): each of the top 2 slots routes an id counted from the chip's first (an expert
// the chip does not hold: id 0, weight 0) and loads its block by it.
func.func @decode(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) -> tensor<1x64xf32> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" renormalize true : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}
// CHECK:      sp.entry @decode(@x, @r, @g, @u, @d, @y__first) -> (@y_1) attributes {mesh.inputs = [#mesh.sharding<@n300, [replicate]>, #mesh.sharding<@n300, [replicate]>, #mesh.sharding<@n300, [shard(0)]>, #mesh.sharding<@n300, [shard(0)]>, #mesh.sharding<@n300, [shard(0)]>, #mesh.sharding<@n300, [shard(0)]>]
// CHECK-SAME: mesh.chip_firsts = {y__first = 2 : i64}
// CHECK:      sp.tensor @y__first : tensor<1x1xi32> tiles 1x1 input tiled
// CHECK:      sp.load @y__first[0, 0] x [1, 1] -> %first
// CHECK-NEXT: sp.route %in0 first %first -> %out top_k 2 scores "softmax" renormalize pick "id" at 0 cols 4 rows 1 held 2
// CHECK:      sp.route %in0 first %first -> %out top_k 2 scores "softmax" renormalize pick "weight" at 0 cols 4 rows 1 held 2
// CHECK:      sp.tensor @g : tensor<128x32xf32>
// CHECK:      by @y__id0 stride 2
// CHECK:      sp.route %in0 first %first -> %out {{.*}} pick "id" at 1 cols 4 rows 1 held 2
// CHECK:      mesh.step @y_1 all_reduce @y axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]>

// Prefill (T = 2, dense): instance i of the chip's 2 is expert first + i, at block i of its rows.
func.func @prefill(%xp: tensor<2x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) -> tensor<2x64xf32> {
  %y = tg.moe %xp, %r, %g, %u, %d top_k 2 scores "softmax" renormalize true : (tensor<2x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<2x64xf32>
  func.return %y : tensor<2x64xf32>
}
// CHECK:      sp.entry @prefill(@xp, @r, @g, @u, @d, @y__first)
// CHECK:      sp.route %in0 first %first -> %out {{.*}} pick "expert" at 0 cols 4 rows 2 held 2
// CHECK:      sp.route %in0 first %first -> %out {{.*}} pick "expert" at 1 cols 4 rows 2 held 2
// CHECK-NOT:  pick "expert" at 2
