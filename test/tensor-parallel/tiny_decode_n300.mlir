// The tensor-parallel decision on the tiny decode step over an N300 (2 chips). Heads per chip
// (4 q heads and 2 KV heads: 2 and 1 a chip) with QKV column-parallel and the caches split by KV
// head; at d = 128 a collective's fixed latency outweighs any product's time, so the prices
// gather the attention's output and the FFN's activation (one all_gather each, 7.4 us) rather
// than split WO and FF2 by rows (an all_reduce, 14.8 us, is two phases), and keep the LM head
// replicated: each runner-up records the alternative and its time. (llama3_8b_decode_n300.mlir
// shows the Megatron pairs at a real model's sizes.) Every argument and result carries its
// sharding.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s
// Running it twice changes nothing.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' > %t.once
// RUN: spatial-opt %t.once -p 'tensor-parallel{mesh=n300}' | diff - %t.once

// CHECK:      mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// CHECK-NEXT: func.func @tiny_step(%ids: tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %l0_wq: tensor<128x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %l0_wo: tensor<128x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %l0_w_gate: tensor<128x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %l0_k_cache: tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %lm_head: tensor<128x512xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: -> (tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}, tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}, tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>})
// CHECK-SAME: attributes {mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): {{[0-9.]+}} us per chip, priced (every op replicated: {{[0-9.]+}} us)"}
// CHECK:      %l0_h = tg.rms_norm {{.*}}tp.plan = "replicate"{{.*}}tp.runner_up = "none: distributed rms_norm
// CHECK:      %l0_q = tg.matmul %l0_h, %l0_wq {tp.plan = "column", tp.us = {{.*}}, tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
// CHECK:      %l0_k = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x32xbf16>
// CHECK:      %l0_v = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x32xbf16>
// CHECK:      %l0_qn = tg.rms_norm %l0_q, %l0_q_norm eps 1.000000e-06 width 32 {tp.plan = "heads"
// CHECK:      %l0_kc = tg.set_rows %l0_k_cache, %l0_kr, %pos {tp.plan = "heads"{{.*}} -> tensor<64x32xbf16>
// CHECK:      %l0_attn = tg.attention %l0_qr, %l0_kc, %l0_vc, %pos heads 2 kv_heads 1 head_dim 32 {{.*}}tp.plan = "heads"{{.*}} -> tensor<1x64xbf16>
// CHECK-NEXT: %l0_attn_1 = mesh.all_gather %l0_attn axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> reason "tg.attention (heads) leaves %l0_attn split on dim 1 over axis 0; tg.matmul (replicate) reads it replicated" cost #mesh.cost<bytes = 256, links = 1, hops = 1, ns = {{[0-9]+}}> : tensor<1x64xbf16> -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_o = tg.matmul %l0_attn_1, %l0_wo {tp.plan = "replicate", {{.*}}tp.runner_up = "row: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"}
// CHECK-NEXT: %l0_h2 = tg.add %x, %l0_o {tp.plan = "replicate", {{.*}}tp.runner_up = "none: every operand is replicated"}
// CHECK:      %l0_gate = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_up = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_act = tg.swiglu %l0_gate, %l0_up {tp.plan = "local"
// CHECK-NEXT: %l0_act_1 = mesh.all_gather %l0_act axis 0
// CHECK-NEXT: %l0_down = tg.matmul %l0_act_1, %l0_w_down {tp.plan = "replicate", {{.*}}tp.runner_up = "row: {{[0-9.]+}} us
// CHECK:      %logits = tg.matmul %final, %lm_head {tp.plan = "replicate", {{.*}}tp.runner_up = "vocab: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x512xbf16>) -> tensor<1x512xbf16>
// CHECK-NEXT: %token = tg.argmax %logits {tp.plan = "replicate", {{.*}}tp.runner_up = "none: a vocab-parallel arg-max (a local arg-max, then a gather of (value, index)) needs the winning chip's index picked from the gathered i32 vector (gather_rows reads rows of a 2-D table) and offset by chip x V / chips (tg.scale is float only; tg has no constant tensor): the arg-max reads the logits whole (docs/tensor-parallel.md#what-is-left)"}
// CHECK-NEXT: func.return %token, %l0_kc, %l0_vc : tensor<1xi32>, tensor<64x32xbf16>, tensor<64x32xbf16>
