// prefer-sharded=true: the tiny decode step keeps every split that can run (the Megatron layout
// at any size), so a tiny program exercises what a real model's deployment does: WO and FF2 by
// rows, one all_reduce before each residual add, the LM head by vocab and its arg-max a gather of
// each chip's (value, index) instead of the logits (mesh.argmax_gather).
// Each runner-up still carries its price, here the cheaper replicated plan it was preferred to.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300 prefer-sharded=true}' | filecheck %s

// CHECK:      %l0_o = tg.matmul %l0_attn, %l0_wo {tp.plan = "row", {{.*}}tp.runner_up = "column: {{[0-9.]+}} us (as fast, with 2 collectives)"} : (tensor<1x64xbf16>, tensor<64x128xbf16>) -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_o_1 = mesh.all_reduce %l0_o axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "tg.matmul (row) leaves %l0_o a partial sum over axis 0; tg.add (replicate) reads it replicated (runner-up: reduce_scatter then all_gather, {{[0-9.]+}} us)" cost #mesh.cost<bytes = 256, links = 1, hops = 1, ns = {{[0-9]+}}> : tensor<1x128xbf16> -> tensor<1x128xbf16>
// CHECK-NEXT: %l0_h2 = tg.add %x, %l0_o_1
// CHECK:      %l0_down = tg.matmul %l0_act, %l0_w_down {tp.plan = "row"
// CHECK-NEXT: %l0_down_1 = mesh.all_reduce %l0_down axis 0
// CHECK-NEXT: %l0_out = tg.add %l0_h2, %l0_down_1
// CHECK:      %logits = tg.matmul %final, %lm_head {tp.plan = "vocab", {{.*}}tp.runner_up = "replicate: {{[0-9.]+}} us (faster by {{[0-9.]+}} us)"} : (tensor<1x128xbf16>, tensor<128x256xbf16>) -> tensor<1x256xbf16>
// CHECK-NEXT: %token = mesh.argmax_gather %logits axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> reason "tg.argmax (vocab) picks each row's first maximum over the chips' columns" cost #mesh.cost<bytes = 12, {{.*}}> {tp.plan = "vocab", {{.*}}tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : tensor<1x256xbf16> -> tensor<1xi32>
// CHECK-NEXT: func.return %token
