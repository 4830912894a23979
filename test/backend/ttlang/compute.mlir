// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s

// The compute stages besides the GEMM's: rms_norm (reduce_sum over the row, fill blocks for
// 1/width and eps, broadcasts), swiglu, add, rope (x * (cos @ D) + (x @ P) * (sin @ D) with the
// host's constant tensors); decode-style `rows` tensors are tile-layout tensors padded to tiles.

func.func @blk(%x: tensor<1x128xbf16>, %w: tensor<1x128xbf16>, %g: tensor<1x256xbf16>, %u: tensor<1x256xbf16>, %cos: tensor<1x16xbf16>, %sin: tensor<1x16xbf16>) -> (tensor<1x128xbf16>, tensor<1x256xbf16>, tensor<1x128xbf16>) {
  %h = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<1x128xbf16>, tensor<1x128xbf16>) -> tensor<1x128xbf16>
  %a = tg.swiglu %g, %u : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %r = tg.rope %h, %cos, %sin head_dim 32 style "neox" : (tensor<1x128xbf16>, tensor<1x16xbf16>, tensor<1x16xbf16>) -> tensor<1x128xbf16>
  func.return %h, %a, %r : tensor<1x128xbf16>, tensor<1x256xbf16>, tensor<1x128xbf16>
}

// CHECK: # section @h: tg.rms_norm
// CHECK: ss = ttl.math.reduce_sum(xv * xv, dims=[-1], shape=(1, 1))
// CHECK-NEXT: inv = ttl.math.rsqrt(
// CHECK-NEXT: ss / ttl.block.fill(128.0, (1, 1))
// CHECK-NEXT: + ttl.block.fill(
// CHECK-NEXT: )
// CHECK-NEXT: o_blk.store(
// CHECK-NEXT: xv
// CHECK-NEXT: * ttl.block.broadcast(inv, dims=[-1], shape=(1, 4))
// CHECK-NEXT: * ttl.block.broadcast(i1, dims=[0], shape=(1, 4))
// CHECK-NEXT: )
// CHECK: # section @a: tg.swiglu
// CHECK: o_blk.store(ttl.math.silu(i0) * i1)
// CHECK: # section @r: tg.rope
// CHECK: _rope_p_neox_32_32_dfb = ttl.make_dataflow_buffer_like(
// CHECK-NEXT: _rope_p_neox_32_32, shape=(1, 1), block_count=1
// CHECK: c_full = i1 @ _rope_d_neox_32_32_32_blk
// CHECK: o_blk.store(i0 * c_full + (i0 @ _rope_p_neox_32_32_blk) * s_full)
// CHECK: CONSTANTS = {
// CHECK: '_rope_p_neox_32_32': lambda: _rope_perm('neox', 32, 32),
