// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s

// The Gated DeltaNet's stages (decode, T = 1): the causal conv and the delta rule walk time in
// K blocks in the compute kernel, carrying their state through the f32 interm the IR gives
// them (pushed and popped again by the compute), every shift, selection and triangle a product
// with a constant 0/1 matrix whose host function is printed into the program; decay's
// softplus is logaddexp(0, y); T = (I - A)^-1 is the reference's forward substitution.

func.func @mixer(%x: tensor<1x64xbf16>, %w: tensor<4x64xbf16>, %cs: tensor<3x64xbf16>, %k: tensor<1x32xbf16>, %v: tensor<1x64xbf16>, %a: tensor<1x2xf32>, %b: tensor<1x2xf32>, %al: tensor<1x2xf32>, %dt: tensor<1x2xf32>, %s: tensor<64x32xbf16>) -> (tensor<1x64xbf16>, tensor<3x64xbf16>, tensor<1x64xbf16>, tensor<64x32xbf16>) {
  %c, %cn = tg.causal_conv %x, %w, %cs activation "silu" : (tensor<1x64xbf16>, tensor<4x64xbf16>, tensor<3x64xbf16>) -> (tensor<1x64xbf16>, tensor<3x64xbf16>)
  %g = tg.decay %a, %al, %dt : (tensor<1x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  %o, %n = tg.gated_delta %k, %k, %v, %g, %b, %s heads 2 k_heads 1 head_dim 32 scale 1.767767e-01 : (tensor<1x32xbf16>, tensor<1x32xbf16>, tensor<1x64xbf16>, tensor<1x2xf32>, tensor<1x2xf32>, tensor<64x32xbf16>) -> (tensor<1x64xbf16>, tensor<64x32xbf16>)
  func.return %c, %cn, %o, %n : tensor<1x64xbf16>, tensor<3x64xbf16>, tensor<1x64xbf16>, tensor<64x32xbf16>
}

// CHECK: def _conv_prev(taps, n):
// CHECK: def _conv_keep(taps, n, reals):
// CHECK: def _col_sel():
// CHECK: # section @c: tg.causal_conv
// CHECK: def section_0_c(
// CHECK-NEXT: t_x,
// CHECK-NEXT: t_w,
// CHECK-NEXT: t_cs,
// CHECK-NEXT: t_c,
// CHECK-NEXT: t_cn,
// CHECK-NEXT: _conv_keep_c_4_32_1,
// CHECK-NEXT: _conv_keep_d_4_32_1,
// CHECK-NEXT: _rows_1_32,
// CHECK-NEXT: _conv_prev_4_32,
// CHECK-NEXT: _conv_shift_4_32,
// CHECK-NEXT: _conv_tap_4_32,
// CHECK-NEXT: ):
// CHECK: with window_dfb.reserve() as wb:
// CHECK-NEXT: wb.store(st_blk)
// CHECK: for j in range(4):
// CHECK: acc = acc + (r_blk @ wt_blk) * (a_blk @ win_blk + b_blk @ x_blk)
// CHECK: o_blk.store(
// CHECK-NEXT: ttl.math.silu(acc)
// CHECK-NEXT: * ttl.block.broadcast(m_blk, dims=[-1], shape=(1, 1))
// CHECK-NEXT: )
// CHECK-NEXT: keep = c_blk @ win_blk + d_blk @ x_blk
// CHECK: with window_dfb.wait() as wb, new_state_dfb.reserve() as ns:
// CHECK: sel = 1 if k0 + 1 >= 1 else 0
// CHECK: tx = ttl.copy(_conv_keep_c_4_32_1[sel:sel + 1, 0:1], blk)
// CHECK: tx = ttl.copy(_conv_shift_4_32[0:1, j:j + 1], blk)
// CHECK: # section @g: tg.decay
// CHECK: arg = i0 + ttl.block.broadcast(i2, dims=[0], shape=(1, 1))
// CHECK-NEXT: o_blk.store(
// CHECK-NEXT: ttl.math.neg(ttl.math.exp(ttl.block.broadcast(i1, dims=[0], shape=(1, 1))))
// CHECK-NEXT: * (
// CHECK-NEXT: ttl.math.relu(arg)
// CHECK-NEXT: + ttl.math.logp1(ttl.math.exp(ttl.math.neg(ttl.math.abs(arg))))
// CHECK-NEXT: )
// CHECK-NEXT: )
// CHECK: # section @o: tg.gated_delta
// CHECK: gc = ttl.math.reduce_sum(g_blk * sel, dims=[-1], shape=(1, 1)) * m_blk
// CHECK: tri = eye
// CHECK-NEXT: for i in range(1, 32):
// CHECK-NEXT: at_i = (
// CHECK-NEXT: ttl.block.fill(1.0, (1, 1))
// CHECK-NEXT: - ttl.math.sign(ttl.math.abs(ri - ttl.block.fill(i + 1.0, (1, 1))))
// CHECK-NEXT: )
// CHECK-NEXT: tri = (eye + at_i * a) @ tri
// CHECK: o_blk.store(o * ttl.block.broadcast(m_blk, dims=[-1], shape=(1, 1)))
// CHECK: with s_dfb.reserve() as sb:
// CHECK-NEXT: sb.store(s_new)
// CHECK: hc = r0 % 32
// CHECK-NEXT: with col_sel_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_col_sel[0:1, hc:hc + 1], blk)
// CHECK: '_conv_keep_c_4_32_1': lambda: _conv_keep(4, 32, (32, 1))[:, :32],
// CHECK: '_tril_32': lambda: np.tril(np.ones((32, 32), np.float32)),
