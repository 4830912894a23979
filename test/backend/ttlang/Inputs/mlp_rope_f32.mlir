func.func @mlp_f32(%x: tensor<1x128xf32>, %w: tensor<1x128xf32>, %wg: tensor<128x256xf32>, %wu: tensor<128x256xf32>, %wd: tensor<256x128xf32>, %cos: tensor<1x16xf32>, %sin: tensor<1x16xf32>) -> (tensor<1x128xf32>, tensor<1x128xf32>) {
  %h = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
  %g = tg.matmul %h, %wg : (tensor<1x128xf32>, tensor<128x256xf32>) -> tensor<1x256xf32>
  %u = tg.matmul %h, %wu : (tensor<1x128xf32>, tensor<128x256xf32>) -> tensor<1x256xf32>
  %a = tg.swiglu %g, %u : (tensor<1x256xf32>, tensor<1x256xf32>) -> tensor<1x256xf32>
  %d = tg.matmul %a, %wd : (tensor<1x256xf32>, tensor<256x128xf32>) -> tensor<1x128xf32>
  %o = tg.add %x, %d : (tensor<1x128xf32>, tensor<1x128xf32>) -> tensor<1x128xf32>
  %r = tg.rope %o, %cos, %sin head_dim 32 style "neox" : (tensor<1x128xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x128xf32>
  func.return %o, %r : tensor<1x128xf32>, tensor<1x128xf32>
}
