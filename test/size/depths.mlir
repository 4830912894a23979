// size-buffers: operand FIFO depths from the credit loop, depth = max(2, ceil((page_tiles x
// fetch_tile + credit_return) / service_page)); Wormhole declares fetch_tile 64, credit_return 500,
// service_page 512 cycles, Blackhole 32, 600, 512. The output FIFO keeps its depth.
// RUN: spatial-opt %s --split-input-file -p spatial-pipeline | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=h100}' | filecheck %s --check-prefix=GPU
// Running size-buffers twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p spatial-pipeline,size-buffers | filecheck %s --check-prefix=WH

// A decode step, 1x4096 @ 4096x4096: on Wormhole blocks of 1x16 tiles in K blocks of 8, so A's page
// is 1x8 tiles (credit loop 8 x 64 + 500 = 1012 cycles: 2 pages) and B's 8x16 = 128 tiles
// (128 x 64 + 500 = 8692 cycles: 17 pages). Seventeen 256 KiB pages do not fit 1395424 bytes, so
// B's pages (the most bytes per page) are given back one at a time until the site fits: 5.
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// WH:      sp.sites [0, 7]x[0, 0] first x + y * 8 count 1 block 1x16 sub_block 1x8 memory {in0 = 0, in1 = 32768, out = 1343488, spill = 1343488}
// WH:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// WH-NEXT: %in1 = sp.fifo "in1" depth 5 page [kw, w] bf16 tile_bytes 2048
// WH-NEXT: %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
// Blackhole: B's page is 4x10 = 40 tiles (40 x 32 + 600 = 1880 cycles: 4 pages), 4x8 = 32 at the
// boundary site (1624: 4); A's 1x4 (728: 2).
// BH:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// BH-NEXT: %in1 = sp.fifo "in1" depth 4 page [kw, w] bf16 tile_bytes 2048
// A GPU declares no credit-loop latencies: double buffering.
// GPU:      %in0 = sp.fifo "in0" depth 2
// GPU-NEXT: %in1 = sp.fifo "in1" depth 2

// -----

// 100x1024x700 on Wormhole: blocks of 1x3 tiles; the last column of sites covers 22 - 21 = 1
// tile. B's page is 8x3 = 24 tiles at the interior sites (24 x 64 + 500 = 2036 cycles: 4 pages)
// but 8x1 = 8 at the boundary (1012: 2 pages). A buffer has one depth on every site, so members
// of one multicast group agree by construction, and it takes the minimum: 2.
func.func @g(%a: tensor<100x1024xbf16>, %b: tensor<1024x700xbf16>) -> tensor<100x700xbf16> {
  %c = tg.matmul %a, %b : (tensor<100x1024xbf16>, tensor<1024x700xbf16>) -> tensor<100x700xbf16>
  func.return %c : tensor<100x700xbf16>
}
// Groups first at one offset (in0 at 0 everywhere, in1 after the largest in0), then first-fit per
// range: the output lands right after in1, which is 3 tiles wide inside and 1 at the boundary.
// WH:      sp.sites [0, 6]x[0, 3] first x + y * 8 count 1 block 1x3 sub_block 1x3 memory {in0 = 0, in1 = 32768, out = 131072, spill = 131072}
// WH-NEXT: sp.sites [7, 7]x[0, 3] first x + y * 8 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 32768, out = 65536, spill = 65536}
// WH:      %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
