// Every verifier rule of tg, one chunk each: the message names the op, the operand and the numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

func.func @unranked(%x: tensor<*xf32>) {
  %r = "tg.silu"(%x) : (tensor<*xf32>) -> tensor<*xf32>
  func.return
}
// CHECK: operand 'x' at position 0 does not verify

// -----

func.func @rank3(%x: tensor<2x4x4xf32>) {
  %r = "tg.silu"(%x) : (tensor<2x4x4xf32>) -> tensor<2x4x4xf32>
  func.return
}
// CHECK: tg.silu: x must have rank 1 or 2, got rank 3 (tensor<2x4x4xf32>)

// -----

func.func @dynamic(%x: tensor<?x4xf32>) {
  %r = "tg.relu"(%x) : (tensor<?x4xf32>) -> tensor<?x4xf32>
  func.return
}
// CHECK: tg.relu: x must have a static shape, got tensor<?x4xf32>

// -----

func.func @empty(%x: tensor<0x4xf32>) {
  %r = "tg.relu"(%x) : (tensor<0x4xf32>) -> tensor<0x4xf32>
  func.return
}
// CHECK: tg.relu: x has an empty dimension (tensor<0x4xf32>)

// -----

func.func @f64(%x: tensor<4x4xf64>) {
  %r = "tg.relu"(%x) : (tensor<4x4xf64>) -> tensor<4x4xf64>
  func.return
}
// CHECK: tg.relu: x has element type f64; supported are bf16, f16, f32, i8, i32

// -----

func.func @i16(%x: tensor<4x4xi16>) {
  %r = "tg.relu"(%x) : (tensor<4x4xi16>) -> tensor<4x4xi16>
  func.return
}
// CHECK: tg.relu: x has element type i16; supported are bf16, f16, f32, i8, i32

// -----

func.func @int_activation(%x: tensor<4x4xi32>) {
  %r = "tg.silu"(%x) : (tensor<4x4xi32>) -> tensor<4x4xi32>
  func.return
}
// CHECK: tg.silu: x has element type i32; this op needs bf16, f16 or f32

// -----

func.func @unary_result(%x: tensor<4x4xf32>) {
  %r = "tg.sigmoid"(%x) : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  func.return
}
// CHECK: tg.sigmoid: res is tensor<4x4xbf16> but x is tensor<4x4xf32>; they must be the same type

// -----

func.func @binary_shape(%a: tensor<4x8xf32>, %b: tensor<2x8xf32>) {
  %r = "tg.add"(%a, %b) : (tensor<4x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.add: a is 4x8 and b is 2x8; b must be 4x8 or 1x8 (broadcast over rows)

// -----

func.func @binary_vector(%a: tensor<8xf32>, %b: tensor<4xf32>) {
  %r = "tg.mul"(%a, %b) : (tensor<8xf32>, tensor<4xf32>) -> tensor<8xf32>
  func.return
}
// CHECK: tg.mul: a is 8 and b is 4; b must be 8

// -----

func.func @binary_elt(%a: tensor<4x8xf32>, %b: tensor<1x8xbf16>) {
  %r = "tg.sub"(%a, %b) : (tensor<4x8xf32>, tensor<1x8xbf16>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.sub: a holds f32 but b holds bf16; they must agree

// -----

func.func @binary_result(%a: tensor<4x8xf32>, %b: tensor<1x8xf32>) {
  %r = "tg.add"(%a, %b) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
  func.return
}
// CHECK: tg.add: res is tensor<1x8xf32> but a is tensor<4x8xf32>; they must be the same type

// -----

func.func @matmul_rank(%a: tensor<64xf32>, %b: tensor<64x32xf32>) {
  %r = "tg.matmul"(%a, %b) : (tensor<64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  func.return
}
// CHECK: tg.matmul: a must be a matrix (rank 2), got 64

// -----

func.func @matmul_inner(%a: tensor<64x100xf32>, %b: tensor<128x32xf32>) {
  %r = "tg.matmul"(%a, %b) : (tensor<64x100xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return
}
// CHECK: tg.matmul: a is 64x100 and b is 128x32; the inner dimensions 100 and 128 differ

// -----

func.func @matmul_elt(%a: tensor<64x128xf32>, %b: tensor<128x32xbf16>) {
  %r = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xbf16>) -> tensor<64x32xf32>
  func.return
}
// CHECK: tg.matmul: a holds f32 but b holds bf16; they must agree

// -----

func.func @matmul_result_shape(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) {
  %r = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<32x64xf32>
  func.return
}
// CHECK: tg.matmul: the result is 32x64 but a @ b is 64x32

// -----

func.func @matmul_result_kind(%a: tensor<64x128xi8>, %b: tensor<128x32xi8>) {
  %r = "tg.matmul"(%a, %b) : (tensor<64x128xi8>, tensor<128x32xi8>) -> tensor<64x32xf32>
  func.return
}
// CHECK: tg.matmul: operands hold i8, so the result must be an integer type, got f32

// -----

func.func @gelu_approximate(%x: tensor<4x4xf32>) {
  %r = "tg.gelu"(%x) <{approximate = "erf"}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}
// CHECK: tg.gelu: approximate must be "none" or "tanh", got "erf"

// -----

func.func @scale_type(%x: tensor<4x4xf32>) {
  %r = "tg.scale"(%x) <{factor = 2 : i64}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}
// CHECK: tg.scale: property factor must be an f32 float (e.g. 1.0e-06 : f32), got 2 : i64

// -----

func.func @softcap_zero(%x: tensor<4x4xf32>) {
  %r = "tg.softcap"(%x) <{cap = 0.0 : f32}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return
}
// CHECK: tg.softcap: cap must be non-zero

// -----

func.func @softmax_rank(%x: tensor<16xf32>) {
  %r = "tg.softmax"(%x) : (tensor<16xf32>) -> tensor<16xf32>
  func.return
}
// CHECK: tg.softmax: x must be a matrix (rank 2), got 16

// -----

func.func @swiglu_up(%g: tensor<4x8xf32>, %u: tensor<4x4xf32>) {
  %r = "tg.swiglu"(%g, %u) : (tensor<4x8xf32>, tensor<4x4xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.swiglu: up is tensor<4x4xf32> but gate is tensor<4x8xf32>; they must be the same type

// -----

func.func @rms_missing_eps(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>) {
  %r = "tg.rms_norm"(%x, %w) : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: property 'eps' expected in operation 'tg.rms_norm'

// -----

func.func @rms_int(%x: tensor<4x8xi32>, %w: tensor<1x8xf32>) {
  %r = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32}> : (tensor<4x8xi32>, tensor<1x8xf32>) -> tensor<4x8xi32>
  func.return
}
// CHECK: tg.rms_norm: x has element type i32; this op needs bf16, f16 or f32

// -----

func.func @rms_stats_result(%x: tensor<4x8xf32>) {
  %r = "tg.rms_stats"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_stats: x has 4 rows, so the result must be tensor<4x1xf32>

// -----

func.func @rms_apply_n(%x: tensor<4x8xf32>, %s: tensor<4x1xf32>, %w: tensor<1x8xf32>) {
  %r = "tg.rms_apply"(%x, %s, %w) <{eps = 1.0e-06 : f32, n = 4 : i64}> : (tensor<4x8xf32>, tensor<4x1xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_apply: x has 8 columns, more than the row's width n 4

// -----

func.func @rms_apply_stats(%x: tensor<4x8xf32>, %s: tensor<4x1xbf16>, %w: tensor<1x8xf32>) {
  %r = "tg.rms_apply"(%x, %s, %w) <{eps = 1.0e-06 : f32, n = 16 : i64}> : (tensor<4x8xf32>, tensor<4x1xbf16>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_apply: x has 4 rows, so stats must be tensor<4x1xf32>

// -----

func.func @rms_weight(%x: tensor<4x8xf32>, %w: tensor<1x4xf32>) {
  %r = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32}> : (tensor<4x8xf32>, tensor<1x4xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_norm: weight is 1x4; it must be 1x8

// -----

func.func @rms_width_divides(%x: tensor<4x8xf32>, %w: tensor<1x3xf32>) {
  %r = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32, width = 3}> : (tensor<4x8xf32>, tensor<1x3xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_norm: x has 8 columns, not a multiple of width 3

// -----

func.func @rms_width_positive(%x: tensor<4x8xf32>, %w: tensor<1x3xf32>) {
  %r = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32, width = 0}> : (tensor<4x8xf32>, tensor<1x3xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_norm: width must be positive, got 0

// -----

func.func @rms_residual(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>, %h: tensor<4x8xbf16>) {
  %r = "tg.rms_norm"(%x, %w, %h) <{eps = 1.0e-06 : f32}> : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.rms_norm: residual is tensor<4x8xbf16> but x is tensor<4x8xf32>; they must be the same type

// -----

func.func @layer_norm_bias(%x: tensor<4x8xf32>, %w: tensor<1x8xf32>, %b: tensor<8xf32>) {
  %r = "tg.layer_norm"(%x, %w, %b) <{eps = 1.0e-05 : f32}> : (tensor<4x8xf32>, tensor<1x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.layer_norm: bias must be a matrix (rank 2), got 8

// -----

func.func @layer_norm_weight(%x: tensor<4x8xf32>, %w: tensor<1x4xf32>) {
  %r = "tg.layer_norm"(%x, %w, %w) <{eps = 1.0e-05 : f32}> : (tensor<4x8xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.layer_norm: weight is 1x4; it must be 1x8

// -----

func.func @rope_odd(%x: tensor<4x12xf32>, %c: tensor<4x1xf32>) {
  %r = "tg.rope"(%x, %c, %c) <{head_dim = 3, style = "neox"}> : (tensor<4x12xf32>, tensor<4x1xf32>, tensor<4x1xf32>) -> tensor<4x12xf32>
  func.return
}
// CHECK: tg.rope: head_dim must be even, got 3

// -----

func.func @rope_heads(%x: tensor<4x12xf32>, %c: tensor<4x4xf32>) {
  %r = "tg.rope"(%x, %c, %c) <{head_dim = 8, style = "neox"}> : (tensor<4x12xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x12xf32>
  func.return
}
// CHECK: tg.rope: x has 12 columns, not a multiple of head_dim 8

// -----

func.func @rope_cos(%x: tensor<4x16xf32>, %c: tensor<4x8xf32>) {
  %r = "tg.rope"(%x, %c, %c) <{head_dim = 8, style = "neox"}> : (tensor<4x16xf32>, tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x16xf32>
  func.return
}
// CHECK: tg.rope: cos is 4x8; it must be 4x4

// -----

func.func @rope_style(%x: tensor<4x16xf32>, %c: tensor<4x4xf32>) {
  %r = "tg.rope"(%x, %c, %c) <{head_dim = 8, style = "gptj"}> : (tensor<4x16xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x16xf32>
  func.return
}
// CHECK: tg.rope: style must be "neox" or "interleaved", got "gptj"

// -----

func.func @attn_groups(%q: tensor<4x48xf32>, %k: tensor<8x32xf32>) {
  %r = "tg.attention"(%q, %k, %k) <{heads = 3 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x48xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<4x48xf32>
  func.return
}
// CHECK: tg.attention: heads 3 is not a multiple of kv_heads 2

// -----

func.func @attn_q(%q: tensor<4x48xf32>, %k: tensor<8x16xf32>) {
  %r = "tg.attention"(%q, %k, %k) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x48xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: q is 4x48; it must have heads * head_dim = 32 columns

// -----

func.func @attn_k(%q: tensor<4x32xf32>, %k: tensor<8x32xf32>) {
  %r = "tg.attention"(%q, %k, %k) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.attention: k is 8x32; it must have kv_heads * head_dim = 16 columns

// -----

func.func @attn_v_rows(%q: tensor<4x32xf32>, %k: tensor<8x16xf32>, %v: tensor<6x16xf32>) {
  %r = "tg.attention"(%q, %k, %v) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x16xf32>, tensor<6x16xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: k has 8 rows but v has 6; they must agree

// -----

func.func @attn_v_cols(%q: tensor<4x32xf32>, %k: tensor<8x32xf32>, %v: tensor<8x17xf32>) {
  %r = "tg.attention"(%q, %k, %v) <{heads = 2 : i64, kv_heads = 2 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x32xf32>, tensor<8x17xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: v has 17 columns, not a multiple of kv_heads 2

// -----

// q, k and v in one element type (the result may differ): docs/tg.md#tgattention.
func.func @attention_mixed(%q: tensor<4x32xbf16>, %k: tensor<8x16xf32>, %v: tensor<8x16xbf16>) {
  %r = "tg.attention"(%q, %k, %v) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xbf16>, tensor<8x16xf32>, tensor<8x16xbf16>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: q holds bf16, k f32 and v bf16; they must hold one element type: the scores q k^T and their product with v are tile matmuls, which read both operands in one format (keep the KV cache in q's type; the result may differ)

// -----

func.func @attn_pos(%q: tensor<4x32xf32>, %k: tensor<8x16xf32>, %p: tensor<2xi32>) {
  %r = "tg.attention"(%q, %k, %k, %p) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x16xf32>, tensor<8x16xf32>, tensor<2xi32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: pos must be tensor<1xi32>, got tensor<2xi32>

// -----

func.func @attn_t_gt_s(%q: tensor<16x32xf32>, %k: tensor<8x16xf32>) {
  %r = "tg.attention"(%q, %k, %k) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<16x32xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<16x32xf32>
  func.return
}
// CHECK: tg.attention: q has 16 rows but k only 8; without pos the queries sit at the last T positions, so T <= S

// -----

func.func @attn_result(%q: tensor<4x32xf32>, %k: tensor<8x16xf32>, %v: tensor<8x8xf32>) {
  %r = "tg.attention"(%q, %k, %v) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = true, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x16xf32>, tensor<8x8xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: the result is 4x32; it must be 4x16 (T x heads * v head dim)

// -----

func.func @attn_causal_type(%q: tensor<4x32xf32>, %k: tensor<8x16xf32>) {
  %r = "tg.attention"(%q, %k, %k) <{heads = 2 : i64, kv_heads = 1 : i64, head_dim = 16 : i64, causal = 1 : i64, scale = 0.25 : f32}> : (tensor<4x32xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.attention: property causal must be a bool (true or false), got 1 : i64

// -----

func.func @transpose_shape(%x: tensor<4x8xf32>) {
  %r = "tg.transpose"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.transpose: x is 4x8, so the result must be 8x4, got 4x8

// -----

func.func @transpose_elt(%x: tensor<4x8xf32>) {
  %r = "tg.transpose"(%x) : (tensor<4x8xf32>) -> tensor<8x4xbf16>
  func.return
}
// CHECK: tg.transpose: res holds bf16 but x holds f32; they must agree

// -----

func.func @gather_ids_type(%t: tensor<16x8xf32>, %i: tensor<4xi8>) {
  %r = "tg.gather_rows"(%t, %i) : (tensor<16x8xf32>, tensor<4xi8>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.gather_rows: ids must hold i32, got i8

// -----

func.func @gather_ids_rank(%t: tensor<16x8xf32>, %i: tensor<1x4xi32>) {
  %r = "tg.gather_rows"(%t, %i) : (tensor<16x8xf32>, tensor<1x4xi32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.gather_rows: ids must be a vector (rank 1), got 1x4

// -----

func.func @gather_result(%t: tensor<16x8xf32>, %i: tensor<4xi32>) {
  %r = "tg.gather_rows"(%t, %i) : (tensor<16x8xf32>, tensor<4xi32>) -> tensor<4x16xf32>
  func.return
}
// CHECK: tg.gather_rows: the result is 4x16; it must be 4x8 (ids x table width)

// -----

func.func @gather_elt(%t: tensor<16x8xf32>, %i: tensor<4xi32>) {
  %r = "tg.gather_rows"(%t, %i) : (tensor<16x8xf32>, tensor<4xi32>) -> tensor<4x8xbf16>
  func.return
}
// CHECK: tg.gather_rows: res holds bf16 but table holds f32; they must agree

// -----

func.func @set_rows_width(%c: tensor<16x8xf32>, %r0: tensor<2x4xf32>, %p: tensor<1xi32>) {
  %r = "tg.set_rows"(%c, %r0, %p) : (tensor<16x8xf32>, tensor<2x4xf32>, tensor<1xi32>) -> tensor<16x8xf32>
  func.return
}
// CHECK: tg.set_rows: cache is 16x8 and rows is 2x4; the widths 8 and 4 differ

// -----

func.func @set_rows_count(%c: tensor<4x8xf32>, %r0: tensor<6x8xf32>, %p: tensor<1xi32>) {
  %r = "tg.set_rows"(%c, %r0, %p) : (tensor<4x8xf32>, tensor<6x8xf32>, tensor<1xi32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.set_rows: rows has 6 rows, more than the cache's 4

// -----

func.func @set_rows_elt(%c: tensor<16x8xf32>, %r0: tensor<2x8xbf16>, %p: tensor<1xi32>) {
  %r = "tg.set_rows"(%c, %r0, %p) : (tensor<16x8xf32>, tensor<2x8xbf16>, tensor<1xi32>) -> tensor<16x8xf32>
  func.return
}
// CHECK: tg.set_rows: rows holds bf16 but cache holds f32; they must agree

// -----

func.func @set_rows_pos(%c: tensor<16x8xf32>, %r0: tensor<2x8xf32>, %p: tensor<1xi8>) {
  %r = "tg.set_rows"(%c, %r0, %p) : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<1xi8>) -> tensor<16x8xf32>
  func.return
}
// CHECK: tg.set_rows: pos must hold i32, got i8

// -----

func.func @set_rows_result(%c: tensor<16x8xf32>, %r0: tensor<2x8xf32>, %p: tensor<1xi32>) {
  %r = "tg.set_rows"(%c, %r0, %p) : (tensor<16x8xf32>, tensor<2x8xf32>, tensor<1xi32>) -> tensor<16x8xbf16>
  func.return
}
// CHECK: tg.set_rows: res is tensor<16x8xbf16> but cache is tensor<16x8xf32>; they must be the same type

// -----

func.func @argmax_len(%x: tensor<4x8xf32>) {
  %r = "tg.argmax"(%x) : (tensor<4x8xf32>) -> tensor<8xi32>
  func.return
}
// CHECK: tg.argmax: x has 4 rows, so the result must be tensor<4xi32>

// -----

func.func @argmax_type(%x: tensor<4x8xf32>) {
  %r = "tg.argmax"(%x) : (tensor<4x8xf32>) -> tensor<4xi8>
  func.return
}
// CHECK: tg.argmax: res must hold i32, got i8

// -----

func.func @operand_count(%x: tensor<4x8xf32>) {
  %r = "tg.matmul"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: Expected 2 operands, but got 1

// -----

func.func @matmul_transpose_b_inner(%a: tensor<4x64xf32>, %b: tensor<64x100xf32>) {
  %r = "tg.matmul"(%a, %b) <{transpose_b = true}> : (tensor<4x64xf32>, tensor<64x100xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.matmul: a is 4x64 and b is 64x100 read transposed (transpose_b); a's columns 64 and b's columns 100 differ

// -----

func.func @matmul_transpose_b_result(%a: tensor<4x64xf32>, %b: tensor<100x64xf32>) {
  %r = "tg.matmul"(%a, %b) <{transpose_b = true}> : (tensor<4x64xf32>, tensor<100x64xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.matmul: the result is 4x64 but a @ b^T is 4x100

// -----

func.func @matmul_transpose_b_kind(%a: tensor<4x64xf32>, %b: tensor<100x64xf32>) {
  %r = "tg.matmul"(%a, %b) <{transpose_b = 1 : i64}> : (tensor<4x64xf32>, tensor<100x64xf32>) -> tensor<4x100xf32>
  func.return
}
// CHECK: tg.matmul: property transpose_b must be a bool (true or false), got 1 : i64

// -----

func.func @matmul_q8_0_transpose_b_inner(%a: tensor<4x64xbf16>, %v: tensor<100x96xi8>, %s: tensor<100x3xf16>) {
  %r = "tg.matmul_q8_0"(%a, %v, %s) <{activation = "q8_0", transpose_b = true}> : (tensor<4x64xbf16>, tensor<100x96xi8>, tensor<100x3xf16>) -> tensor<4x100xbf16>
  func.return
}
// CHECK: tg.matmul_q8_0: a is 4x64 and values is 100x96 read transposed (transpose_b); a's columns 64 and values' columns 96 differ

// -----

// Transposed, the blocks still run along K: down the values' columns, one scale per 32 of a row.
func.func @matmul_q8_0_transpose_b_scales(%a: tensor<4x64xbf16>, %v: tensor<100x64xi8>, %s: tensor<2x100xf16>) {
  %r = "tg.matmul_q8_0"(%a, %v, %s) <{activation = "q8_0", transpose_b = true}> : (tensor<4x64xbf16>, tensor<100x64xi8>, tensor<2x100xf16>) -> tensor<4x100xbf16>
  func.return
}
// CHECK: tg.matmul_q8_0: values is 100x64 in blocks of 32 along axis 1, so scales must be 100x2, got 2x100

// -----

func.func @matmul_q8_0_transpose_b_blocks(%a: tensor<4x48xbf16>, %v: tensor<64x48xi8>, %s: tensor<64x1xf16>) {
  %r = "tg.matmul_q8_0"(%a, %v, %s) <{activation = "q8_0", transpose_b = true}> : (tensor<4x48xbf16>, tensor<64x48xi8>, tensor<64x1xf16>) -> tensor<4x64xbf16>
  func.return
}
// CHECK: tg.matmul_q8_0: values is 64x48; its block axis 1 has 48 elements, not a multiple of the Q8_0 block of 32
