// place on plans that give a site several blocks: the 2-D map of docs/passes.md#place-the-2-d-map-where-multicast-exists, block (row, col) on site
// (col % GX, row % GY) of the plan's grid, the items numbered so that each site's are consecutive
// (sp.work ... over): site (x, y) runs `count` items from `first`. A line plan folds its sites
// onto the mesh row by row. An operand the plan does not multicast gets no group. A flat target
// deals by split_work_to_sites over the sites the plan chose.
// The plans of the 16-bit accumulator (accumulate=bf16): their sub-blocks of up to 8 tiles make
// the shapes this test is about; f32 accumulation's plans are checked in test/tile. The unsplit
// plan space (split-k=1).
// RUN: spatial-opt %s --split-input-file -p 'link,tile{accumulate=bf16 split-k=1},place,fuse-operands' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16 split-k=1},place,fuse-operands' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link{target=h200},tile{split-k=1},place,fuse-operands' | filecheck %s --check-prefix=FLAT

// 8192^3 bf16. Wormhole: 64x32 blocks of 4x8 tiles over the 8x8 grid, 32 a site: site (x, y) runs
// blocks (y + 8i, x + 8j), items 32 (x + 8 y) .. + 31. Every row of sites walks the same block rows
// (A multicast from x = 0), every column the same block columns (B from y = 0). The 1x8 sub-block:
// Wormhole's LLK releases a source bank after every tile-matmul of a 2x2-or-wider sub-block, once a
// row of a one-wide one (docs/targets.md#tile-matmul-issue).
func.func @big(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  %c = tg.matmul %a, %b : (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  func.return %c : tensor<8192x8192xbf16>
}
// WH:      sp.sites [0, 7]x[0, 7] first x * 32 + y * 256 count 32 block 4x8 sub_block 1x8
// WH-NOT:  sp.sites
// WH:      sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0
// WH-NEXT: sp.group @in1_columns %in1 columns [0, 7]x[0, 7] sender 0
// Blackhole: a line of 128 sites sharing B, line site s = x + 13 y running block row s and all 16
// block columns (items 16 s .. 16 s + 15): 9 rows of 13 sites and 11 of the tenth; one group, the
// whole line, sender its first site; A is read by each site.
// BH:      sp.sites [0, 12]x[0, 8] first x * 16 + y * 208 count 16 block 2x16 sub_block 1x8
// BH-NEXT: sp.sites [0, 10]x[9, 9] first x * 16 + y * 208 count 16 block 2x16 sub_block 1x8
// BH-NOT:  sp.sites
// BH:      sp.group @in1_line %in1 line [0, 12]x[0, 9] sites 128 sender 0
// BH-NOT:  sp.group
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_line on movement 0 noc 1
// H200: 4096 blocks of 4x4 over the 128 SMs tile chose, 32 each (tile/rounds.mlir says why 4x4).
// FLAT:      sp.mesh 132x1
// FLAT-NEXT: sp.sites [0, 127]x[0, 0] first x * 32 count 32 block 4x4 sub_block 4x4
// FLAT-NEXT: %in0 = sp.fifo

// -----

// Attention PV at decode, 32x4096x128: a row of 4 sites, one block each; the plan reads A per site
// (no multicast), so no group is formed and every site's A loader reads for itself.
func.func @pv(%p: tensor<32x4096xbf16>, %v: tensor<4096x128xbf16>) -> tensor<32x128xbf16> {
  %o = tg.matmul %p, %v : (tensor<32x4096xbf16>, tensor<4096x128xbf16>) -> tensor<32x128xbf16>
  func.return %o : tensor<32x128xbf16>
}
// WH:      sp.sites [0, 3]x[0, 0] first x + y * 4 count 1 block 1x1 sub_block 1x1
// WH-NOT:  sp.group
// WH:      sp.load @p[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// WH-NEXT: sp.load @v[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
// BH:      sp.sites [0, 3]x[0, 0] first x + y * 4 count 1 block 1x1 sub_block 1x1
// BH-NOT:  sp.group
// FLAT:      sp.sites [0, 3]x[0, 0] first x count 1 block 1x1 sub_block 1x1
