// A different, an extra and a missing diagnostic (test/opt/verify_diagnostics.mlir).

func.func @f(%a: tensor<64x100xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  // expected-error @below {{inner dimensions 7 and 8 differ}}
  %c = tg.matmul %a, %b : (tensor<64x100xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return %c : tensor<64x32xf32>
}

// -----

func.func @ok(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  // expected-error @below {{anything}}
  %c = tg.silu %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %c : tensor<4x4xf32>
}
