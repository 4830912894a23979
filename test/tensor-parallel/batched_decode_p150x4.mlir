// The batched decode's cache writes and attention (3 users, a paged pool of 12 blocks of 8 rows)
// split by heads over p150x4: 4 q heads one a chip, 2 KV heads each held by 2 chips (the caches'
// mesh.repeat = 2), every user's rows on every chip; the positions and the block table address
// rows, so every chip holds them whole.
// RUN: spatial-opt %s -p 'tensor-parallel{mesh=p150x4 prefer-sharded=true}' | filecheck %s

// CHECK:      func.func @batched(%q: tensor<3x32xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(1)]>},
// CHECK-SAME: %k_cache: tensor<96x32xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(1)]>, mesh.repeat = 2 : i64}
// CHECK-SAME: %pos: tensor<3xi32> {mesh.sharding = #mesh.sharding<@p150x4, [replicate]>}
// CHECK-SAME: %table: tensor<3x4xi32> {mesh.sharding = #mesh.sharding<@p150x4, [replicate]>}
// CHECK-SAME: -> (tensor<3x32xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(1)]>}, tensor<96x32xbf16> {mesh.sharding = #mesh.sharding<@p150x4, [shard(1)]>, mesh.repeat = 2 : i64}
// CHECK:      %kc = tg.batch_set_rows %k_cache, %k, %pos, %table block_size 8 {tp.plan = "heads", tp.us = {{.*}}, tp.runner_up = "replicate: {{.*}}"} : (tensor<96x32xbf16>, tensor<3x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<96x32xbf16>
// CHECK:      %attn = tg.batch_attention %q, %kc, %vc, %pos, %table heads 1 kv_heads 1 head_dim 32 scale 0.176776707 block_size 8 {tp.plan = "heads"
// CHECK-SAME: (tensor<3x32xbf16>, tensor<96x32xbf16>, tensor<96x32xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x32xbf16>
// CHECK-NEXT: func.return %attn, %kc, %vc : tensor<3x32xbf16>, tensor<96x32xbf16>, tensor<96x32xbf16>

func.func @batched(%q: tensor<3x128xbf16>, %k: tensor<3x64xbf16>, %v: tensor<3x64xbf16>, %k_cache: tensor<96x64xbf16>, %v_cache: tensor<96x64xbf16>, %pos: tensor<3xi32>, %table: tensor<3x4xi32>) -> (tensor<3x128xbf16>, tensor<96x64xbf16>, tensor<96x64xbf16>) {
  %kc = tg.batch_set_rows %k_cache, %k, %pos, %table block_size 8 : (tensor<96x64xbf16>, tensor<3x64xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<96x64xbf16>
  %vc = tg.batch_set_rows %v_cache, %v, %pos, %table block_size 8 : (tensor<96x64xbf16>, tensor<3x64xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<96x64xbf16>
  %attn = tg.batch_attention %q, %kc, %vc, %pos, %table heads 4 kv_heads 2 head_dim 32 scale 0.176776707 block_size 8 : (tensor<3x128xbf16>, tensor<96x64xbf16>, tensor<96x64xbf16>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x128xbf16>
  func.return %attn, %kc, %vc : tensor<3x128xbf16>, tensor<96x64xbf16>, tensor<96x64xbf16>
}
