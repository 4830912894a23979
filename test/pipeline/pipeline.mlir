// spatial-pipeline runs link, tile, place, fuse-operands and size-buffers; with no target anywhere
// it compiles for wormhole_n150. Every section ends sized, and the options are recorded.
// RUN: spatial-opt %s -p spatial-pipeline | filecheck %s
// Running the pipeline twice changes nothing; so does every pass run again on its own output.
// RUN: spatial-opt %s -p spatial-pipeline,spatial-pipeline | filecheck %s
// RUN: spatial-opt %s -p spatial-pipeline,link,tile,place,fuse-operands,size-buffers | filecheck %s
// The target recorded by link is the one every later pass uses (no option names it again).
// RUN: spatial-opt %s -p 'link{target=rtx3060}' | spatial-opt -p spatial-pipeline | filecheck %s --check-prefix=GPU

// 256^3 bf16: 8x8 tiles, one per site of the 8x8 mesh, K in one block of 8 tiles (the f32
// accumulator holds the whole sum, so there is no spill at all; the output is a ring of two).
// The runner-up is the unsplit plan with K in 2 blocks and an f32 spill (3729). The plan that
// splits K in 2 on two 4x8 grids (its partial sums at the accumulator's f32) takes 3780: its
// 1x2 blocks write back one 1x1 sub-block at a time, a DRAM round trip each
// (docs/targets.md#gemm-cycles).
func.func @gemm(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %c = tg.matmul %a, %b : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  func.return %c : tensor<256x256xbf16>
}
// CHECK:      builtin.module attributes {sp.target = "wormhole_n150", sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16"}} {
// CHECK-NEXT:   sp.entry @gemm(@a, @b) -> (@c)
// CHECK-NEXT:   sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
// CHECK-NEXT:     sp.tensor @a : tensor<256x256xbf16> tiles 8x8 input tiled
// CHECK-NEXT:     sp.tensor @b : tensor<256x256xbf16> tiles 8x8 input tiled
// CHECK-NEXT:     sp.tensor @c : tensor<256x256xbf16> tiles 8x8 output tiled
// CHECK-NEXT:     sp.work @c block 1x1 k 8 by 8
// CHECK-NEXT:     sp.plan blocked grid 8x8 block 1x1 packing operand_with_store multicast a, b predicted 3248 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 4 k_blocks 2 grid 8x8" 3729
// CHECK-NEXT:     sp.mesh 8x8 movement 2 nocs 2 local 1395424
// CHECK-NEXT:     sp.sites [0, 7]x[0, 7] first x + y * 8 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 32768, out = 65536}
// CHECK-NEXT:     %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT:     %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// CHECK-NEXT:     %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// CHECK-NEXT:     %dst = sp.acc "dst" page [sh, sw] f32
// CHECK-NEXT:     sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0
// CHECK-NEXT:     sp.group @in1_columns %in1 columns [0, 7]x[0, 7] sender 0
// CHECK-NEXT:     sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
// CHECK-NEXT:     sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
// CHECK-NEXT:     sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
// CHECK-NEXT:     sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// CHECK-NEXT:   }
// CHECK-NEXT: }
// GPU:      sp.target = "rtx3060"
// GPU:      sp.program @c op "tg.matmul" kind gemm phase sized
// GPU:      sp.mesh 28x1 movement 2 nocs 1 local 101376
