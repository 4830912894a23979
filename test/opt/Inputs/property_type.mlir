func.func @f(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>) {
  %r = "tg.rms_norm"(%x, %w) <{eps = "small"}> : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
