// RUN: not spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang 2>&1 | filecheck %s

// A section this printer cannot express in TT-Lang is refused by name, in one line, exit 1:
// softmax over 100 columns would need a column mask for the last tile's padding.

func.func @sm(%x: tensor<64x100xf32>) -> tensor<64x100xf32> {
  %y = tg.softmax %x : (tensor<64x100xf32>) -> tensor<64x100xf32>
  func.return %y : tensor<64x100xf32>
}

// CHECK: error: -t ttlang: section @y{{.*}}: sp.row_reduce softmax over 100 columns: the padding of the last tile would enter the statistics
// CHECK-NOT: Traceback
