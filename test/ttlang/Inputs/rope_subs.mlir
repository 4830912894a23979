func.func @rope_subs(%q: tensor<1x4096xbf16>, %cos: tensor<1x64xbf16>, %sin: tensor<1x64xbf16>) -> tensor<1x4096xbf16> {
  %qr = tg.rope %q, %cos, %sin head_dim 128 style "neox" : (tensor<1x4096xbf16>, tensor<1x64xbf16>, tensor<1x64xbf16>) -> tensor<1x4096xbf16>
  func.return %qr : tensor<1x4096xbf16>
}
