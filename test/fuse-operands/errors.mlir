// fuse-operands takes placed sections only.
// RUN: not spatial-opt %s -p link,tile,fuse-operands 2>&1 | filecheck %s

func.func @gemm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %c : tensor<64x64xbf16>
}
// The diagnostic is at the tg op the section was linked from: its line, its text, a caret.
// CHECK:      errors.mlir:5:3: error: WrongPhase: fuse-operands takes a program in phase placed, this one is tiled
// CHECK-NEXT:   %c = tg.matmul %a, %b
// CHECK-NEXT:   ^
// CHECK-NOT:  "builtin.module"
