// One deployment, agreed layouts (docs/passes.md#link-one-deployment-agreed-layouts): the
// functions of a module are the programs of one deployment, and a tensor two of them take by
// argument name is laid out once for all of them, recorded with its reason as `sp.agreed`.
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// A name two functions declare with different types is refused at the later one's reader.
// RUN: not spatial-opt %S/Inputs/deployment_mismatch.mlir -p link 2>&1 | filecheck %s --check-prefix=MISMATCH
// The functions run one at a time: a name two of them use is one DRAM tensor at the larger size.
// RUN: spatial-opt %S/Inputs/deployment_dram.mlir -p spatial-pipeline -t memory-map | filecheck %s --check-prefix=DRAM

// @write alone would keep the cache in rows (a set_rows has no layout of its own), @read alone
// tiles it (a matmul's operand). Agreed, it is tiled in both: @write's scatter writes the tiles
// @read loads, with no bridge between the two programs, and the block of rows written into the
// tiled cache is tiled too (the prelude's tie, fed by the agreement).
func.func @write(%cache: tensor<64x64xf32>, %rows: tensor<8x64xf32>, %pos: tensor<1xi32>) -> tensor<64x64xf32> {
  %c = tg.set_rows %cache, %rows, %pos : (tensor<64x64xf32>, tensor<8x64xf32>, tensor<1xi32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
func.func @read(%cache: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = tg.matmul %cache, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
// CHECK:      sp.agreed = {cache = "tiled: @write, @read; alone, @write would lay it out rows"}
// CHECK-NEXT:   sp.entry @write(@cache, @rows, @pos) -> (@cache)
// CHECK-NEXT:   sp.program @cache op "tg.set_rows"
// CHECK-NEXT:     sp.tensor @rows : tensor<8x64xf32> tiles 1x2 input tiled
// CHECK:          sp.tensor @cache : tensor<64x64xf32> tiles 2x2 output tiled
// CHECK-NOT:    sp.program
// CHECK:        sp.entry @read(@cache, @w) -> (@y)
// CHECK-NEXT:   sp.program @y op "tg.matmul"
// CHECK-NEXT:     sp.tensor @cache : tensor<64x64xf32> tiles 2x2 input tiled
// CHECK-NOT:  tilize
// CHECK:      // {{-----}}

// -----

// The agreement runs to a fixed point across functions: @read tiles the cache, so @write's
// block of rows is tiled (its tie), and @peek, which shares that block and alone would read it
// in rows, takes it tiled: its arg-max reads rows through its own bridge, inside @peek.
// One-row tensors (the position) are the same bytes either way and stay rows.
func.func @write(%cache: tensor<64x64xf32>, %rows: tensor<8x64xf32>, %pos: tensor<1xi32>) -> tensor<64x64xf32> {
  %c = tg.set_rows %cache, %rows, %pos : (tensor<64x64xf32>, tensor<8x64xf32>, tensor<1xi32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
func.func @read(%cache: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = tg.matmul %cache, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
func.func @peek(%rows: tensor<8x64xf32>, %pos: tensor<1xi32>) -> tensor<8xi32> {
  %i = tg.argmax %rows : (tensor<8x64xf32>) -> tensor<8xi32>
  func.return %i : tensor<8xi32>
}
// CHECK:      sp.agreed = {cache = "tiled: @write, @read; alone, @write would lay it out rows", rows = "tiled: @write, @peek; alone, @write, @peek would lay it out rows", pos = "rows: @write, @peek"}
// CHECK:        sp.entry @peek(@rows, @pos) -> (@i)
// CHECK-NEXT:   sp.program @rows__rows op "untilize"
// CHECK-NEXT:     sp.tensor @rows : tensor<8x64xf32> tiles 1x2 input tiled
// CHECK:        sp.program @i op "tg.argmax"
// CHECK-NEXT:     sp.tensor @rows__rows : tensor<8x64xf32> tiles 1x2 input rows
// CHECK:      // {{-----}}

// -----

// Functions that share no argument name are decided alone: no sp.agreed.
func.func @one(%a: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %b = tg.silu %a : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %b : tensor<64x64xf32>
}
func.func @two(%x: tensor<64x64xf32>) -> tensor<64xi32> {
  %i = tg.argmax %x : (tensor<64x64xf32>) -> tensor<64xi32>
  func.return %i : tensor<64xi32>
}
// CHECK:      builtin.module attributes {sp.target = "wormhole_n150", sp.options = {format = "bf16"}} {
// CHECK:        sp.tensor @x : tensor<64x64xf32> tiles 2x2 input rows

// MISMATCH:      deployment_mismatch.mlir:10:3: error: Disagreement: %ids is tensor<1xi32> in @decode but tensor<8xi32> in @prefill: the functions of one module are one deployment, and an argument name they share is one tensor of it; rename one of them
// MISMATCH-NEXT:   %x = tg.gather_rows %y, %ids
// MISMATCH-NEXT:   ^

// 32x64 f32 is 8192 bytes, 64x64 16384: @y takes the larger, and @a starts after it.
// DRAM:      dram on wormhole_n150: 40960 bytes of {{.*}}, 3 tensors
// DRAM-NEXT:   x {{ +}}offset {{ +}}0  bytes {{ +}}8192  f32
// DRAM-NEXT:   y {{ +}}offset {{ +}}8192  bytes {{ +}}16384  f32
// DRAM-NEXT:   a {{ +}}offset {{ +}}24576  bytes {{ +}}16384  f32
