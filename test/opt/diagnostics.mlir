// Diagnostics at the source: file:line:col, the op's line and a caret, never the module (unless
// --print-ir-on-diagnostic asks for it).
// RUN: not spatial-opt %s 2>&1 | filecheck %s
// RUN: not spatial-opt %s --print-ir-on-diagnostic 2>&1 | filecheck %s --check-prefix=IR
// RUN: not spatial-opt - < %s 2>&1 | filecheck %s --check-prefix=STDIN

func.func @f(%a: tensor<64x100xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = tg.matmul %a, %b : (tensor<64x100xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return %c : tensor<64x32xf32>
}
// CHECK:      diagnostics.mlir:8:3: error: tg.matmul: a is 64x100 and b is 128x32; the inner dimensions 100 and 128 differ
// CHECK-NEXT:   %c = tg.matmul %a, %b
// CHECK-NEXT:   ^
// CHECK-NOT:  builtin.module
// IR:         diagnostics.mlir:8:3: error: tg.matmul: a is 64x100
// IR:         "builtin.module"
// STDIN:      <stdin>:8:3: error: tg.matmul: a is 64x100
