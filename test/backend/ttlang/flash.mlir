// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 split-k=1 kv-splits=4}' -t ttlang | filecheck %s

// Flash decoding in TT-Lang (docs/backend-ttlang.md#flash-decoding): 128 keys split 4 ways.
// @y__splits: each item walks its split's one key tile and pushes its f32 partials tile: O
// undivided in row 0, the head's m and l (the (0, 0) elements of the online softmax's column
// pages, broadcast) kept at (1, 0) and (1, 1) (sp's layout) and over rows 2 and 3 (the tile's
// padding) by two masks read after the last K block.
// @y: per item a K loop over the 4 splits pops a partials tile, brings row 2 (m) and row 3 (l)
// to every row (U_m @ x, U_l @ x: one-tile selectors, three constant tiles at any block width),
// keeps row 0's O (Z @ x) and merges by log-sum-exp; then pushes O / l.

func.func @dec(%q: tensor<1x128xbf16>, %k: tensor<128x64xbf16>, %v: tensor<128x64xbf16>, %pos: tensor<1xi32>) -> tensor<1x128xbf16> {
  %y = tg.attention %q, %k, %v, %pos heads 4 kv_heads 2 head_dim 32 causal true scale 1.250000e-01 : (tensor<1x128xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x128xbf16>
  func.return %y : tensor<1x128xbf16>
}

// CHECK: def _flash_ml(n):
// CHECK: def _flash_rows():
// CHECK-NOT: _flash_spread

// CHECK: # section @y__splits: tg.attention
// CHECK: @ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)
// CHECK-NEXT: def section_0_y__splits(t_q, t_k, t_v, t_pos, t_y__splits, _attn_d_1_128_32_128_1, _flash_ml_1):
// CHECK: out_dfb = ttl.make_dataflow_buffer_like(t_y__splits, shape=(1, 1), block_count=2)
// CHECK-NEXT: flash_m_dfb = ttl.make_dataflow_buffer_like(_flash_ml_1, shape=(1, 1), block_count=1)
// CHECK-NEXT: flash_l_dfb = ttl.make_dataflow_buffer_like(_flash_ml_1, shape=(1, 1), block_count=1)
// CHECK: for kb in range(1):
// CHECK: sc = sc - off * ttl.block.fill(1e+30, (1, 1))
// CHECK: with flash_m_dfb.wait() as m_mask, flash_l_dfb.wait() as l_mask:
// CHECK-NEXT: part_0 = (
// CHECK-NEXT: o_0
// CHECK-NEXT: + ttl.block.broadcast(m_0, dims=[0, -1], shape=(1, 1)) * m_mask
// CHECK-NEXT: + ttl.block.broadcast(l_0, dims=[0, -1], shape=(1, 1)) * l_mask
// CHECK-NEXT: )
// CHECK-NEXT: with out_dfb.reserve() as o_blk:
// CHECK-NEXT: o_blk.store(part_0)
// Split c0 // 4 reads key tile c0 // 4 of its kv head's columns.
// CHECK: def dm1():
// CHECK: t_k[c0 // 4 + k0:c0 // 4 + k0 + 1, c0 % 4 // 2:c0 % 4 // 2 + 1]
// CHECK: if k0 == 0:
// CHECK-NEXT: with flash_m_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_flash_ml_1[0:1, 0:1], blk)
// CHECK: with flash_l_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_flash_ml_1[0:1, 1:2], blk)

// CHECK: # section @y: tg.attention
// CHECK: @ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)
// CHECK-NEXT: def section_1_y(t_y__splits, t_y, _flash_rows):
// CHECK: flash_u_m_dfb = ttl.make_dataflow_buffer_like(_flash_rows, shape=(1, 1), block_count=1)
// CHECK-NEXT: flash_u_l_dfb = ttl.make_dataflow_buffer_like(_flash_rows, shape=(1, 1), block_count=1)
// CHECK-NEXT: flash_row0_dfb = ttl.make_dataflow_buffer_like(_flash_rows, shape=(1, 1), block_count=1)
// CHECK: with (
// CHECK-NEXT: flash_u_m_dfb.wait() as u_m,
// CHECK-NEXT: flash_u_l_dfb.wait() as u_l,
// CHECK-NEXT: flash_row0_dfb.wait() as row0,
// CHECK-NEXT: ):
// CHECK-NEXT: for kb in range(4):
// CHECK-NEXT: with parts_dfb.wait() as x_blk:
// CHECK-NEXT: mp, lp, op = u_m @ x_blk, u_l @ x_blk, row0 @ x_blk
// CHECK-NEXT: if kb == 0:
// CHECK-NEXT: m_run, l_run, acc = mp, lp, op
// CHECK-NEXT: else:
// CHECK-NEXT: m_new = ttl.math.max(m_run, mp)
// CHECK-NEXT: a, c = ttl.math.exp(m_run - m_new), ttl.math.exp(mp - m_new)
// CHECK-NEXT: m_run, l_run = m_new, l_run * a + lp * c
// CHECK-NEXT: acc = acc * a + op * c
// CHECK-NEXT: full = acc / (l_run + ttl.block.fill(1e-30, (1, 1)))
// CHECK: def dm1():
// CHECK: for k0 in range(0, 4, 1):
// CHECK-NEXT: with parts_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(t_y__splits[0:1, k0 * 4 + c0:k0 * 4 + c0 + 1], blk)
// CHECK: if k0 == 0:
// CHECK-NEXT: with flash_u_m_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_flash_rows[0:1, 0:1], blk)
// CHECK: with flash_u_l_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_flash_rows[0:1, 1:2], blk)
// CHECK: with flash_row0_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_flash_rows[0:1, 2:3], blk)
// CHECK: '_flash_ml_1': lambda: _flash_ml(1),
