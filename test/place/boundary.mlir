// The boundary sites of the 2-D map: 4096^3 bf16 on Blackhole's 13x10 mesh. 128 tiles over 10 rows
// of sites is 13 per row with 11 in the last (128 = 9 x 13 + 11); over 13 columns 10 per column with
// 8 in the last (128 = 12 x 10 + 8). Four ranges, each with the block it really covers and a
// sub-block that tiles it (1x5 does not tile 8 columns: 1x4 does), so pages, load extents, store
// strides and sub-block counts, all written in h, w, sh, sw, change together.
// RUN: spatial-opt %s -p 'link{target=blackhole_p150},tile,place' | filecheck %s

func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
// CHECK:      sp.work @c block 13x10 k 128 by 1
// CHECK-NEXT: sp.plan blocked grid 13x10 block 1x5
// CHECK:      sp.sites [0, 11]x[0, 8] first x + y * 13 count 1 block 13x10 sub_block 1x5
// CHECK-NEXT: sp.sites [12, 12]x[0, 8] first x + y * 13 count 1 block 13x8 sub_block 1x4
// CHECK-NEXT: sp.sites [0, 11]x[9, 9] first x + y * 13 count 1 block 11x10 sub_block 1x5
// CHECK-NEXT: sp.sites [12, 12]x[9, 9] first x + y * 13 count 1 block 11x8 sub_block 1x4
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK:      sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
