// -t triton prints split-K as planned (docs/backend-triton.md#split-k): the GEMM kernel's grid is
// every site of every K slice; item i walks the K tiles of slice sl = i // blocks and writes its
// unrounded f32 sums to slice sl of the scratch `c.partials` (S x M x N, allocated by the host).
// The last of a block's S items to count itself in at `c.arrivals` adds the S slices in slice
// order and stores the sum rounded once.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=8x8 split-k=4}' -t triton | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150 grid=8x8 split-k=2}' -t triton | filecheck %s --check-prefix=TWO

// 32x512x64 bf16: 2 blocks of one tile, K (16 tiles) in S slices along y.
func.func @gemm(%a: tensor<32x512xbf16>, %b: tensor<512x64xbf16>) -> tensor<32x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<32x512xbf16>, tensor<512x64xbf16>) -> tensor<32x64xbf16>
  func.return %c : tensor<32x64xbf16>
}

// CHECK:      'c': ((32, 64), torch.bfloat16, (32, 64)),
// CHECK-NEXT: 'c.partials': ((128, 64), torch.float32, (4, 32, 64)),
// CHECK-NEXT: 'c.arrivals': ((1, 2), torch.int32, (2,)),

// The bf16 store rounds through to_bf16: to nearest even, on the GPU by its conversion, under
// Triton's interpreter (which truncates) by rounding the f32 bits first.
// CHECK:      INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")
// CHECK:      @triton.jit
// CHECK-NEXT: def to_bf16(x):
// CHECK:          if INTERPRETED:
// CHECK-NEXT:         b = x.to(tl.float32).to(tl.uint32, bitcast=True)
// CHECK-NEXT:         b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
// CHECK-NEXT:         x = b.to(tl.float32, bitcast=True)
// CHECK-NEXT:     return x.to(tl.bfloat16)

// CHECK:      # block 1x1 tiles (BLOCK_M=32, BLOCK_N=32), K 16 tiles by 4 (BLOCK_K=128) in 4 slices; grid 8

// One kernel: an item's sums go to their slice of the partials, unrounded; it counts itself in
// at its block's counter, and the last of the block's 4 items to arrive adds slice 0, then
// slices 1 .. 3 in order, rounds once at the store and zeroes the counter.
// CHECK:      def c_kernel(T_a, T_b, T_c, T_c_partials, T_c_arrivals, SITES, ITEMS):
// CHECK:      acc = tl.zeros((32, 32), dtype=tl.float32)
// CHECK-NEXT: sl = item // 2
// CHECK-NEXT: ks = sl * 4
// CHECK-NEXT: for k0 in range(ks, ks + 4, 4):
// CHECK:      acc += tl.dot(a, b, out_dtype=tl.float32)
// CHECK-NEXT: p_at = T_c_partials + (sl * 32 + rm)[:, None] * 64 + rn[None, :]
// CHECK-NEXT: tl.store(p_at, acc, mask=mm_[:, None] & mn_[None, :])
// CHECK-NEXT: tl.debug_barrier()
// CHECK-NEXT: arrived = tl.atomic_add(T_c_arrivals + item % 2, 1, sem="acq_rel")
// CHECK-NEXT: if arrived == 3:
// CHECK:          o_m = o_rm[:, None] & o_cm[None, :]
// CHECK-NEXT:     p_at = T_c_partials + o_r[:, None] * 64 + o_c[None, :]
// CHECK-NEXT:     acc = tl.load(p_at, mask=o_m, other=0, cache_modifier=".cg")
// CHECK-NEXT:     for k in range(1, 4):
// CHECK-NEXT:         acc += tl.load(p_at + k * 2048, mask=o_m, other=0, cache_modifier=".cg")
// CHECK-NEXT:     o_at = T_c + o_r[:, None] * 64 + o_c[None, :]
// CHECK-NEXT:     tl.store(o_at, to_bf16(acc), mask=o_m)
// CHECK-NEXT:     tl.store(T_c_arrivals + item % 2, 0)

// CHECK:      C_SITES = [(0, 1), (1, 1), (2, 1), (3, 1), (4, 1), (5, 1), (6, 1), (7, 1)]
// CHECK:      def launch(t, device):
// CHECK:      c_kernel[(8,)](
// CHECK-NEXT:     t['a'],
// CHECK-NEXT:     t['b'],
// CHECK-NEXT:     t['c'],
// CHECK-NEXT:     t['c.partials'],
// CHECK-NEXT:     t['c.arrivals'],
// CHECK-NEXT:     _table(C_SITES, device),
// CHECK-NOT:  _kernel[

// TWO:        'c.partials': ((64, 64), torch.float32, (2, 32, 64)),
// TWO:        'c.arrivals': ((1, 2), torch.int32, (2,)),
// TWO:        in 2 slices; grid 4
// TWO:        if arrived == 1:
// TWO:        for k in range(1, 2):
// TWO:        c_kernel[(4,)](
// TWO-NOT:    _kernel[
