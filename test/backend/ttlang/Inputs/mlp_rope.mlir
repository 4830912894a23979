func.func @mlp(%x: tensor<8x128xbf16>, %w: tensor<1x128xbf16>, %wg: tensor<128x256xbf16>, %wu: tensor<128x256xbf16>, %wd: tensor<256x128xbf16>, %cos: tensor<8x16xbf16>, %sin: tensor<8x16xbf16>) -> (tensor<8x128xbf16>, tensor<8x128xbf16>) {
  %h = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<8x128xbf16>, tensor<1x128xbf16>) -> tensor<8x128xbf16>
  %g = tg.matmul %h, %wg : (tensor<8x128xbf16>, tensor<128x256xbf16>) -> tensor<8x256xbf16>
  %u = tg.matmul %h, %wu : (tensor<8x128xbf16>, tensor<128x256xbf16>) -> tensor<8x256xbf16>
  %a = tg.swiglu %g, %u : (tensor<8x256xbf16>, tensor<8x256xbf16>) -> tensor<8x256xbf16>
  %d = tg.matmul %a, %wd : (tensor<8x256xbf16>, tensor<256x128xbf16>) -> tensor<8x128xbf16>
  %o = tg.add %x, %d : (tensor<8x128xbf16>, tensor<8x128xbf16>) -> tensor<8x128xbf16>
  %r = tg.rope %o, %cos, %sin head_dim 32 style "neox" : (tensor<8x128xbf16>, tensor<8x16xbf16>, tensor<8x16xbf16>) -> tensor<8x128xbf16>
  func.return %o, %r : tensor<8x128xbf16>, tensor<8x128xbf16>
}
