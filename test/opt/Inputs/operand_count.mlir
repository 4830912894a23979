func.func @f(%x: tensor<4x8xf32>) {
  %r = "tg.matmul"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
