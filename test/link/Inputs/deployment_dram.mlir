// Two functions of one deployment that both name a result %y, 32 rows in @small and 64 in @big
// (deployment.mlir checks the DRAM layout).
func.func @small(%x: tensor<32x64xf32>) -> tensor<32x64xf32> {
  %y = tg.silu %x : (tensor<32x64xf32>) -> tensor<32x64xf32>
  func.return %y : tensor<32x64xf32>
}
func.func @big(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = tg.silu %a : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
