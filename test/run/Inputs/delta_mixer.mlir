// The token mixer of examples/tiny_qwen3_next_prefill.mlir (the Gated DeltaNet half of the
// layer, up to its residual add): what the Triton backend runs whole (the MoE half has no
// Triton form yet).
func.func @tiny_qwen3_next_mixer(
    %x: tensor<40x128xbf16>,
    %attn_norm: tensor<1x128xbf16>,
    %w_qkv: tensor<128x256xbf16>,
    %w_z: tensor<128x128xbf16>,
    %w_b: tensor<128x4xbf16>,
    %w_a: tensor<128x4xbf16>,
    %conv_weight: tensor<4x256xbf16>,
    %A_log: tensor<1x4xf32>,
    %dt_bias: tensor<1x4xf32>,
    %delta_norm: tensor<1x32xbf16>,
    %w_out: tensor<128x128xbf16>,
    %conv_state: tensor<3x256xbf16>,
    %recurrent_state: tensor<128x32xbf16>) -> (tensor<40x128xbf16>, tensor<3x256xbf16>, tensor<128x32xbf16>) {
  %h = tg.rms_norm %x, %attn_norm eps 1.000000e-06 : (tensor<40x128xbf16>, tensor<1x128xbf16>) -> tensor<40x128xbf16>
  %qkv = tg.matmul %h, %w_qkv : (tensor<40x128xbf16>, tensor<128x256xbf16>) -> tensor<40x256xbf16>
  %z = tg.matmul %h, %w_z : (tensor<40x128xbf16>, tensor<128x128xbf16>) -> tensor<40x128xbf16>
  %b = tg.matmul %h, %w_b : (tensor<40x128xbf16>, tensor<128x4xbf16>) -> tensor<40x4xf32>
  %a = tg.matmul %h, %w_a : (tensor<40x128xbf16>, tensor<128x4xbf16>) -> tensor<40x4xf32>
  %conv, %conv_state_next = tg.causal_conv %qkv, %conv_weight, %conv_state activation "silu" : (tensor<40x256xbf16>, tensor<4x256xbf16>, tensor<3x256xbf16>) -> (tensor<40x256xbf16>, tensor<3x256xbf16>)
  %q = tg.head_slice %conv head_dim 32 first 0 heads 2 : (tensor<40x256xbf16>) -> tensor<40x64xbf16>
  %k = tg.head_slice %conv head_dim 32 first 2 heads 2 : (tensor<40x256xbf16>) -> tensor<40x64xbf16>
  %v = tg.head_slice %conv head_dim 32 first 4 heads 4 : (tensor<40x256xbf16>) -> tensor<40x128xbf16>
  %qn = tg.l2_norm %q eps 1.000000e-06 width 32 : (tensor<40x64xbf16>) -> tensor<40x64xbf16>
  %kn = tg.l2_norm %k eps 1.000000e-06 width 32 : (tensor<40x64xbf16>) -> tensor<40x64xbf16>
  %g = tg.decay %a, %A_log, %dt_bias : (tensor<40x4xf32>, tensor<1x4xf32>, tensor<1x4xf32>) -> tensor<40x4xf32>
  %beta = tg.sigmoid %b : (tensor<40x4xf32>) -> tensor<40x4xf32>
  %core, %recurrent_state_next = tg.gated_delta %qn, %kn, %v, %g, %beta, %recurrent_state heads 4 k_heads 2 head_dim 32 scale 1.767767e-01 : (tensor<40x64xbf16>, tensor<40x64xbf16>, tensor<40x128xbf16>, tensor<40x4xf32>, tensor<40x4xf32>, tensor<128x32xbf16>) -> (tensor<40x128xbf16>, tensor<128x32xbf16>)
  %core_norm = tg.rms_norm %core, %delta_norm eps 1.000000e-06 width 32 : (tensor<40x128xbf16>, tensor<1x32xbf16>) -> tensor<40x128xbf16>
  %z_act = tg.silu %z : (tensor<40x128xbf16>) -> tensor<40x128xbf16>
  %gated = tg.mul %core_norm, %z_act : (tensor<40x128xbf16>, tensor<40x128xbf16>) -> tensor<40x128xbf16>
  %attn_out = tg.matmul %gated, %w_out : (tensor<40x128xbf16>, tensor<128x128xbf16>) -> tensor<40x128xbf16>
  %h2 = tg.add %x, %attn_out : (tensor<40x128xbf16>, tensor<40x128xbf16>) -> tensor<40x128xbf16>
  func.return %h2, %conv_state_next, %recurrent_state_next : tensor<40x128xbf16>, tensor<3x256xbf16>, tensor<128x32xbf16>
}
