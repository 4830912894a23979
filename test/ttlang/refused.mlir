// RUN: not spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang 2>&1 | filecheck %s

// A section this printer has no TT-Lang form for is refused by name, in one line, exit 1.

func.func @act(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = tg.silu %x : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}

// CHECK: error: -t ttlang: section @y: stage sp.map (tg.silu) has no TT-Lang form in this printer yet
// CHECK-NOT: Traceback
