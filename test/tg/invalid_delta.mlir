// Every verifier rule of the Gated DeltaNet ops, one chunk each: the message names the op, the
// operand and the numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.l2_norm %x eps 1.0e-06 width 64 : (tensor<4x96xf32>) -> tensor<4x96xf32>
  func.return
}
// CHECK: tg.l2_norm: x has 96 columns, not a multiple of width 64

// -----

func.func @f(%x: tensor<4x96xi32>) {
  %r = tg.l2_norm %x eps 1.0e-06 : (tensor<4x96xi32>) -> tensor<4x96xi32>
  func.return
}
// CHECK: tg.l2_norm: x has element type i32; this op needs bf16, f16 or f32

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.l2_norm %x eps 0.0 : (tensor<4x96xf32>) -> tensor<4x96xf32>
  func.return
}
// CHECK: tg.l2_norm: eps must be positive, got 0.0

// -----

func.func @f(%a: tensor<4x8xf32>, %l: tensor<1x4xf32>, %d: tensor<1x8xf32>) {
  %g = tg.decay %a, %l, %d : (tensor<4x8xf32>, tensor<1x4xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.decay: a_log is 1x4; it must be 1x8

// -----

func.func @f(%a: tensor<4x8xf32>, %l: tensor<1x8xbf16>, %d: tensor<1x8xf32>) {
  %g = tg.decay %a, %l, %d : (tensor<4x8xf32>, tensor<1x8xbf16>, tensor<1x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.decay: a_log holds bf16 but a holds f32; they must agree

// -----

func.func @f(%x: tensor<8x64xf32>, %w: tensor<4x32xf32>, %s: tensor<3x64xf32>) {
  %y, %n = tg.causal_conv %x, %w, %s : (tensor<8x64xf32>, tensor<4x32xf32>, tensor<3x64xf32>) -> (tensor<8x64xf32>, tensor<3x64xf32>)
  func.return
}
// CHECK: tg.causal_conv: weight is 4x32; it must have x's 64 columns

// -----

func.func @f(%x: tensor<8x64xf32>, %w: tensor<4x64xf32>, %s: tensor<4x64xf32>) {
  %y, %n = tg.causal_conv %x, %w, %s : (tensor<8x64xf32>, tensor<4x64xf32>, tensor<4x64xf32>) -> (tensor<8x64xf32>, tensor<4x64xf32>)
  func.return
}
// CHECK: tg.causal_conv: state is 4x64; it must be 3x64 (the last K - 1 rows of the input)

// -----

func.func @f(%x: tensor<8x64xf32>, %w: tensor<1x64xf32>, %s: tensor<1x64xf32>) {
  %y, %n = tg.causal_conv %x, %w, %s : (tensor<8x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> (tensor<8x64xf32>, tensor<1x64xf32>)
  func.return
}
// CHECK: tg.causal_conv: weight has 1 row(s); a kernel of K >= 2 taps carries K - 1 rows

// -----

func.func @f(%x: tensor<8x64xf32>, %w: tensor<4x64xf32>, %s: tensor<3x64xf32>) {
  %y, %n = tg.causal_conv %x, %w, %s activation "gelu" : (tensor<8x64xf32>, tensor<4x64xf32>, tensor<3x64xf32>) -> (tensor<8x64xf32>, tensor<3x64xf32>)
  func.return
}
// CHECK: tg.causal_conv: activation must be "silu" or "none", got "gelu"

// -----

func.func @f(%x: tensor<8x64xf32>, %w: tensor<4x64xf32>, %s: tensor<3x64xf32>) {
  %y, %n = tg.causal_conv %x, %w, %s : (tensor<8x64xf32>, tensor<4x64xf32>, tensor<3x64xf32>) -> (tensor<8x64xbf16>, tensor<3x64xf32>)
  func.return
}
// CHECK: tg.causal_conv: res is tensor<8x64xbf16> but x is tensor<8x64xf32>; they must be the same type

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %g, %s heads 4 k_heads 3 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xf32>, tensor<128x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: heads 4 is not a multiple of k_heads 3

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %g, %s heads 4 k_heads 1 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xf32>, tensor<128x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: q is 8x64; it must have k_heads * head_dim = 32 columns

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x2xf32>, %b: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %b, %s heads 4 k_heads 2 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x2xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xf32>, tensor<128x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: g is 8x2; it must be 8x4 (T x heads)

// -----

func.func @f(%q: tensor<8x64xf32>, %k: tensor<6x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %k, %v, %g, %g, %s heads 4 k_heads 2 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<6x64xf32>, tensor<8x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xf32>, tensor<128x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: q has 8 rows but k has 6; they must agree

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x4xf32>, %s: tensor<64x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %g, %s heads 4 k_heads 2 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<64x32xf32>) -> (tensor<8x128xf32>, tensor<64x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: state is 64x32; it must be 128x32 (heads * head_dim x v head dim)

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xbf16>, %g: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %g, %s heads 4 k_heads 2 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xbf16>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xbf16>, tensor<128x32xf32>)
  func.return
}
// CHECK: tg.gated_delta: v holds bf16 but q holds f32; they must agree

// -----

func.func @f(%q: tensor<8x64xf32>, %v: tensor<8x128xf32>, %g: tensor<8x4xf32>, %s: tensor<128x32xf32>) {
  %o, %n = tg.gated_delta %q, %q, %v, %g, %g, %s heads 4 k_heads 2 head_dim 32 scale 0.5 : (tensor<8x64xf32>, tensor<8x64xf32>, tensor<8x128xf32>, tensor<8x4xf32>, tensor<8x4xf32>, tensor<128x32xf32>) -> (tensor<8x128xf32>, tensor<128x32xbf16>)
  func.return
}
// CHECK: tg.gated_delta: new_state is tensor<128x32xbf16> but state is tensor<128x32xf32>; they must be the same type
