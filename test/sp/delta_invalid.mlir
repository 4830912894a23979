// The verifiers of the Gated DeltaNet's stages refuse, by name, what breaks their rules.
// RUN: spatial-opt %s --split-input-file --verify-diagnostics

sp.program @y op "tg.causal_conv" kind causal_conv phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [kw, w] f32 tile_bytes 4096
  %window = sp.interm "window" depth 1 page [1, w] bf16 tile_bytes 2048
  // expected-error @below {{causal_conv: the window is an sp.interm of f32}}
  sp.causal_conv %x, %x, %x -> %x, %x window %window taps 4 rows 70 cols 192 activation "silu"
}

// -----

sp.program @y op "tg.causal_conv" kind causal_conv phase linked tile 32x32 {
  %x = sp.fifo "x" depth 2 page [kw, w] f32 tile_bytes 4096
  %window = sp.interm "window" depth 1 page [1, w] f32 tile_bytes 4096
  // expected-error @below {{causal_conv: activation "gelu" is unknown}}
  sp.causal_conv %x, %x, %x -> %x, %x window %window taps 4 rows 70 cols 192 activation "gelu"
}

// -----

sp.program @o op "tg.gated_delta" kind gated_delta phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [kw, 1] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [kw, kw] f32
  %s = sp.interm "s" depth 1 page [h, w] f32 tile_bytes 4096
  // expected-error @below {{gated_delta: heads 4 must be a positive multiple of k_heads 3}}
  sp.gated_delta %q, %q, %q, %q, %q, %q -> %q, %q acc %dst state %s heads 4 k_heads 3 head_dim 32 v_head_dim 32 rows 70 scale 1.0
}

// -----

sp.program @o op "tg.gated_delta" kind gated_delta phase linked tile 32x32 {
  %q = sp.fifo "q" depth 2 page [kw, 1] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [kw, kw] bf16
  %s = sp.interm "s" depth 1 page [h, w] f32 tile_bytes 4096
  // expected-error @below {{gated_delta: the chunk's products accumulate in an f32 sp.acc}}
  sp.gated_delta %q, %q, %q, %q, %q, %q -> %q, %q acc %dst state %s heads 4 k_heads 2 head_dim 32 v_head_dim 32 rows 70 scale 1.0
}
