// place: items to sites (2-D map on a multicast mesh, split_work_to_sites elsewhere), one site
// range per distinct block, per-site first items, engines and NoCs.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{split-k=1},place' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link,tile{split-k=1},place' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=rtx3060},tile{split-k=1},place' | filecheck %s --check-prefix=GPU
// Running place twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{split-k=1},place,place' | filecheck %s --check-prefix=BH

// 1024^3 f32: 32x32 tiles.
func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// Blackhole, blocks of 4x3 tiles: 8 block rows, ceil(32 / 3) = 11 block columns, the last one
// 32 - 30 = 2 tiles wide. Block (row, col) on site (col, row); the boundary column is its own
// range, with a 4x2 block and the sub-block fitted to it. Sub-blocks of a row (four to a
// block, written two at a time: writes_in_pairs), not of a column (three, one at a time). Loads on movement engine 1 (the
// receiver NoC 0), B's loader with the store on engine 0 (the writer NoC 1).
// BH:      sp.mesh 13x10 movement 2 nocs 2 local 1474560
// BH-NEXT: sp.sites [0, 9]x[0, 7] first x + y * 11 count 1 block 4x3 sub_block 1x3
// BH-NEXT: sp.sites [10, 10]x[0, 7] first x + y * 11 count 1 block 4x2 sub_block 1x2
// BH-NOT:  sp.sites
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
// BH-NEXT: sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
// BH-NEXT: sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// Wormhole, 4x4 blocks tile 32x32 exactly on 8x8 sites: one range.
// WH:      sp.mesh 8x8 movement 2 nocs 2 local 1395424
// WH-NEXT: sp.sites [0, 7]x[0, 7] first x + y * 8 count 1 block 4x4 sub_block 1x4
// WH-NOT:  sp.sites
// A GPU's SMs are a line without multicast: 32 x 8 = 256 blocks of 1x4 dealt out flat over the 26
// SMs tile chose (the fewest that run 10 each), 256 = 9 x 26 + 22, so the first 22 take 10 blocks
// and the other 4 take 9; the output goes one tile a lane.
// GPU:      sp.mesh 28x1 movement 2 nocs 1 local 101376
// GPU-NEXT: sp.sites [0, 21]x[0, 0] first x * 10 count 10 block 1x4 sub_block 1x4
// GPU-NEXT: sp.sites [22, 25]x[0, 0] first x * 9 + 22 count 9 block 1x4 sub_block 1x4
// GPU:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// GPU-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 0

// -----

// 32x32x8192 bf16, skinny (one tile row, K of one tile): 1x256 output tiles. Tile deals the block
// columns over a LINE of sites folded onto the mesh row by row (line site s on (s % X, s // X)),
// every site running its blocks back to back; the ranges are the line's full rows and the pieces
// of its last row, each with the first item an affine function of (x, y).
func.func @skinny(%a: tensor<32x32xbf16>, %b: tensor<32x8192xbf16>) -> tensor<32x8192xbf16> {
  %c = tg.matmul %a, %b : (tensor<32x32xbf16>, tensor<32x8192xbf16>) -> tensor<32x8192xbf16>
  func.return %c : tensor<32x8192xbf16>
}
// Blackhole: 256 blocks on a line of 128, 2 each (items 2s and 2s + 1 on line site s = x + 13 y): 9
// rows of 13 and 11 sites of the tenth.
// BH:      sp.work @c block 1x1 k 1 by 1 over 128x1
// BH-NEXT: sp.plan blocked line grid 128x1 block 1x1
// BH:      sp.sites [0, 12]x[0, 8] first x * 2 + y * 26 count 2 block 1x1 sub_block 1x1
// BH-NEXT: sp.sites [0, 10]x[9, 9] first x * 2 + y * 26 count 2 block 1x1 sub_block 1x1
// BH-NOT:  sp.sites
// Wormhole: 256 blocks on a line of 64, 4 each (items 4s .. 4s + 3 on line site s = x + 8 y). (The
// runner-up, 1x2 blocks on 43 sites, 3 rounds with uneven ones, waits on the DRAM every step; at
// the 92.7% of the peak Wormhole sustains it costs 5,246 cycles to this plan's 5,083, which waits
// on its reads' round trips. tile/rounds.mlir covers uneven rounds.)
// WH:      sp.work @c block 1x1 k 1 by 1 over 64x1
// WH-NEXT: sp.plan blocked line grid 64x1 block 1x1
// WH:      sp.sites [0, 7]x[0, 7] first x * 4 + y * 32 count 4 block 1x1 sub_block 1x1
// WH-NOT:  sp.sites
// A GPU deals the 256 tiles flat over the 24 SMs tile chose: 256 = 24 x 10 + 16, so 16 take 11.
// (An SM keeps one 4 KiB B tile in flight per 400-cycle DRAM round trip, 9.5 B/cycle by Little's
// law: 24 of them stream 228 B/cycle, past the 198 the DRAM sustains, 360 GB/s / 1.777 GHz x
// 679/696; at that rate 11 steps on 24 SMs beat 12 on 22.)
// GPU:      sp.plan blocked grid 24x1 block 1x1
// GPU:      sp.sites [0, 15]x[0, 0] first x * 11 count 11 block 1x1 sub_block 1x1
// GPU-NEXT: sp.sites [16, 23]x[0, 0] first x * 10 + 16 count 10 block 1x1 sub_block 1x1
