// place refuses a section it cannot place: one not tiled yet (WrongPhase), one that moves data on
// a chip whose sites have no movement engine (TooManyEngines), a module still holding tg ops.
// RUN: not spatial-opt %s -p link,place 2>&1 | filecheck %s --check-prefix=PHASE
// RUN: not spatial-opt %s -p 'link{target="%S/Inputs/no_movement.toml"},tile,place' 2>&1 | filecheck %s --check-prefix=ENGINES
// RUN: not spatial-opt %s -p place 2>&1 | filecheck %s --check-prefix=UNLINKED

func.func @gemm(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xbf16>
  func.return %c : tensor<64x64xbf16>
}
// PHASE:      errors.mlir:8:3: error: WrongPhase: place takes a program in phase tiled, this one is linked
// PHASE-NEXT:   %c = tg.matmul
// PHASE-NEXT:   ^
// ENGINES: error: TooManyEngines: load @a -> in0 needs movement engine 0 but a site has 0 movement engines
// UNLINKED:      error: WrongPhase: place takes a program in phase linked, this one is unlinked (tg.matmul has no section yet; run link first)
// UNLINKED-NEXT: %c = tg.matmul
