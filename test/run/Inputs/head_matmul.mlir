func.func @f(%a: tensor<64x128xbf16>, %b: tensor<128x64xbf16>) -> tensor<64x256xbf16> {
  %y = tg.head_matmul %a, %b heads 4 : (tensor<64x128xbf16>, tensor<128x64xbf16>) -> tensor<64x256xbf16>
  func.return %y : tensor<64x256xbf16>
}
