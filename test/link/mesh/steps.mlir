// link on per-chip functions (docs/mesh.md#the-linked-deployment): each tg op becomes its section
// on LOCAL tensors, each collective a module-level mesh.step in execution order, reading and
// writing DRAM tensors by name; the entry carries the function's placements; sp.target records
// the mesh preset (the module's mesh.mesh names it, so link needs no target option).
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// The whole pipeline leaves the steps alone, in place: tile, place, fuse-operands and
// size-buffers see only sections, and the sized module verifies.
// RUN: spatial-opt %s --split-input-file -p spatial-pipeline | filecheck %s --check-prefix=SIZED

// A tensor-parallel MLP on 2 chips: w1 and w3 column-parallel, w2 row-parallel, one all_reduce.
mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @mlp(%x: tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>},
               %w1: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>},
               %w3: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>},
               %w2: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>})
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}) {
  %g = tg.matmul %x, %w1 : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  %u = tg.matmul %x, %w3 : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  %h = tg.swiglu %g, %u : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %p = tg.matmul %h, %w2 : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  %o = mesh.all_reduce %p axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "w2 is row-parallel" cost #mesh.cost<bytes = 4096, links = 1, hops = 1, ns = 15163> : tensor<32x64xbf16> -> tensor<32x64xbf16>
  %y = tg.add %x, %o : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
// CHECK:      builtin.module attributes {sp.target = "n300", sp.options = {format = "bf16"}} {
// CHECK-NEXT:   mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// CHECK-NEXT:   sp.entry @mlp(@x, @w1, @w3, @w2) -> (@y) attributes {mesh.inputs = [#mesh.sharding<@n300, [replicate]>, #mesh.sharding<@n300, [shard(1)]>, #mesh.sharding<@n300, [shard(1)]>, #mesh.sharding<@n300, [shard(0)]>], mesh.outputs = [#mesh.sharding<@n300, [replicate]>], mesh.input_repeats = [1 : i64, 1 : i64, 1 : i64, 1 : i64], mesh.output_repeats = [1 : i64]}
// CHECK-NEXT:   sp.program @g op "tg.matmul"
// CHECK:        sp.program @u op "tg.matmul"
// CHECK:        sp.program @h op "tg.swiglu"
// CHECK:        sp.program @p op "tg.matmul"
// The partial sum is a scratch tensor of the chip; the step writes its replicated sum.
// CHECK:          sp.tensor @p : tensor<32x64xbf16> tiles 1x2 scratch tiled
// CHECK:        mesh.step @o all_reduce @p axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "w2 is row-parallel" cost #mesh.cost<bytes = 4096, links = 1, hops = 1, ns = 15163> : tensor<32x64xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT:   sp.program @y op "tg.add"
// CHECK-NEXT:     sp.tensor @x : tensor<32x64xbf16> tiles 1x2 input tiled
// CHECK-NEXT:     sp.tensor @o : tensor<32x64xbf16> tiles 1x2 input tiled
// CHECK-NOT:    tg.
// CHECK-NOT:    func.func

// SIZED:        mesh.step @o all_reduce @p
// SIZED-NEXT:   sp.program @y op "tg.add" kind map phase sized

// -----

// all_gather, reduce_scatter and all_to_all on a t3k (2x4): a sequence-parallel input gathered
// over axis 1, a row-parallel product's partial sums scattered by rows, a tensor's split moved
// from its columns to its rows, and a tensor held twice over (repeat 2: 2 blocks on 4 chips).
mesh.mesh @t3k shape 2x4 topology [line, line] links [1, 1] preset "t3k"
func.func @mix(%x: tensor<8x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
               %a: tensor<32x16xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>},
               %w: tensor<16x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
               %k: tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>},
               %v: tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64})
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, replicate]>},
        tensor<8x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
        tensor<16x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
        tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64}) {
  %xa = mesh.all_gather %x axis 1 from #mesh.sharding<@t3k, [replicate, shard(0)]> to #mesh.sharding<@t3k, [replicate, replicate]> : tensor<8x64xbf16> -> tensor<32x64xbf16>
  %xs = tg.silu %xa : (tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %p = tg.matmul %a, %w : (tensor<32x16xbf16>, tensor<16x64xbf16>) -> tensor<32x64xbf16>
  %r = mesh.reduce_scatter %p axis 1 from #mesh.sharding<@t3k, [replicate, partial(sum)]> to #mesh.sharding<@t3k, [replicate, shard(0)]> : tensor<32x64xbf16> -> tensor<8x64xbf16>
  %kt = tg.silu %k : (tensor<64x8xbf16>) -> tensor<64x8xbf16>
  %kk = mesh.all_to_all %kt axis 1 from #mesh.sharding<@t3k, [replicate, shard(1)]> to #mesh.sharding<@t3k, [replicate, shard(0)]> : tensor<64x8xbf16> -> tensor<16x32xbf16>
  %vs = tg.silu %v : (tensor<64x8xbf16>) -> tensor<64x8xbf16>
  func.return %xs, %r, %kk, %vs : tensor<32x64xbf16>, tensor<8x64xbf16>, tensor<16x32xbf16>, tensor<64x8xbf16>
}
// CHECK-LABEL: mesh.mesh @t3k
// CHECK-NEXT:   sp.entry @mix(@x, @a, @w, @k, @v) -> (@xs, @r, @kk, @vs) attributes {{{.*}}mesh.input_repeats = [1 : i64, 1 : i64, 1 : i64, 1 : i64, 2 : i64], mesh.output_repeats = [1 : i64, 1 : i64, 1 : i64, 2 : i64]}
// CHECK-NEXT:   mesh.step @xa all_gather @x axis 1 from #mesh.sharding<@t3k, [replicate, shard(0)]> to #mesh.sharding<@t3k, [replicate, replicate]> : tensor<8x64xbf16> -> tensor<32x64xbf16>
// CHECK-NEXT:   sp.program @xs op "tg.silu"
// CHECK:        sp.program @p op "tg.matmul"
// CHECK:        mesh.step @r reduce_scatter @p axis 1 {{.*}} : tensor<32x64xbf16> -> tensor<8x64xbf16>
// CHECK-NEXT:   sp.program @kt op "tg.silu"
// CHECK:        mesh.step @kk all_to_all @kt axis 1 {{.*}} : tensor<64x8xbf16> -> tensor<16x32xbf16>
// CHECK-NEXT:   sp.program @vs op "tg.silu"

// SIZED-LABEL: mesh.mesh @t3k
