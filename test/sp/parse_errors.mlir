// Malformed sp syntax is refused where it is written, with the position.
// RUN: spatial-opt %s --split-input-file --parsing-diagnostics | filecheck %s

sp.program @c op "tg.matmul" kind gemm phase placed tile 32x32 {
  sp.sites [3, 1]x[0, 0] first x count 1 block 1x1 sub_block 1x1
}
// CHECK: a site rectangle needs 0 <= x0 <= x1 and 0 <= y0 <= y1, got [3, 1]x[0, 0]

// -----

sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 {
  %in0 = sp.fifo "in0" depth 2 page [h, q] bf16 tile_bytes 2048
}
// CHECK: Identifier not in space q

// -----

sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 {
  sp.tensor @a : tensor<64x64xbf16> tiles 2x2 input tiled
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  sp.load @a[r0, z0] x [h, kw] -> %in0
}
// CHECK: Identifier not in space z0

// -----

sp.program @c op "tg.matmul" kind gemm phase placed tile 32x32 {
  sp.tensor @a : tensor<64x64xbf16> tiles 2x2 input tiled
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  sp.load @a[r0, k0] x [h, kw] -> %in0 on dma 1
}
// CHECK: (an engine is `compute` or `movement N [noc M]`)

// -----

sp.program @c op "tg.matmul" kind gemm phase fast tile 32x32 {
}
// CHECK: phase

// -----

sp.program @c op "tg.matmul" kind gemm phase linked tile 32 {
}
// CHECK: expected the tile shape as AxB

// -----

// The closed vocabularies are enumerations: an unknown word is refused where it is written.
sp.program @s op "tg.silu" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.map tanhshrink %x [full] -> %x valid 8x8
}
// CHECK: Expected `copy`, `tilize`, `untilize`

// -----

sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.plan blocked grid 2x2 block 2x1 packing everything predicted 100 bound compute
}
// CHECK: Expected `single`, `operand_with_store`, or `split`.

// -----

sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.plan blocked grid 2x2 block 1x1 packing split multicast a, c predicted 100 bound compute
}
// CHECK: expected one of a, b, got c

// -----

sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.plan blocked grid 2x2 block 1x1 packing split predicted 100 bound memory
}
// CHECK: Expected `compute`, `dram`, or `noc`.
