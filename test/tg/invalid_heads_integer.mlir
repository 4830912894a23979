// Every verifier rule of the head and integer ops, one chunk each: the message names the op, the
// operand and the numbers.
// RUN: not spatial-opt %s --split-input-file 2>&1 | filecheck %s

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 64 first 0 heads 1 : (tensor<4x96xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.head_slice: x is 4x96; head_dim 64 does not divide its 96 columns

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 32 first 2 heads 2 : (tensor<4x96xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.head_slice: x is 4x96, 3 heads of 32; heads 2 .. 3 run past them

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 32 first -1 heads 1 : (tensor<4x96xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.head_slice: first must be non-negative, got -1

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 32 first 0 heads 0 : (tensor<4x96xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.head_slice: heads must be positive, got 0

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 32 first 0 heads 2 : (tensor<4x96xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.head_slice: the result is 4x32; 2 heads of 32 of x's 4 rows are 4x64

// -----

func.func @f(%x: tensor<4x96xf32>) {
  %r = tg.head_slice %x head_dim 32 first 0 heads 2 : (tensor<4x96xf32>) -> tensor<4x64xbf16>
  func.return
}
// CHECK: tg.head_slice: res holds bf16 but x holds f32; they must agree

// -----

func.func @f(%a: tensor<4x32xf32>, %b: tensor<5x32xf32>) {
  %r = tg.join %a, %b : (tensor<4x32xf32>, tensor<5x32xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.join: part 0 is 4x32 and part 1 is 5x32; the rows 4 and 5 differ

// -----

func.func @f(%a: tensor<4x32xf32>, %b: tensor<4x32xbf16>) {
  %r = tg.join %a, %b : (tensor<4x32xf32>, tensor<4x32xbf16>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.join: part 1 holds bf16 but part 0 holds f32; they must agree

// -----

func.func @f(%a: tensor<4x32xf32>, %b: tensor<4x16xf32>) {
  %r = tg.join %a, %b : (tensor<4x32xf32>, tensor<4x16xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.join: the result is 4x64; the parts joined are 4x32 + 16

// -----

func.func @f(%a: tensor<4x32xf32>, %b: tensor<32xf32>) {
  %r = tg.join %a, %b : (tensor<4x32xf32>, tensor<32xf32>) -> tensor<4x64xf32>
  func.return
}
// CHECK: tg.join: part 1 must be a matrix (rank 2), got 32

// -----

func.func @f(%a: tensor<4x96xf32>, %b: tensor<96x16xf32>) {
  %r = tg.head_matmul %a, %b heads 5 : (tensor<4x96xf32>, tensor<96x16xf32>) -> tensor<4x80xf32>
  func.return
}
// CHECK: tg.head_matmul: a is 4x96; heads 5 does not divide its 96 columns

// -----

func.func @f(%a: tensor<4x64xf32>, %b: tensor<32x16xf32>) {
  %r = tg.head_matmul %a, %b heads 2 : (tensor<4x64xf32>, tensor<32x16xf32>) -> tensor<4x32xf32>
  func.return
}
// CHECK: tg.head_matmul: a is 4x64 and b is 32x16; b must stack the 2 heads' 32x16 matrices, 64 rows, got 32

// -----

func.func @f(%a: tensor<4x64xf32>, %b: tensor<64x16xf32>) {
  %r = tg.head_matmul %a, %b heads 2 : (tensor<4x64xf32>, tensor<64x16xf32>) -> tensor<4x16xf32>
  func.return
}
// CHECK: tg.head_matmul: the result is 4x16; 2 heads of 4x16 are 4x32

// -----

func.func @f(%a: tensor<4x64xf32>, %b: tensor<64x16xf32>) {
  %r = tg.head_matmul %a, %b heads 2 : (tensor<4x64xf32>, tensor<64x16xf32>) -> tensor<4x32xi32>
  func.return
}
// CHECK: tg.head_matmul: operands hold f32, so the result must be a float type, got i32

// -----

func.func @f(%x: tensor<4x8xi8>) {
  %r = tg.int_requant %x scale 0.5 : (tensor<4x8xi8>) -> tensor<4x8xi8>
  func.return
}
// CHECK: tg.int_requant: x must hold i32 (an integer accumulator), got i8

// -----

func.func @f(%x: tensor<4x8xi32>) {
  %r = tg.int_requant %x scale 0.5 : (tensor<4x8xi32>) -> tensor<4x8xi32>
  func.return
}
// CHECK: tg.int_requant: the result must hold i8, got i32

// -----

func.func @f(%x: tensor<4x8xi32>) {
  %r = tg.int_requant %x scale 0.5 : (tensor<4x8xi32>) -> tensor<4x4xi8>
  func.return
}
// CHECK: tg.int_requant: x is tensor<4x8xi32> but the result is tensor<4x4xi8>; the shapes must agree

// -----

func.func @f(%x: tensor<4x8xi32>) {
  %r = tg.int_requant %x scale -0.5 : (tensor<4x8xi32>) -> tensor<4x8xi8>
  func.return
}
// CHECK: tg.int_requant: scale must be positive, got -0.5

// -----

func.func @f(%x: tensor<4x8xi32>) {
  %r = tg.int_requant %x scale 0.5 zero_point 200 : (tensor<4x8xi32>) -> tensor<4x8xi8>
  func.return
}
// CHECK: tg.int_requant: zero_point 200 is outside i8's [-128, 127]

// -----

func.func @f(%x: tensor<4x8xf32>) {
  %r = tg.int_clamp %x lo 0 hi 1 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return
}
// CHECK: tg.int_clamp: x has element type f32; this op needs i8 or i32

// -----

func.func @f(%x: tensor<4x8xi8>) {
  %r = tg.int_clamp %x lo 5 hi 1 : (tensor<4x8xi8>) -> tensor<4x8xi8>
  func.return
}
// CHECK: tg.int_clamp: lo 5 is above hi 1

// -----

func.func @f(%x: tensor<4x8xi8>) {
  %r = tg.int_clamp %x lo -200 hi 1 : (tensor<4x8xi8>) -> tensor<4x8xi8>
  func.return
}
// CHECK: tg.int_clamp: lo -200 is outside i8's [-128, 127]

// -----

func.func @f(%x: tensor<4x8xi8>) {
  %r = tg.int_clamp %x lo 0 hi 1 : (tensor<4x8xi8>) -> tensor<4x8xi32>
  func.return
}
// CHECK: tg.int_clamp: res is tensor<4x8xi32> but x is tensor<4x8xi8>; they must be the same type
