// A block of several sub-blocks is printed a sub-block at a time (docs/backend-ttlang.md#sub-blocks):
// the output FIFO and the K-block spill keep the IR's sub-block pages [sh, sw]; B's [kw, w] page
// comes as one DFB per sub-block column [kw, sw], read together (all copies issued, then waited);
// the compute runs each sub-block's product and pushes it to the spill, or on the last K block
// to the output FIFO, where the writer stores it while the next sub-block computes. The writer
// keeps two writes in flight: the two sub-blocks of a block alternate between two output DFBs
// of one page each (the FIFO's two pages), the second's copy issued before the first's write
// is waited (targets/gemm.py writes_in_pairs). No one-hot selector, no identity constant.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=2x2 accumulate=bf16 split-k=1 local-mem=60000}' -t ttlang | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=2x2 accumulate=bf16 split-k=1 local-mem=60000}' | filecheck %s --check-prefix=IR

// 160x256x224 bf16 on 2x2: 5x2 blocks of two 5x1 sub-blocks, a boundary range of 5x1 blocks
// (one sub-block), 8 K blocks through the spill.
func.func @gemm(%a: tensor<160x256xbf16>, %b: tensor<256x224xbf16>) -> tensor<160x224xbf16> {
  %c = tg.matmul %a, %b : (tensor<160x256xbf16>, tensor<256x224xbf16>) -> tensor<160x224xbf16>
  func.return %c : tensor<160x224xbf16>
}

// IR: sp.sites [0, 1]x[0, 0] {{.*}} block 5x2 sub_block 5x1
// IR: sp.sites [1, 1]x[1, 1] {{.*}} block 5x1 sub_block 5x1
// IR: %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16
// IR: %out = sp.fifo "out" depth subs page [sh, sw] bf16
// IR: %spill = sp.interm "spill" depth subs page [sh, sw] bf16

// CHECK-NOT: _eye
// CHECK: def section_0_c(t_a, t_b, t_c):
// CHECK-NEXT: in0_dfb = ttl.make_dataflow_buffer_like(t_a, shape=(5, 1), block_count=2)
// CHECK-NEXT: in1_dfb_0 = ttl.make_dataflow_buffer_like(t_b, shape=(1, 1), block_count=2)
// CHECK-NEXT: in1_dfb_1 = ttl.make_dataflow_buffer_like(t_b, shape=(1, 1), block_count=2)
// CHECK-NEXT: out_dfb_5x1x2_0 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 1), block_count=1)
// CHECK-NEXT: out_dfb_5x1x2_1 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 1), block_count=1)
// CHECK-NEXT: out_dfb_5x1x1 = ttl.make_dataflow_buffer_like(t_c, shape=(5, 1), block_count=1)
// CHECK-NEXT: spill_dfb_5x1x2 = ttl.make_dataflow_buffer_like(t_b, shape=(5, 1), block_count=2)
// CHECK-NEXT: spill_dfb_5x1x1 = ttl.make_dataflow_buffer_like(t_b, shape=(5, 1), block_count=1)
// CHECK-NOT: make_dataflow_buffer_like
// CHECK: def compute():
// CHECK: for kb in range(8):
// CHECK-NEXT: with in0_dfb.wait() as a_blk, in1_dfb_0.wait() as b0, in1_dfb_1.wait() as b1:
// CHECK-NEXT: if kb == 0:
// CHECK-NEXT: part = a_blk @ b0
// CHECK-NEXT: else:
// CHECK-NEXT: with spill_dfb_5x1x2.wait() as p_blk:
// CHECK-NEXT: part = p_blk + a_blk @ b0
// CHECK-NEXT: with (out_dfb_5x1x2_0 if kb == 7 else spill_dfb_5x1x2).reserve() as o_blk:
// CHECK-NEXT: o_blk.store(part)
// CHECK-NEXT: if kb == 0:
// CHECK-NEXT: part = a_blk @ b1
// CHECK-NEXT: else:
// CHECK-NEXT: with spill_dfb_5x1x2.wait() as p_blk:
// CHECK-NEXT: part = p_blk + a_blk @ b1
// CHECK-NEXT: with (out_dfb_5x1x2_1 if kb == 7 else spill_dfb_5x1x2).reserve() as o_blk:
// CHECK-NEXT: o_blk.store(part)
// CHECK: if x == 1 and y == 1:
// CHECK: with in0_dfb.wait() as a_blk, in1_dfb_0.wait() as b_blk:
// CHECK-NEXT: if kb == 0:
// CHECK-NEXT: part = a_blk @ b_blk
// CHECK: def dm0():
// CHECK: for k0 in range(0, 8, 1):
// CHECK-NEXT: with in1_dfb_0.reserve() as blk0, in1_dfb_1.reserve() as blk1:
// CHECK-NEXT: tx0 = ttl.copy(t_b[k0:k0 + 1, c0:c0 + 1], blk0)
// CHECK-NEXT: tx1 = ttl.copy(t_b[k0:k0 + 1, c0 + 1:c0 + 2], blk1)
// CHECK-NEXT: tx0.wait()
// CHECK-NEXT: tx1.wait()
// CHECK-NEXT: with out_dfb_5x1x2_0.wait() as blk0:
// CHECK-NEXT: tx0 = ttl.copy(blk0, t_c[r0:r0 + 5, c0:c0 + 1])
// CHECK-NEXT: with out_dfb_5x1x2_1.wait() as blk1:
// CHECK-NEXT: tx1 = ttl.copy(blk1, t_c[r0:r0 + 5, c0 + 1:c0 + 2])
// CHECK-NEXT: tx0.wait()
// CHECK-NEXT: tx1.wait()
// CHECK: if x == 1 and y == 1:
// CHECK: with in1_dfb_0.reserve() as blk:
// CHECK-NEXT: tx = ttl.copy(t_b[k0:k0 + 1, c0:c0 + 1], blk)
// CHECK-NOT: tj in
// CHECK: with out_dfb_5x1x1.wait() as blk:
// CHECK-NEXT: tx = ttl.copy(blk, t_c[r0:r0 + 5, c0:c0 + 1])
// CHECK: def dm1():
// CHECK-NOT: _eye
// CHECK: TENSORS
