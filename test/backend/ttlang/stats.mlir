// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s

// layer_norm and softmax where column 0 of a tile is not enough (compute.py, stats.py):
// - a whole row of 72 columns: the host's column mask `_col_keep(72, 96)` zeroes layer_norm's
//   centred padding and pushes softmax's padding to -1e30 before the maximum and the exp;
// - a row of 8192 columns, blocked: the partial writes (max, sum) into columns 0 and 1 through
//   the selector tiles `_stat_col`; the combine gathers column 0 and column 1 of a page of 16
//   partial tiles into one tile each (`_stat_gather`; the 16 columns past them masked out of
//   the maximum), merges pages with a running maximum; the apply map reads column 1 as a
//   masked reduce_sum.
// - a row of 300 columns, blocked in 5 blocks of 64: the last block holds 44 real columns. The
//   partials read the row's mask `_col_keep(300, 320)` at their own columns (per item, after
//   x): layer_norm's count is reduce_sum of that slice, softmax's padding goes to -1e30;
//   layer_norm's combine divides its page (the 5 partials, the short one last) by the counts
//   tile `_stat_counts(5, 64, 44)`; softmax's apply masks its padding too.

func.func @f(%x: tensor<40x72xf32>, %w: tensor<1x72xf32>, %b: tensor<1x72xf32>, %z: tensor<4x8192xf32>, %v: tensor<40x300xf32>, %vw: tensor<1x300xf32>, %vb: tensor<1x300xf32>) -> (tensor<40x72xf32>, tensor<40x72xf32>, tensor<4x8192xf32>, tensor<40x300xf32>, tensor<40x300xf32>) {
  %l = tg.layer_norm %x, %w, %b eps 1.0e-05 : (tensor<40x72xf32>, tensor<1x72xf32>, tensor<1x72xf32>) -> tensor<40x72xf32>
  %s = tg.softmax %x : (tensor<40x72xf32>) -> tensor<40x72xf32>
  %y = tg.softmax %z : (tensor<4x8192xf32>) -> tensor<4x8192xf32>
  %ln = tg.layer_norm %v, %vw, %vb eps 1.0e-05 : (tensor<40x300xf32>, tensor<1x300xf32>, tensor<1x300xf32>) -> tensor<40x300xf32>
  %sm = tg.softmax %v : (tensor<40x300xf32>) -> tensor<40x300xf32>
  func.return %l, %s, %y, %ln, %sm : tensor<40x72xf32>, tensor<40x72xf32>, tensor<4x8192xf32>, tensor<40x300xf32>, tensor<40x300xf32>
}

// CHECK: def _col_keep(cols, cpad):
// CHECK: def _stat_col(col, n):
// CHECK: def _stat_gather(col, kw):
// CHECK: def _stat_counts(kw, block, last):

// CHECK: # section @l: tg.layer_norm
// CHECK: def section_0_l(t_x, t_w, t_b, t_l, _keep_72_96):
// CHECK: _keep_72_96_dfb = ttl.make_dataflow_buffer_like(_keep_72_96, shape=(1, 3), block_count=1)
// CHECK: with _keep_72_96_dfb.wait() as _keep_72_96_blk:
// CHECK: / ttl.block.fill(72.0, (1, 1))
// CHECK: c = (
// CHECK-NEXT: (i0 - ttl.block.broadcast(mean, dims=[-1], shape=(1, 3)))
// CHECK-NEXT: * _keep_72_96_blk
// CHECK: tx = ttl.copy(_keep_72_96[0:1, 0:3], blk)

// CHECK: # section @s: tg.softmax
// CHECK: xm = (
// CHECK-NEXT: i0
// CHECK-NEXT: + (
// CHECK-NEXT: _keep_72_96_blk - ttl.block.fill(1.0, (1, 3))
// CHECK-NEXT: ) * ttl.block.fill(1e+30, (1, 3))
// CHECK: peak = ttl.math.reduce_max(xm, dims=[-1], shape=(1, 1))
// CHECK-NEXT: e = ttl.math.exp(xm - ttl.block.broadcast(peak, dims=[-1], shape=(1, 3)))

// CHECK: # section @y__partials: tg.softmax
// CHECK: a = ttl.math.reduce_max(i0, dims=[-1], shape=(1, 1))
// CHECK: o_blk.store(
// CHECK-NEXT: ttl.block.broadcast(a, dims=[-1], shape=(1, 1)) * _stat_col_0_32_blk
// CHECK-NEXT: + ttl.block.broadcast(b, dims=[-1], shape=(1, 1)) * _stat_col_1_32_blk

// CHECK: # section @y__stats: tg.softmax
// CHECK: in0_dfb = ttl.make_dataflow_buffer_like(t_y__partials, shape=(1, 16), block_count=3)
// CHECK: ga = p_blk @ _stat_gather_0_16_blk
// CHECK-NEXT: gs = p_blk @ _stat_gather_1_16_blk
// CHECK-NEXT: ga = (
// CHECK-NEXT: ga
// CHECK-NEXT: + (
// CHECK-NEXT: _keep_16_32_blk - ttl.block.fill(1.0, (1, 1))
// CHECK-NEXT: ) * ttl.block.fill(1e+30, (1, 1))
// CHECK: pk = ttl.math.reduce_max(ga, dims=[-1], shape=(1, 1))
// CHECK: t1 = pk
// CHECK-NEXT: t2 = ps
// CHECK: top = ttl.math.max(t1, pk)
// CHECK-NEXT: t2 = t2 * ttl.math.exp(t1 - top) + ps * ttl.math.exp(pk - top)
// CHECK-NEXT: t1 = top
// CHECK: inv = ttl.math.recip(t2)
// CHECK: tx = ttl.copy(_stat_gather_0_16[0:16, 0:1], blk)

// CHECK: # section @y: tg.softmax
// CHECK: second = ttl.math.reduce_sum(
// CHECK-NEXT: i1 * _stat_col_1_32_blk, dims=[-1], shape=(1, 1)
// CHECK: ttl.math.exp(i0 - ttl.block.broadcast(i1, dims=[-1], shape=(1, 8)))
// CHECK-NEXT: * ttl.block.broadcast(second, dims=[-1], shape=(1, 8))

// CHECK: # section @ln__partials: tg.layer_norm
// CHECK: _keep_300_320_dfb = ttl.make_dataflow_buffer_like(_keep_300_320, shape=(1, 2), block_count=2)
// CHECK: in0_dfb.wait() as i0,
// CHECK-NEXT: _keep_300_320_dfb.wait() as _keep_300_320_blk,
// CHECK-NEXT: out_dfb.reserve() as o_blk,
// CHECK: a = ttl.math.reduce_sum(i0, dims=[-1], shape=(1, 1))
// CHECK-NEXT: n = ttl.block.broadcast(
// CHECK-NEXT: ttl.math.reduce_sum(_keep_300_320_blk, dims=[-1], shape=(1, 1)),
// CHECK: (i0 - ttl.block.broadcast(a / n, dims=[-1], shape=(1, 2)))
// CHECK-NEXT: * _keep_300_320_blk
// CHECK: tx = ttl.copy(t_v[r0:r0 + 1, c0:c0 + 2], blk)
// CHECK-NEXT: tx.wait()
// CHECK-NEXT: with _keep_300_320_dfb.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(_keep_300_320[0:1, c0:c0 + 2], blk)

// CHECK: # section @ln__stats: tg.layer_norm
// CHECK: p_blk / _stat_counts_5_64_44_blk
// CHECK: dev * dev * _stat_counts_5_64_44_blk, dims=[-1], shape=(1, 1)
// CHECK: tx = ttl.copy(_stat_counts_5_64_44[0:1, 0:5], blk)

// CHECK: # section @sm__partials: tg.softmax
// CHECK: xm = (
// CHECK-NEXT: i0
// CHECK-NEXT: + (
// CHECK-NEXT: _keep_300_320_blk - ttl.block.fill(1.0, (1, 2))
// CHECK-NEXT: ) * ttl.block.fill(1e+30, (1, 2))
// CHECK: a = ttl.math.reduce_max(xm, dims=[-1], shape=(1, 1))

// CHECK: # section @sm: tg.softmax
// CHECK: _keep_300_320_dfb.wait() as _keep_300_320_blk,
// CHECK: xm = (
// CHECK: ttl.math.exp(xm - ttl.block.broadcast(i1, dims=[-1], shape=(1, 2)))
// CHECK: tx = ttl.copy(_keep_300_320[0:1, c0:c0 + 2], blk)

// CHECK: '_keep_72_96': lambda: _col_keep(72, 96),
// CHECK: '_stat_gather_0_16': lambda: _stat_gather(0, 16),
// CHECK: '_keep_16_32': lambda: _col_keep(16, 32),
// CHECK: '_keep_300_320': lambda: _col_keep(300, 320),
// CHECK: '_stat_counts_5_64_44': lambda: _stat_counts(5, 64, 44),
