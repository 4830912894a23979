// A Q8_0 product then a residual add: over t3k with --prefer-sharded the product takes `2d`, its
// values and scales split together (K 512 over the 4-chip axis: 128 a chip, whole 32-element
// blocks; N over the 2-chip axis), each chip quantizing its own K slice of the activation
// (test/run/test_run_mesh_2d.py).
func.func @q8(%x: tensor<32x512xbf16>, %w: tensor<512x256xi8>, %s: tensor<16x256xf16>, %r: tensor<32x256xbf16>) -> tensor<32x256xbf16> {
  %y = tg.matmul_q8_0 %x, %w, %s activation "q8_0" : (tensor<32x512xbf16>, tensor<512x256xi8>, tensor<16x256xf16>) -> tensor<32x256xbf16>
  %z = tg.add %y, %r : (tensor<32x256xbf16>, tensor<32x256xbf16>) -> tensor<32x256xbf16>
  func.return %z : tensor<32x256xbf16>
}
