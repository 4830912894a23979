// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s
// A chip of the experts plan (n300: 2 of the 4 experts a chip) reads its first held expert as a
// [1, 1] tile, counts the columns from it and masks a pick another chip holds.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=n300 prefer-experts=true}' -t ttlang | filecheck %s --check-prefix=CHIP

// tg.moe in decode (T = 1): the route sections rank the experts in block math (k times: the
// row maximum, the least column index of a hit, that column knocked out) and push the chosen id
// or weight in column 0 (a hit is 1 - sign(|a - b|): the specification has no block
// comparison); no kernel reads the id: each stacked expert tensor is one DRAM tensor per expert
// (EXPERTS) and the host passes the routed one to the expert GEMMs, which read it from row 0;
// moe_combine is `x * weight + acc` with the weight's column 0 broadcast.

func.func @f(%x: tensor<1x64xbf16>, %r: tensor<64x4xbf16>, %g: tensor<256x32xbf16>, %u: tensor<256x32xbf16>, %d: tensor<128x64xbf16>) -> tensor<1x64xbf16> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" renormalize true : (tensor<1x64xbf16>, tensor<64x4xbf16>, tensor<256x32xbf16>, tensor<256x32xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
  func.return %y : tensor<1x64xbf16>
}

// CHECK: # section @y__id0: tg.moe
// CHECK: def section_1_y__id0(t_y__logits, t_y__id0, _route_idx_4_32, _route_neg_4_32, _rows_1_32):
// CHECK: with (
// CHECK-NEXT: in0_dfb.wait() as x_blk,
// CHECK-NEXT: route_idx_4_32_dfb.wait() as i_row,
// CHECK-NEXT: route_neg_4_32_dfb.wait() as n_row,
// CHECK-NEXT: rows_1_32_dfb.wait() as m_blk,
// CHECK-NEXT: out_dfb.reserve() as o_blk,
// CHECK-NEXT: ):
// CHECK: sc = (
// CHECK-NEXT: ex
// CHECK-NEXT: / ttl.block.broadcast(
// CHECK-NEXT: ttl.math.reduce_sum(ex, dims=[-1], shape=(1, 1)),
// CHECK-NEXT: dims=[-1],
// CHECK-NEXT: shape=(1, 1),
// CHECK-NEXT: )
// CHECK-NEXT: )
// CHECK: rev = ttl.block.fill(32.0, (1, 1)) - idx
// CHECK: for j in range(2):
// CHECK: at = (
// CHECK-NEXT: ttl.block.fill(32.0, (1, 1))
// CHECK-NEXT: - ttl.math.reduce_max(hit * rev, dims=[-1], shape=(1, 1))
// CHECK-NEXT: )
// CHECK: one = (
// CHECK-NEXT: ttl.block.fill(1.0, (1, 1))
// CHECK-NEXT: - ttl.math.sign(
// CHECK-NEXT: ttl.math.abs(idx - ttl.block.broadcast(at, dims=[-1], shape=(1, 1)))
// CHECK-NEXT: )
// CHECK-NEXT: )
// CHECK: lg = lg - one * ttl.block.fill(1e+30, (1, 1))
// CHECK-NEXT: if j == 0:
// CHECK-NEXT: picked = at
// CHECK-NEXT: o_blk.store(picked * m_blk)
// CHECK: tx = ttl.copy(_rows_1_32[r0:r0 + 1, 0:1], blk)
// CHECK: # section @y__weight0: tg.moe
// CHECK: picked = w
// CHECK: picked = picked / ttl.block.broadcast(total, dims=[-1], shape=(1, 1))
// CHECK: # section @y__gate0: tg.moe
// CHECK: def section_3_y__gate0(t_x, t_g, t_y__gate0):
// CHECK-NOT: _index
// CHECK: tx = ttl.copy(t_g[k0:k0 + 2, c0:c0 + 1], blk)
// CHECK: # section @y__down0: tg.moe
// CHECK: tx = ttl.copy(t_d[k0:k0 + 1, c0:c0 + 1], blk)
// CHECK: # section @y__sum0: tg.moe
// CHECK: o_blk.store(i0 * ttl.block.broadcast(i1, dims=[-1], shape=(1, 1)))
// CHECK: # section @y: tg.moe
// CHECK: o_blk.store(i0 * ttl.block.broadcast(i1, dims=[-1], shape=(1, 1)) + i2)
// CHECK: CONSTANTS = {
// CHECK: '_route_idx_4_32': lambda: _argmax_idx(4, 32),
// CHECK: '_route_neg_4_32': lambda: _argmax_neg(4, 32),
// CHECK: EXPERTS = {'g': 64, 'u': 64, 'd': 32}
// CHECK: (section_3_y__gate0, ['x', ('g', 'y__id0'), 'y__gate0']),
// CHECK: (section_6_y__down0, ['y__act0', ('d', 'y__id0'), 'y__down0']),

// CHIP:      # section @y__id0: tg.moe
// CHIP:      first_dfb = ttl.make_dataflow_buffer_like(t_y__first, shape=(1, 1), block_count=2)
// CHIP:      first_dfb.wait() as f_blk,
// CHIP:      idx = (
// CHIP-NEXT:     ttl.block.broadcast(i_row, dims=[0], shape=(1, 1))
// CHIP-NEXT:     - ttl.block.broadcast(f_blk, dims=[0, -1], shape=(1, 1))
// CHIP:      mine = (
// CHIP-NEXT:     ttl.math.sign(ttl.math.relu(idx - ttl.block.fill(-0.5, (1, 1))))
// CHIP-NEXT:     * ttl.math.sign(ttl.math.relu(ttl.block.fill(1.5, (1, 1)) - idx))
// CHIP:      picked = at * ttl.math.reduce_sum(one * mine, dims=[-1], shape=(1, 1))
// CHIP:      tx = ttl.copy(t_y__first[0:1, 0:1], blk)
// CHIP:      # section @y__weight0: tg.moe
// CHIP:      picked = w * ttl.math.reduce_sum(one * mine, dims=[-1], shape=(1, 1))
// CHIP:      EXPERTS = {'g': 64, 'u': 64, 'd': 32}
// CHIP:      INPUTS = ['x', 'r', 'g', 'u', 'd', 'y__first']
