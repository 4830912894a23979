// link: tg.dequantize_q8_0 is a map over its Q8_0 tensor (stored in the format of its block axis,
// naming its scales) that widens each block to the result's type; here a Q8_0 embedding table
// (blocks along its rows, as GGUF stores it) widened before a gather.
// RUN: spatial-opt %s -p link | filecheck %s
// RUN: sed 's/bf16/f32/g' %s | spatial-opt -p 'spatial-pipeline{target=plasticine}' | filecheck %s --check-prefix=RDU

func.func @embed(%tv: tensor<64x128xi8>, %ts: tensor<64x4xf16>, %ids: tensor<1xi32>) -> tensor<1x128xbf16> {
  %t = tg.dequantize_q8_0 %tv, %ts axis 1 : (tensor<64x128xi8>, tensor<64x4xf16>) -> tensor<64x128xbf16>
  %x = tg.gather_rows %t, %ids : (tensor<64x128xbf16>, tensor<1xi32>) -> tensor<1x128xbf16>
  func.return %x : tensor<1x128xbf16>
}

// CHECK:      sp.program @t op "tg.dequantize_q8_0" kind map
// CHECK-NEXT:   sp.tensor @tv : tensor<64x128xi8> tiles 2x4 input rows format "q8_0" scales @ts
// CHECK-NEXT:   sp.tensor @t : tensor<64x128xbf16> tiles 2x4 scratch rows
// CHECK-NEXT:   %in0 = sp.fifo "in0" depth 2 page [h, w] i8 as "q8_0" tile_bytes 1088
// CHECK-NEXT:   %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// CHECK:        sp.map dequantize_q8_0 %in0 [full] -> %out valid 64x128
// CHECK:      sp.program @x op "tg.gather_rows"

// RDU:        sp.program @t op "tg.dequantize_q8_0" kind map phase sized
// RDU:          sp.map dequantize_q8_0 %in0 [full] -> %out valid 64x128
