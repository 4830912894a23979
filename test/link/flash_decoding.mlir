// link of tg.attention with one query row: flash decoding. The number of splits of the cache's
// keys is priced by the stream cost model on the sections each count makes (the split
// partials and their log-sum-exp combine; one split is the single flash section), and recorded
// on the sections with its cycles, the runner-up and the unsplit cost. The `kv-splits` option
// forces a count; one that does not divide the key tiles is refused by name.
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// RUN: spatial-opt %s --split-input-file -p 'link{kv-splits=4}' | filecheck %s --check-prefix=FORCED
// RUN: not spatial-opt %s --split-input-file -p 'link{kv-splits=3}' 2>&1 | filecheck %s --check-prefix=BAD
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150}' | filecheck %s --check-prefix=PLACED

// Llama-3-8B's decode attention over 4096 keys: 32 heads of 128 over 8 kv heads. Splitting pays:
// sixteen items read K and V of eight kv heads, against 64 sites.
func.func @decode(%q: tensor<1x4096xbf16>, %k: tensor<4096x1024xbf16>, %v: tensor<4096x1024xbf16>, %pos: tensor<1xi32>) -> tensor<1x4096xbf16> {
  %o = tg.attention %q, %k, %v, %pos heads 32 kv_heads 8 head_dim 128 causal true scale 0.125 : (tensor<1x4096xbf16>, tensor<4096x1024xbf16>, tensor<4096x1024xbf16>, tensor<1xi32>) -> tensor<1x4096xbf16>
  func.return %o : tensor<1x4096xbf16>
}
// CHECK-LABEL: sp.entry @decode(@q, @k, @v, @pos) -> (@o)
// The split partials: split c0 / 128 (128 tiles: every head's columns) reads its 128 / P key
// tiles of the kv head of column c0 mod 128.
// CHECK-NEXT:  sp.program @o__splits op "tg.attention" kind attention phase linked tile 32x32 attributes {attention = "flash: {{.*}}; split [[P:[0-9]+]] ways, each item a split's keys", kv_splits = "[[P]]: [[TOTAL:[0-9]+]] cycles (partials [[PART:[0-9]+]] + combine [[COMB:[0-9]+]]); runner-up {{[0-9]+}}: {{[0-9]+}} cycles; unsplit {{[0-9]+}} cycles; priced at hifi4"} {
// CHECK:         sp.tensor @o__splits : tensor<2x{{[0-9]+}}xf32> tiles 1x{{[0-9]+}} scratch rows
// CHECK:         %out = sp.fifo "out" depth 2 page [sh, sw] f32 tile_bytes 4096
// CHECK:         sp.load @q[r0, c0 mod 128] x [h, w] -> %q
// CHECK-NEXT:    sp.load @pos[0, 0] x [1, 1] -> %pos
// CHECK-NEXT:    sp.load @k[c0 floordiv 128 * {{[0-9]+}} + k0, c0 mod 128 floordiv 16 * 4] x [kw, 4] -> %k
// CHECK-NEXT:    sp.load @v[c0 floordiv 128 * {{[0-9]+}} + k0, c0 mod 128 floordiv 16 * 4] x [kw, 4] -> %v
// CHECK-NEXT:    sp.attention {{.*}} queries 1 keys 4096 scale 1.25e-01 causal splits [[P]]
// CHECK-NEXT:    sp.store %out -> @o__splits[r0 + ti, c0 + tj] x [sh, sw]
// The combine: split k0's columns of the partials, one split a K step, into the result.
// CHECK:       sp.program @o op "tg.attention" kind attention_combine phase linked tile 32x32 attributes {attention = "flash decoding: merges [[P]] splits of 32 heads {{.*}}", kv_splits = "[[P]]: [[TOTAL]] cycles
// CHECK-NEXT:    sp.tensor @o__splits : tensor<2x{{[0-9]+}}xf32> tiles 1x{{[0-9]+}} input rows
// CHECK-NEXT:    sp.tensor @o : tensor<1x4096xbf16> tiles 1x128 output rows
// CHECK:         sp.load @o__splits[0, k0 * 128 + c0] x [1, w] -> %parts
// CHECK-NEXT:    sp.attention_combine %parts -> %out state %o splits [[P]]
// CHECK-NEXT:    sp.store %out -> @o[r0 + ti, c0 + tj] x [sh, sw]
// BAD: error: NotLowered: tg.attention: kv-splits=3 does not divide the cache's 128 key tiles
// FORCED-LABEL: sp.entry @decode
// FORCED:       kv_splits = "4: {{[0-9]+}} cycles (partials {{[0-9]+}} + combine {{[0-9]+}}); forced by the kv-splits option"
// FORCED:       sp.attention {{.*}} splits 4
// FORCED:       sp.attention_combine %parts -> %out state %o splits 4
// The sections tile priced are the ones link priced: their predictions add up to the recorded total.
// PLACED-LABEL: sp.entry @decode
// PLACED:       kv_splits = "[[P:[0-9]+]]: {{[0-9]+}} cycles (partials [[PART:[0-9]+]] + combine [[COMB:[0-9]+]])
// PLACED:       sp.work @o__splits block 1x{{[0-9]+}} k {{[0-9]+}} by {{[0-9]+}}
// PLACED-NEXT:  sp.plan blocked {{.*}} predicted [[PART]] bound dram
// PLACED:       sp.work @o block 1x{{[0-9]+}} k [[P]] by 1
// PLACED-NEXT:  sp.plan blocked {{.*}} packing split predicted [[COMB]]

// -----

// A short cache (4 key tiles) over few heads: the combine's extra section costs more than
// splitting four key tiles saves, so one flash section stays (the reason says by how much).
func.func @short(%q: tensor<1x128xbf16>, %k: tensor<128x64xbf16>, %v: tensor<128x64xbf16>, %pos: tensor<1xi32>) -> tensor<1x128xbf16> {
  %o = tg.attention %q, %k, %v, %pos heads 4 kv_heads 2 head_dim 32 causal true scale 0.125 : (tensor<1x128xbf16>, tensor<128x64xbf16>, tensor<128x64xbf16>, tensor<1xi32>) -> tensor<1x128xbf16>
  func.return %o : tensor<1x128xbf16>
}
// CHECK-LABEL: sp.entry @short
// CHECK-NEXT:  sp.program @o op "tg.attention" kind attention phase linked tile 32x32 attributes {attention = "flash: {{[^"]*}} from @pos", kv_splits = "1: {{[0-9]+}} cycles (unsplit); runner-up {{[24]}}: {{[0-9]+}} cycles; priced at hifi4"} {
// CHECK-NOT:   splits
// CHECK:       sp.attention {{.*}} causal{{$}}
// CHECK-NOT:   sp.attention_combine
// BAD: error: NotLowered: tg.attention: kv-splits=3 does not divide the cache's 4 key tiles

// -----

// Several query rows (prefill) are never split: the option changes nothing.
func.func @prefill(%q: tensor<40x128xf32>, %k: tensor<72x64xf32>, %v: tensor<72x64xf32>) -> tensor<40x128xf32> {
  %o = tg.attention %q, %k, %v heads 2 kv_heads 1 head_dim 64 causal true scale 0.125 : (tensor<40x128xf32>, tensor<72x64xf32>, tensor<72x64xf32>) -> tensor<40x128xf32>
  func.return %o : tensor<40x128xf32>
}
// CHECK-LABEL: sp.entry @prefill
// CHECK-NOT:   kv_splits
// CHECK:       sp.attention {{.*}} queries 40 keys 72 scale 1.25e-01 causal{{$}}
// FORCED-LABEL: sp.entry @prefill
// FORCED-NOT:  kv_splits
// FORCED:      sp.attention {{.*}} queries 40 keys 72 scale 1.25e-01 causal{{$}}
