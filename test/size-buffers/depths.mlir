// size-buffers: operand FIFO depths from the credit loop, depth = max(2, ceil((page_tiles x
// fetch_tile + credit_return) / service_page)); Wormhole declares fetch_tile 64, credit_return 500,
// service_page 512 cycles, Blackhole 32, 600, 512. The depth is per site range, in the range's
// memory map (`in1 = 32768 depth 5`, written where it is not the buffer's own); the buffer ops
// keep the depth tile asked for, and the output FIFO keeps its depth. The inputs are fused
// programs of plans whose pages make each case (so size-buffers is tested on its own, whatever
// plan tile would choose today).
// RUN: spatial-opt %s --split-input-file -p size-buffers | filecheck %s
// Running size-buffers twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p size-buffers,size-buffers | filecheck %s

// A decode step, 1x4096 @ 4096x4096, on Wormhole: blocks of 1x16 tiles in K blocks of 8, so A's page
// is 1x8 tiles (credit loop 8 x 64 + 500 = 1012 cycles: 2 pages) and B's 8x16 = 128 tiles
// (128 x 64 + 500 = 8692 cycles: 17 pages). Seventeen 256 KiB pages do not fit 1395424 bytes, so
// B's pages (the most bytes per page) are given back one at a time until the site fits: 5.
builtin.module attributes {sp.target = "wormhole_n150", sp.options = {fidelity = "hifi4", format = "bf16"}} {
  sp.entry @decode(@x, @w) -> (@y)
  sp.program @y op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @x : tensor<1x4096xbf16> tiles 1x128 input rows
    sp.tensor @w : tensor<4096x4096xbf16> tiles 128x128 input tiled
    sp.tensor @y : tensor<1x4096xbf16> tiles 1x128 output rows
    sp.work @y block 1x16 k 128 by 8
    sp.plan blocked grid 8x1 block 1x8 packing operand_with_store predicted 145652 bound dram runner_up "blocked per_site 1x16 block 1x4 k_block 8 k_blocks 16" 145652
    sp.mesh 8x8 movement 2 nocs 2 local 1395424
    sp.sites [0, 7]x[0, 0] first x + y * 8 count 1 block 1x16 sub_block 1x8
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
    %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
    %dst = sp.acc "dst" page [sh, sw] bf16
    sp.group @in0_rows %in0 rows [0, 7]x[0, 0] sender 0
    sp.load @x[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
    sp.load @w[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
    sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
    sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
  }
}
// CHECK:      sp.target = "wormhole_n150"
// CHECK:      sp.sites [0, 7]x[0, 0] first x + y * 8 count 1 block 1x16 sub_block 1x8 memory {in0 = 0, in1 = 32768 depth 5, out = 1343488, spill = 1343488}
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT: %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// CHECK-NEXT: %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048

// -----

// The decode step on Blackhole: B's page is 4x10 = 40 tiles (40 x 32 + 600 = 1880 cycles: 4 pages),
// 4x8 = 32 at the boundary site (1624: 4); A's 1x4 (728: 2, the buffer's own: no depth written).
builtin.module attributes {sp.target = "blackhole_p150", sp.options = {fidelity = "hifi4", format = "bf16"}} {
  sp.entry @decode(@x, @w) -> (@y)
  sp.program @y op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @x : tensor<1x4096xbf16> tiles 1x128 input rows
    sp.tensor @w : tensor<4096x4096xbf16> tiles 128x128 input tiled
    sp.tensor @y : tensor<1x4096xbf16> tiles 1x128 output rows
    sp.work @y block 1x10 k 128 by 4
    sp.plan blocked grid 13x1 block 1x5 packing operand_with_store predicted 92438 bound dram runner_up "blocked per_site 1x10 block 1x2 k_block 4 k_blocks 32" 92694
    sp.mesh 13x10 movement 2 nocs 2 local 1474560
    sp.sites [0, 11]x[0, 0] first x + y * 13 count 1 block 1x10 sub_block 1x5
    sp.sites [12, 12]x[0, 0] first x + y * 13 count 1 block 1x8 sub_block 1x4
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
    %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
    %dst = sp.acc "dst" page [sh, sw] bf16
    sp.group @in0_rows %in0 rows [0, 12]x[0, 0] sender 0
    sp.load @x[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
    sp.load @w[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
    sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
    sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
  }
}
// CHECK:      sp.target = "blackhole_p150"
// CHECK:      sp.sites [0, 11]x[0, 0] first x + y * 13 count 1 block 1x10 sub_block 1x5 memory {in0 = 0, in1 = 16384 depth 4, out = 344064, spill = 344064}
// CHECK-NEXT: sp.sites [12, 12]x[0, 0] first x + y * 13 count 1 block 1x8 sub_block 1x4 memory {in0 = 0, in1 = 16384 depth 4, out = 278528, spill = 278528}

// -----

// A GPU declares no credit-loop latencies: double buffering.
builtin.module attributes {sp.target = "h100", sp.options = {fidelity = "hifi4", format = "bf16"}} {
  sp.entry @decode(@x, @w) -> (@y)
  sp.program @y op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @x : tensor<1x4096xbf16> tiles 1x128 input rows
    sp.tensor @w : tensor<4096x4096xbf16> tiles 128x128 input tiled
    sp.tensor @y : tensor<1x4096xbf16> tiles 1x128 output rows
    sp.work @y block 1x1 k 128 by 1
    sp.plan blocked grid 132x1 block 1x1 packing operand_with_store predicted 18768 bound dram runner_up "blocked per_site 1x2 block 1x2 k_block 1 k_blocks 128" 18776
    sp.mesh 132x1 movement 2 nocs 1 local 232448
    sp.sites [0, 127]x[0, 0] first x count 1 block 1x1 sub_block 1x1
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
    %dst = sp.acc "dst" page [sh, sw] f32
    sp.load @x[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
    sp.load @w[k0, c0] x [kw, w] -> %in1 on movement 0 noc 0
    sp.matmul_tiles %in0, %in1 -> %out acc %dst on compute
    sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 0
  }
}
// CHECK:      sp.target = "h100"
// CHECK:      memory {in0 = 0, in1 = 4096, out = 8192}

// -----

// 100x1024x700 on Wormhole: blocks of 1x3 tiles; the last column of sites covers 22 - 21 = 1
// tile. B's page is 8x3 = 24 tiles at the interior sites (24 x 64 + 500 = 2036 cycles: 4 pages)
// but 8x1 = 8 at the boundary (1012: 2 pages). B is multicast down columns, and a column lies in
// one range, so each range keeps its own: 4 inside, 2 (the buffer's own) at the boundary.
// Groups first at one offset (in0 at 0 everywhere, in1 after the largest in0), then first-fit per
// range: the output lands right after in1, which is 4 pages of 3 tiles wide inside (32768 +
// 4 x 24 x 2048 = 229376) and 2 pages of 1 at the boundary (32768 + 2 x 8 x 2048 = 65536).
builtin.module attributes {sp.target = "wormhole_n150", sp.options = {fidelity = "hifi4", format = "bf16"}} {
  sp.entry @g(@a, @b) -> (@c)
  sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @a : tensor<100x1024xbf16> tiles 4x32 input tiled
    sp.tensor @b : tensor<1024x700xbf16> tiles 32x22 input tiled
    sp.tensor @c : tensor<100x700xbf16> tiles 4x22 output tiled
    sp.work @c block 1x3 k 32 by 8
    sp.plan blocked grid 8x4 block 1x3 packing operand_with_store predicted 17571 bound dram runner_up "blocked per_site 1x3 block 1x1 k_block 8 k_blocks 4" 17571
    sp.mesh 8x8 movement 2 nocs 2 local 1395424
    sp.sites [0, 6]x[0, 3] first x + y * 8 count 1 block 1x3 sub_block 1x3
    sp.sites [7, 7]x[0, 3] first x + y * 8 count 1 block 1x1 sub_block 1x1
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
    %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
    %dst = sp.acc "dst" page [sh, sw] bf16
    sp.group @in0_rows %in0 rows [0, 7]x[0, 3] sender 0
    sp.group @in1_columns %in1 columns [0, 7]x[0, 3] sender 0
    sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
    sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
    sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
    sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
  }
}
// CHECK:      sp.sites [0, 6]x[0, 3] first x + y * 8 count 1 block 1x3 sub_block 1x3 memory {in0 = 0, in1 = 32768 depth 4, out = 229376, spill = 229376}
// CHECK-NEXT: sp.sites [7, 7]x[0, 3] first x + y * 8 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 32768, out = 65536, spill = 65536}
// CHECK:      %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
