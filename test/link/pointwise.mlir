// link of the pointwise ops: one map section each (load the item's block, map, store its
// sub-blocks); a 1 x C operand is read once per item and broadcast over rows; a transpose reads
// the transposed block; integer ops keep their element type and interval. After tile, the plan
// records its block, sub-block and why.
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150}' | filecheck %s --check-prefix=PLAN

func.func @pointwise(%x: tensor<40x72xbf16>, %b: tensor<1x72xbf16>) -> tensor<40x72xbf16> {
  %s = tg.gelu %x approximate "tanh" : (tensor<40x72xbf16>) -> tensor<40x72xbf16>
  %c = tg.softcap %s cap 3.0 : (tensor<40x72xbf16>) -> tensor<40x72xbf16>
  %y = tg.mul %c, %b : (tensor<40x72xbf16>, tensor<1x72xbf16>) -> tensor<40x72xbf16>
  func.return %y : tensor<40x72xbf16>
}
// CHECK-LABEL: sp.entry @pointwise(@x, @b) -> (@y)
// CHECK:       sp.program @s op "tg.gelu" kind map phase linked tile 32x32 {
// CHECK-NEXT:    sp.tensor @x : tensor<40x72xbf16> tiles 2x3 input tiled
// CHECK-NEXT:    sp.tensor @s : tensor<40x72xbf16> tiles 2x3 scratch tiled
// CHECK-NEXT:    %in0 = sp.fifo "in0" depth 2 page [h, w] bf16 tile_bytes 2048
// CHECK-NEXT:    %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// CHECK-NEXT:    sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.map gelu_tanh %in0 [full] -> %out valid 40x72
// CHECK-NEXT:    sp.store %out -> @s[r0 + ti, c0 + tj] x [sh, sw]
// CHECK:       sp.program @c op "tg.softcap"
// CHECK:         sp.map softcap %in0 [full] -> %out valid 40x72 scalar 3.0e+00
// CHECK:       sp.program @y op "tg.mul"
// CHECK:         sp.tensor @b : tensor<1x72xbf16> tiles 1x3 input rows
// CHECK:         %in1 = sp.fifo "in1" depth 2 page [1, w] bf16 tile_bytes 2048
// CHECK:         sp.load @b[0, c0] x [1, w] -> %in1
// CHECK-NEXT:    sp.map mul_row %in0, %in1 [full, rows] -> %out valid 40x72

// Tensix: the sub-block is what the f32 dest holds (4 tiles); the block is priced by the cost
// model and its reason recorded.
// PLAN-LABEL: sp.program @s op "tg.gelu" kind map phase sized
// PLAN:         sp.work @s block {{[0-9]+}}x{{[0-9]+}} k 1 by 1
// PLAN-NEXT:    sp.plan blocked grid 8x8 block {{[0-9]+}}x{{[0-9]+}} packing split predicted {{[0-9]+}} bound {{dram|noc|compute}} runner_up "block {{.*}}" {{[0-9]+}} attributes {why = "{{(dram|noc|compute)}}-bound: {{[0-9]+}} item(s)
// PLAN:         sp.map gelu_tanh %in0 [full] -> %out valid 40x72 on compute
// PLAN-NEXT:    sp.store %out -> @s[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1

// -----

func.func @more(%a: tensor<5x40xf32>, %b: tensor<5x40xf32>) -> (tensor<5x40xf32>, tensor<40x5xf32>) {
  %s = tg.swiglu %a, %b : (tensor<5x40xf32>, tensor<5x40xf32>) -> tensor<5x40xf32>
  %d = tg.sub %s, %a : (tensor<5x40xf32>, tensor<5x40xf32>) -> tensor<5x40xf32>
  %r = tg.relu %d : (tensor<5x40xf32>) -> tensor<5x40xf32>
  %g = tg.sigmoid %r : (tensor<5x40xf32>) -> tensor<5x40xf32>
  %h0 = tg.scale %g factor 0.5 : (tensor<5x40xf32>) -> tensor<5x40xf32>
  %h1 = tg.silu %h0 : (tensor<5x40xf32>) -> tensor<5x40xf32>
  %h = tg.gelu %h1 : (tensor<5x40xf32>) -> tensor<5x40xf32>
  %t = tg.transpose %h : (tensor<5x40xf32>) -> tensor<40x5xf32>
  func.return %h, %t : tensor<5x40xf32>, tensor<40x5xf32>
}
// CHECK-LABEL: sp.entry @more(@a, @b) -> (@h, @t)
// CHECK:         sp.map swiglu %in0, %in1 [full, full] -> %out valid 5x40
// CHECK:         sp.map sub %in0, %in1 [full, full] -> %out valid 5x40
// CHECK:         sp.map relu %in0 [full] -> %out valid 5x40
// CHECK:         sp.map sigmoid %in0 [full] -> %out valid 5x40
// CHECK:         sp.map scale %in0 [full] -> %out valid 5x40 scalar 5.0e-01
// CHECK:         sp.map silu %in0 [full] -> %out valid 5x40
// CHECK:         sp.map gelu %in0 [full] -> %out valid 5x40
// A transpose reads the block of x that transposes to the item's block.
// CHECK:       sp.program @t op "tg.transpose"
// CHECK:         %in0 = sp.fifo "in0" depth 2 page [w, h] f32 tile_bytes 4096
// CHECK:         sp.load @h[c0, r0] x [w, h] -> %in0
// CHECK-NEXT:    sp.map transpose %in0 [transposed] -> %out valid 40x5

// -----

// Integers: exact, i32 in the accumulator; the prelude's interval of every integer tensor is
// recorded on it.
func.func @ints(%a: tensor<4x64xi8>, %b: tensor<4x64xi8>) -> tensor<4x64xi8> {
  %y = tg.add %a, %b : (tensor<4x64xi8>, tensor<4x64xi8>) -> tensor<4x64xi8>
  %r = tg.relu %y : (tensor<4x64xi8>) -> tensor<4x64xi8>
  func.return %r : tensor<4x64xi8>
}
// CHECK-LABEL: sp.entry @ints(@a, @b) -> (@r)
// CHECK:         sp.tensor @a : tensor<4x64xi8> tiles 1x2 input tiled attributes {interval = array<i64: -128, 127>}
// CHECK:         sp.tensor @y : tensor<4x64xi8> tiles 1x2 scratch tiled attributes {interval = array<i64: -128, 127>}
// CHECK:         sp.map add %in0, %in1 [full, full] -> %out valid 4x64
// CHECK:         sp.tensor @r : tensor<4x64xi8> tiles 1x2 output tiled attributes {interval = array<i64: 0, 127>}
// CHECK:         sp.map relu %in0 [full] -> %out valid 4x64
