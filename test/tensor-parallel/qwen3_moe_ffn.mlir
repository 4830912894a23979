// A mixture of experts at real sizes is split by its experts' FFN width (issue 23): every chip
// holds all E experts, each of F / chips columns, and routes every token with the whole router;
// w_down's rows are split within each expert's block (mesh.blocks = E). The MoE's result is a
// partial sum, all-reduced before the residual add. Its runner-up is replicating it: the experts
// plan (64 whole experts a chip) would touch 4 of a chip's 64 on average under uniform routing
// but 5.06 on the busiest chip, and linked, a decode step reads a whole block for each of its 8
// slots on every chip, against 8 experts at half width under ffn.
// Qwen3-30B-A3B over an N300: 128 experts of 768 columns, 384 a chip.
// RUN: spatial-opt %examples/qwen3_30b_a3b_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s
// Qwen3-Next-80B-A3B over an N300: its shared expert splits alike, its sigmoid gate replicated.
// RUN: spatial-opt %examples/qwen3_next_80b_a3b_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s --check-prefix=NEXT
// Over a T3K (2 x 4) the experts split over both axes: 96 columns (3 tiles) a chip.
// RUN: spatial-opt %examples/qwen3_30b_a3b_decode.mlir -p 'tensor-parallel{mesh=t3k}' | filecheck %s --check-prefix=T3K

// CHECK:      %router: tensor<2048x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %experts_gate: tensor<262144x384xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %experts_up: tensor<262144x384xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %experts_down: tensor<49152x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>, mesh.blocks = 128 : i64}
// CHECK:      %moe = tg.moe %n2, %router, %experts_gate, %experts_up, %experts_down top_k 8 scores "softmax" renormalize true {tp.plan = "ffn", tp.us = {{[0-9.e+]+}} : f64, tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us); priced at uniform routing: 1 token(s) x 8 of 128 experts; a chip holding every expert reads 8.00, one holding 64 reads 4.00 on average and 5.06 on the busiest of 2 chips; linked, a decode step reads a block per slot (8) on every chip"
// CHECK-NEXT: %moe_1 = mesh.all_reduce %moe axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "tg.moe (ffn) leaves %moe a partial sum over axis 0; tg.add (replicate) reads it replicated
// CHECK-NEXT: %out = tg.add %h2, %moe_1

// NEXT:      %experts_down: tensor<131072x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>, mesh.blocks = 512 : i64}
// NEXT-SAME: %shared_gate: tensor<2048x256xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// NEXT-SAME: %shared_up: tensor<2048x256xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// NEXT-SAME: %shared_down: tensor<256x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>}
// NEXT-SAME: %shared_gate_weight: tensor<2048x1xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// NEXT:      %moe = tg.moe {{.*}}tp.plan = "ffn"
// NEXT-NEXT: %moe_1 = mesh.all_reduce %moe axis 0

// T3K:      %experts_down: tensor<12288x2048xbf16> {mesh.sharding = #mesh.sharding<@t3k, [shard(0), shard(0)]>, mesh.blocks = 128 : i64}
// T3K:      %moe = tg.moe {{.*}}tp.plan = "ffn", {{.*}}tp.runner_up = "ffn over axis 1: {{[0-9.]+}} us (slower by
// T3K-NEXT: %moe_1 = mesh.all_reduce %moe axis 0
// T3K-NEXT: %moe_2 = mesh.all_reduce %moe_1 axis 1
