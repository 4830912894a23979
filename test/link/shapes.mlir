// link on the shapes that matter: M = 1 (a decode step: one row, the same bytes in either
// layout, kept as rows), K of one tile, integer products (accumulated in i32), a bf16 product
// with an f32 result (f32 dest), f32 on Plasticine, and a chain of two products (the first
// result is scratch: written by one section, read by the next, not returned).
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p 'link{target=plasticine}' 2>&1 | filecheck %s --check-prefix=RDU

func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x512xbf16>) -> tensor<1x512xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x512xbf16>) -> tensor<1x512xbf16>
  func.return %y : tensor<1x512xbf16>
}
// CHECK-LABEL: sp.entry @decode(@x, @w) -> (@y)
// CHECK:         sp.tensor @x : tensor<1x4096xbf16> tiles 1x128 input rows
// CHECK-NEXT:    sp.tensor @w : tensor<4096x512xbf16> tiles 128x16 input tiled
// CHECK-NEXT:    sp.tensor @y : tensor<1x512xbf16> tiles 1x16 output rows
// RDU: UnsupportedDatatype: tg.matmul: target plasticine has no datatype 'bf16'; it has f32, i32

// -----

func.func @k1(%a: tensor<64x16xi8>, %b: tensor<16x64xi8>) -> tensor<64x64xi32> {
  %c = tg.matmul %a, %b : (tensor<64x16xi8>, tensor<16x64xi8>) -> tensor<64x64xi32>
  func.return %c : tensor<64x64xi32>
}
// CHECK-LABEL: sp.entry @k1(@a, @b) -> (@c)
// CHECK:         sp.tensor @a : tensor<64x16xi8> tiles 2x1 input tiled
// CHECK-NEXT:    sp.tensor @b : tensor<16x64xi8> tiles 1x2 input tiled
// CHECK:         %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 tile_bytes 1024
// CHECK:         %out = sp.fifo "out" depth 2 page [sh, sw] i32 tile_bytes 4096
// CHECK-NEXT:    %dst = sp.acc "dst" page [sh, sw] i32

// -----

func.func @wide(%a: tensor<64x64xbf16>, %b: tensor<64x64xbf16>) -> tensor<64x64xf32> {
  %c = tg.matmul %a, %b : (tensor<64x64xbf16>, tensor<64x64xbf16>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
// CHECK-LABEL: sp.entry @wide(@a, @b) -> (@c)
// CHECK:         %dst = sp.acc "dst" page [sh, sw] f32

// -----

func.func @chain(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %d: tensor<64x32xf32>) -> tensor<64x32xf32> {
  %c = tg.matmul %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = tg.matmul %c, %d : (tensor<64x64xf32>, tensor<64x32xf32>) -> tensor<64x32xf32>
  func.return %e : tensor<64x32xf32>
}
// CHECK-LABEL: sp.entry @chain(@a, @b, @d) -> (@e)
// CHECK:         sp.program @c op "tg.matmul"
// CHECK:           sp.tensor @c : tensor<64x64xf32> tiles 2x2 scratch tiled
// CHECK:         sp.program @e op "tg.matmul"
// CHECK:           sp.tensor @c : tensor<64x64xf32> tiles 2x2 input tiled
// CHECK:           sp.tensor @e : tensor<64x32xf32> tiles 2x1 output tiled
// RDU-LABEL: sp.entry @chain(@a, @b, @d) -> (@e)
// RDU:         %in0 = sp.fifo "in0" depth 2 page [h, kw] f32 tile_bytes 4096
// RDU:         %dst = sp.acc "dst" page [sh, sw] f32
