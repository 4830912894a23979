// fuse-operands on Plasticine: share_operand decides each shared panel from the machine and the
// shape alone. Two target files that differ ONLY in DRAM bandwidth reach both outcomes.
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%examples/targets/plasticine_slow_dram.toml"}' | filecheck %s --check-prefix=SLOW
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%examples/targets/plasticine_fast_dram.toml"}' | filecheck %s --check-prefix=FAST
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%examples/targets/plasticine_slow_dram.toml"}' -t report | filecheck %s --check-prefix=SLOW-REPORT
// RUN: spatial-opt %s -p 'spatial-pipeline{target="%examples/targets/plasticine_fast_dram.toml"}' -t report | filecheck %s --check-prefix=FAST-REPORT
// RUN: spatial-opt %s -p 'link{target=plasticine},tile,place,fuse-operands,fuse-operands' | filecheck %s --check-prefix=PRESET

func.func @gemm(%a: tensor<256x1024xf32>, %b: tensor<1024x256xf32>) -> tensor<256x256xf32> {
  %c = tg.matmul %a, %b : (tensor<256x1024xf32>, tensor<1024x256xf32>) -> tensor<256x256xf32>
  func.return %c : tensor<256x256xf32>
}
// 8x8 one-tile blocks. A's panel is one block row over K: 1 x 32 tiles of 4096 bytes = 131072
// bytes, read by the 8 items of the row. Saved by fetching it once: 7 copies x 131072 bytes =
// 917504 bytes at 12.8 GB/s on a 1 GHz clock = 71680 cycles. With that DRAM the plan is DRAM-bound
// on any grid and tile deals the 64 blocks over 4x1 sites, 16 each (fewer last blocks written
// back at once): a row's 8 items sit on one site (no hop) and a column's span 3 hops, so the
// fan-out costs 131072 / 64-byte words = 2048 words (+ 3 - 1 hops for B) fabric cycles. It runs
// under the copy's own read (131072 / 12.8 = 10240 DRAM cycles), so what it exposes is one page's
// fill: a one-tile page's fan-out, 64 words (+ 2 for B), shorter than its 320-cycle read.
// SLOW:      sp.plan blocked grid 4x1 block 1x1
// SLOW:      sp.share @a broadcast consumers 8 bytes 131072 hops 0 saves 71680 costs 2048 copies 1 "broadcasting saves 71680 DRAM cycles and exposes 64 (2048 fabric cycles overlapping the copy's 10240 DRAM cycles)"
// SLOW-NEXT: sp.share @b broadcast consumers 8 bytes 131072 hops 3 saves 71680 costs 2050 copies 1
// At 2048 GB/s the plan uses the whole 8x8 mesh, a panel's farthest reader 7 hops from its first
// (2048 + 7 - 1 = 2054 fabric cycles), and the same 917504 bytes take 448 cycles: not worth it. The
// copy's own read (64 cycles) hides 64 of the 2054, and the fill is the one-tile page's read
// (4096 / 2048 = 2 cycles, shorter than its 70-cycle fan-out): 2054 - 64 + 2 = 1992 exposed.
// FAST:      sp.plan blocked grid 8x8 block 1x1
// FAST:      sp.share @a replicated consumers 8 bytes 131072 hops 7 saves 448 costs 2054 copies 8 "a fan-out would expose 1992 cycles (2054 fabric cycles overlapping the copy's 64 DRAM cycles) to save 448 DRAM cycles"
// FAST-NEXT: sp.share @b replicated consumers 8 bytes 131072 hops 7 saves 448 costs 2054 copies 8
// The report counts exactly the bytes chosen: 8 panels of A and 8 of B, each fetched `copies`
// times, plus the 8x8 result tiles: broadcast 2 x 8 x 131072 + 64 x 4096 = 2359296; replicated
// 2 x 8 x 8 x 131072 + 262144 = 17039360.
// SLOW-REPORT: "dram_bytes": 2359296,
// FAST-REPORT: "dram_bytes": 17039360,
// PRESET:      sp.share @a
// PRESET-NEXT: sp.share @b
// PRESET-NOT:  sp.share
