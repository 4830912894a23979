func.func @rope_subs(%q: tensor<32x4096xbf16>, %cos: tensor<32x64xbf16>, %sin: tensor<32x64xbf16>) -> tensor<32x4096xbf16> {
  %qr = tg.rope %q, %cos, %sin head_dim 128 style "neox" : (tensor<32x4096xbf16>, tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x4096xbf16>
  func.return %qr : tensor<32x4096xbf16>
}
