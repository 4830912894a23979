// docs/sp.md#sp-rope: rope's tables may hold a float type of their own. llama.cpp keeps cos and
// sin in f32 beside bf16 activations; link gives each table's FIFO its tensor's type (f32 pages
// of 4096-byte tiles, priced and laid out so), the rotation runs in f32 and rounds once to x's
// type. This program was once refused by the sp verifier on link's own output.
// RUN: spatial-opt %s -p 'link{target=wormhole_n150}' | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' -t memory-map | filecheck %s --check-prefix=MAP
// RUN: spatial-run %s --target wormhole_n150 | filecheck %s --check-prefix=OK
// RUN: spatial-run %s --target blackhole_p150 --backend tt-lang-sim | filecheck %s --check-prefix=OK
// RUN: spatial-run %s --target h100 --backend triton-interpret | filecheck %s --check-prefix=OK

func.func @r(%x: tensor<64x256xbf16>, %cos: tensor<64x32xf32>, %sin: tensor<64x32xf32>) -> tensor<64x256xbf16> {
  %y = tg.rope %x, %cos, %sin head_dim 64 style "neox" : (tensor<64x256xbf16>, tensor<64x32xf32>, tensor<64x32xf32>) -> tensor<64x256xbf16>
  func.return %y : tensor<64x256xbf16>
}
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, w] bf16 tile_bytes 2048
// CHECK-NEXT: %cos = sp.fifo "cos" depth 2 page [h, 1] f32 tile_bytes 4096
// CHECK-NEXT: %sin = sp.fifo "sin" depth 2 page [h, 1] f32 tile_bytes 4096
// CHECK-NEXT: %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// CHECK:      sp.rope neox %in0, %cos, %sin -> %out head_dim 64
// MAP:        cos {{.*}} (4096 bytes, f32)
// MAP:        sin {{.*}} (4096 bytes, f32)
// OK:         PASS: 1 output(s) within tolerance
