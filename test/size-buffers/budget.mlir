// The budget is configurable (`local-mem`, recorded on the module and on the mesh): under 900000
// bytes the decode step's B FIFO, which asks for 17 pages of 256 KiB, gives pages back until the
// site fits: 3 pages (32768 + 3 x 262144 + 32768 = 851968 bytes; 4 would need 1114112).
// The input is the fused program of a plan with such pages (blocks of 1x16 tiles, K blocks of 8),
// so size-buffers is tested on its own, whatever plan tile would choose today.
// RUN: spatial-opt %s -p size-buffers | filecheck %s
// resize-operand-fifos re-lays a sized program at a pinned depth: the instrument for measuring it.
// RUN: spatial-opt %s -p 'size-buffers,resize-operand-fifos{depth=3}' | filecheck %s --check-prefix=RESIZE
// RUN: not spatial-opt %s -p 'size-buffers,resize-operand-fifos{depth=9}' 2>&1 | filecheck %s --check-prefix=OVER
// RUN: not spatial-opt %s -p 'resize-operand-fifos{depth=3}' 2>&1 | filecheck %s --check-prefix=PHASE

builtin.module attributes {sp.target = "wormhole_n150", sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16", local_mem = "900000"}} {
  sp.entry @decode(@x, @w) -> (@y)
  sp.program @y op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @x : tensor<1x4096xbf16> tiles 1x128 input rows
    sp.tensor @w : tensor<4096x4096xbf16> tiles 128x128 input tiled
    sp.tensor @y : tensor<1x4096xbf16> tiles 1x128 output rows
    sp.work @y block 1x16 k 128 by 8
    sp.plan blocked grid 8x1 block 1x8 packing operand_with_store predicted 145652 bound dram runner_up "blocked per_site 1x16 block 1x4 k_block 8 k_blocks 16" 145652
    sp.mesh 8x8 movement 2 nocs 2 local 900000
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
// CHECK:      sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16", local_mem = "900000"}
// CHECK:      sp.mesh 8x8 movement 2 nocs 2 local 900000
// CHECK-NEXT: sp.sites [0, 7]x[0, 0] first x + y * 8 count 1 block 1x16 sub_block 1x8 memory {in0 = 0, in1 = 32768 depth 3, out = 819200, spill = 819200}
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT: %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// RESIZE:      memory {in0 = 0 depth 3, in1 = 49152 depth 3, out = 835584, spill = 835584}
// RESIZE:      %in0 = sp.fifo "in0" depth 2
// RESIZE-NEXT: %in1 = sp.fifo "in1" depth 2
// RESIZE-NEXT: %out = sp.fifo "out" depth subs
// 9 x 16384 + 9 x 262144 + 32768 = 2539520 bytes.
// OVER: error: LocalMemExceeded: site (0, 0) needs 2539520 bytes of local memory but its budget is 900000 bytes
// PHASE: error: WrongPhase: resize-operand-fifos takes a program in phase sized, this one is fused
