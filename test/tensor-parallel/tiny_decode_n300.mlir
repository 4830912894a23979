// The tensor-parallel decision on the tiny decode step over an N300 (2 chips). At d = 128 a
// collective's fixed latency outweighs any product's time: the op-by-op plan (heads per chip, QKV
// column-parallel, the attention's output and the FFN's activation gathered: 16.1 us with two
// all_gathers) costs more than running every op replicated on each chip (1.7 us, no collective),
// and the whole program fits one chip, so the deployment replicates and records the split as its
// runner-up (itself priced against the split with every norm distributed: 82.7 us, six more
// collectives); each op still records its best sharded plan. (tiny_decode_n300_sharded.mlir
// forces the split with prefer-sharded=true; llama3_8b_decode_n300.mlir shows the Megatron pairs at a
// real model's sizes.) Every argument and result carries its sharding.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s
// Replication is a plan only where the whole program fits one chip's DRAM (dram-mem: link's option).
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300 dram-mem=100KB}' | filecheck %s --check-prefix=DRAM
// DRAM: mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): split op by op: 16.067 us per chip with 2 collective(s) (against distributed norms: 82.610 us per chip with 8 collective(s), slower by 66.542 us), taken (runner-up: every op replicated: the whole program (0.6 MB) does not fit one chip's DRAM (0.1 MB))"
// Running it twice changes nothing.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300}' > %t.once
// RUN: spatial-opt %t.once -p 'tensor-parallel{mesh=n300}' | diff - %t.once

// CHECK:      mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// CHECK-NEXT: func.func @tiny_step(%ids: tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %l0_wq: tensor<128x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %l0_k_cache: tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: %lm_head: tensor<128x512xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}
// CHECK-SAME: -> (tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}, tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}, tensor<64x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>})
// CHECK-SAME: attributes {mesh.deployment = "tensor-parallel over n300 (2 wormhole_n150 chips, 2 in a line of 1 link): every op replicated: 1.594 us per chip, taken (runner-up: split op by op: 16.067 us per chip with 2 collective(s) (against distributed norms: 82.610 us per chip with 8 collective(s), slower by 66.542 us), slower by 14.473 us)"}
// CHECK:      %l0_q = tg.matmul %l0_h, %l0_wq {tp.plan = "replicate", tp.us = {{.*}}, tp.runner_up = "column: {{[0-9.]+}} us (faster by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x128xbf16>) -> tensor<1x128xbf16>
// CHECK:      %l0_attn = tg.attention {{.*}}heads 4 kv_heads 2 head_dim 32 {{.*}}tp.plan = "replicate"{{.*}} -> tensor<1x128xbf16>
// CHECK-NOT:  mesh.all_gather
// CHECK-NOT:  mesh.all_reduce
// CHECK:      %logits = tg.matmul %final, %lm_head {tp.plan = "replicate", {{.*}}tp.runner_up = "vocab: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x512xbf16>) -> tensor<1x512xbf16>
// CHECK-NEXT: %token = tg.argmax %logits {tp.plan = "replicate"
// CHECK-NEXT: func.return %token, %l0_kc, %l0_vc : tensor<1xi32>, tensor<64x64xbf16>, tensor<64x64xbf16>
