// tile on Plasticine (f32 only, a one-tile register accumulator, 49 GB/s of DDR3): one-tile
// blocks dealt out flat, the output written through one slot per accumulator lane. The cost
// model prices the fabric broadcast fuse-operands will choose (share_operand on the same operand
// streams): each A block row and B block column is read from DRAM once and fanned out, so the
// plan no longer reads 32 copies of every operand through DRAM. The fan-outs run under the DRAM
// reads (sharing.memory_cycles): 3 x 1024 tiles of 4096 B = 12,582,912 B at 44.1 B/cycle (49 GB/s
// at 0.9) = 285,327 cycles; the 32 + 32 panels' fan-outs (2048 words + hops - 1 each, 131,360 in
// all) are fewer, so they add only one page's fill, B's one-tile page crossing its 10 hops (64 + 9
// = 73 fabric cycles, under its 93-cycle read): 285,400 cycles of memory time. (Adding the fan-outs
// to the DRAM time, as the model once did, made that 416,687 and chose 8x4 sites at 420,001.)
// DRAM still binds; the 1024 blocks are dealt over 8x5 sites, 26 on the busiest: 832 one-tile
// steps of 285,400 / 832 = 343 DRAM cycles (compute 342), so 343 fill + 831 x 343.03 + a 4,057-cycle
// drain (the last compute and the write-back) = 289,457.
// RUN: spatial-opt %s -p 'link{target=plasticine},tile' | filecheck %s

func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// CHECK:      sp.work @c block 1x1 k 32 by 1
// CHECK-NEXT: sp.plan blocked grid 8x5 block 1x1 packing operand_with_store predicted 289457 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 2 k_blocks 16 grid 8x5" 289799
// CHECK:      %out = sp.fifo "out" depth 1 page [1, 1] f32 tile_bytes 4096
// CHECK:      sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1]
