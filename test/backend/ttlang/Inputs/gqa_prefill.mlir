// Prefill attention with GQA: 64 queries over their own 64 keys, 4 heads of 64 over 2 kv
// heads, causal.
func.func @attn(%q: tensor<64x256xbf16>, %k: tensor<64x128xbf16>, %v: tensor<64x128xbf16>) -> tensor<64x256xbf16> {
  %o = tg.attention %q, %k, %v heads 4 kv_heads 2 head_dim 64 causal true scale 1.250000e-01 : (tensor<64x256xbf16>, tensor<64x128xbf16>, tensor<64x128xbf16>) -> tensor<64x256xbf16>
  func.return %o : tensor<64x256xbf16>
}
