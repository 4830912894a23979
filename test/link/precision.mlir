// docs/passes.md#link-integer-operand-precision-from-intervals: an integer product's operand precision is the narrowest that holds its interval.
// link computes each integer matmul operand in the narrowest integer datatype the target has that
// holds the operands' proven interval; the DRAM tensors keep their element type and the loads
// convert (the FIFO pages are in the compute datatype), and the choice and its reason are recorded
// on the section. Refused, by name and with the interval, only where no datatype holds it.
// RUN: spatial-opt %s --split-input-file -p 'link{target=plasticine}' 2>&1 | filecheck %s --check-prefix=RDU
// RUN: not spatial-opt %s --split-input-file -p link 2>&1 | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p 'link{target="%S/Inputs/f32_i8.toml"}' 2>&1 | filecheck %s --check-prefix=NARROW

// i8 x i8 -> i32: plasticine has no i8, so the operands widen to i32 on load.
func.func @mm(%a: tensor<40x70xi8>, %b: tensor<70x50xi8>) -> tensor<40x50xi32> {
  %c = tg.matmul %a, %b : (tensor<40x70xi8>, tensor<70x50xi8>) -> tensor<40x50xi32>
  func.return %c : tensor<40x50xi32>
}
// RDU-LABEL: sp.entry @mm(@a, @b) -> (@c)
// RDU:         sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 attributes {operand_precision = "i32: interval [-128, 127] fits; plasticine has no i8"}
// RDU-NEXT:      sp.tensor @a : tensor<40x70xi8> tiles 2x3 input tiled attributes {interval = array<i64: -128, 127>}
// RDU-NEXT:      sp.tensor @b : tensor<70x50xi8> tiles 3x2 input tiled attributes {interval = array<i64: -128, 127>}
// RDU:           %in0 = sp.fifo "in0" depth 2 page [h, kw] i32 tile_bytes 4096
// RDU-NEXT:      %in1 = sp.fifo "in1" depth 2 page [kw, w] i32 tile_bytes 4096
// RDU:           sp.load @a
// The default target has i8: the operands stay i8.
// CHECK-LABEL: sp.entry @mm(@a, @b) -> (@c)
// CHECK:         sp.program @c op "tg.matmul" kind gemm phase linked tile 32x32 attributes {operand_precision = "i8: interval [-128, 127] fits"}
// CHECK:         %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 tile_bytes 1024
// That target has i8 but no i32 result: the i32 output is refused as before.
// NARROW:      UnsupportedDatatype: tg.matmul: target plasticine_f32_i8 has no datatype 'i32'

// -----

// An i32 operand of full range: on a target with only f32 and i8, no datatype holds it.
func.func @full(%a: tensor<32x32xi32>, %b: tensor<32x32xi32>) -> tensor<32x32xi32> {
  %c = tg.matmul %a, %b : (tensor<32x32xi32>, tensor<32x32xi32>) -> tensor<32x32xi32>
  func.return %c : tensor<32x32xi32>
}
// RDU:    operand_precision = "i32: interval [-2147483648, 2147483647] fits"
// NARROW: UnsupportedDatatype: tg.matmul: no datatype of target plasticine_f32_i8 holds the operands' interval [-2147483648, 2147483647] (32 bits); it has f32, i8
