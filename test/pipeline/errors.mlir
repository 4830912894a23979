// Refusals of the pipeline and its printers, one line each and never a traceback.
// RUN: not spatial-opt %s -p 'spatial-pipeline{fidelity=hifi9}' 2>&1 | filecheck %s --check-prefix=FIDELITY
// RUN: not spatial-opt %s -p 'spatial-pipeline{grid=9x9}' 2>&1 | filecheck %s --check-prefix=GRID
// RUN: not spatial-opt %s -p 'spatial-pipeline{grid=big}' 2>&1 | filecheck %s --check-prefix=GRIDSYNTAX
// RUN: not spatial-opt %s -p link,tile -t report 2>&1 | filecheck %s --check-prefix=REPORT
// RUN: not spatial-opt %s -p tile 2>&1 | filecheck %s --check-prefix=TILE
// RUN: not spatial-opt %s -p 'spatial-pipeline{local-mem=1000}' 2>&1 | filecheck %s --check-prefix=NOPLAN

func.func @gemm(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %c = tg.matmul %a, %b : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  func.return %c : tensor<256x256xbf16>
}
// FIDELITY:   error: InvalidTarget: fidelity hifi9: use one of lofi, hifi2, hifi3, hifi4
// GRID:       error: InvalidTarget: grid 9x9 does not fit wormhole_n150's 8x8 mesh
// GRIDSYNTAX: error: InvalidTarget: grid must be XxY (e.g. 4x4), got 'big'
// REPORT:     error: WrongPhase: -t report takes a program in phase sized, this one is tiled
// TILE:       error: WrongPhase: tile takes a program in phase linked, this one is unlinked (tg.matmul has no section yet; run link first)
// Not even a streaming plan's six tiles fit 1000 bytes.
// NOPLAN:     error: NoLegalPlan: section @c: no plan of a 256x256x256 GEMM fits wormhole_n150's 1000 bytes of local memory
