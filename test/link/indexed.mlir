// link of rope and of the ops whose rows a runtime value names: gather_rows (an embedding),
// set_rows (a KV-cache write at a runtime position; the cache is carried state, updated in place
// when nothing reads the old cache afterwards, else copied first) and argmax (a K loop over the
// row's tiles, the running maximum in local memory, one i32 tile of the result per tile row).
// RUN: spatial-opt %s --split-input-file -p link | filecheck %s

func.func @rope(%x: tensor<8x256xbf16>, %c: tensor<8x32xbf16>, %s: tensor<8x32xbf16>, %y: tensor<8x64xbf16>, %c2: tensor<8x8xbf16>, %s2: tensor<8x8xbf16>) -> (tensor<8x256xbf16>, tensor<8x64xbf16>) {
  %a = tg.rope %x, %c, %s head_dim 64 style "neox" : (tensor<8x256xbf16>, tensor<8x32xbf16>, tensor<8x32xbf16>) -> tensor<8x256xbf16>
  %b = tg.rope %y, %c2, %s2 head_dim 16 style "interleaved" : (tensor<8x64xbf16>, tensor<8x8xbf16>, tensor<8x8xbf16>) -> tensor<8x64xbf16>
  func.return %a, %b : tensor<8x256xbf16>, tensor<8x64xbf16>
}
// CHECK-LABEL: sp.entry @rope(@x, @c, @s, @y, @c2, @s2) -> (@a, @b)
// CHECK-NEXT:  sp.program @a op "tg.rope" kind rope phase linked tile 32x32 attributes {heads = "an item holds whole heads of 64 columns: 2 tile(s) per head"} {
// CHECK:         %cos = sp.fifo "cos" depth 2 page [h, 1] bf16 tile_bytes 2048
// CHECK:         sp.load @x[r0, c0] x [h, w] -> %in0
// CHECK-NEXT:    sp.load @c[r0, 0] x [h, 1] -> %cos
// CHECK-NEXT:    sp.load @s[r0, 0] x [h, 1] -> %sin
// CHECK-NEXT:    sp.rope neox %in0, %cos, %sin -> %out head_dim 64 valid 8x256
// CHECK-NEXT:    sp.store %out -> @a[r0 + ti, c0 + tj] x [sh, sw]
// CHECK:       sp.program @b op "tg.rope" kind rope phase linked tile 32x32 attributes {heads = "an item holds whole heads of 16 columns: 2 heads per tile"} {
// CHECK:         sp.rope interleaved %in0, %cos, %sin -> %out head_dim 16 valid 8x64

// -----

func.func @rows(%t: tensor<100x72xbf16>, %ids: tensor<5xi32>, %cache: tensor<64x72xbf16>, %pos: tensor<1xi32>) -> (tensor<64x72xbf16>, tensor<5xi32>) {
  %x = tg.gather_rows %t, %ids : (tensor<100x72xbf16>, tensor<5xi32>) -> tensor<5x72xbf16>
  %c = tg.set_rows %cache, %x, %pos : (tensor<64x72xbf16>, tensor<5x72xbf16>, tensor<1xi32>) -> tensor<64x72xbf16>
  %i = tg.argmax %x : (tensor<5x72xbf16>) -> tensor<5xi32>
  func.return %c, %i : tensor<64x72xbf16>, tensor<5xi32>
}
// The updated cache IS the cache: the function's result is @cache.
// CHECK-LABEL: sp.entry @rows(@t, @ids, @cache, @pos) -> (@cache, @i)
// CHECK-NEXT:  sp.program @x op "tg.gather_rows" kind gather phase linked tile 32x32 {
// CHECK-NEXT:    sp.tensor @t : tensor<100x72xbf16> tiles 4x3 input rows
// CHECK-NEXT:    sp.tensor @ids : tensor<5xi32> tiles 1x1 input rows attributes {interval = array<i64: -2147483648, 2147483647>}
// CHECK-NEXT:    sp.tensor @x : tensor<5x72xbf16> tiles 1x3 scratch rows
// CHECK-NEXT:    %out = sp.fifo "out" depth 2 page [1, w] bf16 tile_bytes 2048
// CHECK-NEXT:    sp.gather @t by @ids[r0, c0] x [1, w] count 5 -> %out
// CHECK-NEXT:    sp.store %out -> @x[r0, c0] x [1, w]
// CHECK:       sp.program @cache op "tg.set_rows" kind scatter phase linked tile 32x32 attributes {carried = "in place: @cache is the cache and its update"} {
// CHECK-NEXT:    sp.tensor @x : tensor<5x72xbf16> tiles 1x3 input rows
// CHECK-NEXT:    sp.tensor @pos : tensor<1xi32> tiles 1x1 input rows
// CHECK-NEXT:    sp.tensor @cache : tensor<64x72xbf16> tiles 2x3 output rows
// CHECK-NEXT:    %in0 = sp.fifo "in0" depth 2 page [1, w] bf16 tile_bytes 2048
// CHECK-NEXT:    sp.load @x[r0, c0] x [1, w] -> %in0
// CHECK-NEXT:    sp.scatter %in0 -> @cache at @pos[r0, c0] x [1, w] count 5
// The arg-max of tile row c0 is result tile c0; the prelude's interval of the indices is recorded.
// CHECK:       sp.program @i op "tg.argmax" kind argmax phase linked tile 32x32 {
// CHECK:         sp.tensor @i : tensor<5xi32> tiles 1x1 output rows attributes {interval = array<i64: 0, 71>}
// CHECK:         %best = sp.interm "best" depth 1 page [1, 2] f32 tile_bytes 4096
// CHECK-NEXT:    sp.load @x[c0, k0] x [1, kw] -> %in0
// CHECK-NEXT:    sp.argmax %in0 -> %out state %best cols 72 rows 5
// CHECK-NEXT:    sp.store %out -> @i[r0, c0] x [1, 1]

// -----

// The old cache is returned as well: the update cannot be in place. A copy section makes the
// result, then the rows land in it.
func.func @keep(%cache: tensor<64x72xf32>, %rows: tensor<5x72xf32>, %pos: tensor<1xi32>) -> (tensor<64x72xf32>, tensor<64x72xf32>) {
  %c = tg.set_rows %cache, %rows, %pos : (tensor<64x72xf32>, tensor<5x72xf32>, tensor<1xi32>) -> tensor<64x72xf32>
  func.return %c, %cache : tensor<64x72xf32>, tensor<64x72xf32>
}
// CHECK-LABEL: sp.entry @keep(@cache, @rows, @pos) -> (@c, @cache)
// CHECK-NEXT:  sp.program @c op "tg.set_rows" kind map phase linked tile 32x32 attributes {carried = "copied: the old @cache is read after the update"} {
// CHECK:         sp.map copy %in0 [full] -> %out valid 64x72
// CHECK:       sp.program @c_1 op "tg.set_rows" kind scatter phase linked tile 32x32 {
// CHECK:         sp.scatter %in0 -> @c at @pos[r0, c0] x [1, w] count 5
