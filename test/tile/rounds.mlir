// tile's wider plan space: several blocks a site (the 2-D map with wrap-around, docs/passes.md#tile-one-dealing-function), a line of
// sites folded onto the mesh, multicast chosen per operand, and a flat target priced as place deals
// it. Each plan carries its predicted cycles, the runner-up's, and what the other multicast choice
// for each shared operand would cost (`multicast_why`).
// RUN: spatial-opt %s --split-input-file -p 'link,tile{split-k=1}' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{split-k=1}' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link{target=h200},tile{split-k=1}' | filecheck %s --check-prefix=FLAT

// 8192^3 bf16: one block a site (32x32 tiles) does not fit a Tensix site's local memory, so without
// rounds only streaming was left (239,076 us on Wormhole). Here: 2x2-tile blocks, 256 a site (16 x
// 16 rounds of the 8x8 grid) in 1x2 sub-blocks (tied with 2x1), K in 4 blocks of 64 tiles (the f32 accumulator holds 4 tiles, and a
// long K block spills the f32 partial sums rarely), both operands multicast (reading them per site
// would more than triple the time).
func.func @big(%a: tensor<8192x8192xbf16>, %b: tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16> {
  %c = tg.matmul %a, %b : (tensor<8192x8192xbf16>, tensor<8192x8192xbf16>) -> tensor<8192x8192xbf16>
  func.return %c : tensor<8192x8192xbf16>
}
// WH:      sp.work @c block 2x2 k 256 by 64 over 8x8
// WH-NEXT: sp.plan blocked grid 8x8 block 1x2 packing operand_with_store multicast a, b predicted 17909883 bound compute runner_up "blocked per_site 2x2 block 2x1 k_block 64 k_blocks 4 grid 8x8" 17909883
// WH-SAME: multicast_why = "A multicast over rows of 8 (unicast: 72908732 cycles); B multicast over columns of 8 (unicast: 72908732 cycles)"
// Blackhole: a line of 128 sites sharing B (tt-metal's 1-D matmul multicasting in1): the 128 block
// rows of 2x16 tiles dealt one to a line site, each site running all 16 block columns in rounds,
// in 1x4 sub-blocks each written back as it is computed (docs/targets.md#gemm-cycles); tied with
// its transpose, the line sharing A with 16x2 blocks of 4x1 sub-blocks.
// BH:      sp.work @c block 2x16 k 256 by 16 over 1x128
// BH-NEXT: sp.plan blocked line grid 1x128 block 1x4 packing operand_with_store multicast b predicted 9335024 bound compute
// BH-SAME: multicast_why = "B multicast over the line of 128 (unicast: 52586024 cycles)"
// H200 (flat, no multicast): 4x4 blocks dealt by split_work_to_sites over 128 of the 132 SMs, 32
// each (4096 blocks divide evenly over 128); the cost model prices exactly that dealing
// (`targets.gemm.deal`). K in blocks of 4 tiles: a step is 4 x 4 x 4 tile-matmuls of 20 cycles
// (the sustained rate, targets/presets.py [MAMF]) = 1280 cycles and reads 8 x 4 tiles = 64 KiB.
// The DRAM sustains 4800 GB/s / 1.83 GHz x 4480/4800 = 2448 B/cycle, so a step's DRAM share is
// 910 cycles < 1280: compute-bound, as 4x8 blocks with K blocks of 2 (48 KiB a step) are, and the
// 4x4 blocks' shorter write-back (drain 3393 cycles) decides.
// FLAT:      sp.work @c block 4x4 k 256 by 4
// FLAT-NEXT: sp.plan blocked grid 128x1 block 4x4 packing operand_with_store predicted 2624466 bound compute runner_up "blocked per_site 4x4 block 4x4 k_block 4 k_blocks 64" 2624519
// FLAT-NOT:  multicast

// -----

// 4096^3 bf16 on Blackhole: 128 tiles do not divide by 13 or 10. Blocks of 13x2 tiles: the rows in
// one round (10 block rows, the last 11 tiles high), the 64 block columns dealt unevenly over the 13
// site columns (12 run 5 rounds, the last 4). Wormhole: 2x2 blocks, 64 a site. The runner-up's
// 1x1 sub-blocks (two to a block row) are written two at a time (writes_in_pairs); the 13 1x2
// sub-blocks of the plan's column are not.
func.func @square(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
// WH:      sp.work @c block 2x2 k 128 by 64 over 8x8
// WH-NEXT: sp.plan blocked grid 8x8 block 1x2 packing operand_with_store multicast a, b predicted 2246779 bound compute
// BH:      sp.work @c block 13x2 k 128 by 16 over 13x10
// BH-NEXT: sp.plan blocked grid 13x10 block 1x2 packing operand_with_store multicast a, b predicted 1201250 bound compute runner_up "blocked per_site 13x2 block 1x1 k_block 16 k_blocks 8 grid 13x10" 1210950
// BH-SAME: multicast_why = "A multicast over rows of 13 (unicast: 6010974 cycles); B multicast over columns of 10 (unicast: 1481126 cycles)"
// FLAT:      sp.work @c block 4x4 k 128 by 4
// FLAT-NEXT: sp.plan blocked grid 128x1 block 4x4

// -----

// Attention PV at decode, 32x4096x128: 4 block columns on a row of 4 sites, K in 4 blocks of 32
// tiles. Multicasting A means its sender reads each 32-tile block and then sends it, a chain the
// other sites wait on; each site reading its own is faster, so the plan names no multicast
// operand (B has no column of sites to share it).
func.func @pv(%p: tensor<32x4096xbf16>, %v: tensor<4096x128xbf16>) -> tensor<32x128xbf16> {
  %o = tg.matmul %p, %v : (tensor<32x4096xbf16>, tensor<4096x128xbf16>) -> tensor<32x128xbf16>
  func.return %o : tensor<32x128xbf16>
}
// WH:      sp.work @o block 1x1 k 128 by 32{{$}}
// WH-NEXT: sp.plan blocked grid 4x1 block 1x1 packing operand_with_store predicted 13057 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 16 k_blocks 8 grid 4x1 unicast a" 13985
// WH-SAME: multicast_why = "A unicast, shared by rows of 4 (multicast: 21525 cycles)"
// BH:      sp.plan blocked grid 4x1 block 1x1 packing operand_with_store predicted 11709 bound compute
// BH-SAME: multicast_why = "A unicast, shared by rows of 4 (multicast: 15961 cycles)"
