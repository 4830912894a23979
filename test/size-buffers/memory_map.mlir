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
// Inside: in0 = 2 pages of 7x1 tiles = 28672 bytes at 0, in1 = 2 pages of 1x5 = 20480 at 28672,
// the output (one page of 7x1 per sub-block, 5 sub-blocks) = 71680 at 49152, the spill aliasing it.
// CHECK:      section @c (tg.matmul) on blackhole_p150: 13x10 sites, 1474560 bytes each from address 98304
// CHECK-NEXT:   sites [0, 11]x[0, 8] (108 sites, block 7x5, sub_block 7x1): 120832 of 1474560 bytes (8.2%)
// CHECK-NEXT:     in0    offset        0  bytes    28672  depth   2  page 7x1 tiles (14336 bytes, bf16)
// CHECK-NEXT:     in1    offset    28672  bytes    20480  depth   2  page 1x5 tiles (10240 bytes, bf16)
// CHECK-NEXT:     out    offset    49152  bytes    71680  depth   5  page 7x1 tiles (14336 bytes, bf16)
// CHECK-NEXT:     spill  alias of out  bytes    71680  depth   5  page 7x1 tiles (14336 bytes, bf16)
// CHECK-NEXT:   sites [12, 12]x[0, 8] (9 sites, block 7x4, sub_block 7x1): 102400 of 1474560 bytes (6.9%)
// The bottom row's A block is 1 tile high, but B's group (a column) still lands at one offset,
// after the largest in0 of the column.
// CHECK:        sites [0, 11]x[9, 9] (12 sites, block 1x5, sub_block 1x1): 34816 of 1474560 bytes (2.4%)
// CHECK-NEXT:     in0    offset        0  bytes     4096  depth   2  page 1x1 tiles (2048 bytes, bf16)
// CHECK-NEXT:     in1    offset    28672  bytes    20480  depth   2  page 1x5 tiles (10240 bytes, bf16)
// CHECK:        sites [12, 12]x[9, 9] (1 site, block 1x4, sub_block 1x1): 28672 of 1474560 bytes (1.9%)
