// The tensor-parallel decision on the tiny decode step over an N300 (2 chips): the Megatron
// pairs (QKV and FF1/FF3 column, WO and FF2 row), heads per chip (4 q heads and 2 KV heads: 2
// and 1 a chip), one all_reduce before each residual add, the LM head vocab-parallel with its
// logits gathered for a replicated arg-max; every argument and result carries its sharding.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s
// Running it twice changes nothing.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' > %t.once
// RUN: spatial-opt %t.once -p 'tensor-parallel{mesh=n300}' | diff - %t.once

// CHECK:      mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// CHECK-NEXT: func.func @tiny_step(%ids: tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %l0_wq: tensor<128x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %l0_wo: tensor<64x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>}
// CHECK-SAME: %l0_w_down: tensor<128x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>}
// CHECK-SAME: %l0_k_cache: tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %lm_head: tensor<128x256xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: -> (tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}, tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}, tensor<64x32xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>})
// CHECK-SAME: attributes {mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): {{[0-9.]+}} us per chip, priced"}
// CHECK:      %l0_h = tg.rms_norm {{.*}}tp.plan = "replicate"{{.*}}tp.runner_up = "none: distributed rms_norm
// CHECK:      %l0_q = tg.matmul %l0_h, %l0_wq {tp.plan = "column", tp.us = {{.*}}, tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x64xbf16>) -> tensor<1x64xbf16>
// CHECK:      %l0_k = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x32xbf16>
// CHECK:      %l0_v = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x32xbf16>
// CHECK:      %l0_qn = tg.rms_norm %l0_q, %l0_q_norm eps 1.000000e-06 width 32 {tp.plan = "heads"
// CHECK:      %l0_kc = tg.set_rows %l0_k_cache, %l0_kr, %pos {tp.plan = "heads"{{.*}} -> tensor<64x32xbf16>
// CHECK:      %l0_attn = tg.attention %l0_qr, %l0_kc, %l0_vc, %pos heads 2 kv_heads 1 head_dim 32 {{.*}}tp.plan = "heads"{{.*}} -> tensor<1x64xbf16>
// CHECK-NEXT: %l0_o = tg.matmul %l0_attn, %l0_wo {tp.plan = "row", {{.*}}tp.runner_up = "column: {{.*}}"} : (tensor<1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_o_1 = mesh.all_reduce %l0_o axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "tg.matmul (row) leaves %l0_o a partial sum over axis 0; tg.add (replicate) reads it replicated (runner-up: reduce_scatter then all_gather, {{[0-9.]+}} us)" cost #mesh.cost<bytes = 256, links = 1, hops = 1, ns = {{[0-9]+}}> : tensor<1x128xbf16> -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_h2 = tg.add %x, %l0_o_1
// CHECK:      %l0_gate = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_up = tg.matmul {{.*}}tp.plan = "column"{{.*}} -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_act = tg.swiglu %l0_gate, %l0_up {tp.plan = "local"
// CHECK-NEXT: %l0_down = tg.matmul %l0_act, %l0_w_down {tp.plan = "row"
// CHECK-NEXT: %l0_down_1 = mesh.all_reduce %l0_down axis 0
// CHECK-NEXT: %l0_out = tg.add %l0_h2, %l0_down_1
// CHECK:      %logits = tg.matmul %final, %lm_head {tp.plan = "vocab"{{.*}} -> tensor<1x256xbf16>
// CHECK-NEXT: %logits_1 = mesh.all_gather %logits axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> reason "tg.matmul (vocab) leaves %logits split on dim 1 over axis 0; tg.argmax (replicate) reads it replicated" cost #mesh.cost<bytes = 1024, {{.*}}> : tensor<1x256xbf16> -> tensor<1x512xbf16>
// CHECK-NEXT: %token = tg.argmax %logits_1 {tp.plan = "replicate", {{.*}}tp.runner_up = "none: vocab: a local arg-max then a gather of (value, index) has no tg op; the logits are gathered and the arg-max is replicated"}
// CHECK-NEXT: func.return %token, %l0_kc, %l0_vc : tensor<1xi32>, tensor<64x32xbf16>, tensor<64x32xbf16>
// CHECK-NOT:  mesh.all_
