// size-buffers takes fused sections only.
// RUN: not spatial-opt %s -p link,tile,place,size-buffers 2>&1 | filecheck %s

func.func @gemm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %c : tensor<64x64xbf16>
}
// CHECK: error: WrongPhase: size-buffers takes a program in phase fused, this one is placed
