// link: a tg.matmul becomes one section with its DRAM tensors (tile counts of the padded
// shape), the FIFOs, the accumulator at the contract's precision (f32; tile narrows it under
// accumulate=bf16, test/tile/plans.mlir), and the symbolic access
// patterns; the function becomes its interface; the target and options land on the module.
// RUN: spatial-opt %s -p link | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s -p 'link{target=blackhole_p150 format=bfp8_b}' | filecheck %s --check-prefix=BFP8
// RUN: spatial-opt %s -p 'link{target=rtx3060}' | filecheck %s --check-prefix=GPU
// Running link twice changes nothing: there is no tg op left.
// RUN: spatial-opt %s -p link,link | filecheck %s --check-prefix=WH

// 100x70 @ 70x50 bf16: 100 rows are 4 tile rows (the last padded from 4 to 32 rows), 70 columns
// 3 tiles, 50 columns 2 tiles.
func.func @gemm(%a: tensor<100x70xbf16>, %b: tensor<70x50xbf16>) -> tensor<100x50xbf16> {
  %c = tg.matmul %a, %b : (tensor<100x70xbf16>, tensor<70x50xbf16>) -> tensor<100x50xbf16>
  func.return %c : tensor<100x50xbf16>
}
func.func @untouched(%x: i32) -> i32 {
  func.return %x : i32
}

// WH:      builtin.module attributes {sp.target = "wormhole_n150", sp.options = {format = "bf16"}} {
// WH-NEXT:   sp.entry @gemm(@a, @b) -> (@c)
// WH-NEXT:   sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 {
// WH-NEXT:     sp.tensor @a : tensor<100x70xbf16> tiles 4x3 input tiled
// WH-NEXT:     sp.tensor @b : tensor<70x50xbf16> tiles 3x2 input tiled
// WH-NEXT:     sp.tensor @c : tensor<100x50xbf16> tiles 4x2 output tiled
// WH-NEXT:     %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// WH-NEXT:     %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// WH-NEXT:     %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// A bf16 GEMM accumulates in f32, as the tg contract says (Tensix dest in its fp32 mode).
// WH-NEXT:     %dst = sp.acc "dst" page [sh, sw] f32
// WH-NEXT:     sp.load @a[r0, k0] x [h, kw] -> %in0
// WH-NEXT:     sp.load @b[k0, c0] x [kw, w] -> %in1
// WH-NEXT:     sp.matmul_tiles %in0, %in1 -> %out acc %dst
// WH-NEXT:     sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
// WH-NEXT:   }
// WH-NEXT:   func.func @untouched(%x: i32) -> i32 {
// WH-NOT:    tg.

// The storage format applies to every bf16 tensor, DRAM and local memory: 1088 bytes a tile.
// BFP8:      sp.options = {format = "bfp8_b"}
// BFP8:      sp.tensor @a : tensor<100x70xbf16> tiles 4x3 input tiled format "bfp8_b"
// BFP8:      sp.tensor @c : tensor<100x50xbf16> tiles 4x2 output tiled format "bfp8_b"
// BFP8:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 as "bfp8_b" tile_bytes 1088
// BFP8:      %out = sp.fifo "out" depth 2 page [sh, sw] bf16 as "bfp8_b" tile_bytes 1088

// A GPU accumulates in f32 register fragments.
// GPU:      sp.target = "rtx3060"
// GPU:      %dst = sp.acc "dst" page [sh, sw] f32
