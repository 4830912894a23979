// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 split-k=1 kv-splits=1}' -t ttlang | filecheck %s

// Decode attention shaped like Llama-3's (16 heads of 128 over 2 kv heads): the planner serves 2
// heads of one kv head per item, an 8-tile query page, stored in 2 sub-blocks of 1x4 tiles.
// TT-Lang blocks are whole units, so head j's queries are q @ C_j, C_j the [8, 4] tiles of an
// identity from column 4j (read once per site range, held over its items); each head runs its
// own online softmax; the page is reassembled as sum_j o_j @ transpose(C_j), and each sub-block
// is a column slice of it (docs/backend-ttlang.md#attention-heads-decision).

func.func @attn(%q: tensor<1x2048xbf16>, %k: tensor<256x256xbf16>, %v: tensor<256x256xbf16>, %pos: tensor<1xi32>) -> tensor<1x2048xbf16> {
  %o = tg.attention %q, %k, %v, %pos heads 16 kv_heads 2 head_dim 128 causal true scale 8.838835e-02 : (tensor<1x2048xbf16>, tensor<256x256xbf16>, tensor<256x256xbf16>, tensor<1xi32>) -> tensor<1x2048xbf16>
  func.return %o : tensor<1x2048xbf16>
}

// CHECK: # section @o: tg.attention
// CHECK-NEXT: #   sp.plan blocked grid 8x8
// CHECK: def section_0_o(t_q, t_k, t_v, t_pos, t_o, _eye_256, _attn_d_1_256_32_256_1):
// CHECK-NEXT: q_dfb = ttl.make_dataflow_buffer_like(t_q, shape=(1, 8), block_count=2)
// CHECK-NEXT: k_dfb = ttl.make_dataflow_buffer_like(t_k, shape=(4, 4), block_count=
// CHECK: out_dfb = ttl.make_dataflow_buffer_like(t_o, shape=(1, 4), block_count=2)
// CHECK: head_0_dfb = ttl.make_dataflow_buffer_like(_eye_256, shape=(8, 4), block_count=1)
// CHECK-NEXT: head_1_dfb = ttl.make_dataflow_buffer_like(_eye_256, shape=(8, 4), block_count=1)
// CHECK-NEXT: sub_cols_dfb = ttl.make_dataflow_buffer_like(_eye_256, shape=(8, 4), block_count=2)

// CHECK: @ttl.compute()
// CHECK: with head_0_dfb.wait() as head_0_blk, head_1_dfb.wait() as head_1_blk:
// CHECK-NEXT: for t in range(
// CHECK: with q_dfb.wait() as q_blk, pos_dfb.wait() as pos_blk:
// CHECK: q_0 = q_blk @ head_0_blk
// CHECK-NEXT: q_1 = q_blk @ head_1_blk
// CHECK-NEXT: for kb in range(2):
// CHECK: kt = ttl.block.transpose(k_blk)
// CHECK: sc = (q_0 @ kt) * ttl.block.fill(0.0883883535861969, (1, 4))
// CHECK: o_0 = o_0 * ttl.block.broadcast(alpha, dims=[-1], shape=(1, 4)) + pv
// CHECK: sc = (q_1 @ kt) * ttl.block.fill(0.0883883535861969, (1, 4))
// CHECK: o_1 = o_1 * ttl.block.broadcast(alpha, dims=[-1], shape=(1, 4)) + pv
// CHECK: full = (o_0 / ttl.block.broadcast(l_0 + {{.*}})) @ ttl.block.transpose(head_0_blk) + (o_1 / ttl.block.broadcast(l_1 + {{.*}})) @ ttl.block.transpose(head_1_blk)
// CHECK-NEXT: for ti in range(0, 1, 1):
// CHECK-NEXT: for tj in range(0, 8, 4):
// CHECK-NEXT: with sub_cols_dfb.wait() as c_blk:
// CHECK-NEXT: part = full @ c_blk

// The kernel that loads q reads the selectors once per range, before the items:
// CHECK: def dm0():
// CHECK: with head_0_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_eye_256[0:8, 0:4], blk)
// CHECK: with head_1_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_eye_256[0:8, 4:8], blk)
// CHECK: for t in range(
// CHECK: tx = ttl.copy(t_q[r0:r0 + 1, c0:c0 + 8], blk)
// CHECK: def dm1():
// CHECK: tx = ttl.copy(t_k[k0:k0 + 4, c0 // 32 * 4:c0 // 32 * 4 + 4], blk)
