// link refuses, by name: a datatype or storage format the chip lacks, a target it cannot load
// (refusals.mlir: the shapes an op cannot take).
// RUN: not spatial-opt %s -p 'link{target=plasticine}' 2>&1 | filecheck %s --check-prefix=RDU
// RUN: not spatial-opt %s -p 'link{target=rtx3060 format=bfp8_b}' 2>&1 | filecheck %s --check-prefix=FMT
// RUN: not spatial-opt %s -p 'link{format=fp8}' 2>&1 | filecheck %s --check-prefix=BADFMT
// RUN: not spatial-opt %s -p 'link{target=tpu_v9}' 2>&1 | filecheck %s --check-prefix=NOTARGET

func.func @mm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  %d = tg.add %c, %c : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %d : tensor<64x64xbf16>
}
// RDU: error: UnsupportedDatatype{{.*}}tg.matmul: target plasticine has no datatype 'bf16'; it has f32, i32
// FMT: error: {{.*}}tg.matmul: target rtx3060 has no datatype 'bfp8_b'
// BADFMT: error: UnsupportedDatatype: format fp8: bf16 tensors are stored as bf16, bfp8_b, bfp4_b
// NOTARGET: error: InvalidTarget: unknown target 'tpu_v9'
