// size-buffers: operand FIFO depths per site range. The credit loop asks for a depth per page size
// (max(2, ceil((page_tiles x fetch_tile + credit_return) / service_page))), and a boundary
// range's pages are smaller than the interior's, so each range's memory map carries its own
// depth; only the members of one multicast group must agree, at the group's minimum.
// The target (Inputs/deep_fifos_4x4.toml) is a 4x4 Tensix-like part with fetch_tile 100,
// credit_return 400, service_page 512 cycles and 1474560 bytes of local memory per site.
// The unsplit plans (split-k=1) of the 16-bit accumulator (accumulate=bf16), whose shapes this
// test is about.
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%S/Inputs/deep_fifos_4x4.toml" accumulate=bf16 split-k=1}' | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%S/Inputs/deep_fifos_4x4.toml" accumulate=bf16 split-k=1}' -t memory-map | filecheck %s --check-prefix=MAP
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%S/Inputs/deep_fifos_4x4.toml" local-mem=900000 accumulate=bf16 split-k=1}' | filecheck %s --check-prefix=GROUP
// The simulator runs each range at its own depth, and the result is right.
// RUN: spatial-run %s --target %S/Inputs/deep_fifos_4x4.toml --accumulate bf16 | filecheck %s --check-prefix=SIM

func.func @g(%a: tensor<224x4096xbf16>, %b: tensor<4096x160xbf16>) -> tensor<224x160xbf16> {
  %c = tg.matmul %a, %b : (tensor<224x4096xbf16>, tensor<4096x160xbf16>) -> tensor<224x160xbf16>
  func.return %c : tensor<224x160xbf16>
}
// 7x5 output tiles on a 3x4 grid of 2x2-tile blocks in K blocks of 16 tiles (1x1 sub-blocks,
// each written back as it is computed: docs/targets.md#gemm-cycles): A's page is 2x16 =
// 32 tiles in the top three rows of sites (32 x 100 + 400 = 3600 cycles: 8 pages) and 1x16 = 16
// in the bottom row (2000 cycles: 4 pages); B's is 16x2 in the left two columns (8) and 16x1 in
// the right one (4). A is multicast along rows and B down columns, and a row's (a column's) pages
// are one size, so no group pulls a range down: the interior keeps 8 and 8. One depth per buffer,
// the minimum over every range, gave every site 4.
// CHECK:      sp.plan blocked grid 3x4 block 1x1
// CHECK:      sp.sites [0, 1]x[0, 2] first x + y * 3 count 1 block 2x2 sub_block 1x1 memory {in0 = 0 depth 8, in1 = 524288 depth 8, out = 1048576, spill = 1048576}
// CHECK-NEXT: sp.sites [2, 2]x[0, 2] first x + y * 3 count 1 block 2x1 sub_block 1x1 memory {in0 = 0 depth 8, in1 = 524288 depth 4, out = 655360, spill = 655360}
// CHECK-NEXT: sp.sites [0, 1]x[3, 3] first x + y * 3 count 1 block 1x2 sub_block 1x1 memory {in0 = 0 depth 4, in1 = 524288 depth 8, out = 1048576, spill = 1048576}
// CHECK-NEXT: sp.sites [2, 2]x[3, 3] first x + y * 3 count 1 block 1x1 sub_block 1x1 memory {in0 = 0 depth 4, in1 = 524288 depth 4, out = 655360, spill = 655360}
// The buffer ops keep the depth tile asked for.
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT: %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// CHECK:      sp.group @in0_rows %in0 rows [0, 2]x[0, 3] sender 0
// CHECK-NEXT: sp.group @in1_columns %in1 columns [0, 2]x[0, 3] sender 0

// MAP:      sites [0, 1]x[0, 2] (6 sites, block 2x2, sub_block 1x1): 1056768 of 1474560 bytes (71.7%)
// MAP-NEXT:   in0    offset        0  bytes   524288  depth   8  page 2x16 tiles (65536 bytes, bf16)
// MAP-NEXT:   in1    offset   524288  bytes   524288  depth   8  page 16x2 tiles (65536 bytes, bf16)
// MAP:      sites [2, 2]x[0, 2] (3 sites, block 2x1, sub_block 1x1): 659456 of 1474560 bytes (44.7%)
// MAP-NEXT:   in0    offset        0  bytes   524288  depth   8  page 2x16 tiles (65536 bytes, bf16)
// MAP-NEXT:   in1    offset   524288  bytes   131072  depth   4  page 16x1 tiles (32768 bytes, bf16)

// Under a 900000-byte budget the interior sites cannot hold 8 + 8 pages of 64 KiB (and the
// 8 KiB output): A's page, first of the two largest, is given back down to 5 (5 x 65536 +
// 8 x 65536 + 8192 = 860160 bytes; 6 would need 925696). The right column could afford A's 8
// (8 x 65536 + 4 x 32768 + 4096 = 659456), but its A pages are the multicast of the interior's
// rows, landing at one address: the group takes its minimum, 5. The bottom row's groups are its
// own: A's 4 stay.
// GROUP:      sp.mesh 4x4 movement 2 nocs 2 local 900000
// GROUP-NEXT: sp.sites [0, 1]x[0, 2] {{.*}} memory {in0 = 0 depth 5, in1 = 327680 depth 8, out = 851968, spill = 851968}
// GROUP-NEXT: sp.sites [2, 2]x[0, 2] {{.*}} memory {in0 = 0 depth 5, in1 = 327680 depth 4, out = 458752, spill = 458752}
// GROUP-NEXT: sp.sites [0, 1]x[3, 3] {{.*}} memory {in0 = 0 depth 4, in1 = 327680 depth 8, out = 851968, spill = 851968}
// GROUP-NEXT: sp.sites [2, 2]x[3, 3] {{.*}} memory {in0 = 0 depth 4, in1 = 327680 depth 4, out = 458752, spill = 458752}

// SIM: PASS: 1 output(s) within tolerance
