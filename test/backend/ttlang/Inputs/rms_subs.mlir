func.func @rms_subs(%x: tensor<128x4096xbf16>, %w: tensor<1x4096xbf16>) -> tensor<128x4096xbf16> {
  %h = tg.rms_norm %x, %w eps 1.000000e-05 : (tensor<128x4096xbf16>, tensor<1x4096xbf16>) -> tensor<128x4096xbf16>
  func.return %h : tensor<128x4096xbf16>
}
