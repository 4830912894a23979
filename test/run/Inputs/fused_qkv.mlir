func.func @f(%x: tensor<8x256xf32>) -> (tensor<8x192xf32>, tensor<8x32xf32>) {
  %q = tg.head_slice %x head_dim 32 first 0 heads 4 : (tensor<8x256xf32>) -> tensor<8x128xf32>
  %v = tg.head_slice %x head_dim 32 first 6 heads 2 : (tensor<8x256xf32>) -> tensor<8x64xf32>
  %k1 = tg.head_slice %x head_dim 32 first 5 heads 1 : (tensor<8x256xf32>) -> tensor<8x32xf32>
  %j = tg.join %v, %q : (tensor<8x64xf32>, tensor<8x128xf32>) -> tensor<8x192xf32>
  func.return %j, %k1 : tensor<8x192xf32>, tensor<8x32xf32>
}
