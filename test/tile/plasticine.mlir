// tile on Plasticine (f32 only, a one-tile register accumulator, 49 GB/s of DDR3): one-tile
// blocks dealt out flat, the output written through one slot per accumulator lane. DRAM binds,
// so dealing the 1024 blocks over 8x4 sites, 32 each, is as fast as over all 64 (16 each) and
// writes fewer last blocks back at once.
// RUN: spatial-opt %s -p 'link{target=plasticine},tile' | filecheck %s

func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// CHECK:      sp.work @c block 1x1 k 32 by 1
// CHECK-NEXT: sp.plan blocked grid 8x4 block 1x1 packing operand_with_store predicted 5566890 bound "dram" runner_up "blocked per_site 1x1 block 1x1 k_block 1 k_blocks 32 grid 7x5" 5567141
// CHECK:      %out = sp.fifo "out" depth 1 page [1, 1] f32 tile_bytes 4096
// CHECK:      sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1]
