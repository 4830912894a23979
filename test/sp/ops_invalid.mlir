// The verifiers of the stream-section stages (sp/compute.py): each chunk breaks one rule and the diagnostic
// names the stage, the rule and its numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

sp.program @s op "tg.add" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.map add %x [full] -> %x valid 8x8
}
// CHECK: map add: takes 2 input(s), got 1

// -----

sp.program @s op "tg.add" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.map add_row %x, %x [full, full] -> %x valid 8x8
}
// CHECK: map add_row: reads its inputs as full, rows, not full, full

// -----

sp.program @s op "tg.scale" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.map scale %x [full] -> %x valid 8x8
}
// CHECK: map scale: needs its factor

// -----

sp.program @s op "tg.silu" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] i32 tile_bytes 4096
  sp.map silu %x [full] -> %x valid 8x8
}
// CHECK: map silu: computes on floats, not i32

// -----

sp.program @s op "tg.add" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  %y = sp.fifo "y" depth 2 page [h, w] bf16 tile_bytes 2048
  sp.map add %x, %y [full, full] -> %y valid 8x8
}
// CHECK: map add: its inputs and output hold bf16, f32; they must agree

// -----

sp.program @s op "tg.rms_norm" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.row_reduce whole rms_norm %x, %x -> %x width 128 cols 128 rows 8
}
// CHECK: row_reduce whole rms_norm: needs its eps

// -----

sp.program @s op "tg.rms_norm" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.row_reduce partial rms_norm %x -> %x width 128 cols 128 rows 8
}
// CHECK: row_reduce partial rms_norm: needs the columns of a block

// -----

sp.program @s op "tg.rms_stats" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.row_reduce whole sum_squares %x -> %x width 128 cols 128 rows 8
}
// CHECK: row_reduce whole sum_squares: sum_squares has no whole form

// -----

sp.program @s op "tg.rms_stats" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, kw] f32 tile_bytes 4096
  sp.row_reduce combine sum_squares %x -> %x width 128 cols 128 rows 8 block 64 eps 1.0e-06
}
// CHECK: row_reduce combine sum_squares: takes no eps

// -----

sp.program @s op "tg.softmax" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.row_reduce whole softmax %x, %x -> %x width 128 cols 128 rows 8
}
// CHECK: row_reduce whole softmax: takes 1 input(s), got 2

// -----

sp.program @s op "tg.rms_norm" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.row_reduce whole rms_norm %x, %x -> %x width 48 cols 128 rows 8 eps 1.0e-06
}
// CHECK: row_reduce whole rms_norm: groups of 48 do not cut 128 columns

// -----

sp.program @s op "tg.rms_norm" kind row_reduce phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] bf16 tile_bytes 2048
  sp.row_reduce partial rms_norm %x -> %x width 128 cols 128 rows 8 block 32
}
// CHECK: row_reduce partial rms_norm: pushes f32 statistics, not bf16

// -----

sp.program @r op "tg.rope" kind rope phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  sp.rope neox %x, %x, %x -> %x head_dim 33 valid 8x8
}
// CHECK: rope: head_dim 33 must be even

// -----

sp.program @a op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q -> %q acc %dst state %o, %o heads 6 kv_heads 4 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0
}
// CHECK: attention: heads 6 must be a positive multiple of kv_heads 4

// -----

sp.program @a op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [h, kw] bf16
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q -> %q acc %dst state %o, %o heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0
}
// CHECK: attention: the scores accumulate in an f32 sp.acc

// -----

sp.program @a op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q pos %q -> %q acc %dst state %o, %o heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0
}
// CHECK: attention: the position page holds i32

// -----

sp.program @a op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %p = sp.fifo "p" depth 2 page [sh, sw] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q -> %p acc %dst state %o, %o heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0 splits 2
}
// CHECK: attention: splits 2 needs a positive count and one query row or users (queries 8)

// -----

// splits by users cut the users whole: 3 splits of 8 users do not
sp.program @a op "tg.batch_attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %pos = sp.fifo "pos" depth 2 page [1, 1] i32 tile_bytes 4096
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q pos %pos -> %q acc %dst state %o, %o heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 128 scale 1.0 causal splits 3 users 8 capacity 16 by_users
}
// CHECK: attention: by_users: 3 splits, 8 users

// -----

sp.program @a op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %q, %q -> %q acc %dst state %o, %o heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 1 keys 64 scale 1.0 splits 2
}
// CHECK: attention: a split pushes f32 partials

// -----

sp.program @y op "tg.attention" kind attention_combine phase linked tile 32x32 {
  %parts = sp.fifo "parts" depth 2 page [1, w] bf16 tile_bytes 2048
  %o = sp.interm "o" depth 1 page [1, w] f32 tile_bytes 4096
  sp.attention_combine %parts -> %parts state %o splits 4
}
// CHECK: attention_combine: pops f32 partials

// -----

sp.program @m op "tg.argmax" kind argmax phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [1, kw] f32 tile_bytes 4096
  %o = sp.interm "o" depth 1 page [1, 2] f32 tile_bytes 4096
  sp.argmax %x -> %x state %o cols 100 rows 8
}
// CHECK: argmax: pushes i32 indices

// -----

sp.program @g op "tg.gather_rows" kind gather phase linked tile 32x32 {
  sp.tensor @table : tensor<512x128xbf16> tiles 16x4 input rows
  sp.tensor @ids : tensor<8xf32> tiles 1x1 input rows
  %rows = sp.fifo "rows" depth 2 page [1, w] bf16 tile_bytes 2048
  sp.gather @table by @ids[r0, c0] x [1, w] count 8 -> %rows
}
// CHECK: gather @table -> rows: @ids is tensor<8xf32>, not an i32 vector

// -----

// the gather of users' paged caches: one block table row per user (48 rows / capacity 16 = 3)
sp.program @g op "tg.batch_attention" kind gather phase linked tile 32x32 {
  sp.tensor @pool : tensor<64x32xf32> tiles 2x1 input tiled
  sp.tensor @pos : tensor<3xi32> tiles 1x1 input rows
  sp.tensor @table : tensor<2x4xi32> tiles 1x1 input rows
  %out = sp.fifo "out" depth 2 page [1, w] f32 tile_bytes 4096
  sp.gather @pool by @pos[r0, c0] x [1, w] count 48 table @table block_size 4 capacity 16 tokens 1 -> %out
}
// CHECK: gather @pool -> out: block table @table is tensor<2x4xi32>, not 3 rows of i32 block ids (one per user)

// -----

sp.program @g op "tg.batch_attention" kind gather phase linked tile 32x32 {
  sp.tensor @pool : tensor<64x32xf32> tiles 2x1 input tiled
  sp.tensor @pos : tensor<3xi32> tiles 1x1 input rows
  sp.tensor @table : tensor<3x4xi32> tiles 1x1 input rows
  %out = sp.fifo "out" depth 2 page [1, w] f32 tile_bytes 4096
  sp.gather @pool by @pos[r0, c0] x [1, w] count 48 table @table block_size 5 capacity 16 tokens 1 -> %out
}
// CHECK: gather: capacity 16 must divide count 48, block_size 5 divide capacity 16, and tokens 1 lie in [1, 16]

// -----

sp.program @g op "tg.set_rows" kind scatter phase linked tile 32x32 {
  sp.tensor @cache : tensor<64x64xbf16> tiles 2x2 input tiled
  sp.tensor @pos : tensor<1xi32> tiles 1x1 input rows
  %rows = sp.fifo "rows" depth 2 page [1, w] bf16 tile_bytes 2048
  sp.scatter %rows -> @cache at @pos[r0, c0] x [1, w] count 8
}
// CHECK: scatter rows -> @cache: writes @cache, an input of the section

// -----

sp.program @g op "tg.set_rows" kind scatter phase linked tile 32x32 {
  sp.tensor @cache : tensor<64x64xf32> tiles 2x2 output tiled
  sp.tensor @pos : tensor<1xi32> tiles 1x1 input rows
  %rows = sp.fifo "rows" depth 2 page [1, w] bf16 tile_bytes 2048
  sp.scatter %rows -> @cache at @pos[r0, c0] x [1, w] count 8
}
// CHECK: scatter rows -> @cache: @cache holds f32 stored as f32 but buffer rows holds bf16 stored as bf16

// -----

sp.program @r op "tg.moe" kind route phase linked tile 32x32 {
  %in0 = sp.fifo "in0" depth 1 page [h, kw] f32 tile_bytes 4096
  %first = sp.fifo "first" depth 2 page [1, 1] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [h, 1] f32 tile_bytes 4096
  sp.route %in0 first %first -> %out top_k 2 scores "softmax" pick "weight" at 0 cols 4 rows 1 held 2
}
// CHECK: route weight 0: reads its first expert as i32

// -----

sp.program @r op "tg.moe" kind route phase linked tile 32x32 {
  %in0 = sp.fifo "in0" depth 1 page [h, kw] f32 tile_bytes 4096
  %first = sp.fifo "first" depth 2 page [1, 1] i32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [h, 1] f32 tile_bytes 4096
  sp.route %in0 first %first -> %out top_k 2 scores "softmax" pick "expert" at 2 cols 4 rows 1 held 2
}
// CHECK: route expert 2: at 2 outside [0, 2)

// -----

sp.program @r op "tg.moe" kind route phase linked tile 32x32 {
  %in0 = sp.fifo "in0" depth 1 page [h, kw] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [h, 1] f32 tile_bytes 4096
  sp.route %in0 -> %out top_k 2 scores "softmax" pick "weight" at 0 cols 4 rows 1 held 2
}
// CHECK: route weight 0: `first` and `held` come together
