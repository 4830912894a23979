// A tied Q8_0 table [vocab, d] = 300x256 (values i8, scales 300x8 f16: blocks along d, as GGUF
// stores it). The gather takes the ids' rows of the values and of the scales and dequantizes
// those 4 rows only: ONE gather section reads the Q8_0 table (values with their scales) into a
// 4-row Q8_0 tensor, the scales' gather has no section, and the dequantize widens 4 rows, never
// the table. The head is tg.matmul_q8_0 transpose_b over the same table: one Q8_0 tensor
// stored q8_0 (blocks along K, the values' columns), read [c0, k0] x [w, kw] and transposed.
// RUN: spatial-opt %s -p link | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' | filecheck %s --check-prefix=SIZED
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100}' | filecheck %s --check-prefix=SIZED

func.func @tied(%v: tensor<300x256xi8>, %s: tensor<300x8xf16>, %ids: tensor<4xi32>, %x: tensor<1x256xbf16>) -> (tensor<4x256xbf16>, tensor<1x300xbf16>) {
  %gv = tg.gather_rows %v, %ids : (tensor<300x256xi8>, tensor<4xi32>) -> tensor<4x256xi8>
  %gs = tg.gather_rows %s, %ids : (tensor<300x8xf16>, tensor<4xi32>) -> tensor<4x8xf16>
  %e = tg.dequantize_q8_0 %gv, %gs axis 1 : (tensor<4x256xi8>, tensor<4x8xf16>) -> tensor<4x256xbf16>
  %y = tg.matmul_q8_0 %x, %v, %s activation "q8_0" transpose_b true : (tensor<1x256xbf16>, tensor<300x256xi8>, tensor<300x8xf16>) -> tensor<1x300xbf16>
  func.return %e, %y : tensor<4x256xbf16>, tensor<1x300xbf16>
}

// CHECK-NOT:  op "{{(un)?tilize|tg.transpose}}"
// CHECK:      sp.program @gv op "tg.gather_rows" kind gather
// CHECK-SAME:   q8_0_rows = "the ids' rows of the Q8_0 @v with their scales (@s): 4 row(s) to dequantize, not the table"
// CHECK-NEXT:   sp.tensor @v : tensor<300x256xi8> tiles 10x8 input tiled format "q8_0" scales @s
// CHECK-NEXT:   sp.tensor @ids
// CHECK-NEXT:   sp.tensor @gv : tensor<4x256xi8> tiles 1x8 scratch rows format "q8_0"
// CHECK-NEXT:   %out = sp.fifo "out" depth 2 page [1, w] i8 as "q8_0" tile_bytes 1088
// CHECK-NEXT:   sp.gather @v by @ids[r0, c0] x [1, w] count 4 -> %out
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// CHECK:      sp.program @e op "tg.dequantize_q8_0" kind map
// CHECK-NEXT:   sp.tensor @gv : tensor<4x256xi8> tiles 1x8 input rows format "q8_0"{{$}}
// CHECK-NEXT:   sp.tensor @e : tensor<4x256xbf16>
// CHECK:        sp.map dequantize_q8_0 %in0 [full] -> %out valid 4x256
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// CHECK:      sp.program @x__q8_0_0 op "quantize_q8_0"
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// CHECK:      sp.program @y op "tg.matmul_q8_0" kind gemm
// CHECK:        sp.tensor @v : tensor<300x256xi8> tiles 10x8 input tiled format "q8_0" scales @s
// CHECK:        %in1 = sp.fifo "in1" depth 2 page [w, kw] i8 as "q8_0" tile_bytes 1088
// CHECK:        sp.load @v[c0, k0] x [w, kw] -> %in1
// CHECK-NEXT:   sp.matmul_tiles %in0, %in1 -> %out acc %dst {{.*}}transpose_b
// CHECK-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"

// SIZED-NOT:  op "{{(un)?tilize|tg.transpose}}"
// SIZED:      sp.program @gv op "tg.gather_rows" kind gather phase sized
// SIZED-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// SIZED:      sp.program @e op "tg.dequantize_q8_0" kind map phase sized
// SIZED-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// SIZED:      sp.program @x__q8_0_0 op "quantize_q8_0"
// SIZED-NOT:  op "{{(un)?tilize|tg.transpose|tg.gather_rows}}"
// SIZED:      sp.program @y op "tg.matmul_q8_0" kind gemm phase sized
// SIZED:        sp.load @v[c0, k0] x [w, kw] -> %in1
// SIZED-NEXT:   sp.matmul_tiles %in0, %in1 -> %out acc %dst {{.*}}transpose_b
