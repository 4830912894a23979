// Tied embeddings: ONE table [vocab, d] = 1024x256 is the gather's and the LM head's. The head
// multiplies by its transpose (transpose_b): B is declared at its stored shape and each block is
// read transposed, [c0, k0] x [w, kw] into a [w, kw] FIFO that matmul_tiles transposes. The head
// lays the table out tiled and the gather reads its rows from the tiled table directly: no
// whole-table untilize, no transpose section, no copy of the table.
// RUN: spatial-opt %s -p link | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' | filecheck %s --check-prefix=SIZED
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' | filecheck %s --check-prefix=SIZED
// RUN: spatial-opt %s -p 'spatial-pipeline{target=plasticine}' | filecheck %s --check-prefix=SIZED

func.func @tied(%table: tensor<1024x256xf32>, %ids: tensor<1xi32>, %x: tensor<1x256xf32>) -> (tensor<1x256xf32>, tensor<1x1024xf32>) {
  %e = tg.gather_rows %table, %ids : (tensor<1024x256xf32>, tensor<1xi32>) -> tensor<1x256xf32>
  %y = tg.matmul %x, %table transpose_b true : (tensor<1x256xf32>, tensor<1024x256xf32>) -> tensor<1x1024xf32>
  func.return %e, %y : tensor<1x256xf32>, tensor<1x1024xf32>
}

// CHECK:      sp.entry @tied(@table, @ids, @x) -> (@e, @y)
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose}}"
// CHECK:      sp.program @e op "tg.gather_rows" kind gather
// CHECK-SAME:   table_layout = "rows read from the tiled @table (row id % 32 of the tiles of tile row id / 32): no whole-table untilize"
// CHECK-NEXT:   sp.tensor @table : tensor<1024x256xf32> tiles 32x8 input tiled
// CHECK:        sp.gather @table by @ids
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// CHECK:      sp.program @y op "tg.matmul" kind gemm
// CHECK-NEXT:   sp.tensor @x
// CHECK-NEXT:   sp.tensor @table : tensor<1024x256xf32> tiles 32x8 input tiled
// CHECK-NEXT:   sp.tensor @y : tensor<1x1024xf32> tiles 1x32 output
// CHECK:        %in1 = sp.fifo "in1" depth 2 page [w, kw] f32
// CHECK:        sp.load @x[r0, k0] x [h, kw] -> %in0
// CHECK-NEXT:   sp.load @table[c0, k0] x [w, kw] -> %in1
// CHECK-NEXT:   sp.matmul_tiles %in0, %in1 -> %out acc %dst transpose_b
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"

// SIZED-NOT:  op "{{(un)?tilize|tg.transpose}}"
// SIZED:      sp.program @e op "tg.gather_rows" kind gather phase sized
// SIZED-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// SIZED:      sp.program @y op "tg.matmul" kind gemm phase sized
// SIZED:        sp.load @table[c0, k0] x [w, kw] -> %in1
// SIZED-NEXT:   sp.matmul_tiles %in0, %in1 -> %out acc %dst {{.*}}transpose_b
// SIZED-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
