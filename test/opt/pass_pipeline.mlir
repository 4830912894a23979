// --pass-pipeline as mlir-opt takes it, plain and anchored, gives what -p gives; spatial-pipeline
// shows its five passes to --time-passes; a wrong option type is one line.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' > %t.p
// RUN: spatial-opt %s --pass-pipeline='spatial-pipeline{target=h100}' | diff %t.p -
// RUN: spatial-opt %s --pass-pipeline='builtin.module(spatial-pipeline{target=h100})' | diff %t.p -
// RUN: spatial-opt %s --pass-pipeline='builtin.module(func.func(link{target=h100}),tile,place,fuse-operands,size-buffers)' | diff %t.p -
// RUN: spatial-opt %s --pass-pipeline='builtin.module(spatial-pipeline{target=h100})' --time-passes -t report | filecheck %s --check-prefix=TIME
// RUN: not spatial-opt %s -p 'spatial-pipeline{grid=3}' 2>&1 | filecheck %s --check-prefix=TYPE
// RUN: not spatial-opt %s -p link --pass-pipeline=link 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: spatial-opt --help | filecheck %s --check-prefix=HELP

func.func @gemm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %c : tensor<64x64xbf16>
}
// TIME: Pass link took
// TIME: Pass tile took
// TIME: Pass place took
// TIME: Pass fuse-operands took
// TIME: Pass size-buffers took
// TYPE:     spatial-opt: error: spatial-pipeline: option grid expects str | None, got '3'
// TYPE-NOT: Incompatible
// BOTH: spatial-opt: error: give the pipeline with -p or with --pass-pipeline, not both
// HELP: --pass-pipeline
// HELP: passes of spatial-dialect
// HELP: spatial-pipeline:
// HELP: local-mem: int | None
