// fuse-operands on a multicast mesh: under the 2-D map a row of sites shares its A blocks and a
// column its B blocks; the loads become the groups' senders (x = 0 for a row, y = 0 for a column).
// The plans of the 16-bit accumulator (accumulate=bf16): their sub-blocks of up to 8 tiles make
// the shapes this test is about; f32 accumulation's plans are checked in test/tile.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16},place,fuse-operands' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link,tile{accumulate=bf16},place,fuse-operands' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100},tile,place,fuse-operands' | filecheck %s --check-prefix=GPU
// Running fuse-operands twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16},place,fuse-operands,fuse-operands' | filecheck %s --check-prefix=BH

func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
// The groups span the whole grid the plan uses (13 columns x 10 rows of blocks), across the
// boundary ranges: a row's members all hold the same A block rows.
// BH:      sp.program @c op "tg.matmul" kind gemm phase fused
// BH:      sp.group @in0_rows %in0 rows [0, 12]x[0, 9] sender 0
// BH-NEXT: sp.group @in1_columns %in1 columns [0, 12]x[0, 9] sender 0
// BH-NOT:  sp.group
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
// WH:      sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0
// WH-NEXT: sp.group @in1_columns %in1 columns [0, 7]x[0, 7] sender 0
// A GPU's SMs share nothing on chip: the section only advances.
// GPU:      sp.program @c op "tg.matmul" kind gemm phase fused
// GPU-NOT:  sp.group
// GPU-NOT:  multicast

// -----

// M = 1: one block row, laid over a line of sites folded onto the mesh (tt-metal's 1-D multicast
// matmul): every site of the line reads the same A, so the line is one group, its first site the
// sender; B is read by each site for its own block columns.
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// BH:      sp.plan blocked line grid 128x1 block 1x1 packing operand_with_store multicast a predicted
// BH:      sp.group @in0_line %in0 line [0, 12]x[0, 9] sites 128 sender 0
// BH-NOT:  sp.group
// BH:      sp.load @x[r0, k0] x [h, kw] -> %in0 multicast @in0_line on movement 1 noc 0
// BH-NEXT: sp.load @w[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
// WH:      sp.group @in0_line %in0 line [0, 7]x[0, 5] sites 43 sender 0

// -----

// Multicast is the plan's choice per operand: on this small GEMM a row's A sender would read a
// block and then send it, a chain longer than each site reading its own, so tile lets every site
// of a row read A, and only what the plan multicasts is grouped. (Blackhole also read B per site
// while DRAM ran at its peak; at the 98% it sustains, a column's B multicast is 24 cycles shorter.)
func.func @small(%a: tensor<96x200xbf16>, %b: tensor<200x160xbf16>) -> tensor<96x160xbf16> {
  %c = tg.matmul %a, %b : (tensor<96x200xbf16>, tensor<200x160xbf16>) -> tensor<96x160xbf16>
  func.return %c : tensor<96x160xbf16>
}
// WH:      sp.plan blocked grid 5x3 block 1x1 packing operand_with_store multicast b predicted
// WH-NOT:  sp.group @in0
// WH:      sp.group @in1_columns %in1 columns [0, 4]x[0, 2] sender 0
// WH-NOT:  sp.group
// WH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// WH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
// BH:      sp.plan blocked grid 5x3 block 1x1 packing operand_with_store multicast b predicted
// BH-NOT:  sp.group @in0
// BH:      sp.group @in1_columns %in1 columns [0, 4]x[0, 2] sender 0
// BH-NOT:  sp.group
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
