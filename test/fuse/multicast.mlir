// fuse-operands on a multicast mesh: under the 2-D map a row of sites shares its A blocks and a
// column its B blocks; the loads become the groups' senders (x = 0 for a row, y = 0 for a column).
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile,place,fuse-operands' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link,tile,place,fuse-operands' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100},tile,place,fuse-operands' | filecheck %s --check-prefix=GPU
// Running fuse-operands twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile,place,fuse-operands,fuse-operands' | filecheck %s --check-prefix=BH

func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
// The groups span the whole grid the plan uses (13 columns x 10 rows of blocks), across the
// boundary ranges: a row's members all hold the same A block rows.
// BH:      sp.program @c op "tg.matmul" phase fused
// BH:      sp.group @in0_rows %in0 rows [0, 12]x[0, 9] sender 0
// BH-NEXT: sp.group @in1_columns %in1 columns [0, 12]x[0, 9] sender 0
// BH-NOT:  sp.group
// BH:      sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
// BH-NEXT: sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
// WH:      sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0
// WH-NEXT: sp.group @in1_columns %in1 columns [0, 7]x[0, 7] sender 0
// A GPU's SMs share nothing on chip: the section only advances.
// GPU:      sp.program @c op "tg.matmul" phase fused
// GPU-NOT:  sp.group
// GPU-NOT:  multicast

// -----

// M = 1: one block row on one row of sites: A is shared along the row, B by nobody (a column of
// one site is no group).
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// BH:      sp.group @in0_rows %in0 rows [0, 12]x[0, 0] sender 0
// BH-NOT:  sp.group
// BH:      sp.load @x[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
// BH-NEXT: sp.load @w[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
// WH:      sp.group @in0_rows %in0 rows [0, 7]x[0, 0] sender 0

// -----

// A streaming plan is dealt out flat: no row of sites holds one block row, nothing is grouped.
func.func @skinny(%a: tensor<32x32xbf16>, %b: tensor<32x8192xbf16>) -> tensor<32x8192xbf16> {
  %c = tg.matmul %a, %b : (tensor<32x32xbf16>, tensor<32x8192xbf16>) -> tensor<32x8192xbf16>
  func.return %c : tensor<32x8192xbf16>
}
// WH:      sp.plan streaming
// WH-NOT:  sp.group
// WH:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
