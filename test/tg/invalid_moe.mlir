// Every verifier rule of tg.moe, one chunk each: the message names the op, the operand and the
// numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

func.func @f(%x: tensor<1x64xf32>, %r: tensor<32x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<32x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: x is 1x64 and router is 32x4; router must have 64 rows

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 5 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: top_k 5 is more than the router's 4 experts

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 0 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: top_k must be positive, got 0

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "relu" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: scores must be one of softmax, sigmoid, got "relu"

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<192x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<192x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: w_gate is 192x32; it must stack 4 experts' 64x32 matrices (256 rows)

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x16xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x16xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: w_up is 256x16; it must be 256x32 as w_gate

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x32xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x32xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: w_down is 128x32; it must stack 4 experts' 32x64 matrices (128x64)

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xbf16>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xbf16>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: router holds bf16 but x holds f32; they must agree

// -----

func.func @f(%x: tensor<1x64xi32>, %r: tensor<64x4xi32>, %g: tensor<256x32xi32>, %u: tensor<256x32xi32>, %d: tensor<128x64xi32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x64xi32>, tensor<64x4xi32>, tensor<256x32xi32>, tensor<256x32xi32>, tensor<128x64xi32>) -> tensor<1x64xi32>
  func.return
}
// CHECK: tg.moe: x has element type i32; this op needs bf16, f16 or f32

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>, %sg: tensor<64x48xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d, %sg top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: takes 0, 3 (shared gate, up, down) or 4 (and the shared gate weight) shared expert operands, got 1

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>, %sg: tensor<64x48xf32>, %su: tensor<64x48xf32>, %sd: tensor<64x48xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d, %sg, %su, %sd top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<64x48xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: shared_down is 64x48; it must be 48x64

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>, %sg: tensor<64x48xf32>, %su: tensor<64x48xf32>, %sd: tensor<48x64xf32>, %sw: tensor<64x2xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d, %sg, %su, %sd, %sw top_k 2 scores "softmax" : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>, tensor<64x48xf32>, tensor<64x48xf32>, tensor<48x64xf32>, tensor<64x2xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: shared_weight is 64x2; it must be 64x1

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<192x32xf32>, %u: tensor<192x32xf32>, %d: tensor<96x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" experts_held 3 : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<192x32xf32>, tensor<192x32xf32>, tensor<96x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: experts_held 3 does not divide the router's 4 experts

// -----

func.func @f(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<256x32xf32>, %u: tensor<256x32xf32>, %d: tensor<128x64xf32>) {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" experts_held 2 : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<256x32xf32>, tensor<256x32xf32>, tensor<128x64xf32>) -> tensor<1x64xf32>
  func.return
}
// CHECK: tg.moe: w_gate is 256x32; it must stack 2 experts' 64x32 matrices (128 rows)
