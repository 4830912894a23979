// A product by a transposed weight ([N, K], a tied head's form): over t3k with --prefer-sharded it
// takes `2d` in the other order of the axes (K over the 2-chip axis, N over the 4-chip axis), so
// the weight's block is cut on dim 1 over axis 0 and on dim 0 over axis 1
// (test/run/test_run_mesh_2d.py).
func.func @transposed(%x: tensor<32x256xf32>, %w: tensor<512x256xf32>) -> tensor<32x512xf32> {
  %y = tg.matmul %x, %w transpose_b true : (tensor<32x256xf32>, tensor<512x256xf32>) -> tensor<32x512xf32>
  func.return %y : tensor<32x512xf32>
}
