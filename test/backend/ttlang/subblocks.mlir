// A block of several sub-blocks is computed whole (docs/backend-ttlang.md#sub-blocks): the
// output FIFO and the K-block spill, laid out as `subs` pages of the sub-block [sh, sw], are
// declared as one [h, w] block in the same bytes; the compute pushes `a_blk @ b_blk` over the
// whole block once per K block, and the writer stores the block with one copy. No one-hot
// selector, no identity constant.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=2x2 accumulate=bf16 split-k=1}' -t ttlang | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=2x2 accumulate=bf16 split-k=1}' | filecheck %s --check-prefix=IR

// 160x64x224 bf16 on 2x2: 5x2 blocks of two 5x1 sub-blocks, a boundary range of 5x1 blocks
// (one sub-block), 2 K blocks through the spill.
func.func @gemm(%a: tensor<160x64xbf16>, %b: tensor<64x224xbf16>) -> tensor<160x224xbf16> {
  %c = tg.matmul %a, %b : (tensor<160x64xbf16>, tensor<64x224xbf16>) -> tensor<160x224xbf16>
  func.return %c : tensor<160x224xbf16>
}

// IR: sp.sites [0, 1]x[0, 0] {{.*}} block 5x2 sub_block 5x1
// IR: sp.sites [1, 1]x[1, 1] {{.*}} block 5x1 sub_block 5x1
// IR: %out = sp.fifo "out" depth subs page [sh, sw] bf16
// IR: %spill = sp.interm "spill" depth subs page [sh, sw] bf16

// CHECK-NOT: _eye
// CHECK: def section_0_c(t_a, t_b, t_c):
// CHECK: out_dfb_5x2 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 2), block_count=1)
// CHECK-NEXT: out_dfb_5x1 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 1), block_count=1)
// CHECK-NEXT: spill_dfb_5x2 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 2), block_count=1)
// CHECK-NEXT: spill_dfb_5x1 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 1), block_count=1)
// CHECK-NOT: make_dataflow_buffer_like
// CHECK: def compute():
// CHECK: for kb in range(2):
// CHECK-NEXT: with in0_dfb.wait() as a_blk, in1_dfb_1x2.wait() as b_blk:
// CHECK-NEXT: if kb == 0:
// CHECK-NEXT: part = a_blk @ b_blk
// CHECK-NEXT: else:
// CHECK-NEXT: with spill_dfb_5x2.wait() as p_blk:
// CHECK-NEXT: part = p_blk + a_blk @ b_blk
// CHECK-NEXT: with (out_dfb_5x2 if kb == 1 else spill_dfb_5x2).reserve() as o_blk:
// CHECK-NEXT: o_blk.store(part)
// CHECK: def dm0():
// CHECK-NOT: ti in
// CHECK: with out_dfb_5x2.wait() as blk:
// CHECK-NEXT: tx = ttl.copy(blk, t_c[r0:r0 + 5, c0:c0 + 2])
// CHECK-NOT: ti in
// CHECK: with out_dfb_5x1.wait() as blk:
// CHECK-NEXT: tx = ttl.copy(blk, t_c[r0:r0 + 5, c0:c0 + 1])
// CHECK-NOT: r_blk
// CHECK: def dm1():
// CHECK-NOT: _eye
// CHECK: TENSORS
