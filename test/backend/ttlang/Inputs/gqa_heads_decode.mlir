// Decode attention shaped like Llama-3's: one query, 16 heads of 128 over 2 kv heads, a
// 256-row cache, causal from pos. The planner serves 2 heads per item (an 8-tile query page),
// reads the keys in 2 blocks of 4 tiles and stores the output in 2 sub-blocks of 1x4 tiles.
func.func @attn(%q: tensor<1x2048xbf16>, %k: tensor<256x256xbf16>, %v: tensor<256x256xbf16>, %pos: tensor<1xi32>) -> tensor<1x2048xbf16> {
  %o = tg.attention %q, %k, %v, %pos heads 16 kv_heads 2 head_dim 128 causal true scale 8.838835e-02 : (tensor<1x2048xbf16>, tensor<256x256xbf16>, tensor<256x256xbf16>, tensor<1xi32>) -> tensor<1x2048xbf16>
  func.return %o : tensor<1x2048xbf16>
}
