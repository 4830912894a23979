// tg.moe's experts plan (issue 23, "MoE experts by chip"): each chip holds E / chips whole
// experts (the stacked matrices split by rows, experts_held), the router replicated so every chip
// routes every token over all E experts and sums the chosen ones it holds; the partial sum is
// all-reduced. The plans are priced at uniform routing, and the numbers are recorded.
// The tiny MoE over p150x4, experts forced: 2 of 8 experts a chip (ffn is refused: 64 columns
// are not whole tiles over 4 chips); replicated is faster at this size, and says so.
// RUN: spatial-opt %examples/tiny_moe_decode.mlir -p 'tensor-parallel{mesh=p150x4 prefer-experts=true}' | filecheck %s
// Qwen3-30B-A3B's decode over p150x4 by price: ffn reads the token's 8 experts at a quarter of
// their width; the experts plan's busiest chip would read 3.49 of its 32 whole experts on
// average, but linked, each of the 8 slots reads a whole held block on every chip (a pick another
// chip holds at weight 0), so experts is slower than replicating and ffn is taken.
// RUN: spatial-opt %examples/qwen3_30b_a3b_decode.mlir -p 'tensor-parallel{mesh=p150x4}' | filecheck %s --check-prefix=PRICE
// Its prefill (128 tokens touch every expert): the two plans read the same bytes, and ffn is taken.
// RUN: spatial-opt %examples/qwen3_30b_a3b_prefill.mlir -p 'tensor-parallel{mesh=p150x4}' | filecheck %s --check-prefix=PREFILL
// On a galaxy (32 chips) ffn splits over the 8-chip axis alone (768 / 32 is not whole tiles), and
// experts (4 whole experts a chip) is cheaper by price: it is taken, ffn the runner-up.
// RUN: spatial-opt %examples/qwen3_30b_a3b_prefill.mlir -p 'tensor-parallel{mesh=galaxy}' | filecheck %s --check-prefix=GALAXY

// CHECK:      %l0_router: tensor<128x8xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [replicate]>}
// CHECK-SAME: %l0_experts_gate: tensor<256x64xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(0)]>}
// CHECK-SAME: %l0_experts_up: tensor<256x64xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(0)]>}
// CHECK-SAME: %l0_experts_down: tensor<128x128xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(0)]>}
// CHECK:      %l0_moe = tg.moe %l0_n2, %l0_router, %l0_experts_gate, %l0_experts_up, %l0_experts_down top_k 2 scores "softmax" renormalize true experts_held 2 {tp.plan = "experts", tp.us = 1.538500e+01 : f64, tp.runner_up = "replicate: 0.197 us (faster by 15.188 us); ffn: F 64 does not split over 4 chips in whole 32-row tiles (link reads each expert's rows of w_down from a tile boundary); priced at uniform routing: 1 token(s) x 2 of 8 experts; a chip holding every expert reads 2.00, one holding 2 reads 0.50 on average and 1.14 on the busiest of 4 chips; linked, a decode step reads a block per slot (2) on every chip"}
// CHECK-NEXT: %l0_moe_1 = mesh.all_reduce %l0_moe axis 0 from #mesh.sharding<@p150x4, [partial(sum)]> to #mesh.sharding<@p150x4, [replicate]> reason "tg.moe (experts) leaves %l0_moe a partial sum over axis 0

// PRICE:      %moe = tg.moe {{.*}} {tp.plan = "ffn", tp.us = 5.321200e+01 : f64, tp.runner_up = "replicate: 148.496 us (slower by 95.284 us); priced at uniform routing: 1 token(s) x 8 of 128 experts; a chip holding every expert reads 8.00, one holding 32 reads 2.00 on average and 3.49 on the busiest of 4 chips; linked, a decode step reads a block per slot (8) on every chip"}

// PREFILL:    %moe = tg.moe {{.*}} {tp.plan = "ffn", {{.*}}tp.runner_up = "experts: {{[0-9.]+}} us (slower by 0.152 us); priced at uniform routing: 128 token(s) x 8 of 128 experts; a chip holding every expert reads 127.97, one holding 32 reads 31.99 on average and 32.00 on the busiest of 4 chips"}

// GALAXY:      %experts_gate: tensor<8192x768xbf16> {mesh.sharding = #mesh.sharding<@galaxy, [shard(0), shard(0)]>}
// GALAXY:      %moe = tg.moe {{.*}} experts_held 4 {tp.plan = "experts", tp.us = {{[0-9.e+]+}} : f64, tp.runner_up = "ffn over axis 0: 594.883 us (slower by 345.969 us); ffn: F 768 does not split over 32 chips in whole 32-row tiles (link reads each expert's rows of w_down from a tile boundary); priced at uniform routing: 128 token(s) x 8 of 128 experts; a chip holding every expert reads 127.97, one holding 4 reads 4.00 on average and 4.00 on the busiest of 32 chips"}
// GALAXY-NEXT: %moe_1 = mesh.all_reduce %moe axis 0 from #mesh.sharding<@galaxy, [partial(sum), partial(sum)]> to #mesh.sharding<@galaxy, [replicate, partial(sum)]>
// GALAXY-NEXT: %moe_2 = mesh.all_reduce %moe_1 axis 1 from #mesh.sharding<@galaxy, [replicate, partial(sum)]> to #mesh.sharding<@galaxy, [replicate, replicate]>
