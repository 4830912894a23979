// link of the integer ops: one map section each, exact in integers. int_requant reads i32 and writes
// i8 (the map's scalar is the scale, its offset the zero point); int_clamp keeps its element type and
// narrows the proven interval, so an i32 clamped into i8's range is multiplied in i8 (operand
// precision). A chip without i8 refuses the requantization by name.
// RUN: spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' 2>&1 | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p 'link{target=plasticine}' 2>&1 | filecheck %s --check-prefix=RDU

func.func @requant(%x: tensor<40x72xi32>) -> tensor<40x72xi8> {
  %r = tg.int_requant %x scale 0.5 zero_point -3 : (tensor<40x72xi32>) -> tensor<40x72xi8>
  %c = tg.int_clamp %r lo -100 hi 50 : (tensor<40x72xi8>) -> tensor<40x72xi8>
  func.return %c : tensor<40x72xi8>
}
// CHECK-LABEL: sp.entry @requant(@x) -> (@c)
// CHECK:      sp.program @r op "tg.int_requant" kind map
// CHECK:        sp.tensor @r : tensor<40x72xi8> tiles 2x3 scratch tiled attributes {interval = array<i64: -128, 127>}
// CHECK:        %in0 = sp.fifo "in0" depth 2 page [h, w] i32
// CHECK:        %out = sp.fifo "out" depth 2 page [sh, sw] i8
// CHECK:        sp.map requant %in0 [full] -> %out valid 40x72 scalar 5.0e-01 offset -3
// CHECK:      sp.program @c op "tg.int_clamp" kind map
// CHECK:        sp.tensor @c : tensor<40x72xi8> tiles 2x3 output tiled attributes {interval = array<i64: -100, 50>}
// CHECK:        sp.map clamp %in0 [full] -> %out valid 40x72 lo -100 hi 50
// RDU: error: UnsupportedDatatype: tg.int_requant: target plasticine has no datatype 'i8'; it has f32, i32

// -----

func.func @narrowed(%x: tensor<40x64xi32>, %w: tensor<64x32xi32>) -> tensor<40x32xi32> {
  %c = tg.int_clamp %x lo -100 hi 100 : (tensor<40x64xi32>) -> tensor<40x64xi32>
  %cw = tg.int_clamp %w lo 0 hi 127 : (tensor<64x32xi32>) -> tensor<64x32xi32>
  %y = tg.matmul %c, %cw : (tensor<40x64xi32>, tensor<64x32xi32>) -> tensor<40x32xi32>
  func.return %y : tensor<40x32xi32>
}
// CHECK-LABEL: sp.entry @narrowed(@x, @w) -> (@y)
// CHECK:      sp.map clamp %in0 [full] -> %out valid 40x64 lo -100 hi 100
// CHECK:      sp.program @y op "tg.matmul" kind gemm {{.*}}operand_precision = "i8: interval [-100, 127] fits"
// CHECK:        %in0 = sp.fifo "in0" depth 2 page [h, kw] i8
