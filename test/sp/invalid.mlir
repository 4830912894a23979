// Every rule of the sp verifier, one chunk each: the diagnostic names the violation and its numbers.
// RUN: not spatial-opt %s --split-input-file --allow-unregistered-dialect 2>&1 | filecheck %s

// GroupMemberMismatch: the members of column 1's B group sit at two offsets (a multicast lands at one address).
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 4096, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: multicast group @in1_columns: member at site (0, 1) has offset 4096 but the member at (0, 0) has 8192

// -----

// An access outside its tensor: the store is one tile row off, and the bottom row of sites writes past the last tile row.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti + 1, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: store out -> @c on sites [0, 1]x[1, 1] reaches tile (3, 0) of @c, which has 3x2 tiles

// -----

// An engine the site lacks: the mesh has movement engines 0 and 1.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 2 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: TooManyEngines: load @b -> in1 needs movement engine 2 but a site has 2 movement engines

// -----

// A NoC the site lacks.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 3
}
// CHECK: TooManyEngines: store out -> @c needs NoC 3 but a site has 2 NoCs

// -----

// Overlapping offsets: in1 laid over in0.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 4096, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: buffer in0 [0, 8192) overlaps in1 [4096, 8192)

// -----

// An alias away from its target's offset.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 16384}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: buffer spill [16384, 20480) overlaps out [12288, 16384)

// -----

// A site over its budget: 16384 bytes of buffers in 16000 bytes of local memory.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 16000
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: LocalMemExceeded: site (0, 0) needs 16384 bytes of local memory but its budget is 16000 bytes

// -----

// A memory map that misses a buffer.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: the memory map and the buffers disagree on spill

// -----

// A work item no site runs: the second row of sites is gone.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: item 2 of 4 runs on no site

// -----

// A range whose block is not its items' block (the bottom row covers one tile row, not two).
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: site (0, 1) runs item 2, a 1x1 block, in a range of 2x1 blocks

// -----

// An item on two sites.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: item 0 runs on two sites

// -----

// Two ranges over one site.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[0, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: site (0, 0) is in two ranges

// -----

// A range outside the mesh.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x1 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[1, 1] reach outside the 2x1 mesh

// -----

// A stage reading a tensor the section does not declare.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @x[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: section @c declares no tensor @x

// -----

// A group that does not exist.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @nowhere on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: load @a -> in0: section declares no group @nowhere

// -----

// A load naming another FIFO's group.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in1_columns on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: load @a -> in0: group @in1_columns multicasts in1, not its FIFO

// -----

// A load whose FIFO holds another element type than its tensor.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] f32 tile_bytes 4096
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: load @a -> in0: @a holds bf16 stored as bf16 but buffer in0 holds f32 stored as f32

// -----

// A tensor whose tile counts are not its shape's.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: @a is 96x64 elements, which is 3x2 tiles of 32x32, not 2x2

// -----

// A store into an input.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: store out -> @c: writes @c, an input of the section

// -----

// A sized section without its memory map is not sized.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: the memory map and the buffers disagree on in0

// -----

// A placed section whose stage has no engine.
sp.program @c op "tg.matmul" kind gemm phase placed tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: matmul_tiles: a stage of a placed section runs on an engine

// -----

// A placed section with multicast groups, which fuse-operands adds.
sp.program @c op "tg.matmul" kind gemm phase placed tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: a placed section holds sp.group, which fused adds

// -----

// A linked section with a plan, which tile adds.
sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: a linked section holds sp.plan, which tiled adds

// -----

// A tiled section without its work.
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: a tiled section lacks sp.work

// -----

// A memory map before sizing.
sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: a fused section has a memory map, which sized adds

// -----

// Several sub-blocks over several K blocks without a spill.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: 2 sub-blocks over 2 K blocks need a spill for their partial sums

// -----

// A sub-block that does not tile its block.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 3x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sp.sites: the sub-block 3x1 does not tile the block 2x1

// -----

// A group's sender outside its rectangle.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 5
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sp.group @in0_rows: sender 5 lies outside the group's rows [0, 1]

// -----

// A K block that does not divide K.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 3
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sp.work: the K block of 3 tiles does not divide the 2 K tiles

// -----

// The matmul's accumulator must be an sp.acc.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %in1 spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: matmul_tiles: acc is sp.fifo, expected sp.acc

// -----

// Integer operands accumulate in i32.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xi8> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xi8> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xi8> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 tile_bytes 1024
  %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 tile_bytes 1024
  %out = sp.fifo "out" depth subs page [sh, sw] i8 tile_bytes 1024
  %spill = sp.interm "spill" depth subs page [sh, sw] f32 tile_bytes 1024 alias %out
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: matmul_tiles: i8 operands accumulate in i32, not f32

// -----

// An op of another dialect inside a section.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  "test.op"() : () -> ()
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: section @c holds test.op, which is not an sp section op

// -----

// Two buffers with one label.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in0" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: section @c declares buffer in0 twice

// -----

// A multicast member must run a prefix of what its sender sends it: with rounds dealt unevenly
// along both dimensions (3x3 blocks over a 2x2 grid of sites), site (1, 0)'s second item is block
// row 2 while the sender's second is block row 0 again.
sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x96xbf16> tiles 2x3 input tiled
  sp.tensor @c : tensor<96x96xbf16> tiles 3x3 output tiled
  sp.work @c block 1x1 k 2 by 2 over 2x2
  sp.plan blocked grid 2x2 block 1x1 packing operand_with_store multicast a predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 0]x[0, 0] first 0 count 4 block 1x1 sub_block 1x1
  sp.sites [1, 1]x[0, 0] first 4 count 2 block 1x1 sub_block 1x1
  sp.sites [0, 0]x[1, 1] first 6 count 2 block 1x1 sub_block 1x1
  sp.sites [1, 1]x[1, 1] first 8 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: multicast group @in0_rows: member at site (1, 0) has as its item 1 the block at r0 tile 2 but the member at (0, 0) has 0

// -----

// ... and may not run more items than its sender (here the sender is the site with fewer).
sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
  sp.tensor @a : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x96xbf16> tiles 2x3 input tiled
  sp.tensor @c : tensor<64x96xbf16> tiles 2x3 output tiled
  sp.work @c block 1x1 k 2 by 2 over 2x2
  sp.plan blocked grid 2x2 block 1x1 packing operand_with_store multicast a predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 0]x[0, 1] first y * 3 count 2 block 1x1 sub_block 1x1
  sp.sites [1, 1]x[0, 1] first y * 3 + 2 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 1
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: multicast group @in0_rows: member at site (0, 0) has items run 2 but the member at (1, 0) has 1

// -----

// The grid the blocks are dealt over leaves sites without work (2 block rows on 3 rows of sites).
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<64x64xbf16> tiles 2x2 output tiled
  sp.work @c block 1x1 k 2 by 2 over 2x3
  sp.plan blocked grid 2x3 block 1x1 packing operand_with_store predicted 100 bound compute
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @b[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: sp.work: 2x2 blocks leave sites of a 2x3 grid without work

// -----

// A line is one row or one column of sites.
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<64x64xbf16> tiles 2x2 output tiled
  sp.work @c block 1x1 k 2 by 2
  // expected-error @+1 {{sp.plan: a line is a blocked grid GXx1 or 1xGY, got 2x2}}
  sp.plan blocked line grid 2x2 block 1x1 packing operand_with_store predicted 100 bound compute
}

// -----

sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @c : tensor<64x64xbf16> tiles 2x2 output tiled
  sp.work @c block 1x1 k 2 by 2
  // expected-error @+1 {{sp.plan: multicast names operands a and b, got ['a', 'a']}}
  sp.plan blocked grid 2x2 block 1x1 packing operand_with_store multicast a, a predicted 100 bound compute
}

// -----

// A line group is the first `sites` sites of its rectangle, row by row: 7 do not fill two rows of 3.
sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  // expected-error @+1 {{sp.group @in0_line: a line of 7 sites does not fill the rows of [0, 2]x[0, 1]}}
  sp.group @in0_line %in0 line [0, 2]x[0, 1] sites 7 sender 0
}

// -----

// Per-range depths (size-buffers writes a range's own operand FIFO depth in its memory map):
// the members of column 0's B group hold 3 pages at (0, 0) and B's own 2 at (0, 1).
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192 depth 3, out = 16384, spill = 16384}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: multicast group @in1_columns: member at site (0, 1) has depth 2 but the member at (0, 0) has 3

// -----

// FixedDepthChanged: only an operand FIFO takes a depth per range; the output FIFO's is its own
// (subs, 1 sub-block here).
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288 depth 3, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: buffer out has depth 3 here but 1 of its own; only an operand FIFO (one a load fills) takes a depth per range

// -----

// A range's depth of 0 pages.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0 depth 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sp.sites: in0 has depth 0 on sites [0, 1]x[0, 0]; a FIFO holds at least one page

// -----

// A range's depth is what its bytes are laid out at: A's 3 pages of 2 tiles end at 12288, past B's offset.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0 depth 3, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: sites [0, 1]x[0, 0]: buffer in0 [0, 12288) overlaps in1 [8192, 12288)

// -----

// ... and what its budget is checked against: 30 pages of B at the bottom row need 71680 bytes of 65536.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<96x64xbf16> tiles 3x2 input tiled
  sp.tensor @b : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @c : tensor<96x64xbf16> tiles 3x2 output tiled
  sp.work @c block 2x1 k 2 by 1
  sp.plan blocked grid 2x2 block 2x1 packing operand_with_store predicted 100 bound compute
  sp.mesh 2x2 movement 2 nocs 2 local 65536
  sp.sites [0, 1]x[0, 0] first x + y * 2 count 1 block 2x1 sub_block 2x1 memory {in0 = 0, in1 = 8192, out = 12288, spill = 12288}
  sp.sites [0, 1]x[1, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192 depth 30, out = 69632, spill = 69632}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 1]x[0, 1] sender 0
  sp.group @in1_columns %in1 columns [0, 1]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK: LocalMemExceeded: site (0, 1) needs 71680 bytes of local memory but its budget is 65536 bytes

// -----

// Split-K without its partials: the work splits K into 2 slices, but the matmul has no FIFO to pass the partial sums through.
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<32x128xbf16> tiles 1x4 input tiled
  sp.tensor @b : tensor<128x32xbf16> tiles 4x1 input tiled
  sp.tensor @c : tensor<32x32xbf16> tiles 1x1 output tiled
  sp.work @c block 1x1 k 4 by 2 split 2 along y
  sp.plan blocked grid 1x1 block 1x1 packing operand_with_store predicted 100 bound compute
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @b[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: the work splits K into 2 slice(s) but the matmul has no partials FIFO

// -----

// Split-K with one ring of partials: a middle slice receives the slice before's sums and sends its
// own at once, and the two cannot share a ring (the writer fills the one, the compute the other),
// so the FIFO holds two pages a sub-block (depth subs * 2) and its bytes are priced and laid out.
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<32x128xbf16> tiles 1x4 input tiled
  sp.tensor @b : tensor<128x32xbf16> tiles 4x1 input tiled
  sp.tensor @c : tensor<32x32xbf16> tiles 1x1 output tiled
  sp.work @c block 1x1 k 4 by 2 split 2 along y
  sp.plan blocked grid 1x1 block 1x1 packing operand_with_store predicted 100 bound compute
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] f32
  %partials = sp.fifo "partials" depth subs page [sh, sw] f32 tile_bytes 4096
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @b[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst partials %partials
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: the partials FIFO holds two [sh, sw] pages per sub-block, received and sent (depth subs * 2), not page [sh, sw] depth subs

// -----

// A K block that does not divide a slice: 2 slices of 2 K tiles walked in blocks of 4.
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @c : tensor<32x32xbf16> tiles 1x1 output tiled
  sp.work @c block 1x1 k 4 by 4 split 2 along y
}
// CHECK: sp.work: the K block of 4 tiles does not divide the 2 K tiles of an item

// -----

// A multicast row cut into runs that do not tile it: 3 sites in runs of 2.
sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  sp.group @in0_rows %in0 rows [0, 2]x[0, 1] every 2 sender 0
}
// CHECK: sp.group @in0_rows: runs of 2 sites do not cut its rows [0, 2]

// -----

// transpose_b: B is stored N x K and its page is the [w, kw] block the load reads; a [kw, w]
// FIFO would hand the stage a block it transposes to the wrong shape.
sp.program @y op "tg.matmul" kind gemm phase linked tile 32x32 {
  sp.tensor @x : tensor<4x64xf32> tiles 1x2 input tiled
  sp.tensor @t : tensor<100x64xf32> tiles 4x2 input tiled
  sp.tensor @y : tensor<4x100xf32> tiles 1x4 output tiled
  %in0 = sp.fifo "in0" depth 2 page [h, kw] f32 tile_bytes 4096
  %in1 = sp.fifo "in1" depth 2 page [kw, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [sh, sw] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.load @x[r0, k0] x [h, kw] -> %in0
  sp.load @t[c0, k0] x [w, kw] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst transpose_b
  sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: in1's pages are [kw, w], but B's block is [w, kw] (transpose_b)
