// link of the batched decode ops (docs/passes.md#link-the-batched-decode-step): the write is
// the scatter section with `tokens` (and the block table when paged); the attention is the
// flash section whose K and V loads walk the users' caches one after another and whose stage
// masks block-diagonally (`users`, `capacity`); the position page holds every user's position.
// On h100, whose kernels address DRAM by the block ids they read (kernel_reads_by_id): the paged
// attention reads the pool directly; batched_paged.mlir is the Tensix form (a gather first).
// RUN: spatial-opt %s --split-input-file -p 'link{target=h100}' | filecheck %s

func.func @paged(%q: tensor<3x64xf32>, %k: tensor<3x32xf32>, %kc: tensor<48x32xf32>, %vc: tensor<48x32xf32>, %pos: tensor<3xi32>, %table: tensor<3x4xi32>) -> (tensor<3x64xf32>, tensor<48x32xf32>) {
  %kc2 = tg.batch_set_rows %kc, %k, %pos, %table block_size 4 : (tensor<48x32xf32>, tensor<3x32xf32>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<48x32xf32>
  %o = tg.batch_attention %q, %kc2, %vc, %pos, %table heads 2 kv_heads 1 head_dim 32 scale 0.5 block_size 4 : (tensor<3x64xf32>, tensor<48x32xf32>, tensor<48x32xf32>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x64xf32>
  func.return %o, %kc2 : tensor<3x64xf32>, tensor<48x32xf32>
}
// CHECK-LABEL: sp.entry @paged(@q, @k, @kc, @vc, @pos, @table) -> (@o, @kc)
// CHECK-NEXT:  sp.program @kc op "tg.batch_set_rows" kind scatter phase linked tile 32x32 attributes {carried = "in place: @kc is the cache and its update", batch = "3 users x 1 row(s), each at its own position read from @pos (paged: blocks of 4 rows named by @table); an idle user (-1) writes nothing"} {
// CHECK:         sp.tensor @table : tensor<3x4xi32> tiles 1x1 input rows
// CHECK:         sp.load @k[r0, c0] x [1, w] -> %in0
// CHECK-NEXT:    sp.scatter %in0 -> @kc at @pos[r0, c0] x [1, w] count 3 tokens 1 table @table block_size 4
// CHECK:       sp.program @o op "tg.batch_attention" kind attention phase linked tile 32x32
// CHECK-SAME:    batch = "3 users x 1 query row(s), one K loop over the users' caches one after another (paged: blocks of 4 rows named by @table;
// CHECK-SAME:    priced at every user's full capacity
// CHECK:         %pos = sp.fifo "pos" depth 2 page [1, 1] i32
// CHECK:         sp.load @pos[0, 0] x [1, 1] -> %pos
// CHECK-NEXT:    sp.load @kc[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 table @table block_size 4 -> %k
// CHECK-NEXT:    sp.load @vc[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 table @table block_size 4 -> %v
// CHECK-NEXT:    sp.attention %q, %k, %v pos %pos -> %out acc %dst state %o, %ml heads 2 kv_heads 1 head_dim 32 v_head_dim 32 queries 3 keys 48 scale 5.0e-01 causal users 3 capacity 16

// -----

// 40 users, two tokens each, contiguous: the positions span two tiles of the page; the 80
// query rows end in a partial tile row, so every item walks every cache
func.func @contiguous(%q: tensor<80x64xbf16>, %k: tensor<80x32xbf16>, %kc: tensor<640x32xbf16>, %pos: tensor<40xi32>) -> (tensor<80x64xbf16>, tensor<640x32xbf16>) {
  %kc2 = tg.batch_set_rows %kc, %k, %pos : (tensor<640x32xbf16>, tensor<80x32xbf16>, tensor<40xi32>) -> tensor<640x32xbf16>
  %o = tg.batch_attention %q, %kc2, %kc2, %pos heads 2 kv_heads 1 head_dim 32 scale 0.5 : (tensor<80x64xbf16>, tensor<640x32xbf16>, tensor<640x32xbf16>, tensor<40xi32>) -> tensor<80x64xbf16>
  func.return %o, %kc2 : tensor<80x64xbf16>, tensor<640x32xbf16>
}
// CHECK-LABEL: sp.entry @contiguous
// CHECK:         sp.scatter %in0 -> @kc at @pos[r0, c0] x [1, w] count 80 tokens 2{{$}}
// CHECK:       sp.program @o op "tg.batch_attention"
// CHECK-SAME:    batch = "40 users x 2 query row(s), one K loop over the users' caches one after another (contiguous: 16 rows per user;
// CHECK:         %pos = sp.fifo "pos" depth 2 page [1, 2] i32
// CHECK:         sp.load @pos[0, 0] x [1, 2] -> %pos
// CHECK-NEXT:    sp.load @kc[k0, 0] x [kw, 1] users @pos capacity 16 tokens 2 -> %k
// CHECK:         sp.attention {{.*}} queries 80 keys 640 {{.*}} causal users 40 capacity 16

// -----

// 64 users, one token each: two query tile rows of 32 users, each walking only its own
// users' caches, 32 x 16 keys = 16 key tiles from key tile r0 * 16
func.func @ranged(%q: tensor<64x64xf32>, %kc: tensor<1024x32xf32>, %vc: tensor<1024x32xf32>, %pos: tensor<64xi32>) -> tensor<64x64xf32> {
  %o = tg.batch_attention %q, %kc, %vc, %pos heads 2 kv_heads 1 head_dim 32 scale 0.5 : (tensor<64x64xf32>, tensor<1024x32xf32>, tensor<1024x32xf32>, tensor<64xi32>) -> tensor<64x64xf32>
  func.return %o : tensor<64x64xf32>
}
// CHECK-LABEL: sp.entry @ranged
// CHECK:         sp.load @kc[r0 * 16 + k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 -> %k
// CHECK-NEXT:    sp.load @vc[r0 * 16 + k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 -> %v
// CHECK-NEXT:    sp.attention {{.*}} queries 64 keys 1024 {{.*}} causal users 64 capacity 16
