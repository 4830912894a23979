// The vocab-parallel arg-max at a real model's sizes: Llama-3-8B's LM head (4096 x 128256) and its
// arg-max. Over an N300 the head splits by vocab and the arg-max gathers each chip's (value, index)
// pair (12 bytes, mesh.argmax_gather) instead of the 256 KB of logits, its runner-up; over a T3K
// (2x4) the head splits over both axes and a pick over two axes is not built, so the logits are
// gathered over the minor axis alone (a dim split over two axes keeps its major part) and picked
// over the 2-chip axis.
// RUN: spatial-opt %s -p 'tensor-parallel{mesh=n300}' | filecheck %s
// RUN: spatial-opt %s -p 'tensor-parallel{mesh=t3k}' | filecheck %s --check-prefix=T3K

// CHECK:      %lm_head: tensor<4096x64128xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>}
// CHECK-SAME: -> (tensor<1xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>})
// CHECK-SAME: split op by op: {{[0-9.]+}} us per chip with 1 collective(s), taken
// CHECK-NEXT: %logits = tg.matmul %final, %lm_head {tp.plan = "vocab"
// CHECK-NEXT: %token = mesh.argmax_gather %logits axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> reason "tg.argmax (vocab) picks each row's first maximum over the chips' columns" cost #mesh.cost<bytes = 12, links = 1, hops = 1, ns = {{[0-9]+}}> {tp.plan = "vocab", tp.us = {{.*}}, tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"} : tensor<1x64128xbf16> -> tensor<1xi32>
// CHECK-NEXT: func.return %token : tensor<1xi32>

// T3K:      %logits = tg.matmul %final, %lm_head {tp.plan = "vocab", {{.*}}tp.runner_up = "2d (K over axis 0, N over axis 1): {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"}
// T3K-NEXT: %logits_1 = mesh.all_gather %logits axis 1 from #mesh.sharding<@t3k, [shard(1), shard(1)]> to #mesh.sharding<@t3k, [shard(1), replicate]>
// T3K-NEXT: %token = mesh.argmax_gather %logits_1 axis 0 from #mesh.sharding<@t3k, [shard(1), replicate]> to #mesh.sharding<@t3k, [replicate, replicate]> {{.*}}tp.runner_up = "replicate: {{[0-9.]+}} us (slower by {{[0-9.]+}} us)"}

func.func @lm_head(%final: tensor<1x4096xbf16>, %lm_head: tensor<4096x128256xbf16>) -> tensor<1xi32> {
  %logits = tg.matmul %final, %lm_head : (tensor<1x4096xbf16>, tensor<4096x128256xbf16>) -> tensor<1x128256xbf16>
  %token = tg.argmax %logits : (tensor<1x128256xbf16>) -> tensor<1xi32>
  func.return %token : tensor<1xi32>
}
