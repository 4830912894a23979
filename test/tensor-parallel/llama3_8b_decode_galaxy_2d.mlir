// The 2-D plan on a 2-D mesh: a Llama-3-8B decode layer over Galaxy (8x4). The heads split over
// the 8-chip axis alone (4 q heads and 1 KV head a chip: 8 KV heads divide 8 chips, not 32), QKV
// column-parallel over that axis. FF1/FF3 split over all 32 chips; FF2 takes the 2d plan by price
// (tt-metal's Galaxy layout, [K/8, N/4] a chip: the activation gathered over the 4-chip axis, K
// split over the 8-chip axis and N over the 4-chip one), its runner-up the row split over all 32
// chips; its partial sum is all-reduced over the 8-chip axis alone on a quarter-wide shard, then
// gathered over the 4-chip axis for the residual add.
// RUN: spatial-opt %examples/llama3_8b_decode.mlir -p 'tensor-parallel{mesh=galaxy}' | filecheck %s

// CHECK:      %wq: tensor<4096x512xbf16> {mesh.sharding = #mesh.sharding<@galaxy, [shard(1), replicate]>}
// CHECK-SAME: %w_down: tensor<1792x1024xbf16> {mesh.sharding = #mesh.sharding<@galaxy, [shard(0), shard(1)]>}
// CHECK:      %q = tg.matmul %h, %wq {tp.plan = "column"
// CHECK:      %attn = tg.attention %qr, %kc, %vc, %pos heads 4 kv_heads 1 head_dim 128 {{.*}}tp.plan = "heads"
// CHECK:      %act = tg.swiglu %gate, %up {tp.plan = "local"
// CHECK-NEXT: %act_1 = mesh.all_gather %act axis 1 from #mesh.sharding<@galaxy, [shard(1), shard(1)]> to #mesh.sharding<@galaxy, [shard(1), replicate]> reason "tg.swiglu (local) leaves %act split on dim 1 over axes 0, 1; tg.matmul (2d) reads it split on dim 1 over axis 0"
// CHECK-NEXT: %down = tg.matmul %act_1, %w_down {tp.plan = "2d", {{.*}}tp.runner_up = "row: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : (tensor<1x1792xbf16>, tensor<1792x1024xbf16>) -> tensor<1x1024xbf16>
// CHECK-NEXT: %down_1 = mesh.all_reduce %down axis 0 from #mesh.sharding<@galaxy, [partial(sum), shard(1)]> to #mesh.sharding<@galaxy, [replicate, shard(1)]> {{.*}}cost #mesh.cost<bytes = 2048,
// CHECK-NEXT: %down_2 = mesh.all_gather %down_1 axis 1 from #mesh.sharding<@galaxy, [replicate, shard(1)]> to #mesh.sharding<@galaxy, [replicate, replicate]>
// CHECK-NEXT: %out = tg.add %h2, %down_2
