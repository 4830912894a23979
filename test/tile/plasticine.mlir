// tile on Plasticine (f32 only, a one-tile register accumulator, 49 GB/s of DDR3): one-tile
// blocks dealt out flat, the output written through one slot per accumulator lane. The cost
// model prices the fabric broadcast fuse-operands will choose (share_operand on the same operand
// streams): each A block row and B block column is read from DRAM once and fanned out, so the
// plan no longer reads 32 copies of every operand through DRAM (the fan-outs' fabric cycles are
// charged with the memory time they replace). DRAM still binds; the 1024 blocks are dealt over
// 8x4 sites, 32 each.
// RUN: spatial-opt %s -p 'link{target=plasticine},tile' | filecheck %s

func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// CHECK:      sp.work @c block 1x1 k 32 by 1
// CHECK-NEXT: sp.plan blocked grid 8x4 block 1x1 packing operand_with_store predicted 420001 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 1 k_blocks 32 grid 7x5" 420248
// CHECK:      %out = sp.fifo "out" depth 1 page [1, 1] f32 tile_bytes 4096
// CHECK:      sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1]
