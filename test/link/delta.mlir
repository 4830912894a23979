// link of the Gated DeltaNet ops: tg.decay is a map with two row broadcasts; tg.l2_norm a row
// reduction (whole, or blocked when its group is wider than the f32 accumulator);
// tg.causal_conv and tg.gated_delta one section each whose K loop walks time, the carried state
// read once and written once per item (two stores: the output per K block, the state after the
// last). tile chooses the chunk (the K block) and records every chunk size's cycles. Heads that
// do not fill whole tiles and kernels over a tile row are refused by name.
// RUN: not spatial-opt %s --split-input-file -p 'link{target=wormhole_n150}' 2>&1 | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150}' 2>&1 | filecheck %s --check-prefix=PLAN
// RUN: not spatial-opt %s --split-input-file -p 'spatial-pipeline{target=h100}' 2>&1 | filecheck %s --check-prefix=GPU

func.func @layer(%x: tensor<70x192xf32>, %w: tensor<4x192xf32>, %cs: tensor<3x192xf32>, %a: tensor<70x4xf32>, %al: tensor<1x4xf32>, %dt: tensor<1x4xf32>, %v: tensor<70x128xf32>, %st: tensor<128x32xf32>) -> (tensor<70x128xf32>, tensor<128x32xf32>, tensor<3x192xf32>) {
  %y, %ns = tg.causal_conv %x, %w, %cs : (tensor<70x192xf32>, tensor<4x192xf32>, tensor<3x192xf32>) -> (tensor<70x192xf32>, tensor<3x192xf32>)
  %n = tg.l2_norm %y eps 1.0e-06 width 32 : (tensor<70x192xf32>) -> tensor<70x192xf32>
  %q = tg.head_slice %n head_dim 32 first 0 heads 2 : (tensor<70x192xf32>) -> tensor<70x64xf32>
  %k = tg.head_slice %n head_dim 32 first 2 heads 2 : (tensor<70x192xf32>) -> tensor<70x64xf32>
  %g = tg.decay %a, %al, %dt : (tensor<70x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<70x4xf32>
  %b = tg.sigmoid %a : (tensor<70x4xf32>) -> tensor<70x4xf32>
  %o, %s = tg.gated_delta %q, %k, %v, %g, %b, %st heads 4 k_heads 2 head_dim 32 scale 0.176776692 : (tensor<70x64xf32>, tensor<70x64xf32>, tensor<70x128xf32>, tensor<70x4xf32>, tensor<70x4xf32>, tensor<128x32xf32>) -> (tensor<70x128xf32>, tensor<128x32xf32>)
  func.return %o, %s, %ns : tensor<70x128xf32>, tensor<128x32xf32>, tensor<3x192xf32>
}
// CHECK-LABEL: sp.program @y op "tg.causal_conv" kind causal_conv phase linked
// CHECK:      sp.tensor @ns : tensor<3x192xf32> tiles 1x6 output tiled
// CHECK:      %window = sp.interm "window" depth 1 page [1, w] f32
// CHECK:      sp.load @cs[r0, c0] x [1, w] -> %state
// CHECK-NEXT: sp.load @w[0, c0] x [1, w] -> %weight
// CHECK-NEXT: sp.load @x[k0, c0] x [kw, w] -> %x
// CHECK-NEXT: sp.causal_conv %x, %weight, %state -> %out, %new_state window %window taps 4 rows 70 cols 192 activation "silu"
// CHECK-NEXT: sp.store %out -> @y[k0, c0] x [kw, w]
// CHECK-NEXT: sp.store %new_state -> @ns[r0, c0] x [1, w]
// CHECK-LABEL: sp.program @n op "tg.l2_norm" kind row_reduce
// CHECK:      sp.row_reduce whole l2_norm %in0 -> %out width 32 cols 192 rows 70 eps 1.0e-06
// CHECK-LABEL: sp.program @g op "tg.decay" kind map
// CHECK:      sp.map decay %in0, %in1, %in2 [full, rows, rows] -> %out valid 70x4
// CHECK-LABEL: sp.program @o op "tg.gated_delta" kind gated_delta phase linked
// CHECK:      %state = sp.fifo "state" depth 1 page [h, w] f32
// CHECK:      %dst = sp.acc "dst" page [kw, kw] f32
// CHECK-NEXT: %s = sp.interm "s" depth 1 page [h, w] f32
// CHECK-NEXT: sp.load @st[r0, c0] x [h, w] -> %state
// CHECK-NEXT: sp.load @q[k0, r0 floordiv 2] x [kw, 1] -> %q
// CHECK-NEXT: sp.load @k[k0, r0 floordiv 2] x [kw, 1] -> %k
// CHECK-NEXT: sp.load @v[k0, r0 + c0] x [kw, w] -> %v
// CHECK-NEXT: sp.load @g[k0, r0 floordiv 32] x [kw, 1] -> %g
// CHECK-NEXT: sp.load @b[k0, r0 floordiv 32] x [kw, 1] -> %beta
// CHECK-NEXT: sp.gated_delta %q, %k, %v, %g, %beta, %state -> %out, %new_state acc %dst state %s heads 4 k_heads 2 head_dim 32 v_head_dim 32 rows 70 scale 1.7677669e-01
// CHECK-NEXT: sp.store %out -> @o[k0, r0 + c0] x [kw, w]
// CHECK-NEXT: sp.store %new_state -> @s[r0, c0] x [h, w]

// The chunk is the K block: 32, 64 (2 x 2 tiles fit wormhole's 4-tile f32 accumulator) or 96
// rows (3 x 3 do not); each priced, the cheapest chosen, the others recorded.
// PLAN-LABEL: sp.program @o op "tg.gated_delta"
// PLAN:       sp.work @s block 1x1 k 3 by 1
// PLAN:       chunk = "chunk 32 rows (32 rows: [[C32:[0-9]+]] cycles); runner-up 96 rows: a C x C block over the 4-tile f32 accumulator"
// GPU-LABEL:  sp.program @o op "tg.gated_delta"
// GPU:        chunk = "chunk {{[0-9]+}} rows ({{[0-9]+}} rows: {{[0-9]+}} cycles); runner-up {{[0-9]+}} rows: {{[0-9]+}} cycles"

// -----

func.func @wide_head(%q: tensor<4x96xf32>, %v: tensor<4x96xf32>, %g: tensor<4x2xf32>, %st: tensor<96x48xf32>) -> tensor<4x96xf32> {
  %o, %s = tg.gated_delta %q, %q, %v, %g, %g, %st heads 2 k_heads 2 head_dim 48 scale 0.5 : (tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x96xf32>, tensor<4x2xf32>, tensor<4x2xf32>, tensor<96x48xf32>) -> (tensor<4x96xf32>, tensor<96x48xf32>)
  func.return %o : tensor<4x96xf32>
}
// CHECK: NotLowered: tg.gated_delta: head_dim 48 does not fill whole 32-column tiles; an item holds a head's state as whole tiles

// -----

func.func @long_kernel(%x: tensor<4x64xf32>, %w: tensor<40x64xf32>, %cs: tensor<39x64xf32>) -> tensor<4x64xf32> {
  %y, %n = tg.causal_conv %x, %w, %cs : (tensor<4x64xf32>, tensor<40x64xf32>, tensor<39x64xf32>) -> (tensor<4x64xf32>, tensor<39x64xf32>)
  func.return %y : tensor<4x64xf32>
}
// CHECK: NotLowered: tg.causal_conv: a kernel of 40 taps does not fit one 32-row tile row; the section holds the taps and the K - 1 state rows in one
