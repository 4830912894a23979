// -t ttlang prints the section's accumulation: a bf16 GEMM accumulates in f32 (the tg contract),
// so its operation asks for the fp32 dest and its spill DFB holds f32 partial sums, its dtype
// taken from a zero f32 constant the host allocates (no tensor of the section is f32); under
// accumulate=bf16 the dest keeps its 16-bit mode and the spill is bf16, like a bf16 tensor. The
// plans are unsplit (split-k=1) so that the spill alone shows (split-K: split_k.mlir).
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 local-mem=40000 split-k=1}' -t ttlang | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 local-mem=40000 accumulate=bf16 split-k=1}' -t ttlang | filecheck %s --check-prefix=FAST

// 64x512x256 bf16 with a 40000-byte budget: K in several blocks, so the partial sums spill.
func.func @gemm(%a: tensor<64x512xbf16>, %b: tensor<512x256xbf16>) -> tensor<64x256xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x512xbf16>, tensor<512x256xbf16>) -> tensor<64x256xbf16>
  func.return %c : tensor<64x256xbf16>
}

// CHECK:      @ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)
// CHECK-NEXT: def section_0_c(t_a, t_b, t_c, _f32_page_1x1):
// CHECK:      spill_dfb = ttl.make_dataflow_buffer_like(_f32_page_1x1, shape=(1, 1), block_count=1)
// CHECK:      part = p_blk + a_blk @ b_blk
// CHECK:      '_f32_page_1x1': ((32, 32), 'f32')
// CHECK:      '_f32_page_1x1': lambda: np.zeros((32, 32), dtype=np.float32),

// FAST:       @ttl.operation(grid=(8, 8))
// FAST-NEXT:  def section_0_c(t_a, t_b, t_c):
// FAST:       spill_dfb = ttl.make_dataflow_buffer_like(t_b, shape=(1, 1), block_count=1)
// FAST-NOT:   _f32_page
