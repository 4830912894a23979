// The budget is configurable (`local-mem`, recorded on the module): under 900000 bytes the decode
// step's B FIFO, which asks for 17 pages of 256 KiB, gives pages back until the site fits: 3 pages
// (32768 + 3 x 262144 + 32768 = 851968 bytes; 4 would need 1114112).
// RUN: spatial-opt %s -p 'spatial-pipeline{local-mem=900000}' | filecheck %s
// resize-operand-fifos re-lays a sized program at a pinned depth: the instrument for measuring it.
// RUN: spatial-opt %s -p 'spatial-pipeline,resize-operand-fifos{depth=3}' | filecheck %s --check-prefix=RESIZE
// RUN: not spatial-opt %s -p 'spatial-pipeline,resize-operand-fifos{depth=9}' 2>&1 | filecheck %s --check-prefix=OVER
// RUN: not spatial-opt %s -p 'link,tile,place,fuse-operands,resize-operand-fifos{depth=3}' 2>&1 | filecheck %s --check-prefix=PHASE

func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// CHECK:      sp.options = {fidelity = "hifi4", format = "bf16", local_mem = "900000"}
// CHECK:      sp.mesh 8x8 movement 2 nocs 2 local 900000
// CHECK-NEXT: sp.sites [0, 7]x[0, 0] first x + y * 8 count 1 block 1x16 sub_block 1x8 memory {in0 = 0, in1 = 32768, out = 819200, spill = 819200}
// CHECK:      %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT: %in1 = sp.fifo "in1" depth 3 page [kw, w] bf16 tile_bytes 2048
// RESIZE:      memory {in0 = 0, in1 = 49152, out = 835584, spill = 835584}
// RESIZE:      %in0 = sp.fifo "in0" depth 3
// RESIZE-NEXT: %in1 = sp.fifo "in1" depth 3
// RESIZE-NEXT: %out = sp.fifo "out" depth subs
// 9 x 16384 + 9 x 262144 + 32768 = 2539520 bytes.
// OVER: spatial-opt: error: LocalMemExceeded: site (0, 0) needs 2539520 bytes of local memory but its budget is 1395424 bytes
// PHASE: spatial-opt: error: WrongPhase: resize-operand-fifos takes a program in phase sized, this one is fused
