// The Megatron pairs at a real model's sizes: a Llama-3-8B decode layer over an N300. QKV and
// FF1/FF3 column-parallel, the heads split (16 q heads and 4 KV heads a chip), WO and FF2
// row-parallel, one all_reduce before each residual add, its runner-up (a reduce_scatter then an
// all_gather) priced in its reason. WO's row split ties with gathering around a column split (an
// all_reduce is priced as two all_gathers); the tie goes to fewer collectives.
// RUN: spatial-opt %examples/llama3_8b_decode.mlir -p 'tensor-parallel{mesh=n300}' | filecheck %s

// CHECK:      %wq: tensor<4096x2048xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: %wo: tensor<2048x4096xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>}
// CHECK-SAME: %w_down: tensor<7168x4096xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(0)]>}
// CHECK:      %q = tg.matmul %h, %wq {tp.plan = "column"
// CHECK:      %k = tg.matmul %h, %wk {tp.plan = "column"
// CHECK:      %v = tg.matmul %h, %wv {tp.plan = "column"
// CHECK:      %attn = tg.attention %qr, %kc, %vc, %pos heads 16 kv_heads 4 head_dim 128 {{.*}}tp.plan = "heads"
// CHECK-NEXT: %o = tg.matmul %attn, %wo {tp.plan = "row", {{.*}}tp.runner_up = "column: {{[0-9.]+}} us (as fast, with 2 collectives)"} : (tensor<1x2048xbf16>, tensor<2048x4096xbf16>) -> tensor<1x4096xbf16>
// CHECK-NEXT: %o_1 = mesh.all_reduce %o axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "tg.matmul (row) leaves %o a partial sum over axis 0; tg.add (replicate) reads it replicated (runner-up: reduce_scatter then all_gather, {{[0-9.]+}} us)" cost #mesh.cost<bytes = 8192, links = 1, hops = 1, ns = {{[0-9]+}}>
// CHECK-NEXT: %h2 = tg.add %x, %o_1
// CHECK:      %gate = tg.matmul %n2, %w_gate {tp.plan = "column"
// CHECK-NEXT: %up = tg.matmul %n2, %w_up {tp.plan = "column"
// CHECK-NEXT: %act = tg.swiglu %gate, %up {tp.plan = "local"
// CHECK-NEXT: %down = tg.matmul %act, %w_down {tp.plan = "row", {{.*}}tp.runner_up = "column: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"}
// CHECK-NEXT: %down_1 = mesh.all_reduce %down axis 0
// CHECK-NEXT: %out = tg.add %h2, %down_1
// CHECK-NOT:  mesh.all_gather
