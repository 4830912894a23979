// link refuses, by name and with the numbers, what it cannot lay out: a shape an op cannot take
// and a datatype the chip does not have, at the op, never with a traceback.
// RUN: not spatial-opt %s --split-input-file -p link 2>&1 | filecheck %s
// RUN: not spatial-opt %s --split-input-file -p "link{target=plasticine}" 2>&1 | filecheck %s --check-prefix=RDU

// Groups of 48 columns: a group boundary inside a tile.
func.func @norm(%x: tensor<4x96xf32>, %w: tensor<1x48xf32>) -> tensor<4x96xf32> {
  %y = tg.rms_norm %x, %w eps 1.0e-06 width 48 : (tensor<4x96xf32>, tensor<1x48xf32>) -> tensor<4x96xf32>
  func.return %y : tensor<4x96xf32>
}
// The diagnostic is at the op it refuses: file:line:col, the op's line and a caret, no module.
// CHECK:      refusals.mlir:8:3: error: NotLowered: tg.rms_norm: groups of 48 columns do not fill whole 32-column tiles (x has 96 columns), so two groups would share a tile
// CHECK-NEXT:   %y = tg.rms_norm %x, %w eps
// CHECK-NEXT:   ^
// CHECK-NOT:  "builtin.module"

// -----

func.func @rope(%x: tensor<4x96xf32>, %c: tensor<4x24xf32>, %s: tensor<4x24xf32>) -> tensor<4x96xf32> {
  %y = tg.rope %x, %c, %s head_dim 48 style "neox" : (tensor<4x96xf32>, tensor<4x24xf32>, tensor<4x24xf32>) -> tensor<4x96xf32>
  func.return %y : tensor<4x96xf32>
}
// CHECK: NotLowered: tg.rope: head_dim 48 neither fills whole 32-column tiles nor divides one, so heads straddle tiles

// -----

func.func @attention(%q: tensor<1x96xf32>, %k: tensor<64x48xf32>, %v: tensor<64x48xf32>) -> tensor<1x96xf32> {
  %y = tg.attention %q, %k, %v heads 2 kv_heads 1 head_dim 48 causal true scale 0.14 : (tensor<1x96xf32>, tensor<64x48xf32>, tensor<64x48xf32>) -> tensor<1x96xf32>
  func.return %y : tensor<1x96xf32>
}
// CHECK: NotLowered: tg.attention: head_dim 48 does not fill whole 32-column tiles; the flash form reads a head as whole tiles

// -----

// Plasticine's datapath is 32-bit: bf16 is refused at the first op that uses it, by name.
func.func @embed(%t: tensor<64x32xbf16>, %ids: tensor<4xi32>) -> tensor<4x32xbf16> {
  %y = tg.gather_rows %t, %ids : (tensor<64x32xbf16>, tensor<4xi32>) -> tensor<4x32xbf16>
  func.return %y : tensor<4x32xbf16>
}
// RDU: UnsupportedDatatype: tg.gather_rows: target plasticine has no datatype 'bf16'; it has f32, i32

// -----

// D = 40: expert e's gate block starts at row 40 e, inside a tile.
func.func @ragged(%x: tensor<1x40xf32>, %r: tensor<40x4xf32>, %g: tensor<160x32xf32>, %u: tensor<160x32xf32>, %d: tensor<128x40xf32>) -> tensor<1x40xf32> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" : (tensor<1x40xf32>, tensor<40x4xf32>, tensor<160x32xf32>, tensor<160x32xf32>, tensor<128x40xf32>) -> tensor<1x40xf32>
  func.return %y : tensor<1x40xf32>
}
// CHECK: refusals.mlir:46:3: error: NotLowered: tg.moe: the experts of w_gate and w_up start every 40 rows, not at whole 32-row tiles

// -----

// A chip's share of the experts (experts_held) in a whole function: no chip to hold them (a
// per-chip function links it: test/link/mesh/moe_experts.mlir).
func.func @held(%x: tensor<1x64xf32>, %r: tensor<64x4xf32>, %g: tensor<128x32xf32>, %u: tensor<128x32xf32>, %d: tensor<64x64xf32>) -> tensor<1x64xf32> {
  %y = tg.moe %x, %r, %g, %u, %d top_k 2 scores "softmax" experts_held 2 : (tensor<1x64xf32>, tensor<64x4xf32>, tensor<128x32xf32>, tensor<128x32xf32>, tensor<64x64xf32>) -> tensor<1x64xf32>
  func.return %y : tensor<1x64xf32>
}
// CHECK: refusals.mlir:56:3: error: NotLowered: tg.moe: holds 2 of the router's 4 experts (experts_held, the tensor-parallel experts plan): a chip's share, which only a per-chip function over a mesh has
