// The stock xdsl-opt of the same environment knows tg through our xdsl.universe entry point.
// RUN: xdsl-opt %s | filecheck %s
// RUN: xdsl-opt %s --print-op-generic | spatial-opt | filecheck %s

func.func @f(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return %c : tensor<64x32xf32>
}
// CHECK: %c = tg.matmul %a, %b : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
