// link of tg.batch_attention: flash decoding over the users' caches. Where the U users' partials
// fit one tile's rows (U outputs, then U rows of m and l) and the target's kernels carry them
// (Target.batched_kv_splits: h100, not the TT-Lang cards), the count of splits of the caches
// laid one after another is priced as one query row's is and recorded with its runner-up.
// Where the U x T queries fit one tile row, the splits by whole users (`by_users`: a split is
// U / P users' caches, its page their results, the combine a sum) are priced beside them, on
// every target: the item space (splits x heads of a kv head) then has all G heads of a kv head
// in an item, each K and V byte read once. The `kv-splits` option forces a count, by users
// where the key splits cannot be carried, refused by name where neither form can take it.
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100}' | filecheck %s
// RUN: spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' | filecheck %s --check-prefix=TTLANG
// RUN: not spatial-opt %s --split-input-file -p 'link{target=h100 kv-splits=3}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100 kv-splits=2}' | filecheck %s --check-prefix=FORCED

// Llama-3-8B's attention for 4 users of 4096 positions each: 8 kv heads, 16 key tiles per kv
// head and user, against 132 SMs.
func.func @batch(%q: tensor<4x4096xbf16>, %k: tensor<16384x1024xbf16>, %v: tensor<16384x1024xbf16>, %pos: tensor<4xi32>) -> tensor<4x4096xbf16> {
  %o = tg.batch_attention %q, %k, %v, %pos heads 32 kv_heads 8 head_dim 128 scale 0.125 : (tensor<4x4096xbf16>, tensor<16384x1024xbf16>, tensor<16384x1024xbf16>, tensor<4xi32>) -> tensor<4x4096xbf16>
  func.return %o : tensor<4x4096xbf16>
}
// CHECK-LABEL: sp.entry @batch(@q, @k, @v, @pos) -> (@o)
// The partials: 4 rows of outputs and 4 of statistics, split c0 / 128 reading its key tiles of
// the caches one after another.
// CHECK-NEXT:  sp.program @o__splits op "tg.batch_attention" kind attention phase linked tile 32x32 attributes {attention = "flash: {{.*}}; split [[P:[0-9]+]] ways, each item a split's keys", kv_splits = "[[P]]: [[TOTAL:[0-9]+]] cycles (partials {{[0-9]+}} + combine {{[0-9]+}}); runner-up {{[0-9]+}}: {{[0-9]+}} cycles; unsplit {{[0-9]+}} cycles; priced at hifi4", batch = "4 users x 1 query row(s), {{.*}}"} {
// CHECK:         sp.tensor @o__splits : tensor<8x{{[0-9]+}}xf32> tiles 1x{{[0-9]+}} scratch rows
// CHECK:         sp.load @k[c0 floordiv 128 * {{[0-9]+}} + k0, {{.*}}] x [kw, 4] users @pos capacity 4096 tokens 1 -> %k
// CHECK:         sp.attention {{.*}} queries 4 keys 16384 scale 1.25e-01 causal splits [[P]] users 4 capacity 4096
// CHECK:       sp.program @o op "tg.batch_attention" kind attention_combine phase linked tile 32x32 attributes {attention = "flash decoding: merges [[P]] splits of 32 heads {{.*}}", kv_splits = "[[P]]: [[TOTAL]] cycles
// CHECK:         sp.attention_combine %parts -> %out state %o splits [[P]] rows 4

// A TT-Lang card prints one query row's partials only: the key splits are not priced there; the
// splits by users are (a split's page is its users' results, in the result's type), and chosen.
// TTLANG-LABEL: sp.entry @batch
// TTLANG-NEXT:  sp.program @o__splits op "tg.batch_attention" kind attention phase linked tile 32x32 attributes {attention = "flash: {{.*}}; split [[P:[0-9]+]] ways, each item a split's keys (whole users' caches, each K and V byte read once)", kv_splits = "[[P]] by users: {{[0-9]+}} cycles (partials {{[0-9]+}} + combine {{[0-9]+}}); runner-up {{[0-9]+}} by users: {{[0-9]+}} cycles; unsplit {{[0-9]+}} cycles; priced at hifi4"
// TTLANG:         sp.tensor @o__splits : tensor<4x{{[0-9]+}}xbf16> tiles 1x{{[0-9]+}} scratch rows
// TTLANG:         sp.load @k[c0 floordiv {{[0-9]+}} * {{[0-9]+}} + k0, {{.*}}] x [kw, 4] users @pos capacity 4096 tokens 1 -> %k
// TTLANG:         sp.attention {{.*}} queries 4 keys 16384 scale 1.25e-01 causal splits [[P]] users 4 capacity 4096 by_users
// TTLANG:       sp.program @o op "tg.batch_attention" kind attention_combine phase linked tile 32x32 attributes {attention = "flash decoding: adds [[P]] splits by users of 32 heads
// TTLANG:         sp.attention_combine %parts -> %out state %o splits [[P]] rows 4 sum

// -----

// 32 users: 64 rows of partials, past one tile's page: the key splits are not priced, the splits
// by users are (their pages hold the 32 rows' results only).
func.func @many(%q: tensor<32x64xf32>, %k: tensor<2048x32xf32>, %v: tensor<2048x32xf32>, %pos: tensor<32xi32>) -> tensor<32x64xf32> {
  %o = tg.batch_attention %q, %k, %v, %pos heads 2 kv_heads 1 head_dim 32 scale 0.5 : (tensor<32x64xf32>, tensor<2048x32xf32>, tensor<2048x32xf32>, tensor<32xi32>) -> tensor<32x64xf32>
  func.return %o : tensor<32x64xf32>
}
// CHECK-LABEL: sp.entry @many
// CHECK-NEXT:  sp.program @o__splits op "tg.batch_attention" kind attention phase linked tile 32x32 attributes {attention = "flash: {{.*}}", kv_splits = "[[Q:[0-9]+]] by users: {{.*}}; runner-up {{[0-9]+}} by users: {{.*}}"
// CHECK:         sp.tensor @o__splits : tensor<32x{{[0-9]+}}xf32> tiles 1x{{[0-9]+}} scratch rows
// CHECK:         sp.attention {{.*}} splits [[Q]] users 32 capacity 64 by_users
// CHECK:         sp.attention_combine %parts -> %out state %o splits [[Q]] rows 32 sum
// FORCED-LABEL: sp.entry @many
// FORCED-NEXT:  sp.program @o__splits op "tg.batch_attention" kind attention {{.*}}kv_splits = "2 by users; forced by the kv-splits option"
// FORCED:         sp.attention {{.*}} splits 2 users 32 capacity 64 by_users
// BAD: error: NotLowered: tg.batch_attention: kv-splits=3 splits partials of 32 query rows and their statistics (64 rows), past a tile's 32
