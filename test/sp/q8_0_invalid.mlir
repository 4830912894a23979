// The sp verifier's Q8_0 rules, one chunk each: a Q8_0 tensor holds i8 values blocked by 32 along
// its format's axis, only it names scales, and a matmul over Q8_0 operands either widens them to
// one float type (`dequantize`) or takes the int8 dot of two Q8_0 operands into an f32 accumulator.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

sp.program @c op "tg.matmul_q8_0" kind gemm phase linked tile 32x32 {
  sp.tensor @w : tensor<64x64xbf16> tiles 2x2 input tiled format "q8_0_kn"
}
// CHECK: @w: a q8_0_kn tensor holds i8 values, not bf16

// -----

sp.program @c op "tg.matmul_q8_0" kind gemm phase linked tile 32x32 {
  sp.tensor @w : tensor<48x64xi8> tiles 2x2 input tiled format "q8_0_kn"
}
// CHECK: @w: its q8_0_kn blocks run along axis 0, which has 48 elements, not a multiple of 32

// -----

sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 {
  sp.tensor @w : tensor<64x64xbf16> tiles 2x2 input tiled scales @s
}
// CHECK: @w: only a Q8_0 tensor has scales, not bf16

// -----

sp.program @c op "tg.matmul_q8_0" kind gemm phase linked tile 32x32 {
  sp.tensor @a : tensor<1x64xbf16> tiles 1x2 input rows
  sp.tensor @w : tensor<64x64xi8> tiles 2x2 input tiled format "q8_0_kn" scales @s
  sp.tensor @c : tensor<1x64xbf16> tiles 1x2 output rows
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 as "q8_0_kn" tile_bytes 1088
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @w[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: the int8 dot takes two Q8_0 operands, got bf16 and q8_0_kn (a float operand needs `dequantize`)

// -----

sp.program @c op "tg.matmul_q8_0" kind gemm phase linked tile 32x32 {
  sp.tensor @a : tensor<1x64xbf16> tiles 1x2 input rows
  sp.tensor @w : tensor<64x64xi8> tiles 2x2 input tiled format "q8_0_kn" scales @s
  sp.tensor @c : tensor<1x64xbf16> tiles 1x2 output rows
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 as "q8_0_kn" tile_bytes 1088
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @w[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst dequantize f32
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: in0 holds bf16, but the Q8_0 operands are dequantized to f32

// -----

sp.program @c op "tg.matmul_q8_0" kind gemm phase linked tile 32x32 {
  sp.tensor @a : tensor<1x64xi8> tiles 1x2 input rows format "q8_0"
  sp.tensor @w : tensor<64x64xi8> tiles 2x2 input tiled format "q8_0_kn" scales @s
  sp.tensor @c : tensor<1x64xbf16> tiles 1x2 output rows
  %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 as "q8_0" tile_bytes 1088
  %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 as "q8_0_kn" tile_bytes 1088
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @w[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK: matmul_tiles: the int8 dot accumulates in f32, not bf16
