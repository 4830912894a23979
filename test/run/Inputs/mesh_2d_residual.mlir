// A row product then a residual add, small enough for every executor in seconds. Over t3k with
// --prefer-sharded the product takes the `2d` plan (K over the 4-chip axis, N over the 2-chip
// axis: a [64, 64] block of the weight a chip), the add runs on the partial sum (`partial`: the
// host hands each chip an addend of the residual), then one all_reduce over the 4-chip axis and
// one all_gather over the 2-chip axis (test/run/test_run_mesh_2d.py).
func.func @residual(%x: tensor<32x256xbf16>, %w: tensor<256x128xbf16>, %r: tensor<32x128xbf16>) -> tensor<32x128xbf16> {
  %y = tg.matmul %x, %w : (tensor<32x256xbf16>, tensor<256x128xbf16>) -> tensor<32x128xbf16>
  %z = tg.add %y, %r : (tensor<32x128xbf16>, tensor<32x128xbf16>) -> tensor<32x128xbf16>
  func.return %z : tensor<32x128xbf16>
}
