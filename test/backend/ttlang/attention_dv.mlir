// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 split-k=1 kv-splits=1}' -t ttlang | filecheck %s

// head_dim != v_head_dim (docs/backend-ttlang.md#attention-heads-decision): 4 heads over one kv
// head, q and K heads of 32, V heads of 64. The item holds the 4 heads: a [1, 4]-tile query
// page selected per head by the [4, 1] tiles C_j, a [1, 8]-tile output page reassembled by the
// [8, 2] tiles C'_j (columns j * 2 of the identity), each read by the K/V movement kernel at the
// first and the last K block.

func.func @dv(%q: tensor<1x128xbf16>, %k: tensor<128x32xbf16>, %v: tensor<128x64xbf16>, %pos: tensor<1xi32>) -> tensor<1x256xbf16> {
  %y = tg.attention %q, %k, %v, %pos heads 4 kv_heads 1 head_dim 32 causal true scale 1.250000e-01 : (tensor<1x128xbf16>, tensor<128x32xbf16>, tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x256xbf16>
  func.return %y : tensor<1x256xbf16>
}

// CHECK: def section_0_y(t_q, t_k, t_v, t_pos, t_y, _eye_256, _attn_d_1_128_32_128_1):
// CHECK-NEXT: q_dfb = ttl.make_dataflow_buffer_like(t_q, shape=(1, 4), block_count=2)
// CHECK-NEXT: k_dfb = ttl.make_dataflow_buffer_like(t_k, shape=(2, 1), block_count=2)
// CHECK-NEXT: v_dfb = ttl.make_dataflow_buffer_like(t_v, shape=(2, 2), block_count=2)
// CHECK: heads_dfb_4x1 = ttl.make_dataflow_buffer_like(_eye_256, shape=(4, 1), block_count=1)
// CHECK-NEXT: heads_dfb_8x2 = ttl.make_dataflow_buffer_like(_eye_256, shape=(8, 2), block_count=1)
// CHECK: with heads_dfb_4x1.wait() as c_blk:
// CHECK-NEXT: q_0 = q_blk @ c_blk
// CHECK: o_3 = o_3 * ttl.block.broadcast(alpha, dims=[-1], shape=(1, 2)) + pv
// CHECK-NEXT: with heads_dfb_8x2.wait() as c_blk:
// CHECK-NEXT: full = (
// CHECK: def dm1():
// CHECK: if k0 == 0:
// CHECK: tx = ttl.copy(_eye_256[0:4, j:j + 1], blk)
// CHECK: if k0 == 2:
// CHECK: tx = ttl.copy(_eye_256[0:8, j * 2:j * 2 + 2], blk)
