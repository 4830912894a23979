// tile, place and size-buffers on sections that are not GEMMs: the plan space of each kind (the
// block of an item, the sub-block the accumulator holds, the K block), its price from the cost
// model with the reason recorded, items dealt out flat over the mesh, engines, and the memory map
// with the state a stage keeps in local memory.
// RUN: spatial-opt %s --split-input-file -p spatial-pipeline | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=plasticine}' | filecheck %s --check-prefix=RDU
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=h100}' | filecheck %s --check-prefix=GPU
// Each pass is the identity on its own output.
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline,tile,place,fuse-operands,size-buffers' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p spatial-pipeline -t report | filecheck %s --check-prefix=REPORT

// A 64x64 f32 add on Wormhole: 4 tiles, one an item on 4 sites. Per item the movement engines
// move 3 tiles of 4096 bytes, 384 cycles at 32 bytes a cycle (more than 3 NoC issues of 49);
// the vector unit adds 1024 elements at 32 a cycle, 32 cycles; DRAM moves 3 x 4 tiles, 49152
// bytes at what 4 sites' links take (2 engines x 32 bytes a cycle each: 256), of which Wormhole
// sustains 267 / 288: 237 a cycle, 207 cycles; the fill is one DRAM round trip (500) and one
// item's compute (32): 384 + 532 = 916 cycles. The roofline is DRAM at its peak of 288 bytes a
// cycle: 171 cycles, 0.171 us.
func.func @add(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = tg.add %a, %b : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %y : tensor<64x64xf32>
}
// WH-LABEL: sp.entry @add(@a, @b) -> (@y)
// WH:         sp.work @y block 1x1 k 1 by 1
// WH-NEXT:    sp.plan blocked grid 8x8 block 1x1 packing split predicted 916 bound noc runner_up "block 1x2 sub_block 1x2 k_block 1" 1332 attributes {why = "noc-bound: 4 item(s), 1 on the busiest of 4 site(s): compute 32 / movement 384 / DRAM 207 cycles, fill 532"}
// WH-NEXT:    sp.mesh 8x8 movement 2 nocs 2 local 1395424
// WH-NEXT:    sp.sites [0, 0]x[0, 3] first y count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 8192, out = 16384}
// WH:         sp.load @a[r0, c0] x [h, w] -> %in0 on movement 1 noc 0
// WH-NEXT:    sp.load @b[r0, c0] x [h, w] -> %in1 on movement 1 noc 0
// WH-NEXT:    sp.map add %in0, %in1 [full, full] -> %out valid 64x64 on compute
// WH-NEXT:    sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// REPORT:       "name": "y",
// REPORT-NEXT:  "op": "tg.add",
// REPORT:       "predicted_cycles": 916,
// REPORT-NEXT:  "predicted_us": 0.916,
// REPORT-NEXT:  "roofline_us": 0.171,
// REPORT:       "dram_bytes": 49152,
// REPORT-NEXT:  "noc_bytes": 49152,
// REPORT-NEXT:  "sites": 4,
// REPORT-NEXT:  "site_ranges": 1,
// REPORT-NEXT:  "peak_local_bytes": 24576

// -----

// Flash attention over 256 keys (8 tiles): the K block is bounded by the f32 accumulator that
// holds a block's scores (h x kw tiles): 1 tile on Plasticine, 4 on Tensix, the whole cache on an
// H100 SM. An item may serve both query heads of a kv head from one read of K and V (a block 1x2
// of the result); over 8 tiles of keys the cost model prefers one head an item on twice the
// sites, except on Plasticine, whose 8 real query rows cost a PCU only their rows, so reading
// K and V once for both heads wins. The running output and statistics (o, ml) are laid out
// like any buffer.
func.func @attention(%q: tensor<8x128xf32>, %k: tensor<256x64xf32>, %v: tensor<256x64xf32>, %pos: tensor<1xi32>) -> tensor<8x128xf32> {
  %o = tg.attention %q, %k, %v, %pos heads 4 kv_heads 2 head_dim 32 causal true scale 0.17 : (tensor<8x128xf32>, tensor<256x64xf32>, tensor<256x64xf32>, tensor<1xi32>) -> tensor<8x128xf32>
  func.return %o : tensor<8x128xf32>
}
// WH-LABEL: sp.entry @attention
// WH:         sp.work @o block 1x1 k 8 by 4
// WH:         sp.sites [0, 0]x[0, 3] first y count 1 block 1x1 sub_block 1x1 memory {q = 0, k = 8192, v = 40960, pos = 73728, out = 81920, o = 90112, ml = 94208}
// RDU-LABEL: sp.entry @attention
// RDU:         sp.work @o block 1x2 k 8 by 1
// RDU-NEXT:    sp.plan blocked grid 8x8 block 1x1 packing operand_with_store
// RDU:         sp.sites [0, 0]x[0, 1] first y count 1 block 1x2 sub_block 1x1 memory {q = 0, k = 16384, v = 24576, pos = 32768, out = 40960, o = 49152, ml = 57344}
// GPU-LABEL: sp.entry @attention
// GPU:         sp.work @o block 1x1 k 8 by 8

// -----

// A blocked norm's three sections, each planned on its own: Plasticine's one-tile accumulator
// blocks a 128-column row into 4 blocks; the combine walks them in a K loop.
func.func @norm(%x: tensor<8x128xf32>, %w: tensor<1x128xf32>) -> tensor<8x128xf32> {
  %y = tg.rms_norm %x, %w eps 1.0e-06 : (tensor<8x128xf32>, tensor<1x128xf32>) -> tensor<8x128xf32>
  func.return %y : tensor<8x128xf32>
}
// RDU-LABEL: sp.entry @norm(@x, @w) -> (@y)
// RDU:         sp.program @y__partials op "tg.rms_norm" kind row_reduce phase sized
// RDU:           sp.work @x block 1x1 k 1 by 1
// RDU:           sp.sites [0, 0]x[0, 3] first y count 1 block 1x1 sub_block 1x1
// RDU:         sp.program @y__stats op "tg.rms_norm" kind row_reduce phase sized
// RDU:           sp.work @y__stats block 1x1 k 4 by {{[124]}}
// RDU:         sp.program @y op "tg.rms_norm" kind map phase sized
// RDU:           sp.map rms_apply %in0, %in1, %in2 [full, cols, rows] -> %out valid 8x128 on compute
// WH-LABEL: sp.entry @norm(@x, @w) -> (@y)
// WH-NEXT:    sp.program @y op "tg.rms_norm" kind row_reduce phase sized
// WH:           sp.work @y block 1x4 k 1 by 1
// WH:           sp.sites [0, 0]x[0, 0] first 0 count 1 block 1x4 sub_block 1x4
