// A value used before its definition is refused at the use, naming both; deep nesting and
// dimensions beyond int64 are clean diagnostics too.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

func.func @swapped(%x: tensor<4x64xf32>, %w: tensor<1x64xf32>, %wq: tensor<64x32xf32>) -> tensor<4x32xf32> {
  %q = tg.matmul %h, %wq : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
  %h = tg.rms_norm %x, %w eps 1.0e-06 : (tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>
  func.return %q : tensor<4x32xf32>
}
// CHECK:      dominance.mlir:6:3: error: tg.matmul: operand a (%h) is used before its definition: %h is defined by tg.rms_norm at line 7 after this use
// CHECK-NEXT:   %q = tg.matmul %h, %wq

// -----

func.func @huge(%a: tensor<20000000000000000000x2xf32>) -> tensor<20000000000000000000x2xf32> {
  %c = tg.silu %a : (tensor<20000000000000000000x2xf32>) -> tensor<20000000000000000000x2xf32>
  func.return %c : tensor<20000000000000000000x2xf32>
}
// CHECK: dominance.mlir:16:3: error: tg.silu: x has a dimension beyond int64

// -----

func.func @elements(%a: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {
  %c = tg.silu %a : (tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32>
  func.return %c : tensor<4294967296x4294967296xf32>
}
// CHECK: dominance.mlir:24:3: error: tg.silu: x holds 18446744073709551616 elements

// -----

func.func @eps(%x: tensor<4x64xf32>, %w: tensor<1x64xf32>) -> tensor<4x64xf32> {
  %h = tg.rms_norm %x, %w eps -1.0 : (tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>
  func.return %h : tensor<4x64xf32>
}
// CHECK: dominance.mlir:32:3: error: tg.rms_norm: eps must be positive, got -1.0

// -----

func.func @deep(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tg.silu %a {x = [[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
// CHECK: dominance.mlir:40:{{[0-9]+}}: error: brackets nested deeper than 64 levels

// -----

// xDSL's string lexer backtracks exponentially on these: refused before it runs.
func.func @unclosed(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = tg.silu %a {x = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa} : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
// CHECK: dominance.mlir:49:24: error: string literal not closed on its line
