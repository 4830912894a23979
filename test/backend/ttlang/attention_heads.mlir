// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 split-k=1 kv-splits=1}' -t ttlang | filecheck %s

// Attention with several query heads per item (docs/backend-ttlang.md#attention-heads-decision).
// TT-Lang blocks are whole units, so head j's queries are q @ C_j, C_j the [w, D] tiles of an
// identity from column j * D, read one at a time through a DFB of one block; each head runs its
// own online softmax against the one K and V page of their kv head.

// @dec: Llama-3's shape (16 heads of 128 over 2 kv heads, a 256-key cache): 2 heads per item
// (an 8-tile query page) and output sub-blocks of 1x4 tiles, one head each: each head's output
// is pushed as it is, no reassembly and no sub-block selector.
// @pre: 16 heads of 64 over 4 kv heads, 64 queries: 2 heads per item (a 4-tile page) stored
// whole, so the page is reassembled as sum_j o_j @ transpose(C_j), C_j read again after the
// last of its two K blocks (k0 == 1).

func.func @attn(%q: tensor<1x2048xbf16>, %k: tensor<256x256xbf16>, %v: tensor<256x256xbf16>, %pos: tensor<1xi32>, %qp: tensor<64x1024xbf16>, %kp: tensor<64x256xbf16>, %vp: tensor<64x256xbf16>) -> (tensor<1x2048xbf16>, tensor<64x1024xbf16>) {
  %dec = tg.attention %q, %k, %v, %pos heads 16 kv_heads 2 head_dim 128 causal true scale 8.838835e-02 : (tensor<1x2048xbf16>, tensor<256x256xbf16>, tensor<256x256xbf16>, tensor<1xi32>) -> tensor<1x2048xbf16>
  %pre = tg.attention %qp, %kp, %vp heads 16 kv_heads 4 head_dim 64 causal true scale 1.250000e-01 : (tensor<64x1024xbf16>, tensor<64x256xbf16>, tensor<64x256xbf16>) -> tensor<64x1024xbf16>
  func.return %dec, %pre : tensor<1x2048xbf16>, tensor<64x1024xbf16>
}

// CHECK: # section @dec: tg.attention
// CHECK: def section_0_dec(t_q, t_k, t_v, t_pos, t_dec, _eye_256, _attn_d_1_256_32_256_1):
// CHECK-NEXT: q_dfb = ttl.make_dataflow_buffer_like(t_q, shape=(1, 8), block_count=2)
// CHECK: out_dfb = ttl.make_dataflow_buffer_like(t_dec, shape=(1, 4), block_count=2)
// CHECK-NOT: sub_cols_dfb
// CHECK: heads_dfb = ttl.make_dataflow_buffer_like(_eye_256, shape=(8, 4), block_count=1)
// CHECK: @ttl.compute()
// CHECK: with q_dfb.wait() as q_blk, pos_dfb.wait() as pos_blk:
// CHECK: with heads_dfb.wait() as c_blk:
// CHECK-NEXT: q_0 = q_blk @ c_blk
// CHECK-NEXT: with heads_dfb.wait() as c_blk:
// CHECK-NEXT: q_1 = q_blk @ c_blk
// CHECK-NEXT: for kb in range(2):
// CHECK: kt = ttl.block.transpose(k_blk)
// CHECK: sc = (q_0 @ kt) * ttl.block.fill(0.0883883535861969, (1, 4))
// CHECK: o_0 = o_0 * ttl.block.broadcast(alpha, dims=[-1], shape=(1, 4)) + pv
// CHECK: sc = (q_1 @ kt) * ttl.block.fill(0.0883883535861969, (1, 4))
// CHECK: o_1 = o_1 * ttl.block.broadcast(alpha, dims=[-1], shape=(1, 4)) + pv
// CHECK-NEXT: with out_dfb.reserve() as o_blk:
// CHECK-NEXT: o_blk.store(
// CHECK-NEXT: o_0
// CHECK-NEXT: / ttl.block.broadcast(
// CHECK-NEXT: l_0 + {{.*}}, shape=(1, 4)
// CHECK-NEXT: )
// CHECK-NEXT: )
// CHECK-NEXT: with out_dfb.reserve() as o_blk:
// CHECK-NEXT: o_blk.store(
// CHECK-NEXT: o_1
// CHECK-NEXT: / ttl.block.broadcast(
// CHECK-NEXT: l_1 + {{.*}}, shape=(1, 4)
// CHECK: def dm0():
// CHECK: for tj in range(0, 8, 4):
// CHECK-NEXT: with out_dfb.wait() as blk:
// CHECK: def dm1():
// CHECK: for k0 in range(0, 8, 4):
// CHECK: tx = ttl.copy(t_k[k0:k0 + 4, c0 // 32 * 4:c0 // 32 * 4 + 4], blk)
// CHECK: if k0 == 0:
// CHECK-NEXT: for j in range(2):
// CHECK-NEXT: with heads_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_eye_256[0:8, j * 4:j * 4 + 4], blk)
// CHECK: with attn_d_1_256_32_256_1_dfb.reserve() as blk:
// CHECK-NOT: if k0 ==
// CHECK: # section @pre: tg.attention

// CHECK: heads_dfb = ttl.make_dataflow_buffer_like(_eye_128, shape=(4, 2), block_count=1)
// CHECK: q_1 = q_blk @ c_blk
// CHECK: with heads_dfb.wait() as c_blk:
// CHECK-NEXT: full = (
// CHECK-NEXT: (
// CHECK-NEXT: o_0
// CHECK: @ ttl.block.transpose(c_blk)
// CHECK-NEXT: )
// CHECK-NEXT: with heads_dfb.wait() as c_blk:
// CHECK-NEXT: full = (
// CHECK-NEXT: full
// CHECK-NEXT: + (
// CHECK-NEXT: o_1
// CHECK: @ ttl.block.transpose(c_blk)
// CHECK-NEXT: )
// CHECK-NEXT: with out_dfb.reserve() as o_blk:
// CHECK-NEXT: o_blk.store(full)
// CHECK: def dm1():
// CHECK: if k0 == 0:
// CHECK: tx = ttl.copy(_eye_128[0:4, j * 2:j * 2 + 2], blk)
// CHECK: with attn_d_{{.*}}.reserve() as blk:
// CHECK: if k0 == 1:
// CHECK-NEXT: for j in range(2):
// CHECK-NEXT: with heads_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_eye_128[0:4, j * 2:j * 2 + 2], blk)
