// The target is chosen once: link records it, and a second link for another target is refused
// (for the same target it is the identity). A function that is not all tg ops is not linked.
// RUN: not spatial-opt %s --split-input-file -p 'link{target=h100},link{target=rtx3060}' 2>&1 | filecheck %s --check-prefix=RELINK
// RUN: not spatial-opt %s --split-input-file --allow-unregistered-dialect -p 'link{target=h100},link{target=h100}' 2>&1 | filecheck %s --check-prefix=SAME

func.func @mm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %c : tensor<64x64xbf16>
}
// RELINK: spatial-opt: error: InvalidTarget: the module is linked for target h100; it cannot be re-linked for rtx3060
// SAME:      sp.target = "h100"
// SAME:      sp.program @c op "tg.matmul" kind gemm phase linked
// SAME-NOT:  sp.program

// -----

func.func @mixed(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  %d = "test.op"(%c) : (tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %d : tensor<64x64xbf16>
}
// SAME: NotLowered: test.op in @mixed: link takes functions of tg ops
