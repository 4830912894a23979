// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100 split-k=1 kv-splits=4}' -t triton | filecheck %s

// Flash decoding in Triton (docs/backend-triton.md#flash-decoding): 128 keys split 4 ways, one
// kernel per section. The split kernel's item c0 walks the key tiles of split c0 // 4 and
// stores O undivided in row 0 of the f32 partials, each head's m and l in row 1 (columns 0
// and 1 of the head's tiles); the combine kernel merges the 4 splits of its columns by
// log-sum-exp (a split with m = -inf adds nothing) and stores O / l.

func.func @dec(%q: tensor<1x128xbf16>, %k: tensor<128x64xbf16>, %v: tensor<128x64xbf16>, %pos: tensor<1xi32>) -> tensor<1x128xbf16> {
  %y = tg.attention %q, %k, %v, %pos heads 4 kv_heads 2 head_dim 32 causal true scale 1.250000e-01 : (tensor<1x128xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x128xbf16>
  func.return %y : tensor<1x128xbf16>
}

// CHECK: 'y__splits': ((2, 512), torch.float32, (2, 512)),
// CHECK: # section @y__splits: tg.attention (kind attention)
// CHECK: def y__splits_kernel(T_q, T_k, T_v, T_pos, T_y__splits, SITES, ITEMS):
// CHECK: for k0 in range(0, 1, 1):
// CHECK-NEXT: key = (c0 // 4 + k0) * 32 + tl.arange(0, 32)
// CHECK: m_i = m_new
// CHECK-NOT: o = o / l_i
// CHECK-NEXT: ocol = c0 * 32 + qj[:, None] * 32 + dvv[None, :]
// CHECK: T_y__splits + qrow[:, None] * 512 + ocol,
// CHECK-NEXT: o.to(T_y__splits.dtype.element_ty),
// CHECK: ml = tl.where((dvv % 32 == 0)[None, :], m_i[:, None], l_i[:, None])
// CHECK-NEXT: mlmask = omask & (dvv % 32 < 2)[None, :]
// CHECK-NEXT: tl.store(T_y__splits + (qrow + 1)[:, None] * 512 + ocol, ml, mask=mlmask)

// CHECK: # section @y: tg.attention (kind attention_combine)
// CHECK: def y_kernel(T_y__splits, T_y, SITES, ITEMS):
// CHECK: for k0 in range(0, 4):
// CHECK-NEXT: cc = (k0 * 4 + c0) * 32 + tl.arange(0, 32)
// CHECK-NEXT: tc = cc // 32 * 32
// CHECK-NEXT: op_ = tl.load(T_y__splits + cc, mask=cm, other=0)
// CHECK-NEXT: mp = tl.load(T_y__splits + 512 + tc, mask=cm, other=float('-inf'))
// CHECK-NEXT: lp = tl.load(T_y__splits + 512 + tc + 1, mask=cm, other=0)
// CHECK-NEXT: m_new = tl.maximum(m_run, mp)
// CHECK-NEXT: shift = tl.where(m_new > float('-inf'), m_new, 0.0)
// CHECK: y = tl.where(tl.arange(0, 32)[:, None] == 0, (acc / l_run)[None, :], 0.0)
// CHECK: tl.store(o_at, to_bf16(y), mask=o_m)

// CHECK: def launch(t, device):
// CHECK: y__splits_kernel[(16,)](
// CHECK: y_kernel[(4,)](
