// --verify-diagnostics checks expected-error annotations as mlir-opt does: each chunk here
// holds exactly the diagnostic it expects, so the run passes; the Inputs/ file has a missing, an
// extra and a different one, and fails, naming each.
// RUN: spatial-opt %s --split-input-file --verify-diagnostics -p link
// RUN: not spatial-opt %S/Inputs/wrong_expectations.mlir --split-input-file --verify-diagnostics 2>&1 | filecheck %s

func.func @f(%a: tensor<64x100xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  // expected-error @below {{the inner dimensions 100 and 128 differ}}
  %c = tg.matmul %a, %b : (tensor<64x100xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return %c : tensor<64x32xf32>
}

// -----

func.func @g(%x: tensor<4x96xf32>, %w: tensor<1x48xf32>) -> tensor<4x96xf32> {
  %y = tg.rms_norm %x, %w eps 1.0e-06 width 48 : (tensor<4x96xf32>, tensor<1x48xf32>) -> tensor<4x96xf32> // expected-error {{NotLowered: tg.rms_norm: groups of 48 columns}}
  func.return %y : tensor<4x96xf32>
}

// -----

func.func @ok(%a: tensor<4x4xf32>) -> tensor<4x4xf32> {
  %c = tg.silu %a : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %c : tensor<4x4xf32>
}

// CHECK: wrong_expectations.mlir:4: error: expected error at line 5 was not produced: inner dimensions 7 and 8 differ
// CHECK: error: unexpected diagnostic:
// CHECK-NEXT: wrong_expectations.mlir:5:3: error: tg.matmul: a is 64x100
// CHECK: wrong_expectations.mlir:12: error: expected error at line 13 was not produced: anything
