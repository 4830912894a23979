// The prelude's layouts applied (docs/passes.md#link-one-bridge-per-tensor): each tensor has ONE layout for the whole function;
// a section that wants the other reads or writes the tensor's twin, and ONE bridge section
// (tilize / untilize) makes it, shared by every later reader. One-row tensors (the same tile row
// either way) and carried state (a cache updated in place) are never bridged.
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s

// @l is a 64-row matmul result (tiled). Two arg-maxes read it as rows: one untilize, before the
// first, and both read the twin; the add reads @l itself, tiled.
func.func @two_readers(%a: tensor<64x32xf32>, %w: tensor<32x128xf32>) -> (tensor<64xi32>, tensor<64xi32>, tensor<64x128xf32>) {
  %l = tg.matmul %a, %w : (tensor<64x32xf32>, tensor<32x128xf32>) -> tensor<64x128xf32>
  %i = tg.argmax %l : (tensor<64x128xf32>) -> tensor<64xi32>
  %s = tg.add %l, %l : (tensor<64x128xf32>, tensor<64x128xf32>) -> tensor<64x128xf32>
  %j = tg.argmax %l : (tensor<64x128xf32>) -> tensor<64xi32>
  func.return %i, %j, %s : tensor<64xi32>, tensor<64xi32>, tensor<64x128xf32>
}
// CHECK-LABEL: sp.entry @two_readers(@a, @w) -> (@i, @j, @s)
// CHECK:       sp.program @l op "tg.matmul"
// CHECK:         sp.tensor @l : tensor<64x128xf32> tiles 2x4 scratch tiled
// CHECK:       sp.program @l__rows op "untilize" kind untilize phase linked tile 32x32 attributes {bridge = "@l is tiled for the whole function and a section reads it in rows"} {
// CHECK-NEXT:    sp.tensor @l : tensor<64x128xf32> tiles 2x4 input tiled
// CHECK-NEXT:    sp.tensor @l__rows : tensor<64x128xf32> tiles 2x4 scratch rows
// CHECK:         sp.map untilize %in0 [full] -> %out valid 64x128
// CHECK:       sp.program @i op "tg.argmax"
// CHECK-NEXT:    sp.tensor @l__rows : tensor<64x128xf32> tiles 2x4 input rows
// CHECK:       sp.program @s op "tg.add"
// CHECK-NEXT:    sp.tensor @l : tensor<64x128xf32> tiles 2x4 input tiled
// CHECK-NOT:   op "untilize"
// CHECK:       sp.program @j op "tg.argmax"
// CHECK-NEXT:    sp.tensor @l__rows : tensor<64x128xf32> tiles 2x4 input rows
// CHECK-NOT:   op "untilize"
// CHECK:       // {{-----}}

// -----

// An embedding writes rows; its result feeds a matmul (tiled): the gather writes the twin and
// ONE tilize after it makes @x, which both later readers read.
func.func @embed(%t: tensor<100x64xf32>, %ids: tensor<40xi32>, %w: tensor<64x64xf32>) -> (tensor<40x64xf32>, tensor<40x64xf32>) {
  %x = tg.gather_rows %t, %ids : (tensor<100x64xf32>, tensor<40xi32>) -> tensor<40x64xf32>
  %y = tg.matmul %x, %w : (tensor<40x64xf32>, tensor<64x64xf32>) -> tensor<40x64xf32>
  %z = tg.mul %x, %y : (tensor<40x64xf32>, tensor<40x64xf32>) -> tensor<40x64xf32>
  func.return %y, %z : tensor<40x64xf32>, tensor<40x64xf32>
}
// CHECK-LABEL: sp.entry @embed(@t, @ids, @w) -> (@y, @z)
// CHECK:       sp.program @x__rows op "tg.gather_rows"
// CHECK:         sp.tensor @x__rows : tensor<40x64xf32> tiles 2x2 scratch rows
// CHECK:       sp.program @x op "tilize" kind tilize phase linked tile 32x32 attributes {bridge = "@x is tiled for the whole function and a section writes it in rows"} {
// CHECK-NEXT:    sp.tensor @x__rows : tensor<40x64xf32> tiles 2x2 input rows
// CHECK-NEXT:    sp.tensor @x : tensor<40x64xf32> tiles 2x2 scratch tiled
// CHECK:       sp.program @y op "tg.matmul"
// CHECK-NEXT:    sp.tensor @x : tensor<40x64xf32> tiles 2x2 input tiled
// CHECK:       sp.program @z op "tg.mul"
// CHECK-NEXT:    sp.tensor @x : tensor<40x64xf32> tiles 2x2 input tiled
// CHECK-NOT:   op "tilize"
// CHECK:       // {{-----}}

// -----

// Carried state: the cache attention reads as tiles is updated in place, one tensor for the cache
// and its update, never bridged; a one-row tensor (the new row, the query) is never bridged.
func.func @decode(%q: tensor<1x64xf32>, %kc: tensor<128x32xf32>, %vc: tensor<128x32xf32>, %k: tensor<1x32xf32>, %pos: tensor<1xi32>) -> (tensor<1x64xf32>, tensor<128x32xf32>, tensor<1xi32>) {
  %kc2 = tg.set_rows %kc, %k, %pos : (tensor<128x32xf32>, tensor<1x32xf32>, tensor<1xi32>) -> tensor<128x32xf32>
  %o = tg.attention %q, %kc2, %vc, %pos heads 2 kv_heads 1 head_dim 32 causal true scale 0.17 : (tensor<1x64xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<1xi32>) -> tensor<1x64xf32>
  %t = tg.argmax %o : (tensor<1x64xf32>) -> tensor<1xi32>
  func.return %o, %kc2, %t : tensor<1x64xf32>, tensor<128x32xf32>, tensor<1xi32>
}
// CHECK-LABEL: sp.entry @decode(@q, @kc, @vc, @k, @pos) -> (@o, @kc, @t)
// CHECK-NOT:   op "{{tilize|untilize}}"
// CHECK:       sp.program @kc op "tg.set_rows" kind scatter phase linked tile 32x32 attributes {carried = "in place: @kc is the cache and its update"} {
// CHECK:         sp.tensor @kc : tensor<128x32xf32> tiles 4x1 output tiled
// CHECK:         sp.scatter %in0 -> @kc at @pos[r0, c0] x [1, w] count 1
// CHECK:       sp.program @o{{(__splits)?}} op "tg.attention"
// CHECK:         sp.tensor @kc : tensor<128x32xf32> tiles 4x1 input tiled
// CHECK:       sp.program @t op "tg.argmax"
// CHECK-NEXT:    sp.tensor @o : tensor<1x64xf32> tiles 1x2 input rows
// CHECK-NOT:   op "{{tilize|untilize}}"
