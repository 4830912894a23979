// The boundary sites of the 2-D map, with several blocks a site. Every block a site runs has one
// shape (tile deals several to a site only along a dimension whose blocks divide the tiles), so a
// boundary site is its own range with the block it really covers and a sub-block that tiles it,
// and pages, load extents, store strides and sub-block counts, all written in h, w, sh, sw, change
// together.
// The plans of the 16-bit accumulator (accumulate=bf16): their sub-blocks of up to 8 tiles make
// the shapes this test is about; f32 accumulation's plans are checked in test/tile.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16},place' | filecheck %s

// 1024x1024x2048 bf16 on Blackhole's 13x10 mesh: blocks of 2x5 tiles, 16 block rows over 8 rows of
// sites (2 rounds each, items 2s and 2s + 1 on grid site s = x + 13 y) and 13 block columns in one
// round, the last 64 - 60 = 4 tiles wide: 1x5 does not tile 4 columns, 1x4 does.
func.func @gemm(%a: tensor<1024x1024xbf16>, %b: tensor<1024x2048xbf16>) -> tensor<1024x2048xbf16> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xbf16>, tensor<1024x2048xbf16>) -> tensor<1024x2048xbf16>
  func.return %c : tensor<1024x2048xbf16>
}
// CHECK:      sp.work @c block 2x5 k 32 by 4 over 13x8
// CHECK-NEXT: sp.plan blocked grid 13x8 block 1x5
// CHECK:      sp.sites [0, 11]x[0, 7] first x * 2 + y * 26 count 2 block 2x5 sub_block 1x5
// CHECK-NEXT: sp.sites [12, 12]x[0, 7] first x * 2 + y * 26 count 2 block 2x4 sub_block 1x4
// CHECK-NOT:  sp.sites
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT: %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// CHECK:      sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1

// -----

// 4096^3 bf16: 128 tiles over 10 rows of sites is 13 per row with 11 in the last (128 = 9 x 13 +
// 11), one round; the columns in blocks of 2, 64 of them dealt over 13 columns of sites unevenly
// (64 = 12 x 5 + 4): columns 0..11 run 5 rounds, column 12 runs 4, its items a prefix of what its
// row's A sender walks. Four ranges: the block height by the item count. K blocks of 16 tiles:
// the last step's 13 sub-blocks are written back one at a time, a round trip each, so a longer
// last step (more compute between two writes) keeps the writer busy (docs/targets.md#gemm-cycles).
func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
// CHECK:      sp.work @c block 13x2 k 128 by 16 over 13x10
// CHECK-NEXT: sp.plan blocked grid 13x10 block 1x2
// CHECK:      sp.sites [0, 11]x[0, 8] first x * 5 + y * 64 count 5 block 13x2 sub_block 1x2
// CHECK-NEXT: sp.sites [12, 12]x[0, 8] first x * 4 + (y * 64 + 12) count 4 block 13x2 sub_block 1x2
// CHECK-NEXT: sp.sites [0, 11]x[9, 9] first x * 5 + y * 64 count 5 block 11x2 sub_block 1x2
// CHECK-NEXT: sp.sites [12, 12]x[9, 9] first x * 4 + (y * 64 + 12) count 4 block 11x2 sub_block 1x2
// CHECK-NOT:  sp.sites
