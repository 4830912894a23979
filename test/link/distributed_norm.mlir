// link of the distributed rms_norm's two halves (docs/tensor-parallel.md#the-distributed-rms_norm):
// tg.rms_stats is a `sum_squares` partial with ONE block over the chip's columns, stored as the
// rows x 1 f32 result (a column of f32 tiles: the prelude ties it tiled), or, where the chip's
// columns are wider than the f32 accumulator, the blocked partials and a `sum_squares` combine
// whose finish is their sum;
// tg.rms_apply is the blocked form's `combine` (one partial, the all-reduced sum over the whole
// row: width = cols = n, so every backend's count is n, not the chip's columns) and its
// `rms_apply` map over the chip's columns.
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s

// A chip's 64 of a 128-column row, with a fused residual (its own sum stands for the
// all-reduced one here; test/tensor_parallel/test_distributed_norm_run.py runs it).
func.func @halves(%x: tensor<40x64xbf16>, %r: tensor<40x64xbf16>, %w: tensor<1x64xbf16>) -> (tensor<40x1xf32>, tensor<40x64xbf16>) {
  %ss = tg.rms_stats %x, %r : (tensor<40x64xbf16>, tensor<40x64xbf16>) -> tensor<40x1xf32>
  %y = tg.rms_apply %x, %ss, %w, %r eps 1.0e-05 n 128 : (tensor<40x64xbf16>, tensor<40x1xf32>, tensor<1x64xbf16>, tensor<40x64xbf16>) -> tensor<40x64xbf16>
  func.return %ss, %y : tensor<40x1xf32>, tensor<40x64xbf16>
}
// CHECK-LABEL: sp.entry @halves(@x, @r, @w) -> (@ss, @y)
// CHECK:       sp.program @ss op "tg.rms_stats" kind row_reduce phase linked tile 32x32 attributes {row = "distributed rms_norm, first half: one block of 2 tile(s) over the chip's 64 columns (the 4-tile f32 accumulator holds it) sums each row's squares"} {
// CHECK:         sp.tensor @ss : tensor<40x1xf32> tiles 2x1 output tiled
// CHECK:         sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @r[r0, c0] x [h, w] -> %in1
// CHECK-NEXT:    sp.row_reduce partial sum_squares %in0, %in1 -> %out width 64 cols 64 rows 40 block 64
// CHECK-NEXT:    sp.store %out -> @ss[r0, 0] x [h, 1]
// CHECK:       sp.program @y__stats op "tg.rms_apply" kind row_reduce
// CHECK:         sp.tensor @ss : tensor<40x1xf32> tiles 2x1 input tiled
// CHECK-NEXT:    sp.tensor @y__stats : tensor<40x32xf32> tiles 2x1 scratch tiled
// CHECK:         sp.load @ss[r0, k0] x [h, kw] -> %in0
// CHECK-NEXT:    sp.row_reduce combine rms_norm %in0 -> %out width 128 cols 128 rows 40 block 128 eps 1.0e-05
// CHECK-NEXT:    sp.store %out -> @y__stats[r0, c0] x [h, 1]
// CHECK:       sp.program @y op "tg.rms_apply" kind map
// CHECK:         sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @r[r0, c0] x [h, w] -> %in1
// CHECK-NEXT:    sp.load @y__stats[r0, 0] x [h, 1] -> %in2
// CHECK-NEXT:    sp.load @w[0, c0] x [1, w] -> %in3
// CHECK-NEXT:    sp.map rms_apply %in0, %in1, %in2, %in3 [full, full, cols, rows] -> %out valid 40x64
// CHECK-NOT:   sp.program

// -----

// Decode: one row, a chip's 48 of 96 columns (not whole tiles: the partial's real columns are
// 48, the combine's count 96). A one-row tensor is rows (the same bytes in both layouts).
func.func @decode(%x: tensor<1x48xf32>, %w: tensor<1x48xf32>) -> (tensor<1x1xf32>, tensor<1x48xf32>) {
  %ss = tg.rms_stats %x : (tensor<1x48xf32>) -> tensor<1x1xf32>
  %y = tg.rms_apply %x, %ss, %w eps 1.0e-06 n 96 : (tensor<1x48xf32>, tensor<1x1xf32>, tensor<1x48xf32>) -> tensor<1x48xf32>
  func.return %ss, %y : tensor<1x1xf32>, tensor<1x48xf32>
}
// CHECK-LABEL: sp.entry @decode(@x, @w) -> (@ss, @y)
// CHECK:         sp.tensor @ss : tensor<1x1xf32> tiles 1x1 output rows
// CHECK:         sp.row_reduce partial sum_squares %in0 -> %out width 48 cols 48 rows 1 block 64
// CHECK:         sp.row_reduce combine rms_norm %in0 -> %out width 96 cols 96 rows 1 block 96 eps 1.0e-06
// CHECK:         sp.map rms_apply %in0, %in1, %in2 [full, cols, rows] -> %out valid 1x48

// -----

// 300 columns on a chip are 10 tiles, wider than Tensix's 4-tile f32 dest: 5 blocks of 2 tiles
// (the widest divisor of 10 that fits), each block's sum of squares into a tile of the
// partials, then their sum into the result's column 0 (no eps, no mean: rms_apply takes them
// after the all_reduce). A fused residual is summed into x in the partials, as rms_norm's is.
func.func @wide(%x: tensor<5x300xbf16>, %r: tensor<5x300xbf16>) -> tensor<5x1xf32> {
  %ss = tg.rms_stats %x, %r : (tensor<5x300xbf16>, tensor<5x300xbf16>) -> tensor<5x1xf32>
  func.return %ss : tensor<5x1xf32>
}
// CHECK-LABEL: sp.entry @wide(@x, @r) -> (@ss)
// CHECK:       sp.program @ss__partials op "tg.rms_stats" kind row_reduce phase linked tile 32x32 attributes {row = "distributed rms_norm, first half: the chip's 300 columns are 10 tiles, wider than the 4-tile f32 accumulator: 5 block(s) of 2 tile(s), their sums of squares summed (partials, combine)"} {
// CHECK:         sp.tensor @ss__partials : tensor<5x160xf32> tiles 1x5 scratch tiled
// CHECK:         sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @r[r0, c0] x [h, w] -> %in1
// CHECK-NEXT:    sp.row_reduce partial sum_squares %in0, %in1 -> %out width 300 cols 300 rows 5 block 64
// CHECK-NEXT:    sp.store %out -> @ss__partials[r0, c0 floordiv 2] x [h, 1]
// CHECK:       sp.program @ss op "tg.rms_stats" kind row_reduce
// CHECK:         sp.tensor @ss__partials : tensor<5x160xf32> tiles 1x5 input tiled
// CHECK-NEXT:    sp.tensor @ss : tensor<5x1xf32> tiles 1x1 output tiled
// CHECK:         sp.load @ss__partials[r0, k0] x [h, kw] -> %in0
// CHECK-NEXT:    sp.row_reduce combine sum_squares %in0 -> %out width 300 cols 300 rows 5 block 64
// CHECK-NEXT:    sp.store %out -> @ss[r0, 0] x [h, 1]
// CHECK-NOT:   sp.program

// -----

// A Llama-3-8B row over a t3k's 8 chips: 512 of 4096 columns a chip, one 128-row prefill
// block: 16 tiles, 4 blocks of 4.
func.func @llama(%x: tensor<128x512xbf16>) -> tensor<128x1xf32> {
  %ss = tg.rms_stats %x : (tensor<128x512xbf16>) -> tensor<128x1xf32>
  func.return %ss : tensor<128x1xf32>
}
// CHECK-LABEL: sp.entry @llama(@x) -> (@ss)
// CHECK:         sp.tensor @ss__partials : tensor<128x128xf32> tiles 4x4 scratch tiled
// CHECK:         sp.row_reduce partial sum_squares %in0 -> %out width 512 cols 512 rows 128 block 128
// CHECK:         sp.row_reduce combine sum_squares %in0 -> %out width 512 cols 512 rows 128 block 128
