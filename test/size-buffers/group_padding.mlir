// size-buffers: deepening never costs tile's plan its layout (docs/passes.md#size-deepening-never-costs-the-plan-its-layout).
// On blackhole_p150 this GEMM's plan is 7x3-tile blocks, the boundary rows 4x3. The credit loop
// deepens the boundary's small in0 pages to 6 (6 x 64 tiles = 786432 bytes) against the
// interior's 3 (3 x 112 = 688128), and in1, multicast down columns, lands at the largest cursor
// of its column: 786432 on the interior too, which then needed 1492992 of 1474560 bytes for a
// plan tile priced at 870400 (LocalMemExceeded, the compiler refusing its own plan). Capped at 3
// pages over tile's 2, the boundary's in0 ends (655360) below the interior's and in1 sits at
// 688128 on both.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s

func.func @g(%a: tensor<1024x8192xbf16>, %b: tensor<8192x1024xbf16>) -> tensor<1024x1024xbf16> {
  %c = tg.matmul %a, %b : (tensor<1024x8192xbf16>, tensor<8192x1024xbf16>) -> tensor<1024x1024xbf16>
  func.return %c : tensor<1024x1024xbf16>
}
// CHECK:      sp.plan blocked grid 11x5 block 1x1
// CHECK:      sp.sites [0, 9]x[0, 3] {{.*}} block 7x3 sub_block 1x1 memory {in0 = 0 depth 3, in1 = 688128 depth 5, out = 1179648, spill = 1222656, partials = 1308672}
// CHECK:      sp.sites [0, 9]x[4, 4] {{.*}} block 4x3 sub_block 1x1 memory {in0 = 0 depth 5, in1 = 688128 depth 5, out = 1179648, spill = 1222656, partials = 1271808}
