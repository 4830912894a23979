// RUN: %roundtrip
// The mesh dialect in its custom form, after a round trip through the generic form (docs/mesh.md).

// CHECK-LABEL: mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// CHECK: %{{.*}} = mesh.shard %{{.*}} to #mesh.sharding<@n300, [shard(1)]> : tensor<32x1024xbf16>
// CHECK: %[[P:.*]] = mesh.all_reduce %{{.*}} axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "wo is row-parallel; the residual add needs it whole" cost #mesh.cost<bytes = 65536, links = 1, hops = 1, ns = 20283> : tensor<32x1024xbf16> -> tensor<32x1024xbf16>
// CHECK: mesh.all_gather %[[P]] axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<32x1024xbf16> -> tensor<32x2048xbf16>
// CHECK: mesh.reduce_scatter %{{.*}} axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<32x1024xbf16> -> tensor<16x1024xbf16>
// CHECK: mesh.all_to_all %{{.*}} axis 0 from #mesh.sharding<@n300, [shard(0)]> to #mesh.sharding<@n300, [shard(1)]> : tensor<16x1024xbf16> -> tensor<32x512xbf16>
mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @f(%x: tensor<32x1024xbf16>, %h: tensor<16x1024xbf16>) -> tensor<32x1024xbf16> {
  %w = mesh.shard %x to #mesh.sharding<@n300, [shard(1)]> : tensor<32x1024xbf16>
  %p = mesh.all_reduce %x axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "wo is row-parallel; the residual add needs it whole" cost #mesh.cost<bytes = 65536, links = 1, hops = 1, ns = 20283> : tensor<32x1024xbf16> -> tensor<32x1024xbf16>
  %g = mesh.all_gather %p axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<32x1024xbf16> -> tensor<32x2048xbf16>
  %r = mesh.reduce_scatter %x axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<32x1024xbf16> -> tensor<16x1024xbf16>
  %a = mesh.all_to_all %h axis 0 from #mesh.sharding<@n300, [shard(0)]> to #mesh.sharding<@n300, [shard(1)]> : tensor<16x1024xbf16> -> tensor<32x512xbf16>
  func.return %p : tensor<32x1024xbf16>
}

// -----

// A 2-D mesh: galaxy's 8x4, each chip holding a [K/4, N/8] block; reductions along either axis.
// CHECK-LABEL: mesh.mesh @tg shape 8x4 topology [line, line] links [4, 3] preset "galaxy"
// CHECK: mesh.all_reduce %{{.*}} axis 1 from #mesh.sharding<@tg, [shard(1), partial(sum)]> to #mesh.sharding<@tg, [shard(1), replicate]> : tensor<32x128xf32> -> tensor<32x128xf32>
// CHECK: mesh.all_gather %{{.*}} axis 0 from #mesh.sharding<@tg, [shard(1), replicate]> to #mesh.sharding<@tg, [replicate, replicate]> : tensor<32x128xf32> -> tensor<32x1024xf32>
mesh.mesh @tg shape 8x4 topology [line, line] links [4, 3] preset "galaxy"
func.func @g(%y: tensor<32x128xf32>) -> tensor<32x1024xf32> {
  %s = mesh.all_reduce %y axis 1 from #mesh.sharding<@tg, [shard(1), partial(sum)]> to #mesh.sharding<@tg, [shard(1), replicate]> : tensor<32x128xf32> -> tensor<32x128xf32>
  %w = mesh.all_gather %s axis 0 from #mesh.sharding<@tg, [shard(1), replicate]> to #mesh.sharding<@tg, [replicate, replicate]> : tensor<32x128xf32> -> tensor<32x1024xf32>
  func.return %w : tensor<32x1024xf32>
}

// -----

// A mesh without a preset (a [mesh] table of a TOML target) keeps only its numbers.
// CHECK: mesh.mesh @custom shape 3 topology [ring] links [2]{{$}}
mesh.mesh @custom shape 3 topology [ring] links [2]

// -----

// Both axes split dim 0, major to minor: the minor axis (1) is gathered first.
// CHECK-LABEL: mesh.mesh @q
// CHECK: mesh.all_gather %{{.*}} axis 1 from #mesh.sharding<@q, [shard(0), shard(0)]> to #mesh.sharding<@q, [shard(0), replicate]> : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_gather %{{.*}} axis 0 from #mesh.sharding<@q, [shard(0), replicate]> to #mesh.sharding<@q, [replicate, replicate]> : tensor<4x8xf32> -> tensor<8x8xf32>
mesh.mesh @q shape 2x2 topology [line, line] links [1, 1]
func.func @h(%x: tensor<2x8xf32>) -> tensor<8x8xf32> {
  %a = mesh.all_gather %x axis 1 from #mesh.sharding<@q, [shard(0), shard(0)]> to #mesh.sharding<@q, [shard(0), replicate]> : tensor<2x8xf32> -> tensor<4x8xf32>
  %b = mesh.all_gather %a axis 0 from #mesh.sharding<@q, [shard(0), replicate]> to #mesh.sharding<@q, [replicate, replicate]> : tensor<4x8xf32> -> tensor<8x8xf32>
  func.return %b : tensor<8x8xf32>
}

// -----

// A linked deployment's steps: module-level collectives between sections, reading and writing
// DRAM tensors by name; the entry carries the shardings of its inputs and outputs.
// CHECK-LABEL: mesh.mesh @n300
// CHECK-NEXT: sp.entry @f(@x, @w) -> (@y_sum) attributes {mesh.inputs = [#mesh.sharding<@n300, [shard(1)]>, #mesh.sharding<@n300, [shard(0)]>], mesh.outputs = [#mesh.sharding<@n300, [replicate]>], mesh.input_repeats = [1 : i64, 1 : i64], mesh.output_repeats = [1 : i64]}
// CHECK-NEXT: mesh.step @y_sum all_reduce @y axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "w is row-parallel" cost #mesh.cost<bytes = 128, links = 1, hops = 1, ns = 1000> : tensor<2x32xf16> -> tensor<2x32xf16>
// CHECK-NEXT: mesh.step @g all_gather @x axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<2x32xf16> -> tensor<2x64xf16>
// CHECK-NEXT: mesh.step @s reduce_scatter @y axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(1)]> {note} : tensor<2x32xf16> -> tensor<2x16xf16>
// CHECK-NEXT: mesh.step @t all_to_all @x axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<2x32xf16> -> tensor<1x64xf16>
mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
sp.entry @f(@x, @w) -> (@y_sum) attributes {mesh.inputs = [#mesh.sharding<@n300, [shard(1)]>, #mesh.sharding<@n300, [shard(0)]>], mesh.outputs = [#mesh.sharding<@n300, [replicate]>], mesh.input_repeats = [1 : i64, 1 : i64], mesh.output_repeats = [1 : i64]}
mesh.step @y_sum all_reduce @y axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "w is row-parallel" cost #mesh.cost<bytes = 128, links = 1, hops = 1, ns = 1000> : tensor<2x32xf16> -> tensor<2x32xf16>
mesh.step @g all_gather @x axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<2x32xf16> -> tensor<2x64xf16>
mesh.step @s reduce_scatter @y axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(1)]> {note} : tensor<2x32xf16> -> tensor<2x16xf16>
mesh.step @t all_to_all @x axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<2x32xf16> -> tensor<1x64xf16>

// -----

// A per-chip function: local types, each argument and result placed over the mesh.
// CHECK-LABEL: mesh.mesh @t3k
// CHECK: func.func @g(%k: tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64}) -> (tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64})
mesh.mesh @t3k shape 2x4 topology [line, line] links [1, 1] preset "t3k"
func.func @g(%k: tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64}) -> (tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64}) {
  func.return %k : tensor<64x32xbf16>
}

// -----

// A vocab-parallel arg-max (MPI's MAXLOC): the logits split by columns, one i32 per row after;
// priced as the all_gather of 2 chips x 1 row x (2 + 4) bytes of (value, index); as a step too.
// CHECK-LABEL: mesh.mesh @v shape 2 topology [line] links [1] preset "n300"
// CHECK: mesh.argmax_gather %{{.*}} axis 0 from #mesh.sharding<@v, [shard(1)]> to #mesh.sharding<@v, [replicate]> reason "the LM head splits by vocab" cost #mesh.cost<bytes = 12, links = 1, hops = 1, ns = 7412> : tensor<1x256xbf16> -> tensor<1xi32>
// CHECK: mesh.argmax_gather %{{.*}} axis 0 from #mesh.sharding<@v, [shard(0)]> to #mesh.sharding<@v, [replicate]> : tensor<256xf32> -> tensor<1xi32>
// CHECK: mesh.step @token argmax_gather @logits axis 0 from #mesh.sharding<@v, [shard(1)]> to #mesh.sharding<@v, [replicate]> cost #mesh.cost<bytes = 12, links = 1, hops = 1, ns = 7412> : tensor<1x256xbf16> -> tensor<1xi32>
mesh.mesh @v shape 2 topology [line] links [1] preset "n300"
func.func @h(%l: tensor<1x256xbf16>, %r: tensor<256xf32>) -> tensor<1xi32> {
  %t = mesh.argmax_gather %l axis 0 from #mesh.sharding<@v, [shard(1)]> to #mesh.sharding<@v, [replicate]> reason "the LM head splits by vocab" cost #mesh.cost<bytes = 12, links = 1, hops = 1, ns = 7412> : tensor<1x256xbf16> -> tensor<1xi32>
  %u = mesh.argmax_gather %r axis 0 from #mesh.sharding<@v, [shard(0)]> to #mesh.sharding<@v, [replicate]> : tensor<256xf32> -> tensor<1xi32>
  func.return %t : tensor<1xi32>
}
mesh.step @token argmax_gather @logits axis 0 from #mesh.sharding<@v, [shard(1)]> to #mesh.sharding<@v, [replicate]> cost #mesh.cost<bytes = 12, links = 1, hops = 1, ns = 7412> : tensor<1x256xbf16> -> tensor<1xi32>
