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
// 8x8 one-tile blocks on the 8x8 mesh. A's panel is one block row over K: 1 x 32 tiles of 4096
// bytes = 131072 bytes, read by the 8 items of the row, the farthest 7 hops from the first.
// Fan-out: 131072 / 64-byte words = 2048 words + 7 - 1 hops = 2054 fabric cycles either way.
// Saved: 7 copies x 131072 bytes = 917504 bytes at 12.8 GB/s on a 1 GHz clock = 71680 cycles.
// SLOW:      sp.share @a broadcast consumers 8 bytes 131072 hops 7 saves 71680 costs 2054 copies 1 "broadcasting saves 71680 DRAM cycles and costs 2054 on the fabric"
// SLOW-NEXT: sp.share @b broadcast consumers 8 bytes 131072 hops 7 saves 71680 costs 2054 copies 1
// At 2048 GB/s the same 917504 bytes take 448 cycles: not worth 2054 on the fabric.
// FAST:      sp.share @a replicated consumers 8 bytes 131072 hops 7 saves 448 costs 2054 copies 8 "a fan-out would cost 2054 fabric cycles to save 448 DRAM cycles"
// FAST-NEXT: sp.share @b replicated consumers 8 bytes 131072 hops 7 saves 448 costs 2054 copies 8
// The report counts exactly the bytes chosen: 8 panels of A and 8 of B, each fetched `copies`
// times, plus the 8x8 result tiles: broadcast 2 x 8 x 131072 + 64 x 4096 = 2359296; replicated
// 2 x 8 x 8 x 131072 + 262144 = 17039360.
// SLOW-REPORT: "dram_bytes": 2359296,
// FAST-REPORT: "dram_bytes": 17039360,
// PRESET:      sp.share @a
// PRESET-NEXT: sp.share @b
// PRESET-NOT:  sp.share
