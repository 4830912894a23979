// link of tg.attention in the flash form: one section whose work items are (query block, heads
// of one kv head) (the block of the result their columns cover, so K and V are read once for all
// of them), K and V walked in K blocks (the K loop) with
// an online softmax in f32 (the accumulator holds a block's scores; the running output and the
// running maximum and sum live in local memory), grouped-query attention in the access patterns
// of K and V, the position read at run time. The queries and the position move on the store's
// engine, K and V on the other. The decode case is kept in one section (kv-splits=1): the split
// form is test/link/flash_decoding.mlir.
// RUN: spatial-opt %s --split-input-file -p 'link{kv-splits=1}' | filecheck %s
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150 kv-splits=1}' | filecheck %s --check-prefix=PLACED

// Decode: one query row over a cache of 4096 keys; 4 heads of 64 (2 tiles) over 2 kv heads.
func.func @decode(%q: tensor<1x256xbf16>, %k: tensor<4096x128xbf16>, %v: tensor<4096x128xbf16>, %pos: tensor<1xi32>) -> tensor<1x256xbf16> {
  %o = tg.attention %q, %k, %v, %pos heads 4 kv_heads 2 head_dim 64 causal true scale 0.125 : (tensor<1x256xbf16>, tensor<4096x128xbf16>, tensor<4096x128xbf16>, tensor<1xi32>) -> tensor<1x256xbf16>
  func.return %o : tensor<1x256xbf16>
}
// CHECK-LABEL: sp.entry @decode(@q, @k, @v, @pos) -> (@o)
// CHECK-NEXT:  sp.program @o op "tg.attention" kind attention phase linked tile 32x32 attributes {attention = "flash: 4 heads over 2 kv heads, an item per (query block, heads of a kv head) serving up to 2 heads from one read of K and V, in blocks of kw tiles of keys with an online softmax in f32; first query position read at run time from @pos", kv_splits = "1: {{[0-9]+}} cycles (unsplit); forced by the kv-splits option"} {
// A single query row is the same bytes in either layout: rows. K and V are read as tiles.
// CHECK-NEXT:    sp.tensor @q : tensor<1x256xbf16> tiles 1x8 input rows
// CHECK-NEXT:    sp.tensor @k : tensor<4096x128xbf16> tiles 128x4 input tiled
// CHECK-NEXT:    sp.tensor @v : tensor<4096x128xbf16> tiles 128x4 input tiled
// CHECK-NEXT:    sp.tensor @pos : tensor<1xi32> tiles 1x1 input rows
// CHECK-NEXT:    sp.tensor @o : tensor<1x256xbf16> tiles 1x8 output rows
// CHECK-NEXT:    %q = sp.fifo "q" depth 2 page [h, w] bf16 tile_bytes 2048
// CHECK-NEXT:    %k = sp.fifo "k" depth 2 page [kw, 2] bf16 tile_bytes 2048
// CHECK-NEXT:    %v = sp.fifo "v" depth 2 page [kw, 2] bf16 tile_bytes 2048
// CHECK-NEXT:    %pos = sp.fifo "pos" depth 2 page [1, 1] i32 tile_bytes 4096
// CHECK-NEXT:    %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// CHECK-NEXT:    %dst = sp.acc "dst" page [h, kw] f32
// CHECK-NEXT:    %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
// An item covers w tiles: w / 2 heads (of 2 tiles) of one kv head, whose statistics take a tile
// each; the item at column c0 reads kv head c0 / 4 (two query heads per kv head), and the
// queries of its heads, once for all of them.
// CHECK-NEXT:    %ml = sp.interm "ml" depth 1 page [h, w floordiv 2] f32 tile_bytes 4096
// CHECK-NEXT:    sp.load @q[r0, c0] x [h, w] -> %q
// CHECK-NEXT:    sp.load @pos[0, 0] x [1, 1] -> %pos
// CHECK-NEXT:    sp.load @k[k0, c0 floordiv 4 * 2] x [kw, 2] -> %k
// CHECK-NEXT:    sp.load @v[k0, c0 floordiv 4 * 2] x [kw, 2] -> %v
// CHECK-NEXT:    sp.attention %q, %k, %v pos %pos -> %out acc %dst state %o, %ml heads 4 kv_heads 2 head_dim 64 v_head_dim 64 queries 1 keys 4096 scale 1.25e-01 causal
// CHECK-NEXT:    sp.store %out -> @o[r0 + ti, c0 + tj] x [sh, sw]
// The plan: one or both heads of a kv head an item (the cost model weighs reading K and V once
// for both against spreading the heads over more sites), the K block no wider than the f32
// dest allows with the query block (h * kw <= 4 tiles), the cache walked in 128 / kw blocks.
// PLACED-LABEL: sp.entry @decode
// PLACED:         sp.work @o block 1x{{2|4}} k 128 by {{[1-4]}}
// PLACED-NEXT:    sp.plan blocked grid 8x8 block 1x{{[1-4]}} packing operand_with_store
// PLACED:         sp.load @q[r0, c0] x [h, w] -> %q on movement 0 noc 1
// PLACED-NEXT:    sp.load @pos[0, 0] x [1, 1] -> %pos on movement 0 noc 1
// PLACED-NEXT:    sp.load @k[k0, c0 floordiv 4 * 2] x [kw, 2] -> %k on movement 1 noc 0
// PLACED-NEXT:    sp.load @v[k0, c0 floordiv 4 * 2] x [kw, 2] -> %v on movement 1 noc 0
// PLACED-NEXT:    sp.attention {{.*}} on compute
// PLACED-NEXT:    sp.store %out -> @o[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1

// -----

// Prefill: 40 query rows (2 tile rows) are tiled, as is the result; without `pos` the queries
// sit at the last 40 of the 72 keys.
func.func @prefill(%q: tensor<40x128xf32>, %k: tensor<72x64xf32>, %v: tensor<72x64xf32>) -> tensor<40x128xf32> {
  %o = tg.attention %q, %k, %v heads 2 kv_heads 1 head_dim 64 causal true scale 0.125 : (tensor<40x128xf32>, tensor<72x64xf32>, tensor<72x64xf32>) -> tensor<40x128xf32>
  func.return %o : tensor<40x128xf32>
}
// CHECK-LABEL: sp.entry @prefill(@q, @k, @v) -> (@o)
// CHECK-NEXT:  sp.program @o op "tg.attention" kind attention phase linked tile 32x32 attributes {attention = "flash: 2 heads over 1 kv heads, an item per (query block, heads of a kv head) serving up to 2 heads from one read of K and V, in blocks of kw tiles of keys with an online softmax in f32; first query position 32"} {
// CHECK-NEXT:    sp.tensor @q : tensor<40x128xf32> tiles 2x4 input tiled
// CHECK:         sp.tensor @o : tensor<40x128xf32> tiles 2x4 output tiled
// CHECK-NOT:     sp.load @pos
// CHECK:         sp.load @k[k0, 0] x [kw, 2] -> %k
// CHECK:         sp.attention %q, %k, %v -> %out acc %dst state %o, %ml heads 2 kv_heads 1 head_dim 64 v_head_dim 64 queries 40 keys 72 scale 1.25e-01 causal
