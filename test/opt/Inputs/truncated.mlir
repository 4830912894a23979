func.func @f(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf3