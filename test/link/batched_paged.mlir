// A paged batched attention on a target whose kernels cannot address DRAM by a block id they
// read (Tensix: kernel_reads_by_id false; docs/passes.md#link-the-batched-decode-step): two
// sections, a gather of each of K's and V's pools into a contiguous users x S scratch (zero
// past each user's position), then the contiguous attention over the scratches. The pool
// (64 rows: 16 blocks of 4) is larger than the 3 users' 3 x 16 positions, so the scratch has
// the users' shape, not the pool's. On h100 the same op is one section reading the pool.
// RUN: spatial-opt %s -p 'link{target=wormhole_n150}' | filecheck %s --check-prefix=TENSIX
// RUN: spatial-opt %s -p 'link{target=h100}' | filecheck %s --check-prefix=GPU

func.func @paged(%q: tensor<3x64xf32>, %kc: tensor<64x32xf32>, %vc: tensor<64x32xf32>, %pos: tensor<3xi32>, %table: tensor<3x4xi32>) -> tensor<3x64xf32> {
  %o = tg.batch_attention %q, %kc, %vc, %pos, %table heads 2 kv_heads 1 head_dim 32 scale 0.5 block_size 4 : (tensor<3x64xf32>, tensor<64x32xf32>, tensor<64x32xf32>, tensor<3xi32>, tensor<3x4xi32>) -> tensor<3x64xf32>
  func.return %o : tensor<3x64xf32>
}
// TENSIX-LABEL: sp.entry @paged(@q, @kc, @vc, @pos, @table) -> (@o)
// TENSIX-NEXT:  sp.program @kc__users op "tg.batch_attention" kind gather phase linked tile 32x32
// TENSIX-SAME:    batch = "3 users' caches copied from the pool @kc (blocks of 4 rows named by @table) to 16 contiguous rows each, zero past each user's position: the attention's kernels cannot address DRAM by a block id they read (wormhole_n150: kernel_reads_by_id false)"
// TENSIX-NEXT:    sp.tensor @kc : tensor<64x32xf32> tiles 2x1 input
// TENSIX-NEXT:    sp.tensor @pos : tensor<3xi32> tiles 1x1 input rows
// TENSIX-NEXT:    sp.tensor @table : tensor<3x4xi32> tiles 1x1 input rows
// TENSIX-NEXT:    sp.tensor @kc__users : tensor<48x32xf32> tiles 2x1 scratch tiled
// TENSIX-NEXT:    %out = sp.fifo "out" depth 2 page [1, w] f32
// TENSIX-NEXT:    sp.gather @kc by @pos[r0, c0] x [1, w] count 48 table @table block_size 4 capacity 16 tokens 1 -> %out
// TENSIX-NEXT:    sp.store %out -> @kc__users[r0, c0] x [1, w]
// TENSIX-NEXT:  }
// TENSIX-NEXT:  sp.program @vc__users op "tg.batch_attention" kind gather
// TENSIX:         sp.gather @vc by @pos[r0, c0] x [1, w] count 48 table @table block_size 4 capacity 16 tokens 1 -> %out
// TENSIX-NEXT:    sp.store %out -> @vc__users[r0, c0] x [1, w]
// TENSIX:       sp.program @o op "tg.batch_attention" kind attention
// TENSIX-SAME:    (contiguous: the paged caches copied to @kc__users, @vc__users first;
// TENSIX-NEXT:    sp.tensor @q :
// TENSIX-NEXT:    sp.tensor @kc__users : tensor<48x32xf32> tiles 2x1 input tiled
// TENSIX-NEXT:    sp.tensor @vc__users : tensor<48x32xf32> tiles 2x1 input tiled
// TENSIX-NEXT:    sp.tensor @pos :
// TENSIX-NEXT:    sp.tensor @o :
// TENSIX:         sp.load @kc__users[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 -> %k
// TENSIX-NEXT:    sp.load @vc__users[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 -> %v
// TENSIX:         sp.attention {{.*}} queries 3 keys 48 {{.*}} causal users 3 capacity 16

// GPU-LABEL: sp.entry @paged(@q, @kc, @vc, @pos, @table) -> (@o)
// GPU-NOT:     sp.gather
// GPU:         sp.program @o op "tg.batch_attention" kind attention
// GPU-SAME:      (paged: blocks of 4 rows named by @table;
// GPU:           sp.load @kc[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 table @table block_size 4 -> %k
// GPU-NEXT:      sp.load @vc[k0, 0] x [kw, 1] users @pos capacity 16 tokens 1 table @table block_size 4 -> %v
// GPU-NOT:     sp.program
