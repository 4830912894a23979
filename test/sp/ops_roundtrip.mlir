// The stages of the stream sections (sp/compute.py) in their custom form: the round trip
// (custom -> generic -> custom) prints each one back unchanged.
// RUN: %roundtrip
// RUN: %generic_roundtrip

// A map over a matrix with a row-broadcast operand, a placed and sized section.
sp.entry @f(@a, @b) -> (@y)
sp.program @y op "tg.add" kind map phase sized tile 32x32 {
  sp.tensor @a : tensor<8x128xbf16> tiles 1x4 input tiled
  sp.tensor @b : tensor<1x128xbf16> tiles 1x4 input rows
  sp.tensor @y : tensor<8x128xbf16> tiles 1x4 output tiled
  sp.work @y block 1x2 k 1 by 1
  sp.plan blocked grid 8x8 block 1x1 packing split predicted 900 bound dram runner_up "block 1x1 sub_block 1x1 k_block 1" 950
  sp.mesh 8x8 movement 2 nocs 2 local 1395424
  sp.sites [0, 0]x[0, 1] first y count 1 block 1x2 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 16384}
  %in0 = sp.fifo "in0" depth 2 page [h, w] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [1, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  sp.load @a[r0, c0] x [h, w] -> %in0 on movement 1 noc 0
  sp.load @b[0, c0] x [1, w] -> %in1 on movement 1 noc 0
  sp.map add_row %in0, %in1 [full, rows] -> %out valid 8x128 on compute
  sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK:      sp.load @b[0, c0] x [1, w] -> %in1 on movement 1 noc 0
// CHECK-NEXT: sp.map add_row %in0, %in1 [full, rows] -> %out valid 8x128 on compute
// CHECK-NEXT: sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// CHECK-GENERIC: "sp.entry"() <{function = "f", inputs = ["a", "b"], outputs = ["y"]}> : () -> ()
// CHECK-GENERIC: "sp.program"() <{sym_name = "y", op = "tg.add", kind = #sp<section_kind map>, phase = #sp<phase sized>, tile = #sp.pair<32x32>}> ({
// CHECK-GENERIC: "sp.tensor"() <{sym_name = "a", type = tensor<8x128xbf16>, tiles = #sp.pair<1x4>, role = #sp<role input>, layout = #sp<layout tiled>}> : () -> ()
// CHECK-GENERIC: "sp.work"() <{tensor = @y, block = #sp.pair<1x2>, k_tiles = 1 : i64, k_block = 1 : i64}> : () -> ()
// CHECK-GENERIC: "sp.plan"() <{kind = #sp<plan_kind blocked>, grid = #sp.pair<8x8>, sub_block = #sp.pair<1x1>, packing = #sp<packing split>, predicted_cycles = 900 : i64, bound = #sp<bound dram>, runner_up = "block 1x1 sub_block 1x1 k_block 1", runner_up_cycles = 950 : i64}> : () -> ()
// CHECK-GENERIC: "sp.mesh"() <{size = #sp.pair<8x8>, movement_engines = 2 : i64, nocs = 2 : i64, local_mem = 1395424 : i64}> : () -> ()
// CHECK-GENERIC: "sp.sites"() <{rect = #sp.rect<[0, 0]x[0, 1]>, first = affine_map<(d0, d1) -> (d1)>, count = 1 : i64, block = #sp.pair<1x2>, sub_block = #sp.pair<1x1>, memory = {in0 = 0 : i64, in1 = 8192 : i64, out = 16384 : i64}}> : () -> ()
// CHECK-GENERIC: %in0 = "sp.fifo"() <{label = "in0", depth = #sp.sizes<[2]>, page = #sp.sizes<[h, w]>, elt = bf16, tile_bytes = 2048 : i64}> : () -> !sp.buffer
// CHECK-GENERIC: "sp.load"(%in0) <{tensor = @a, access = #sp.access<[r0, c0] x [h, w]>, engine = #sp.engine<movement 1 noc 0>}> : (!sp.buffer) -> ()
// CHECK-GENERIC: "sp.map"(%in0, %in1, %out) <{kind = #sp<map_kind add_row>, modes = [#sp<mode full>, #sp<mode rows>], valid = #sp.pair<8x128>, engine = #sp.engine<compute>}> : (!sp.buffer, !sp.buffer, !sp.buffer) -> ()
// CHECK-GENERIC: "sp.store"(%out) <{tensor = @y, access = #sp.access<[r0 + ti, c0 + tj] x [sh, sw]>, engine = #sp.engine<movement 0 noc 1>}> : (!sp.buffer) -> ()
// -----

// Every other stage, linked (no engines yet): maps with a scalar, a group and a transposed
// operand, the three forms of a row reduction, rope, flash attention, arg-max, gather, scatter.
sp.program @s op "tg.scale" kind map phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [h, w] f32 tile_bytes 4096
  %xt = sp.fifo "xt" depth 2 page [w, h] f32 tile_bytes 4096
  %st = sp.fifo "st" depth 2 page [h, 1] f32 tile_bytes 4096
  %wt = sp.fifo "wt" depth 2 page [1, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [sh, sw] f32 tile_bytes 4096
  sp.map scale %x [full] -> %out valid 40x72 scalar 5.0e-01
  sp.map transpose %xt [transposed] -> %out valid 72x40
  sp.map rms_apply %x, %st, %wt [full, cols, rows] -> %out valid 8x256 group 4
  sp.row_reduce whole rms_norm %x, %x, %wt -> %out width 128 cols 128 rows 8 eps 1.0e-06
  sp.row_reduce partial layer_norm %x -> %st width 300 cols 300 rows 8 block 128
  sp.row_reduce combine softmax %x -> %st width 300 cols 300 rows 8 block 128
  sp.rope interleaved %x, %st, %st -> %out head_dim 64 valid 8x256
}
// CHECK-LABEL: sp.program @s op "tg.scale" kind map phase linked tile 32x32 {
// CHECK:         sp.map scale %x [full] -> %out valid 40x72 scalar 5.0e-01
// CHECK-NEXT:    sp.map transpose %xt [transposed] -> %out valid 72x40
// CHECK-NEXT:    sp.map rms_apply %x, %st, %wt [full, cols, rows] -> %out valid 8x256 group 4
// CHECK-NEXT:    sp.row_reduce whole rms_norm %x, %x, %wt -> %out width 128 cols 128 rows 8 eps 1.0e-06
// CHECK-NEXT:    sp.row_reduce partial layer_norm %x -> %st width 300 cols 300 rows 8 block 128
// CHECK-NEXT:    sp.row_reduce combine softmax %x -> %st width 300 cols 300 rows 8 block 128
// CHECK-NEXT:    sp.rope interleaved %x, %st, %st -> %out head_dim 64 valid 8x256
// CHECK-GENERIC: "sp.row_reduce"(%x, %x, %wt, %out) <{form = #sp<row_form whole>, kind = #sp<row_kind rms_norm>, width = 128 : i64, cols = 128 : i64, rows = 8 : i64, eps = 1.000000e-06 : f32}> : (!sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer) -> ()
// CHECK-GENERIC: "sp.rope"(%x, %st, %st, %out) <{kind = #sp<rope_style interleaved>, head_dim = 64 : i64, valid = #sp.pair<8x256>}> : (!sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer) -> ()
// -----

sp.program @attn op "tg.attention" kind attention phase linked tile 32x32 {
  sp.tensor @ids : tensor<8xi32> tiles 1x1 input rows
  sp.tensor @table : tensor<512x128xbf16> tiles 16x4 input rows
  sp.tensor @cache : tensor<64x64xbf16> tiles 2x2 output tiled
  %q = sp.fifo "q" depth 2 page [h, 1] bf16 tile_bytes 2048
  %k = sp.fifo "k" depth 2 page [kw, 1] bf16 tile_bytes 2048
  %v = sp.fifo "v" depth 2 page [kw, 1] bf16 tile_bytes 2048
  %pos = sp.fifo "pos" depth 2 page [1, 1] i32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  %ml = sp.interm "ml" depth 1 page [h, 1] f32 tile_bytes 4096
  %idx = sp.fifo "idx" depth 2 page [1, 1] i32 tile_bytes 4096
  %rows = sp.fifo "rows" depth 2 page [1, w] bf16 tile_bytes 2048
  sp.attention %q, %k, %v pos %pos -> %out acc %dst state %o, %ml heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.7677669e-01 causal
  sp.attention %q, %k, %v -> %out acc %dst state %o, %ml heads 4 kv_heads 4 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0e+00
  sp.argmax %q -> %idx state %o cols 512 rows 8
  sp.gather @table by @ids[r0, c0] x [1, w] count 8 -> %rows
  sp.scatter %rows -> @cache at @ids[r0, c0] x [1, w] count 8
}
// CHECK-LABEL: sp.program @attn op "tg.attention"
// CHECK:         sp.attention %q, %k, %v pos %pos -> %out acc %dst state %o, %ml heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.7677669e-01 causal
// CHECK-NEXT:    sp.attention %q, %k, %v -> %out acc %dst state %o, %ml heads 4 kv_heads 4 head_dim 32 v_head_dim 32 queries 8 keys 64 scale 1.0e+00
// CHECK-NEXT:    sp.argmax %q -> %idx state %o cols 512 rows 8
// CHECK-NEXT:    sp.gather @table by @ids[r0, c0] x [1, w] count 8 -> %rows
// CHECK-NEXT:    sp.scatter %rows -> @cache at @ids[r0, c0] x [1, w] count 8
// CHECK-GENERIC: %dst = "sp.acc"() <{label = "dst", page = #sp.sizes<[h, kw]>, elt = f32}> : () -> !sp.buffer
// CHECK-GENERIC: %o = "sp.interm"() <{label = "o", depth = #sp.sizes<[1]>, page = #sp.sizes<[h, w]>, elt = f32, tile_bytes = 4096 : i64}> : () -> !sp.buffer
// CHECK-GENERIC: "sp.attention"(%q, %k, %v, %pos, %out, %dst, %o, %ml) <{heads = 4 : i64, kv_heads = 2 : i64, head_dim = 32 : i64, v_head_dim = 32 : i64, queries = 8 : i64, keys = 64 : i64, scale = 0.176776692 : f32, causal, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 1, 1>}> : (!sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer) -> ()
// CHECK-GENERIC: "sp.argmax"(%q, %idx, %o) <{cols = 512 : i64, rows = 8 : i64}> : (!sp.buffer, !sp.buffer, !sp.buffer) -> ()
// CHECK-GENERIC: "sp.gather"(%rows) <{tensor = @table, index = @ids, access = #sp.access<[r0, c0] x [1, w]>, count = 8 : i64}> : (!sp.buffer) -> ()
// CHECK-GENERIC: "sp.scatter"(%rows) <{tensor = @cache, index = @ids, access = #sp.access<[r0, c0] x [1, w]>, count = 8 : i64}> : (!sp.buffer) -> ()

// -----

// Flash decoding: the split form of an attention (it pushes f32 partials) and the combine that
// merges them (docs/sp.md).
sp.program @parts op "tg.attention" kind attention phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [h, w] bf16 tile_bytes 2048
  %k = sp.fifo "k" depth 2 page [kw, 1] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth 2 page [sh, sw] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [h, kw] f32
  %o = sp.interm "o" depth 1 page [h, w] f32 tile_bytes 4096
  %ml = sp.interm "ml" depth 1 page [h, w] f32 tile_bytes 4096
  sp.attention %q, %k, %k -> %out acc %dst state %o, %ml heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 1 keys 128 scale 1.0e+00 causal splits 4
}
// CHECK-LABEL: sp.program @parts op "tg.attention" kind attention
// CHECK:         sp.attention %q, %k, %k -> %out acc %dst state %o, %ml heads 4 kv_heads 2 head_dim 32 v_head_dim 32 queries 1 keys 128 scale 1.0e+00 causal splits 4
// CHECK-GENERIC: "sp.attention"(%q, %k, %k, %out, %dst, %o, %ml) <{heads = 4 : i64, kv_heads = 2 : i64, head_dim = 32 : i64, v_head_dim = 32 : i64, queries = 1 : i64, keys = 128 : i64, scale = 1.000000e+00 : f32, causal, splits = 4 : i64, operandSegmentSizes = array<i32: 1, 1, 1, 0, 1, 1, 1, 1>}>

// -----

sp.program @y op "tg.attention" kind attention_combine phase linked tile 32x32 {
  %parts = sp.fifo "parts" depth 2 page [1, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
  %o = sp.interm "o" depth 1 page [1, w] f32 tile_bytes 4096
  sp.attention_combine %parts -> %out state %o splits 4
}
// CHECK-LABEL: sp.program @y op "tg.attention" kind attention_combine
// CHECK:         sp.attention_combine %parts -> %out state %o splits 4
// CHECK-GENERIC: "sp.attention_combine"(%parts, %out, %o) <{splits = 4 : i64}> : (!sp.buffer, !sp.buffer, !sp.buffer) -> ()

// -----

// Split-K: the matmul's partials FIFO at the accumulator's type, two pages a sub-block (those
// received from the slice before, those sent to the slice after).
sp.program @c op "tg.matmul" kind gemm phase tiled tile 32x32 {
  sp.tensor @a : tensor<32x128xbf16> tiles 1x4 input tiled
  sp.tensor @b : tensor<128x32xbf16> tiles 4x1 input tiled
  sp.tensor @c : tensor<32x32xbf16> tiles 1x1 output tiled
  sp.work @c block 1x1 k 4 by 2 split 2 along y
  sp.plan blocked grid 1x1 block 1x1 packing operand_with_store predicted 100 bound compute
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] f32
  %partials = sp.fifo "partials" depth subs * 2 page [sh, sw] f32 tile_bytes 4096
  sp.load @a[r0, k0] x [h, kw] -> %in0
  sp.load @b[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst partials %partials
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK-LABEL: sp.program @c op "tg.matmul" kind gemm
// CHECK:         %partials = sp.fifo "partials" depth subs * 2 page [sh, sw] f32 tile_bytes 4096
// CHECK:         sp.matmul_tiles %in0, %in1 -> %out acc %dst partials %partials
// CHECK-GENERIC: "sp.matmul_tiles"(%in0, %in1, %out, %dst, %partials)

// -----

// A route of a chip of the experts plan: its first held expert from a [1, 1] i32 page, 2 held.
sp.program @y__id0 op "tg.moe" kind route phase linked tile 32x32 {
  %in0 = sp.fifo "in0" depth 1 page [h, kw] f32 tile_bytes 4096
  %first = sp.fifo "first" depth 2 page [1, 1] i32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [h, 1] i32 tile_bytes 4096
  sp.route %in0 first %first -> %out top_k 2 scores "softmax" renormalize pick "id" at 0 cols 4 rows 1 held 2
}
// CHECK-LABEL: sp.program @y__id0 op "tg.moe" kind route
// CHECK:         sp.route %in0 first %first -> %out top_k 2 scores "softmax" renormalize pick "id" at 0 cols 4 rows 1 held 2
// CHECK-GENERIC: "sp.route"(%in0, %first, %out) <{top_k = 2 : i64, scores = "softmax", renormalize, pick = "id", at = 0 : i64, cols = 4 : i64, rows = 1 : i64, held = 2 : i64, operandSegmentSizes = array<i32: 1, 1, 1>}>
