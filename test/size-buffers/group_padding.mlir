// size-buffers: deepening never costs tile's plan its layout (docs/passes.md#size-deepening-never-costs-the-plan-its-layout).
// On blackhole_p150 this GEMM's plan is 7x3-tile blocks, the boundary rows 4x3. The credit loop
// deepens the boundary's small in0 pages to 6 (6 x 64 tiles = 786432 bytes) against the
// interior's 3 (3 x 112 = 688128), and in1, multicast down columns, lands at the largest cursor
// of its column: 786432 on the interior too, which then needed 1492992 of 1474560 bytes for a
// plan tile priced at 870400 (LocalMemExceeded, the compiler refusing its own plan). Capped at 3
// pages over tile's 2, in1 sits at one offset on both. With split-K's partials FIFO at both its
// rings (received and sent: 2 x 21 f32 pages, 172032 bytes) the interior has no room for a
// third in0 page and keeps tile's 2 (458752 bytes); the boundary's in0 at 5 ends at 655360, and
// in1 sits at 655360 on both.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s

func.func @g(%a: tensor<1024x8192xbf16>, %b: tensor<8192x1024xbf16>) -> tensor<1024x1024xbf16> {
  %c = tg.matmul %a, %b : (tensor<1024x8192xbf16>, tensor<8192x1024xbf16>) -> tensor<1024x1024xbf16>
  func.return %c : tensor<1024x1024xbf16>
}
// CHECK:      sp.plan blocked grid 11x5 block 1x3
// CHECK:      sp.sites [0, 9]x[0, 3] {{.*}} block 7x3 sub_block 1x3 memory {in0 = 0, in1 = 655360 depth 5, out = 1146880, spill = 1189888, partials = 1275904}
// CHECK:      sp.sites [0, 9]x[4, 4] {{.*}} block 4x3 sub_block 1x3 memory {in0 = 0 depth 5, in1 = 655360 depth 5, out = 1146880, spill = 1189888, partials = 1239040}
