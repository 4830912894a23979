// The memory map as people read it: per site range each buffer's offset, bytes, depth and page,
// and the site's use against its budget; and the program it came from is the sized one.
// The plans of the 16-bit accumulator (accumulate=bf16): their sub-blocks of up to 8 tiles make
// the shapes this test is about; f32 accumulation's plans are checked in test/tile. The unsplit
// plan space (split-k=1).
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150 accumulate=bf16 split-k=1}' -t memory-map | filecheck %s

func.func @gemm(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16> {
  %c = tg.matmul %a, %b : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  func.return %c : tensor<2048x2048xbf16>
}
// 64 tiles over 10 rows: 7 per row, 1 in the last; over 13 columns: 5 per column, 4 in the last.
// K blocks of 16 tiles and 1x5 sub-blocks, each written back as it is computed
// (docs/targets.md#gemm-cycles). Inside: in0 = 2 pages of 7x16 tiles = 458752 bytes at 0, in1 =
// 5 pages of 16x5 = 819200 at 458752, the output (one page of 1x5 per sub-block, 7 sub-blocks) =
// 71680 at 1277952, the spill aliasing it.
// CHECK:      section @c (tg.matmul) on blackhole_p150: 13x10 sites, 1474560 bytes each from address 98304
// CHECK-NEXT:   sites [0, 11]x[0, 8] (108 sites, block 7x5, sub_block 1x5): 1349632 of 1474560 bytes (91.5%)
// CHECK-NEXT:     in0    offset        0  bytes   458752  depth   2  page 7x16 tiles (229376 bytes, bf16)
// CHECK-NEXT:     in1    offset   458752  bytes   819200  depth   5  page 16x5 tiles (163840 bytes, bf16)
// CHECK-NEXT:     out    offset  1277952  bytes    71680  depth   7  page 1x5 tiles (10240 bytes, bf16)
// CHECK-NEXT:     spill  alias of out  bytes    71680  depth   7  page 1x5 tiles (10240 bytes, bf16)
// CHECK-NEXT:   sites [12, 12]x[0, 8] (9 sites, block 7x4, sub_block 1x4): 1302528 of 1474560 bytes (88.3%)
// The bottom row's A block is 1 tile high, but B's group (a column) still lands at one offset,
// after the largest in0 of the column.
// CHECK:        sites [0, 11]x[9, 9] (12 sites, block 1x5, sub_block 1x5): 927744 of 1474560 bytes (62.9%)
// CHECK-NEXT:     in0    offset        0  bytes    98304  depth   3  page 1x16 tiles (32768 bytes, bf16)
// CHECK-NEXT:     in1    offset   458752  bytes   819200  depth   5  page 16x5 tiles (163840 bytes, bf16)
// CHECK:        sites [12, 12]x[9, 9] (1 site, block 1x4, sub_block 1x4): 892928 of 1474560 bytes (60.6%)
