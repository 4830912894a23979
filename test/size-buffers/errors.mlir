// size-buffers refuses a sub-block holding more tiles than the accumulator has
// (AccTilesExceeded), and a section not fused yet (WrongPhase).
// RUN: not spatial-opt %s --split-input-file -p size-buffers 2>&1 | filecheck %s

// A hand-made 4x4 sub-block on Wormhole: 16 tiles, and a bf16 dest in half-sync holds 8.
builtin.module attributes {sp.target = "wormhole_n150"} {
  sp.program @c op "tg.matmul" kind gemm phase fused tile 32x32 {
    sp.tensor @a : tensor<128x64xbf16> tiles 4x2 input tiled
    sp.tensor @b : tensor<64x128xbf16> tiles 2x4 input tiled
    sp.tensor @c : tensor<128x128xbf16> tiles 4x4 output tiled
    sp.work @c block 4x4 k 2 by 2
    sp.plan blocked grid 1x1 block 4x4 packing operand_with_store predicted 1 bound compute
    sp.mesh 8x8 movement 2 nocs 2 local 1395424
    sp.sites [0, 0]x[0, 0] first x count 1 block 4x4 sub_block 4x4
    %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
    %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
    %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
    %dst = sp.acc "dst" page [sh, sw] bf16
    sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
    sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
    sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
    sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
  }
}
// CHECK: error: AccTilesExceeded: the block holds 16 bf16 tiles in the accumulator but the target has 8
// CHECK-NEXT: sp.program @c
