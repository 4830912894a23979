// Issue 25's block read by two Q8_0 products, one per activation rounding rule: the same
// value, two views (n__q8_0_1 and n__q8_0_ref_1). test_run_q8_0.py feeds it.
func.func @rules(%a: tensor<4x64xf32>, %wv: tensor<64x32xi8>, %ws: tensor<2x32xf16>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %n = tg.scale %a factor 1.0e+00 : (tensor<4x64xf32>) -> tensor<4x64xf32>
  %x86 = tg.matmul_q8_0 %n, %wv, %ws activation "q8_0" : (tensor<4x64xf32>, tensor<64x32xi8>, tensor<2x32xf16>) -> tensor<4x32xf32>
  %ref = tg.matmul_q8_0 %n, %wv, %ws activation "q8_0_ref" : (tensor<4x64xf32>, tensor<64x32xi8>, tensor<2x32xf16>) -> tensor<4x32xf32>
  func.return %x86, %ref : tensor<4x32xf32>, tensor<4x32xf32>
}
