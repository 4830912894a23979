// RUN: not spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang 2>&1 | filecheck %s

// A section this printer has no TT-Lang form for is refused by name, in one line, exit 1.

func.func @embed(%table: tensor<512x128xbf16>, %ids: tensor<8xi32>) -> tensor<8x128xbf16> {
  %y = tg.gather_rows %table, %ids : (tensor<512x128xbf16>, tensor<8xi32>) -> tensor<8x128xbf16>
  func.return %y : tensor<8x128xbf16>
}

// CHECK: error: -t ttlang: section @y{{.*}}: stage sp.gather (tg.gather_rows) has no TT-Lang form in this printer yet
// CHECK-NOT: Traceback
