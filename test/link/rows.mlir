// link of the row reductions. The form is decided from the group's width against the f32
// accumulator (and a site's memory) and recorded on every section (`row`): a group that fits is
// ONE section (`row_reduce whole`); a wider one is the blocked form (docs/passes.md#link-wide-rows-are-blocked-never-refused):
// partials per block -> combine per group (a K loop over the blocks) -> apply (a map that reads
// the group's statistics as a column broadcast and the weight as a row broadcast).
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100}' | filecheck %s --check-prefix=GPU

// 300 columns are 10 tiles: more than Tensix's 4-tile f32 dest; blocks of 2 tiles (the widest
// divisor of 10 that fits). The residual is summed where it is read, never rounded in between.
func.func @wide(%x: tensor<5x300xbf16>, %w: tensor<1x300xbf16>, %r: tensor<5x300xbf16>) -> tensor<5x300xbf16> {
  %y = tg.rms_norm %x, %w, %r eps 1.0e-05 : (tensor<5x300xbf16>, tensor<1x300xbf16>, tensor<5x300xbf16>) -> tensor<5x300xbf16>
  func.return %y : tensor<5x300xbf16>
}
// CHECK-LABEL: sp.entry @wide(@x, @w, @r) -> (@y)
// CHECK:       sp.program @y__partials op "tg.rms_norm" kind row_reduce phase linked tile 32x32 attributes {row = "blocked: a group of 10 tiles is wider than the 4-tile f32 accumulator; 5 block(s) of 2 tile(s) per group: partials, combine, apply"} {
// CHECK:         sp.tensor @y__partials : tensor<5x160xf32> tiles 1x5 scratch tiled
// CHECK:         sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @r[r0, c0] x [h, w] -> %in1
// CHECK-NEXT:    sp.row_reduce partial rms_norm %in0, %in1 -> %out width 300 cols 300 rows 5 block 64
// CHECK-NEXT:    sp.store %out -> @y__partials[r0, c0 floordiv 2] x [h, 1]
// CHECK:       sp.program @y__stats op "tg.rms_norm"
// CHECK:         sp.tensor @y__partials : tensor<5x160xf32> tiles 1x5 input tiled
// CHECK-NEXT:    sp.tensor @y__stats : tensor<5x32xf32> tiles 1x1 scratch tiled
// CHECK:         sp.load @y__partials[r0, k0] x [h, kw] -> %in0
// CHECK-NEXT:    sp.row_reduce combine rms_norm %in0 -> %out width 300 cols 300 rows 5 block 64 eps 1.0e-05
// CHECK-NEXT:    sp.store %out -> @y__stats[r0, c0] x [h, 1]
// CHECK:       sp.program @y op "tg.rms_norm"
// CHECK:         sp.load @y__stats[r0, 0] x [h, 1] -> %in2
// CHECK-NEXT:    sp.load @w[0, c0] x [1, w] -> %in3
// CHECK-NEXT:    sp.map rms_apply %in0, %in1, %in2, %in3 [full, full, cols, rows] -> %out valid 5x300
// An H100 SM's 32-tile f32 accumulator holds the whole row: one section.
// GPU-LABEL: sp.entry @wide(@x, @w, @r) -> (@y)
// GPU-NEXT:  sp.program @y op "tg.rms_norm" kind row_reduce phase linked tile 32x32 attributes {row = "whole: a group of 10 tile(s) fits the 32-tile f32 accumulator and a site's local memory"} {
// GPU:         sp.row_reduce whole rms_norm %in0, %in1, %w -> %out width 300 cols 300 rows 5 eps 1.0e-05
// GPU-NOT:   sp.program
// GPU:       // {{-----}}

// -----

// Qwen3's per-head q norm: groups of 128 columns (4 tiles) with one weight for every head. A group
// fits the Tensix dest: one section, an item per (row block, head), the weight read whole.
func.func @per_head(%q: tensor<8x512xbf16>, %w: tensor<1x128xbf16>) -> tensor<8x512xbf16> {
  %y = tg.rms_norm %q, %w eps 1.0e-06 width 128 : (tensor<8x512xbf16>, tensor<1x128xbf16>) -> tensor<8x512xbf16>
  func.return %y : tensor<8x512xbf16>
}
// CHECK-LABEL: sp.entry @per_head(@q, @w) -> (@y)
// CHECK-NEXT:  sp.program @y op "tg.rms_norm" kind row_reduce phase linked tile 32x32 attributes {row = "whole: a group of 4 tile(s) fits the 4-tile f32 accumulator and a site's local memory"} {
// CHECK:         sp.load @q[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @w[0, 0] x [1, w] -> %w
// CHECK-NEXT:    sp.row_reduce whole rms_norm %in0, %w -> %out width 128 cols 512 rows 8 eps 1.0e-06

// -----

// A per-head norm wider than the accumulator: blocked per head. The combine walks each head's
// blocks (column c0 of the statistics is head c0), the apply reads its head's statistics and the
// weight at the item's column within the head.
func.func @per_head_wide(%q: tensor<8x1024xbf16>, %w: tensor<1x256xbf16>) -> tensor<8x1024xbf16> {
  %y = tg.rms_norm %q, %w eps 1.0e-06 width 256 : (tensor<8x1024xbf16>, tensor<1x256xbf16>) -> tensor<8x1024xbf16>
  func.return %y : tensor<8x1024xbf16>
}
// CHECK-LABEL: sp.entry @per_head_wide(@q, @w) -> (@y)
// CHECK:         sp.tensor @y__partials : tensor<8x256xf32> tiles 1x8 scratch tiled
// CHECK:         sp.store %out -> @y__partials[r0, c0 floordiv 4] x [h, 1]
// CHECK:         sp.tensor @y__stats : tensor<8x128xf32> tiles 1x4 scratch tiled
// CHECK:         sp.load @y__partials[r0, c0 * 2 + k0] x [h, kw] -> %in0
// CHECK:         sp.load @y__stats[r0, c0 floordiv 8] x [h, 1] -> %in1
// CHECK-NEXT:    sp.load @w[0, c0 mod 8] x [1, w] -> %in2
// CHECK-NEXT:    sp.map rms_apply %in0, %in1, %in2 [full, cols, rows] -> %out valid 8x1024 group 8

// -----

func.func @layer_and_softmax(%x: tensor<4x100xf32>, %w: tensor<1x100xf32>, %b: tensor<1x100xf32>) -> tensor<4x100xf32> {
  %l = tg.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<4x100xf32>, tensor<1x100xf32>, tensor<1x100xf32>) -> tensor<4x100xf32>
  %s = tg.softmax %l : (tensor<4x100xf32>) -> tensor<4x100xf32>
  func.return %s : tensor<4x100xf32>
}
// CHECK-LABEL: sp.entry @layer_and_softmax(@x, @w, @b) -> (@s)
// CHECK:         sp.row_reduce whole layer_norm %in0, %w, %b -> %out width 100 cols 100 rows 4 eps 1.0e-05
// CHECK:         sp.row_reduce whole softmax %in0 -> %out width 100 cols 100 rows 4

// -----

// A softmax row of 300 columns on Tensix: blocked like a norm. The partials are each block's
// maximum and sum of exponentials, the combine rescales them to the row's, the apply step maps
// exp(x - max) / sum.
func.func @softmax_wide(%x: tensor<4x300xbf16>) -> tensor<4x300xbf16> {
  %s = tg.softmax %x : (tensor<4x300xbf16>) -> tensor<4x300xbf16>
  func.return %s : tensor<4x300xbf16>
}
// CHECK-LABEL: sp.entry @softmax_wide(@x) -> (@s)
// CHECK:         sp.row_reduce partial softmax %in0 -> %out width 300 cols 300 rows 4 block 64
// CHECK:         sp.row_reduce combine softmax %in0 -> %out width 300 cols 300 rows 4 block 64
// CHECK:         sp.map softmax_apply %in0, %in1 [full, cols] -> %out valid 4x300
