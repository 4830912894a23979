// A prefill and a decode that both call their token ids %ids: one name in a deployment is one
// tensor, and these two differ in shape (deployment.mlir checks the refusal).
func.func @prefill(%ids: tensor<8xi32>, %t: tensor<64x64xf32>) -> tensor<8x64xf32> {
  %x = tg.gather_rows %t, %ids : (tensor<64x64xf32>, tensor<8xi32>) -> tensor<8x64xf32>
  func.return %x : tensor<8x64xf32>
}
func.func @decode(%t: tensor<64x64xf32>, %ids: tensor<1xi32>) -> tensor<1x64xf32> {
  %y = tg.silu %t : (tensor<64x64xf32>) -> tensor<64x64xf32>
  // the first reader of %ids in @decode is where the refusal points
  %x = tg.gather_rows %y, %ids : (tensor<64x64xf32>, tensor<1xi32>) -> tensor<1x64xf32>
  func.return %x : tensor<1x64xf32>
}
