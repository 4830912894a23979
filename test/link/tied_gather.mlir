// Tied embeddings: one 1024x256 table is the gather's and the LM head's. The matmul lays it out
// tiled, and the gather reads its rows from the tiled table directly: no whole-table untilize.
// RUN: spatial-opt %s -p link | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s --check-prefix=SIZED

func.func @tied(%table: tensor<1024x256xbf16>, %ids: tensor<1xi32>, %x: tensor<1x1024xbf16>) -> (tensor<1x256xbf16>, tensor<1x256xbf16>) {
  %e = tg.gather_rows %table, %ids : (tensor<1024x256xbf16>, tensor<1xi32>) -> tensor<1x256xbf16>
  %y = tg.matmul %x, %table : (tensor<1x1024xbf16>, tensor<1024x256xbf16>) -> tensor<1x256xbf16>
  func.return %e, %y : tensor<1x256xbf16>, tensor<1x256xbf16>
}

// CHECK-NOT:  op "untilize"
// CHECK:      sp.program @e op "tg.gather_rows" kind gather
// CHECK-SAME:   table_layout = "rows read from the tiled @table (row id % 32 of the tiles of tile row id / 32): no whole-table untilize"
// CHECK-NEXT:   sp.tensor @table : tensor<1024x256xbf16> tiles 32x8 input tiled
// CHECK:        sp.gather @table by @ids
// CHECK:      sp.program @y op "tg.matmul"
// CHECK-NEXT:   sp.tensor @x
// CHECK-NEXT:   sp.tensor @table : tensor<1024x256xbf16> tiles 32x8 input tiled
// CHECK-NOT:  op "untilize"

// SIZED-NOT:  op "untilize"
// SIZED:      sp.program @e op "tg.gather_rows" kind gather phase sized
// SIZED-NOT:  op "untilize"
