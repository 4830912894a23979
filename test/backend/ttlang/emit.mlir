// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150}' -t ttlang | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150}' -t ttlang | filecheck %s --check-prefix=BH

// A 96x200x160 f32 GEMM: one operation, the mesh as grid, DFBs with the IR's page and depth,
// B multicast over columns as one rectangle pipe per column, the range as index arithmetic.

func.func @gemm(%a: tensor<96x200xf32>, %b: tensor<200x160xf32>) -> tensor<96x160xf32> {
  %c = tg.matmul %a, %b : (tensor<96x200xf32>, tensor<200x160xf32>) -> tensor<96x160xf32>
  func.return %c : tensor<96x160xf32>
}

// CHECK: # TT-Lang program for @gemm on wormhole_n150
// CHECK: # section @c: tg.matmul
// CHECK-NEXT: #   sp.plan blocked grid 5x3 block 1x1 {{.*}}multicast b predicted 4004
// The dest registers in their fp32 mode: the section accumulates in f32.
// CHECK: @ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)
// CHECK-NEXT: def section_0_c(t_a, t_b, t_c):
// CHECK-NEXT: in0_dfb = ttl.make_dataflow_buffer_like(t_a, shape=(1, 7), block_count=2)
// CHECK-NEXT: in1_dfb = ttl.make_dataflow_buffer_like(t_b, shape=(7, 1), block_count=2)
// CHECK-NEXT: out_dfb = ttl.make_dataflow_buffer_like(t_c, shape=(1, 1), block_count=1)
// CHECK-NEXT: in1_columns_net = ttl.PipeNet([
// CHECK-NEXT: ttl.Pipe(src=(0, 0), dst=(slice(0, 1), slice(1, 3))),
// CHECK: @ttl.compute()
// CHECK: x, y = ttl.node(dims=2)
// CHECK-NEXT: if 0 <= x <= 4 and 0 <= y <= 2:
// CHECK-NEXT: for t in range(1):
// The compute kernel pops its pages in order: it never reads the item's block origin.
// CHECK-NEXT: with in0_dfb.wait() as a_blk, in1_dfb.wait() as b_blk, out_dfb.reserve() as o_blk:
// CHECK: o_blk.store(a_blk @ b_blk)
// B's column group covers the range, so a site is its sender or a receiver; no site of the
// range reads B alone, and no unicast helper (_count) is printed for a multicast pipe.
// CHECK: def dm0():
// CHECK-NOT: _count
// The item's block in row-major numbering, as integer arithmetic (no helper call in a kernel):
// CHECK: r0 = (x + y * 5 + t) // 5
// CHECK-NEXT: c0 = (x + y * 5 + t) % 5
// CHECK: with in1_dfb.reserve() as blk:
// CHECK-NEXT: if y == 0:
// CHECK: in1_columns_net.if_src(send)
// CHECK-NEXT: else:
// CHECK: in1_columns_net.if_dst(recv)
// CHECK-NOT: else:
// CHECK: tx = ttl.copy(blk, t_c[r0:r0 + 1, c0:c0 + 1])
// CHECK: def dm1():
// CHECK: r0 = (x + y * 5 + t) // 5
// CHECK-NOT: c0 =
// CHECK: tx = ttl.copy(t_a[r0:r0 + 1, k0:k0 + 7], blk)
// CHECK: SECTIONS = [
// CHECK-NEXT: (section_0_c, ['a', 'b', 'c']),

// BH: # TT-Lang program for @gemm on blackhole_p150
// BH: @ttl.operation(grid=(
