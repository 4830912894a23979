// place on a streaming plan (tt-metal's non-reuse matmul): the output tiles are dealt out by
// split_work_to_sites over the plan's grid, column-major ranges walked x fastest, the first
// units % sites sites taking one more. The plan is given, so this checks place alone.
// A streaming plan's rows of sites hold no common block row: fuse-operands groups nothing.
// RUN: spatial-opt %s -p place,fuse-operands | filecheck %s
// RUN: sed -e 's/blackhole_p150/wormhole_n150/' -e 's/grid 13x10/grid 8x8/' %s | spatial-opt -p place,fuse-operands | filecheck %s --check-prefix=WH

builtin.module attributes {sp.target = "blackhole_p150", sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16"}} {
  sp.entry @skinny(@a, @b) -> (@c)
  sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
    sp.tensor @a : tensor<32x32xbf16> tiles 1x1 input tiled
    sp.tensor @b : tensor<32x8192xbf16> tiles 1x256 input tiled
    sp.tensor @c : tensor<32x8192xbf16> tiles 1x256 output tiled
    sp.work @c block 1x1 k 1 by 1
    sp.plan streaming grid 13x10 block 1x1 packing operand_with_store predicted 1 bound dram
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
    %dst = sp.acc "dst" page [sh, sw] bf16
    sp.load @a[r0, k0] x [h, kw] -> %in0
    sp.load @b[k0, c0] x [kw, w] -> %in1
    sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4
    sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
  }
}
// 256 tiles on 130 sites: 256 = 130 + 126, so 126 sites take 2 (columns 0-11 whole, then
// (12, 0..5)) and 4 take 1 (the rest of column 12), each range walked x fastest.
// CHECK:      sp.mesh 13x10 movement 2 nocs 2 local 1474560
// CHECK-NEXT: sp.sites [0, 11]x[0, 9] first x * 2 + y * 24 count 2 block 1x1 sub_block 1x1
// CHECK-NEXT: sp.sites [12, 12]x[0, 5] first y * 2 + 240 count 2 block 1x1 sub_block 1x1
// CHECK-NEXT: sp.sites [12, 12]x[6, 9] first y + 246 count 1 block 1x1 sub_block 1x1
// CHECK-NOT:  sp.sites
// CHECK-NOT:  sp.group
// CHECK:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// 256 on 64 sites: 4 each.
// WH:      sp.mesh 8x8
// WH-NEXT: sp.sites [0, 7]x[0, 7] first x * 4 + y * 32 count 4 block 1x1 sub_block 1x1
// WH-NOT:  sp.sites
