// docs/tg.md#tgrms_norm: an rms_norm's weight may hold a float type of its own. llama.cpp keeps
// norm weights in f32 beside bf16 activations (spatial-import declares them so); link gives the
// weight's FIFO its tensor's type (f32 pages of 4096-byte tiles), the norm runs in f32 and rounds
// once to x's type: over a whole row, per head (Qwen3's q/k norm), with a residual, and in the
// blocked form of a row too wide for one section (the weight read by the apply step).
// RUN: spatial-opt %s -p 'link{target=wormhole_n150}' | filecheck %s
// RUN: spatial-run %s --entry whole --target wormhole_n150 | filecheck %s --check-prefix=OK2
// RUN: spatial-run %s --entry whole --target wormhole_n150 --backend tt-lang-sim | filecheck %s --check-prefix=OK2
// RUN: spatial-run %s --entry whole --target h100 --backend triton-interpret | filecheck %s --check-prefix=OK2
// RUN: spatial-run %s --entry wide --target wormhole_n150 | filecheck %s --check-prefix=OK1
// RUN: spatial-run %s --entry wide --target blackhole_p150 --backend tt-lang-sim | filecheck %s --check-prefix=OK1
// RUN: spatial-run %s --entry wide --target h100 --backend triton-interpret | filecheck %s --check-prefix=OK1

func.func @whole(%x: tensor<8x256xbf16>, %r: tensor<8x256xbf16>, %w: tensor<1x256xf32>, %hw: tensor<1x64xf32>) -> (tensor<8x256xbf16>, tensor<8x256xbf16>) {
  %y = tg.rms_norm %x, %w, %r eps 9.999999e-06 : (tensor<8x256xbf16>, tensor<1x256xf32>, tensor<8x256xbf16>) -> tensor<8x256xbf16>
  %h = tg.rms_norm %x, %hw eps 9.999999e-07 width 64 : (tensor<8x256xbf16>, tensor<1x64xf32>) -> tensor<8x256xbf16>
  func.return %y, %h : tensor<8x256xbf16>, tensor<8x256xbf16>
}

func.func @wide(%a: tensor<4x16384xbf16>, %aw: tensor<1x16384xf32>) -> tensor<4x16384xbf16> {
  %z = tg.rms_norm %a, %aw eps 9.999999e-06 : (tensor<4x16384xbf16>, tensor<1x16384xf32>) -> tensor<4x16384xbf16>
  func.return %z : tensor<4x16384xbf16>
}
// CHECK-LABEL: sp.program @y op "tg.rms_norm" kind map
// CHECK:       %in3 = sp.fifo "in3" depth 2 page [1, w] f32 tile_bytes 4096
// CHECK-LABEL: sp.program @h
// CHECK:       %hw = sp.fifo "hw" depth 2 page [1, w] f32 tile_bytes 4096
// CHECK:       sp.row_reduce whole rms_norm %in0, %hw -> %out width 64
// OK2:         PASS: 2 output(s) within tolerance
// OK1:         PASS: 1 output(s) within tolerance
