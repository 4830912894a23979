// Llama-3-8B prefill's rope @qr: 1x16 blocks of four 1x4 sub-blocks through a 2-page output FIFO.
func.func @rope_subs4(%q: tensor<128x4096xbf16>, %cos: tensor<128x64xbf16>, %sin: tensor<128x64xbf16>) -> tensor<128x4096xbf16> {
  %qr = tg.rope %q, %cos, %sin head_dim 128 style "neox" : (tensor<128x4096xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>) -> tensor<128x4096xbf16>
  func.return %qr : tensor<128x4096xbf16>
}
