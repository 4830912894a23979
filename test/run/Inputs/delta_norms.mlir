// The Gated DeltaNet's l2_norm (per head, whole; and a whole row of 4096, blocked where the f32
// accumulator is narrower) and decay: what the Triton and TT-Lang printers print of it.
func.func @norms(%x: tensor<40x128xf32>, %w: tensor<8x4096xf32>, %a: tensor<40x16xf32>, %al: tensor<1x16xf32>, %dt: tensor<1x16xf32>) -> (tensor<40x128xf32>, tensor<8x4096xf32>, tensor<40x16xf32>) {
  %q = tg.l2_norm %x eps 1.0e-06 width 64 : (tensor<40x128xf32>) -> tensor<40x128xf32>
  %r = tg.l2_norm %w eps 1.0e-06 : (tensor<8x4096xf32>) -> tensor<8x4096xf32>
  %g = tg.decay %a, %al, %dt : (tensor<40x16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<40x16xf32>
  func.return %q, %r, %g : tensor<40x128xf32>, tensor<8x4096xf32>, tensor<40x16xf32>
}
