// docs/passes.md#tile-single-buffering-where-nothing-else-fits: rtx3060 has 101376 bytes of shared
// memory a site. An f32 attention with 128-wide heads needs, at its smallest item (one query
// tile, one head, one key tile), q, k and v pages of 16384 bytes each, twice over, with the
// running output and the statistics: 135168 bytes, so no double-buffered plan fits and the
// section was refused (NoLegalPlan). Single-buffered (one page per FIFO between DRAM and the
// compute stage, each block's load waiting for the previous block's compute, priced serial) it
// fits, and the plan says so. Likewise Qwen3-Next's f32 delta rule (102400 bytes at its smallest
// double-buffered item's operands; 98304 single-buffered).
// RUN: spatial-opt %s -p 'spatial-pipeline{target=rtx3060 kv-splits=1}' | filecheck %s
// RUN: spatial-run %s --entry att --target rtx3060 | filecheck %s --check-prefix=OK
// RUN: spatial-run %s --entry att --target rtx3060 --backend triton-interpret | filecheck %s --check-prefix=OK
// RUN: spatial-run %s --entry delta --target rtx3060 | filecheck %s --check-prefix=OK2
// RUN: spatial-run %s --entry delta --target rtx3060 --backend triton-interpret | filecheck %s --check-prefix=OK2
// The same programs on h100 (232448 bytes) keep their double-buffered plans.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=h100 kv-splits=1}' | filecheck %s --check-prefix=H100

func.func @att(%q: tensor<1x512xf32>, %k: tensor<256x256xf32>, %v: tensor<256x256xf32>, %p: tensor<1xi32>) -> tensor<1x512xf32> {
  %o = tg.attention %q, %k, %v, %p heads 4 kv_heads 2 head_dim 128 causal true scale 8.838835e-02 : (tensor<1x512xf32>, tensor<256x256xf32>, tensor<256x256xf32>, tensor<1xi32>) -> tensor<1x512xf32>
  func.return %o : tensor<1x512xf32>
}

func.func @delta(%dq: tensor<1x256xf32>, %dk: tensor<1x256xf32>, %dv: tensor<1x512xf32>, %dg: tensor<1x4xf32>, %dbeta: tensor<1x4xf32>, %ds: tensor<512x128xf32>) -> (tensor<1x512xf32>, tensor<512x128xf32>) {
  %do, %ds2 = tg.gated_delta %dq, %dk, %dv, %dg, %dbeta, %ds heads 4 k_heads 2 head_dim 128 scale 8.838835e-02 : (tensor<1x256xf32>, tensor<1x256xf32>, tensor<1x512xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<512x128xf32>) -> (tensor<1x512xf32>, tensor<512x128xf32>)
  func.return %do, %ds2 : tensor<1x512xf32>, tensor<512x128xf32>
}
// CHECK-LABEL: sp.program @o op "tg.attention"
// CHECK:       sp.plan blocked grid 28x1 block 1x4 {{.*}}single-buffered: movement and compute serial
// CHECK:       memory {q = 0, k = 16384, v = 32768, pos = 49152, out = 53248, o = 69632, ml = 86016}
// CHECK-NEXT:  %q = sp.fifo "q" depth 1 page [h, w] f32
// CHECK-NEXT:  %k = sp.fifo "k" depth 1 page [kw, 4] f32
// CHECK-NEXT:  %v = sp.fifo "v" depth 1 page [kw, 4] f32
// CHECK-NEXT:  %pos = sp.fifo "pos" depth 1 page [1, 1] i32
// CHECK-NEXT:  %out = sp.fifo "out" depth 1 page [sh, sw] f32
// CHECK-LABEL: sp.program @do op "tg.gated_delta"
// CHECK:       sp.plan blocked grid 28x1 block 4x1 {{.*}}single-buffered: movement and compute serial
// CHECK:       memory {q = 0, k = 16384, v = 32768, g = 36864, beta = 40960, state = 45056, out = 61440, new_state = 65536, s = 81920}
// CHECK-NEXT:  %q = sp.fifo "q" depth 1
// CHECK:       %out = sp.fifo "out" depth 1 page [kw, w] f32
// OK:  PASS: 1 output(s) within tolerance
// OK2: PASS: 2 output(s) within tolerance
// H100-NOT:    single-buffered: movement
// H100:        %k = sp.fifo "k" depth 2 page [kw, 4] f32
// H100:        %k = sp.fifo "k" depth 2 page [kw, 4] f32
