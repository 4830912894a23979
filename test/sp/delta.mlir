// The Gated DeltaNet's stages (sp.causal_conv, sp.gated_delta) print and parse back in the custom
// and the generic form (their verifiers: delta_invalid.mlir).
// RUN: spatial-opt %s --split-input-file | spatial-opt --split-input-file --print-op-generic | spatial-opt --split-input-file | filecheck %s

sp.program @y op "tg.causal_conv" kind causal_conv phase linked tile 32x32 {
  %state = sp.fifo "state" depth 2 page [1, w] f32 tile_bytes 4096
  %weight = sp.fifo "weight" depth 2 page [1, w] f32 tile_bytes 4096
  %x = sp.fifo "x" depth 2 page [kw, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [kw, w] f32 tile_bytes 4096
  %new_state = sp.fifo "new_state" depth 2 page [1, w] f32 tile_bytes 4096
  %window = sp.interm "window" depth 1 page [1, w] f32 tile_bytes 4096
  sp.causal_conv %x, %weight, %state -> %out, %new_state window %window taps 4 rows 70 cols 192 activation "silu"
}
// CHECK: sp.causal_conv %x, %weight, %state -> %out, %new_state window %window taps 4 rows 70 cols 192 activation "silu"

// -----

sp.program @o op "tg.gated_delta" kind gated_delta phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [kw, 1] f32 tile_bytes 4096
  %v = sp.fifo "v" depth 2 page [kw, w] f32 tile_bytes 4096
  %g = sp.fifo "g" depth 2 page [kw, 1] f32 tile_bytes 4096
  %state = sp.fifo "state" depth 1 page [h, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 2 page [kw, w] f32 tile_bytes 4096
  %new_state = sp.fifo "new_state" depth 1 page [h, w] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [kw, kw] f32
  %s = sp.interm "s" depth 1 page [h, w] f32 tile_bytes 4096
  sp.gated_delta %q, %q, %v, %g, %g, %state -> %out, %new_state acc %dst state %s heads 4 k_heads 2 head_dim 32 v_head_dim 32 rows 70 scale 1.7677669e-01
}
// CHECK: sp.gated_delta %q, %q, %v, %g, %g, %state -> %out, %new_state acc %dst state %s heads 4 k_heads 2 head_dim 32 v_head_dim 32 rows 70 scale 1.7677669e-01
