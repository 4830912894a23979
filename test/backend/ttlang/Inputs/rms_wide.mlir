func.func @rms_wide(%x: tensor<1x1024xbf16>, %r: tensor<1x1024xbf16>, %w: tensor<1x1024xbf16>) -> tensor<1x1024xbf16> {
  %s = tg.add %x, %r : (tensor<1x1024xbf16>, tensor<1x1024xbf16>) -> tensor<1x1024xbf16>
  %h = tg.rms_norm %s, %w eps 1.000000e-06 : (tensor<1x1024xbf16>, tensor<1x1024xbf16>) -> tensor<1x1024xbf16>
  func.return %h : tensor<1x1024xbf16>
}
