// RUN: not spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang 2>&1 | filecheck %s

// A section this printer cannot express in TT-Lang is refused by name, in one line, exit 1:
// an rms_norm per group of 256 columns (8 f32 tiles, wider than the 4-tile accumulator) is
// blocked, and its apply map's weight is per group inside a block.

func.func @r(%x: tensor<8x1024xf32>, %w: tensor<1x256xf32>) -> tensor<8x1024xf32> {
  %y = tg.rms_norm %x, %w eps 1.0e-06 width 256 : (tensor<8x1024xf32>, tensor<1x256xf32>) -> tensor<8x1024xf32>
  func.return %y : tensor<8x1024xf32>
}

// CHECK: error: -t ttlang: section @y{{.*}}: sp.map rms_apply group 8: a per-group weight inside a block
// CHECK-NOT: Traceback
