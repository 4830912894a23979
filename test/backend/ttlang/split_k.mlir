// -t ttlang prints split-K as planned (docs/backend-ttlang.md#split-k): each slice's sites walk
// their K range; the writer of a slice s > 0 receives the previous slice's f32 partial sums over
// a unicast pipe (one slice's grid further along the split axis) before its store, the compute
// adds them on the last K block, and a slice s < S - 1 sends its unrounded sums on from a DFB
// of its own instead of storing. Only the last slice stores. The receive and the send DFB are
// the two rings of the IR's partials FIFO (depth subs * 2), one block each here.
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=8x8 split-k=4}' -t ttlang | filecheck %s
// RUN: spatial-opt %s -p 'spatial-pipeline{target=wormhole_n150 grid=8x8 split-k=2}' -t ttlang | filecheck %s --check-prefix=TWO

// 32x512x64 bf16: 2 blocks of one tile on a 2x1 grid, K (16 tiles) in 4 slices along y.
func.func @gemm(%a: tensor<32x512xbf16>, %b: tensor<512x64xbf16>) -> tensor<32x64xbf16> {
  %c = tg.matmul %a, %b : (tensor<32x512xbf16>, tensor<512x64xbf16>) -> tensor<32x64xbf16>
  func.return %c : tensor<32x64xbf16>
}

// CHECK:      @ttl.operation(grid=(8, 8), fp32_dest_acc_en=True)
// CHECK-NEXT: def section_0_c(t_a, t_b, t_c, _f32_page_1x1):
// CHECK:      partials_dfb = ttl.make_dataflow_buffer_like(_f32_page_1x1, shape=(1, 1), block_count=1)
// CHECK-NEXT: partials_send_dfb = ttl.make_dataflow_buffer_like(_f32_page_1x1, shape=(1, 1), block_count=1)
// CHECK-NEXT: partials_net = ttl.PipeNet(
// CHECK-NEXT:     [ttl.Pipe(src=(x, y), dst=(x, y + 1)) for x in range(2) for y in range(3)]
// CHECK-NEXT: )

// The compute: slice 0 sends its sums, slices 1 and 2 add and send, slice 3 adds and stores.
// CHECK:      def compute():
// CHECK:      if 0 <= x <= 1 and y == 0:
// CHECK-NOT:  partials_dfb
// CHECK:      partials_send_dfb.reserve() as o_blk,
// CHECK-NEXT: ):
// CHECK-NEXT:     o_blk.store(a_blk @ b_blk)
// CHECK:      if 0 <= x <= 1 and y == 1:
// CHECK:          partials_dfb.wait() as q_blk,
// CHECK-NEXT:     partials_send_dfb.reserve() as o_blk,
// CHECK-NEXT: ):
// CHECK-NEXT:     o_blk.store(a_blk @ b_blk + q_blk)
// CHECK:      if 0 <= x <= 1 and y == 3:
// CHECK:          partials_dfb.wait() as q_blk,
// CHECK-NEXT:     out_dfb.reserve() as o_blk,
// CHECK-NEXT: ):
// CHECK-NEXT:     o_blk.store(a_blk @ b_blk + q_blk)

// The writer: slice s reads B's K tiles [4 s, 4 s + 4) of its block (slice 0's numbering),
// receives before it sends, and only the last slice stores.
// CHECK:      def dm0():
// CHECK:      if 0 <= x <= 1 and y == 0:
// CHECK:          c0 = (x + y * 2 + t) % 2
// CHECK-NEXT:     for k0 in range(0, 4, 4):
// CHECK-NOT:  t_c[
// CHECK:          with partials_send_dfb.wait() as blk:
// CHECK-NEXT:         def send(pipe):
// CHECK-NEXT:             txp = ttl.copy(blk, pipe)
// CHECK-NEXT:             txp.wait()
// CHECK-NEXT:         partials_net.if_src(send)
// CHECK:      if 0 <= x <= 1 and y == 1:
// CHECK:          c0 = (x + y * 2 + t - 2) % 2
// CHECK-NEXT:     for k0 in range(4, 8, 4):
// CHECK-NOT:  t_c[
// CHECK:          with partials_dfb.reserve() as blk:
// CHECK-NEXT:         def recv(pipe):
// CHECK-NEXT:             txr = ttl.copy(pipe, blk)
// CHECK-NEXT:             txr.wait()
// CHECK-NEXT:         partials_net.if_dst(recv)
// CHECK-NEXT:     with partials_send_dfb.wait() as blk:
// CHECK:      if 0 <= x <= 1 and y == 3:
// CHECK:          for k0 in range(12, 16, 4):
// CHECK:          partials_net.if_dst(recv)
// CHECK-NOT:      partials_send_dfb
// CHECK:          tx = ttl.copy(blk, t_c[r0:r0 + 1, c0:c0 + 1])
// CHECK:      def dm1():

// Two slices: one pipe per site of slice 0, written with the one row it has.
// TWO:        partials_net = ttl.PipeNet([ttl.Pipe(src=(x, 0), dst=(x, 1)) for x in range(2)])
// TWO:        if 0 <= x <= 1 and y == 1:
// TWO:            for k0 in range(8, 16, 8):
