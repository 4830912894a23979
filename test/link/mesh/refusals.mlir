// What link refuses of a deployment over a mesh, each naming the function, the chip or the
// numbers (docs/mesh.md#the-linked-deployment).
// RUN: not spatial-opt %s --split-input-file -p link 2>&1 | filecheck %s
// A whole-tensor function on a mesh is refused until the tensor-parallel pass runs before link.
// RUN: not spatial-opt %S/../matmul.mlir -p 'link{target=n300}' 2>&1 | filecheck %s --check-prefix=WHOLE
// A per-chip function on one chip's target is refused by name.
// RUN: not spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' 2>&1 | filecheck %s --check-prefix=CHIP
// The DRAM check is one chip's: every chip holds the same shards.
// RUN: not spatial-opt %s --split-input-file -p 'link{dram-mem=10000}' 2>&1 | filecheck %s --check-prefix=DRAM

// WHOLE: InvalidTarget: target 'n300' is a mesh of 2 wormhole_n150 chips, 2 in a line of 1 link: a deployment over a mesh of chips is not built yet

mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @f(%x: tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>},
             %w: tensor<64x64xbf16>)
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}) {
  %y = tg.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
// CHECK: error: @f argument 1 carries no mesh.sharding: every argument and result of a per-chip function says how its whole tensor lies over the mesh
// CHIP: InvalidTarget: the module is a deployment over mesh n300; target wormhole_n150 is one chip: name the mesh (target=n300)

// -----

mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @g(%x: tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>},
             %w: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>, mesh.repeat = 3 : i64})
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}) {
  %y = tg.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
// CHECK: error: @g argument 1: mesh.repeat = 3 does not divide the 2 chips of mesh axis 0

// -----

mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @h(%x: tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>},
             %w: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>})
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}) {
  %y = tg.matmul %x, %w : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
// DRAM: DramExceeded: needs 16384 B, chip 0 of n300 (every chip holds the same shards; a wormhole_n150) has 10000 B (largest: w 8192 B, x 4096 B, y 4096 B)
