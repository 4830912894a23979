// A whole greedy decode step written the way a model front end writes one (d = 256, 4 query
// heads of 64 over 2 kv heads, a 128-row cache, SwiGLU of 512, a 256-token vocabulary):
// rms_norm, q/k/v, neox rope, the KV-cache writes at pos, causal GQA attention, o, the
// residual, SwiGLU MLP, the residual, the final norm, lm_head and arg-max (the token, the
// layer's output and both caches are compared).
func.func @step(
    %x: tensor<1x256xbf16>,
    %attn_norm: tensor<1x256xbf16>,
    %wq: tensor<256x256xbf16>,
    %wk: tensor<256x128xbf16>,
    %wv: tensor<256x128xbf16>,
    %wo: tensor<256x256xbf16>,
    %ffn_norm: tensor<1x256xbf16>,
    %w_gate: tensor<256x512xbf16>,
    %w_up: tensor<256x512xbf16>,
    %w_down: tensor<512x256xbf16>,
    %k_cache: tensor<128x128xbf16>,
    %v_cache: tensor<128x128xbf16>,
    %cos: tensor<1x32xbf16>,
    %sin: tensor<1x32xbf16>,
    %pos: tensor<1xi32>,
    %final_norm: tensor<1x256xbf16>,
    %lm_head: tensor<256x256xbf16>) -> (tensor<1xi32>, tensor<1x256xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>) {
  %h = tg.rms_norm %x, %attn_norm eps 1.000000e-05 : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %q = tg.matmul %h, %wq : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %k = tg.matmul %h, %wk : (tensor<1x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128xbf16>
  %v = tg.matmul %h, %wv : (tensor<1x256xbf16>, tensor<256x128xbf16>) -> tensor<1x128xbf16>
  %qr = tg.rope %q, %cos, %sin head_dim 64 style "neox" : (tensor<1x256xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16>) -> tensor<1x256xbf16>
  %kr = tg.rope %k, %cos, %sin head_dim 64 style "neox" : (tensor<1x128xbf16>, tensor<1x32xbf16>, tensor<1x32xbf16>) -> tensor<1x128xbf16>
  %kc = tg.set_rows %k_cache, %kr, %pos : (tensor<128x128xbf16>, tensor<1x128xbf16>, tensor<1xi32>) -> tensor<128x128xbf16>
  %vc = tg.set_rows %v_cache, %v, %pos : (tensor<128x128xbf16>, tensor<1x128xbf16>, tensor<1xi32>) -> tensor<128x128xbf16>
  %attn = tg.attention %qr, %kc, %vc, %pos heads 4 kv_heads 2 head_dim 64 causal true scale 1.250000e-01 : (tensor<1x256xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>, tensor<1xi32>) -> tensor<1x256xbf16>
  %o = tg.matmul %attn, %wo : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %h2 = tg.add %x, %o : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %n2 = tg.rms_norm %h2, %ffn_norm eps 1.000000e-05 : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %gate = tg.matmul %n2, %w_gate : (tensor<1x256xbf16>, tensor<256x512xbf16>) -> tensor<1x512xbf16>
  %up = tg.matmul %n2, %w_up : (tensor<1x256xbf16>, tensor<256x512xbf16>) -> tensor<1x512xbf16>
  %act = tg.swiglu %gate, %up : (tensor<1x512xbf16>, tensor<1x512xbf16>) -> tensor<1x512xbf16>
  %down = tg.matmul %act, %w_down : (tensor<1x512xbf16>, tensor<512x256xbf16>) -> tensor<1x256xbf16>
  %out = tg.add %h2, %down : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %final = tg.rms_norm %out, %final_norm eps 1.000000e-05 : (tensor<1x256xbf16>, tensor<1x256xbf16>) -> tensor<1x256xbf16>
  %logits = tg.matmul %final, %lm_head : (tensor<1x256xbf16>, tensor<256x256xbf16>) -> tensor<1x256xbf16>
  %token = tg.argmax %logits : (tensor<1x256xbf16>) -> tensor<1xi32>
  func.return %token, %out, %kc, %vc : tensor<1xi32>, tensor<1x256xbf16>, tensor<128x128xbf16>, tensor<128x128xbf16>
}
