// -t report on a module of several functions: each section names the function it belongs to
// (the sp.entry that link wrote before it), so two sections of the same op stay apart.
// RUN: spatial-opt %s -p spatial-pipeline -t report | filecheck %s

func.func @first(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = tg.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
func.func @second(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %c = tg.silu %a : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
// CHECK:      "sections": [
// CHECK:          "function": "first",
// CHECK-NEXT:     "name": "c",
// CHECK-NEXT:     "op": "tg.matmul",
// CHECK:          "function": "second",
// CHECK-NEXT:     "name": "c_1",
// CHECK-NEXT:     "op": "tg.silu",
