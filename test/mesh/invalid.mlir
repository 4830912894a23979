// The verifiers of the mesh dialect (spatial_dialect/mesh): each chunk breaks one rule and the
// diagnostic names the op, the rule and its numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

mesh.mesh @m shape 2 topology [line, line] links [1]
// CHECK: mesh @m: 2 topology entries for 1 axes; give one per axis

// -----

mesh.mesh @m shape 2 topology [torus] links [1]
// CHECK: mesh @m: axis 0 topology 'torus' is not one of line, ring, switch

// -----

mesh.mesh @m shape 0x2 topology [line, line] links [1, 1]
// CHECK: mesh @m: axis 0 has 0 chips and 1 links; both must be >= 1

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, [shard(2)]> : tensor<8x8xf32>
// CHECK: mesh.shard: mesh axis 0 shards dim 2 of a rank-2 tensor

// -----

mesh.mesh @m shape 2x4 topology [line, line] links [1, 1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, [shard(0)]> : tensor<8x8xf32>
// CHECK: mesh.shard: sharding has 1 placements for mesh @m of 2 axes; give one per axis

// -----

mesh.mesh @m shape 2x4 topology [line, line] links [1, 1]
%x = "test.op"() : () -> tensor<12x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, [shard(0), shard(0)]> : tensor<12x8xf32>
// CHECK: mesh.shard: dim 0 of size 12 does not split evenly over 8 chips

// -----

%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@nowhere, [replicate]> : tensor<8x8xf32>
// CHECK: mesh.shard: mesh @nowhere is not a mesh.mesh in scope

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 1 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<16x8xf32>
// CHECK: mesh.all_gather: axis 1 is not an axis of mesh @m (shape 2)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<8x16xf32>
// CHECK: mesh.all_gather over axis 0 of 2 chips from shard(0) to replicate: result shape 8x16 should be 16x8 (input 8x8)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: mesh.all_gather over axis 0 turns partial(sum) into replicate; it turns shard(d) into replicate

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<16x8xbf16>
// CHECK: mesh.all_gather: element type bf16 differs from the input's f32

// -----

mesh.mesh @m shape 2x2 topology [line, line] links [1, 1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [shard(0), replicate]> to #mesh.sharding<@m, [replicate, shard(1)]> : tensor<8x8xf32> -> tensor<16x8xf32>
// CHECK: mesh.all_gather over axis 0: mesh axis 1 changes from replicate to shard(1); a collective changes its own axis only

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.mesh @k shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@k, [replicate]> : tensor<8x8xf32> -> tensor<16x8xf32>
// CHECK: mesh.all_gather: from is over @m, to over @k

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<6x8xf32>
%y = mesh.reduce_scatter %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [shard(0)]> : tensor<6x8xf32> -> tensor<1x8xf32>
// CHECK: mesh.reduce_scatter: dim 0 of size 6 does not split over 4 chips

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.reduce_scatter %x axis 0 from #mesh.sharding<@m, [replicate]> to #mesh.sharding<@m, [shard(0)]> : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK: mesh.reduce_scatter over axis 0 turns replicate into shard(0); it turns partial(sum) into shard(d)

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [shard(1)]> : tensor<8x8xf32> -> tensor<8x2xf32>
// CHECK: mesh.all_reduce over axis 0 turns partial(sum) into shard(1); it turns partial(sum) into replicate

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<8x4xf32>
// CHECK: mesh.all_reduce over axis 0 of 4 chips from partial(sum) to replicate: result shape 8x4 should be 8x8 (input 8x8)

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_to_all %x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [shard(1)]> : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: mesh.all_to_all over axis 0 turns shard(1) into shard(1); it turns shard(d1) into shard(d2) with d1 != d2

// -----

mesh.mesh @m shape 4 topology [ring] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_to_all %x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [shard(0)]> : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: mesh.all_to_all over axis 0 of 4 chips from shard(1) to shard(0): result shape 8x8 should be 2x32 (input 8x8)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xbf16>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> cost #mesh.cost<bytes = 256, links = 1, hops = 1, ns = 9000> : tensor<8x8xbf16> -> tensor<8x8xbf16>
// CHECK: mesh.all_reduce: cost is priced on 256 bytes, the types say 128

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(max)]> to #mesh.sharding<@m, [replicate]> : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: mesh axis 0: partial(max) is not supported (reductions: sum)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, [shard(-1)]> : tensor<8x8xf32>
// CHECK: mesh axis 0: shard dim must be >= 0, got -1

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, [split(0)]> : tensor<8x8xf32>
// CHECK: expected shard(d), replicate or partial(sum), got 'split'

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.shard %x to #mesh.sharding<@m, []> : tensor<8x8xf32>
// CHECK: a sharding needs one placement per mesh axis, got none

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<8x8xf32>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> cost #mesh.cost<bytes = -1, links = 1, hops = 1, ns = 9000> : tensor<8x8xf32> -> tensor<8x8xf32>
// CHECK: cost: bytes must be >= 0, got -1

// -----

// Axes 0 and 1 both split dim 0, major to minor: gathering over axis 0 first would leave each chip
// strided blocks.
mesh.mesh @m shape 2x2 topology [line, line] links [1, 1]
%x = "test.op"() : () -> tensor<2x8xf32>
%y = mesh.all_gather %x axis 0 from #mesh.sharding<@m, [shard(0), shard(0)]> to #mesh.sharding<@m, [replicate, shard(0)]> : tensor<2x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_gather over axis 0: mesh axis 1 also shards dim 0, finer; a dim is gathered or scattered over its last splitting axis first

// -----

mesh.mesh @m shape 2x2 topology [line, line] links [1, 1]
%x = "test.op"() : () -> tensor<4x8xf32>
%y = mesh.reduce_scatter %x axis 0 from #mesh.sharding<@m, [partial(sum), shard(0)]> to #mesh.sharding<@m, [shard(0), shard(0)]> : tensor<4x8xf32> -> tensor<2x8xf32>
// CHECK: mesh.reduce_scatter over axis 0: mesh axis 1 also shards dim 0, finer; a dim is gathered or scattered over its last splitting axis first

// -----

mesh.mesh @m shape 2 topology [line] links [1]
%x = "test.op"() : () -> tensor<?x8xf32>
%y = mesh.all_reduce %x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> : tensor<?x8xf32> -> tensor<?x8xf32>
// CHECK: mesh.all_reduce: takes static shapes, got tensor<?x8xf32> -> tensor<?x8xf32>

// -----

// A step obeys its kind's rule, the SSA collective's (one rule: ops.check_collective).
mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y all_gather @x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_gather over axis 0 of 2 chips from shard(0) to replicate: result shape 4x8 should be 8x8 (input 4x8)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y broadcast @x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xf32> -> tensor<8x8xf32>
// CHECK: mesh.step @y: 'broadcast' is not a collective (all_gather, reduce_scatter, all_reduce, all_to_all, argmax_gather)

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y all_reduce @x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_reduce over axis 0 turns shard(0) into replicate; it turns partial(sum) into replicate

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y all_reduce @x axis 0 from #mesh.sharding<@nope, [partial(sum)]> to #mesh.sharding<@nope, [replicate]> : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_reduce: mesh @nope is not a mesh.mesh in scope

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y all_reduce @x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.sharding<@m, [replicate]> cost #mesh.cost<bytes = 64, links = 1, hops = 1, ns = 5> : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.all_reduce: cost is priced on 64 bytes, the types say 128

// -----

mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @y all_reduce @x axis 0 from #mesh.sharding<@m, [partial(sum)]> to #mesh.cost<bytes = 1, links = 1, hops = 1, ns = 1> : tensor<4x8xf32> -> tensor<4x8xf32>
// CHECK: mesh.step: to must be a #mesh.sharding, got #mesh.cost<bytes = 1, links = 1, hops = 1, ns = 1>

// -----

// An argmax_gather (a vocab-parallel arg-max, MPI's MAXLOC) gives i32 indices of float values,
// one per row, from the logits split by their last dim.
mesh.mesh @m shape 2 topology [line] links [1]
func.func @f(%x: tensor<4x8xbf16>) -> tensor<4xf32> {
  %y = mesh.argmax_gather %x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xbf16> -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}
// CHECK: mesh.argmax_gather: gives i32 indices, got f32

// -----

mesh.mesh @m shape 2 topology [line] links [1]
func.func @f(%x: tensor<4x8xi32>) -> tensor<4xi32> {
  %y = mesh.argmax_gather %x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xi32> -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}
// CHECK: mesh.argmax_gather: compares float values, got i32

// -----

mesh.mesh @m shape 2 topology [line] links [1]
func.func @f(%x: tensor<4x8xbf16>) -> tensor<4xi32> {
  %y = mesh.argmax_gather %x axis 0 from #mesh.sharding<@m, [shard(0)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xbf16> -> tensor<4xi32>
  func.return %y : tensor<4xi32>
}
// CHECK: mesh.argmax_gather over axis 0 turns shard(0) into replicate; it turns shard(1) into replicate

// -----

mesh.mesh @m shape 2 topology [line] links [1]
func.func @f(%x: tensor<4x8xbf16>) -> tensor<8xi32> {
  %y = mesh.argmax_gather %x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [replicate]> : tensor<4x8xbf16> -> tensor<8xi32>
  func.return %y : tensor<8xi32>
}
// CHECK: mesh.argmax_gather over axis 0 of 2 chips from shard(1) to replicate: result shape 8 should be 4 (input 4x8)

// -----

// Its price is the all_gather of one (value, 4-byte index) pair per row per chip: 2 x 4 x (2 + 4).
mesh.mesh @m shape 2 topology [line] links [1]
mesh.step @t argmax_gather @x axis 0 from #mesh.sharding<@m, [shard(1)]> to #mesh.sharding<@m, [replicate]> cost #mesh.cost<bytes = 64, links = 1, hops = 1, ns = 1> : tensor<4x8xbf16> -> tensor<4xi32>
// CHECK: mesh.argmax_gather: cost is priced on 64 bytes, the types say 48
