// place: items to sites (2-D map on a multicast mesh, split_work_to_sites elsewhere), one site
// range per distinct block, per-site first items, engines and NoCs.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile,place' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link,tile,place' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=rtx3060},tile,place' | filecheck %s --check-prefix=GPU
// Running place twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile,place,place' | filecheck %s --check-prefix=BH

// 1024^3 f32: 32x32 tiles.
func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// Blackhole, blocks of 4x3 tiles: 8 block rows, ceil(32 / 3) = 11 block columns, the last one
// 32 - 30 = 2 tiles wide. Block (row, col) on site (col, row); the boundary column is its own
// range, with a 4x2 block and the sub-block fitted to it. Loads on movement engine 1 (the
// receiver NoC 0), B's loader with the store on engine 0 (the writer NoC 1).
// BH:      sp.mesh 13x10 movement 2 nocs 2 local 1474560
// BH-NEXT: sp.sites [0, 9]x[0, 7] first x + y * 11 count 1 block 4x3 sub_block 4x1
// BH-NEXT: sp.sites [10, 10]x[0, 7] first x + y * 11 count 1 block 4x2 sub_block 4x1
// BH-NOT:  sp.sites
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
// BH-NEXT: sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
// BH-NEXT: sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// Wormhole, 4x4 blocks tile 32x32 exactly on 8x8 sites: one range.
// WH:      sp.mesh 8x8 movement 2 nocs 2 local 1395424
// WH-NEXT: sp.sites [0, 7]x[0, 7] first x + y * 8 count 1 block 4x4 sub_block 1x4
// WH-NOT:  sp.sites
// A GPU's SMs are a line without multicast: 16 x 32 = 512 blocks of 2x1 dealt out flat over 28
// SMs, 512 = 18 x 28 + 8, so the first 8 take 19 blocks and the other 20 take 18.
// GPU:      sp.mesh 28x1 movement 2 nocs 1 local 101376
// GPU-NEXT: sp.sites [0, 7]x[0, 0] first x * 19 count 19 block 2x1 sub_block 2x1
// GPU-NEXT: sp.sites [8, 27]x[0, 0] first x * 18 + 8 count 18 block 2x1 sub_block 2x1
// GPU:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// GPU-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 0

// -----

// 32x32x8192 bf16, skinny (one tile row, K of one tile): streaming, 256 output tiles dealt out.
func.func @skinny(%a: tensor<32x32xbf16>, %b: tensor<32x8192xbf16>) -> tensor<32x8192xbf16> {
  %c = tg.matmul %a, %b : (tensor<32x32xbf16>, tensor<32x8192xbf16>) -> tensor<32x8192xbf16>
  func.return %c : tensor<32x8192xbf16>
}
// 256 tiles on 130 sites: 256 = 130 + 126, so 126 sites take 2 (columns 0-11 whole, then
// (12, 0..5)) and 4 take 1 (the rest of column 12), each range walked x fastest.
// BH:      sp.plan streaming grid 13x10
// BH:      sp.sites [0, 11]x[0, 9] first x * 2 + y * 24 count 2 block 1x1 sub_block 1x1
// BH-NEXT: sp.sites [12, 12]x[0, 5] first y * 2 + 240 count 2 block 1x1 sub_block 1x1
// BH-NEXT: sp.sites [12, 12]x[6, 9] first y + 246 count 1 block 1x1 sub_block 1x1
// 256 on 64 sites: 4 each.
// WH:      sp.plan streaming grid 8x8
// WH:      sp.sites [0, 7]x[0, 7] first x * 4 + y * 32 count 4 block 1x1 sub_block 1x1
// 256 on 28: 4 take 10, 24 take 9.
// GPU:      sp.sites [0, 3]x[0, 0] first x * 10 count 10 block 1x1 sub_block 1x1
// GPU-NEXT: sp.sites [4, 27]x[0, 0] first x * 9 + 4 count 9 block 1x1 sub_block 1x1
