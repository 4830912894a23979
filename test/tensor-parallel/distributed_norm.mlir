// The distributed rms_norm (tensor-parallel{distributed-norm=...}, docs/tensor-parallel.md):
// tt-metal's layout of the residual stream on Llama-3-8B's 128-row prefill layer.
//
// FORCED (n300): x and the norm weights split by columns (the host shards them), each norm as
// rms_stats, an all_reduce of the 128 x 1 f32 statistics (not x), rms_apply over the whole
// row's n = 4096, an all_gather before the column product, and WO's and FF2's partial sums
// reduce_scattered into the split residual add. Each distributed norm records the replicated
// norm as its runner-up (faster op by op, 7.3 us against 18.5 us: it needs no collective), the
// add the replicated add it saves (an all_reduce of the whole 128 x 4096).
// RUN: spatial-opt %examples/llama3_8b_prefill.mlir -p 'tensor-parallel{mesh=n300 distributed-norm=forced}' | filecheck %s --check-prefix=FORCED
//
// PRICED: the two whole plans are compared; over t3k the op-by-op plan (WO and FF2 2-D) wins by
// 31.4 us a layer, at one row (decode, n300) the replicated norms win by 29.5 us.
// RUN: spatial-opt %examples/llama3_8b_prefill.mlir -p 'tensor-parallel{mesh=t3k distributed-norm=priced}' | filecheck %s --check-prefix=PREFILL
// RUN: spatial-opt %examples/llama3_8b_decode.mlir -p 'tensor-parallel{mesh=n300 distributed-norm=priced}' | filecheck %s --check-prefix=DECODE

// FORCED:      %x: tensor<128x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// FORCED-SAME: %attn_norm: tensor<1x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// FORCED-SAME: mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): split op by op: 1150.082 us per chip with 6 collective(s), taken
// FORCED:      %h_ss = tg.rms_stats %x : (tensor<128x2048xbf16>) -> tensor<128x1xf32>
// FORCED-NEXT: %h_ss_1 = mesh.all_reduce %h_ss axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "tg.rms_norm (distributed): each chip's share of the rows' sum of squares, summed over the chips (the statistics, not x)"
// FORCED-SAME: tensor<128x1xf32> -> tensor<128x1xf32>
// FORCED-NEXT: %h = tg.rms_apply %x, %h_ss_1, %attn_norm eps 1.000000e-05 n 4096 {tp.plan = "distributed", tp.us = 1.851980e+01 : f64, tp.runner_up = "replicate: 7.310 us (faster by 11.210 us)"}
// FORCED-NEXT: %h_1 = mesh.all_gather %h axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]>
// FORCED-NEXT: %q = tg.matmul %h_1, %wq {tp.plan = "column"
// FORCED:      %o_1 = mesh.reduce_scatter %o axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(1)]> reason "tg.matmul (row) leaves %o a partial sum over axis 0; tg.add (local) reads it split on dim 1 over axis 0"
// FORCED-NEXT: %h2 = tg.add %x, %o_1 {tp.plan = "local", tp.us = 5.656300e+01 : f64, tp.runner_up = "replicate: 164.228 us (slower by 107.665 us)"}
// FORCED-NEXT: %n2_ss = tg.rms_stats %h2
// FORCED:      %down_1 = mesh.reduce_scatter %down axis 0
// FORCED-NEXT: %out = tg.add %h2, %down_1 {tp.plan = "local"
// FORCED-NOT:  tg.rms_norm

// PREFILL:     mesh.deployment = "tensor-parallel over t3k (8 wormhole_n150 chips, 2 in a line of 1 link x 4 in a line of 1 link): split op by op: 683.259 us per chip with 6 collective(s) (against distributed norms: 714.676 us per chip with 12 collective(s), slower by 31.417 us), taken
// PREFILL-NOT: tg.rms_stats

// DECODE:      mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): split op by op: 818.398 us per chip with 2 collective(s) (against distributed norms: 847.869 us per chip with 6 collective(s), slower by 29.471 us), taken
// DECODE:      tg.rms_norm %x, %attn_norm eps 1.000000e-05 {tp.plan = "replicate"
// DECODE-NOT:  tg.rms_stats
