// tg.matmul and tg.matmul_q8_0 with transpose_b (b is N x K, the product a @ b^T: a tied LM head
// reads the [vocab, d] embedding table as stored). Both forms parse and print back; the custom
// form writes the property only when it is set, the generic form as a bool.
// RUN: %roundtrip
// RUN: %generic_roundtrip

func.func @tied(%x: tensor<4x64xbf16>, %table: tensor<100x64xbf16>, %v: tensor<100x64xi8>,
                %s: tensor<100x2xf16>, %b: tensor<64x100xbf16>) -> tensor<4x100xbf16> {
  %y = tg.matmul %x, %table transpose_b true : (tensor<4x64xbf16>, tensor<100x64xbf16>) -> tensor<4x100xbf16>
  %f = tg.matmul %x, %table transpose_b true : (tensor<4x64xbf16>, tensor<100x64xbf16>) -> tensor<4x100xf32>
  %n = tg.matmul %x, %b transpose_b false : (tensor<4x64xbf16>, tensor<64x100xbf16>) -> tensor<4x100xbf16>
  %p = tg.matmul %x, %b : (tensor<4x64xbf16>, tensor<64x100xbf16>) -> tensor<4x100xbf16>
  %q = tg.matmul_q8_0 %x, %v, %s activation "q8_0" transpose_b true : (tensor<4x64xbf16>, tensor<100x64xi8>, tensor<100x2xf16>) -> tensor<4x100xbf16>
  func.return %y : tensor<4x100xbf16>
}

// CHECK:      %y = tg.matmul %x, %table transpose_b true : (tensor<4x64xbf16>, tensor<100x64xbf16>) -> tensor<4x100xbf16>
// CHECK-NEXT: %f = tg.matmul %x, %table transpose_b true : (tensor<4x64xbf16>, tensor<100x64xbf16>) -> tensor<4x100xf32>
// CHECK-NEXT: %n = tg.matmul %x, %b transpose_b false : (tensor<4x64xbf16>, tensor<64x100xbf16>) -> tensor<4x100xbf16>
// CHECK-NEXT: %p = tg.matmul %x, %b : (tensor<4x64xbf16>, tensor<64x100xbf16>) -> tensor<4x100xbf16>
// CHECK-NEXT: %q = tg.matmul_q8_0 %x, %v, %s activation "q8_0" transpose_b true : (tensor<4x64xbf16>, tensor<100x64xi8>, tensor<100x2xf16>) -> tensor<4x100xbf16>

// CHECK-GENERIC: %y = "tg.matmul"(%x, %table) <{transpose_b = true}> : (tensor<4x64xbf16>, tensor<100x64xbf16>) -> tensor<4x100xbf16>
// CHECK-GENERIC: %p = "tg.matmul"(%x, %b) : (tensor<4x64xbf16>, tensor<64x100xbf16>) -> tensor<4x100xbf16>
// CHECK-GENERIC: %q = "tg.matmul_q8_0"(%x, %v, %s) <{activation = "q8_0", transpose_b = true}> : (tensor<4x64xbf16>, tensor<100x64xi8>, tensor<100x2xf16>) -> tensor<4x100xbf16>
