// Prefill attention with 16 heads of 64 over 4 kv heads: the planner serves 2 heads of one kv
// head per item (a 4-tile query page), so the printer selects each head's columns.
func.func @attn(%q: tensor<64x1024xbf16>, %k: tensor<64x256xbf16>, %v: tensor<64x256xbf16>) -> tensor<64x1024xbf16> {
  %o = tg.attention %q, %k, %v heads 16 kv_heads 4 head_dim 64 causal true scale 1.250000e-01 : (tensor<64x1024xbf16>, tensor<64x256xbf16>, tensor<64x256xbf16>) -> tensor<64x1024xbf16>
  func.return %o : tensor<64x1024xbf16>
}
