// Every sp op and attribute in its custom form: the round trip (custom -> generic -> custom)
// prints each one back unchanged.
// RUN: %roundtrip
// RUN: %generic_roundtrip

// A sized blocked GEMM on a multicast mesh: entry, program, tensors, work, plan, mesh, two site
// ranges with memory maps, FIFOs, a spill aliased to the output, the accumulator, multicast
// groups, loads, the matmul and the store, with engines and NoCs.
sp.entry @gemm(@a, @b) -> (@c)
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<100x256xbf16> tiles 4x8 input tiled
  sp.tensor @b : tensor<256x64xbf16> tiles 8x2 input tiled
  sp.tensor @c : tensor<100x64xbf16> tiles 4x2 output tiled
  sp.work @c block 3x2 k 8 by 2
  sp.plan blocked grid 1x2 block 3x2 packing operand_with_store predicted 5000 bound compute runner_up "streaming grid 8x8" 6000 attributes {why = "compute-bound"}
  sp.mesh 8x8 movement 2 nocs 2 local 1395424
  sp.sites [0, 0]x[0, 0] first x + y count 1 block 3x2 sub_block 3x2 memory {in0 = 0, in1 = 24576, out = 40960, spill = 40960}
  sp.sites [0, 0]x[1, 1] first x + y count 1 block 1x2 sub_block 1x2 memory {in0 = 0, in1 = 24576, out = 40960, spill = 40960}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in1_columns %in1 columns [0, 0]x[0, 1] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK:      sp.entry @gemm(@a, @b) -> (@c)
// CHECK-NEXT: sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
// CHECK-NEXT:   sp.tensor @a : tensor<100x256xbf16> tiles 4x8 input tiled
// CHECK-NEXT:   sp.tensor @b : tensor<256x64xbf16> tiles 8x2 input tiled
// CHECK-NEXT:   sp.tensor @c : tensor<100x64xbf16> tiles 4x2 output tiled
// CHECK-NEXT:   sp.work @c block 3x2 k 8 by 2
// CHECK-NEXT:   sp.plan blocked grid 1x2 block 3x2 packing operand_with_store predicted 5000 bound compute runner_up "streaming grid 8x8" 6000 attributes {why = "compute-bound"}
// CHECK-NEXT:   sp.mesh 8x8 movement 2 nocs 2 local 1395424
// CHECK-NEXT:   sp.sites [0, 0]x[0, 0] first x + y count 1 block 3x2 sub_block 3x2 memory {in0 = 0, in1 = 24576, out = 40960, spill = 40960}
// CHECK-NEXT:   sp.sites [0, 0]x[1, 1] first x + y count 1 block 1x2 sub_block 1x2 memory {in0 = 0, in1 = 24576, out = 40960, spill = 40960}
// CHECK-NEXT:   %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
// CHECK-NEXT:   %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
// CHECK-NEXT:   %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
// CHECK-NEXT:   %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
// CHECK-NEXT:   %dst = sp.acc "dst" page [sh, sw] bf16
// CHECK-NEXT:   sp.group @in1_columns %in1 columns [0, 0]x[0, 1] sender 0
// CHECK-NEXT:   sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
// CHECK-NEXT:   sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
// CHECK-NEXT:   sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
// CHECK-NEXT:   sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
// CHECK-NEXT: }
// CHECK-GENERIC: "sp.entry"() <{function = "gemm", inputs = ["a", "b"], outputs = ["c"]}> : () -> ()
// CHECK-GENERIC: "sp.program"() <{sym_name = "c", op = "tg.matmul", kind = #sp<section_kind gemm>, phase = #sp<phase sized>, tile = #sp.pair<32x32>}> ({
// CHECK-GENERIC: "sp.tensor"() <{sym_name = "a", type = tensor<100x256xbf16>, tiles = #sp.pair<4x8>, role = #sp<role input>, layout = #sp<layout tiled>}> : () -> ()
// CHECK-GENERIC: "sp.work"() <{tensor = @c, block = #sp.pair<3x2>, k_tiles = 8 : i64, k_block = 2 : i64}> : () -> ()
// CHECK-GENERIC: "sp.plan"() <{kind = #sp<plan_kind blocked>, grid = #sp.pair<1x2>, sub_block = #sp.pair<3x2>, packing = #sp<packing operand_with_store>, predicted_cycles = 5000 : i64, bound = #sp<bound compute>, runner_up = "streaming grid 8x8", runner_up_cycles = 6000 : i64}> {why = "compute-bound"} : () -> ()
// CHECK-GENERIC: "sp.mesh"() <{size = #sp.pair<8x8>, movement_engines = 2 : i64, nocs = 2 : i64, local_mem = 1395424 : i64}> : () -> ()
// CHECK-GENERIC: "sp.sites"() <{rect = #sp.rect<[0, 0]x[0, 0]>, first = affine_map<(d0, d1) -> ((d0 + d1))>, count = 1 : i64, block = #sp.pair<3x2>, sub_block = #sp.pair<3x2>, memory = {in0 = 0 : i64, in1 = 24576 : i64, out = 40960 : i64, spill = 40960 : i64}}> : () -> ()
// CHECK-GENERIC: %in0 = "sp.fifo"() <{label = "in0", depth = #sp.sizes<[2]>, page = #sp.sizes<[h, kw]>, elt = bf16, tile_bytes = 2048 : i64}> : () -> !sp.buffer
// CHECK-GENERIC: %spill = "sp.interm"(%out) <{label = "spill", depth = #sp.sizes<[subs]>, page = #sp.sizes<[sh, sw]>, elt = bf16, tile_bytes = 2048 : i64}> : (!sp.buffer) -> !sp.buffer
// CHECK-GENERIC: %dst = "sp.acc"() <{label = "dst", page = #sp.sizes<[sh, sw]>, elt = bf16}> : () -> !sp.buffer
// CHECK-GENERIC: "sp.group"(%in1) <{sym_name = "in1_columns", axis = #sp<axis columns>, rect = #sp.rect<[0, 0]x[0, 1]>, sender = 0 : i64}> : (!sp.buffer) -> ()
// CHECK-GENERIC: "sp.load"(%in0) <{tensor = @a, access = #sp.access<[r0, k0] x [h, kw]>, engine = #sp.engine<movement 1 noc 0>}> : (!sp.buffer) -> ()
// CHECK-GENERIC: "sp.matmul_tiles"(%in0, %in1, %out, %dst, %spill) <{fidelity = #sp<fidelity hifi4>, engine = #sp.engine<compute>, operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 0>}> : (!sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer, !sp.buffer) -> ()
// CHECK-GENERIC: "sp.store"(%out) <{tensor = @c, access = #sp.access<[r0 + ti, c0 + tj] x [sh, sw]>, engine = #sp.engine<movement 0 noc 1>}> : (!sp.buffer) -> ()
// -----

// A line plan with several blocks a site: the work dealt over a 6x1 grid of sites (`over`), the
// line folded onto a 3x2 mesh, the last site one round short, A multicast over the whole line (one
// group of 6 sites, sender the first).
sp.entry @g(@a, @b) -> (@c)
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<32x128xbf16> tiles 1x4 input tiled
  sp.tensor @b : tensor<128x704xbf16> tiles 4x22 input tiled
  sp.tensor @c : tensor<32x704xbf16> tiles 1x22 output tiled
  sp.work @c block 1x2 k 4 by 4 over 6x1
  sp.plan blocked line grid 6x1 block 1x2 packing operand_with_store multicast a predicted 3324 bound dram runner_up "blocked per_site 1x2 block 1x1 k_block 4 k_blocks 1 line 6x1 unicast a" 3324 attributes {multicast_why = "A multicast over the line of 6 (unicast: 3324 cycles)"}
  sp.mesh 3x2 movement 2 nocs 2 local 1395424
  sp.sites [0, 2]x[0, 0] first x * 2 + y * 6 count 2 block 1x2 sub_block 1x2 memory {in0 = 0, in1 = 16384, out = 49152}
  sp.sites [0, 1]x[1, 1] first x * 2 + y * 6 count 2 block 1x2 sub_block 1x2 memory {in0 = 0, in1 = 16384, out = 49152}
  sp.sites [2, 2]x[1, 1] first x + (y * 3 + 5) count 1 block 1x2 sub_block 1x2 memory {in0 = 0, in1 = 16384, out = 49152}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_line %in0 line [0, 2]x[0, 1] sites 6 sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_line on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK:      sp.work @c block 1x2 k 4 by 4 over 6x1
// CHECK-NEXT: sp.plan blocked line grid 6x1 block 1x2 packing operand_with_store multicast a predicted 3324 bound dram runner_up "blocked per_site 1x2 block 1x1 k_block 4 k_blocks 1 line 6x1 unicast a" 3324 attributes {multicast_why = "A multicast over the line of 6 (unicast: 3324 cycles)"}
// CHECK:      sp.sites [2, 2]x[1, 1] first x + (y * 3 + 5) count 1 block 1x2 sub_block 1x2
// CHECK:      sp.group @in0_line %in0 line [0, 2]x[0, 1] sites 6 sender 0
// CHECK:      sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_line on movement 1 noc 0
// -----

// A linked section: symbolic shapes, no engines; a 1-row tensor in rows layout, a scratch
// result, a block-float storage format, and an entry with two results.
sp.entry @decode(@x, @w) -> (@y, @x)
sp.program @y op "tg.matmul" kind gemm phase linked tile 32x32 {
  sp.tensor @x : tensor<4096xbf16> tiles 1x128 input rows format "bfp8_b"
  sp.tensor @w : tensor<4096x512xbf16> tiles 128x16 input tiled format "bfp8_b"
  sp.tensor @y : tensor<1x512xf32> tiles 1x16 scratch rows
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 as "bfp8_b" tile_bytes 1088
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 as "bfp8_b" tile_bytes 1088
  %out = sp.fifo "out" depth 2 page [sh, sw] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.load @x[r0, k0] x [h, kw] -> %in0
  sp.load @w[k0, c0] x [kw, w] -> %in1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst
  sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw]
}
// CHECK:      sp.entry @decode(@x, @w) -> (@y, @x)
// CHECK-NEXT: sp.program @y op "tg.matmul" kind gemm phase linked tile 32x32 {
// CHECK-NEXT:   sp.tensor @x : tensor<4096xbf16> tiles 1x128 input rows format "bfp8_b"
// CHECK-NEXT:   sp.tensor @w : tensor<4096x512xbf16> tiles 128x16 input tiled format "bfp8_b"
// CHECK-NEXT:   sp.tensor @y : tensor<1x512xf32> tiles 1x16 scratch rows
// CHECK-NEXT:   %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 as "bfp8_b" tile_bytes 1088
// CHECK:        sp.matmul_tiles %in0, %in1 -> %out acc %dst{{$}}
// CHECK-NEXT:   sp.store %out -> @y[r0 + ti, c0 + tj] x [sh, sw]{{$}}
// -----

// A placed streaming section dealt out flat over two rectangles of sites (split_work_to_sites),
// per-site first items with offsets, engines without a NoC choice, a single-tile output slot
// written tile by tile (u, v), and a spill of its own at the accumulator's precision.
sp.program @s op "tg.matmul" kind gemm phase placed tile 32x32 {
  sp.tensor @a : tensor<64x64xi8> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x96xi8> tiles 2x3 input tiled
  sp.tensor @c : tensor<64x96xi8> tiles 2x3 output tiled
  sp.work @c block 1x1 k 2 by 1
  sp.plan streaming grid 4x1 block 1x1 packing single predicted 10 bound dram
  sp.mesh 4x1 movement 1 nocs 1 local 65536
  sp.sites [0, 1]x[0, 0] first x * 2 count 2 block 1x1 sub_block 1x1
  sp.sites [2, 3]x[0, 0] first x - 2 + 4 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] i8 tile_bytes 1024
  %in1 = sp.fifo "in1" depth 2 page [kw, w] i8 tile_bytes 1024
  %out = sp.fifo "out" depth 2 page [1, 1] i8 tile_bytes 1024
  %spill = sp.interm "spill" depth subs page [sh, sw] i32 tile_bytes 4096
  %dst = sp.acc "dst" page [sh, sw] i32
  sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill on compute
  sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1] on movement 0
}
// CHECK:      sp.plan streaming grid 4x1 block 1x1 packing single predicted 10 bound dram{{$}}
// CHECK-NEXT: sp.mesh 4x1 movement 1 nocs 1 local 65536
// CHECK-NEXT: sp.sites [0, 1]x[0, 0] first x * 2 count 2 block 1x1 sub_block 1x1{{$}}
// CHECK-NEXT: sp.sites [2, 3]x[0, 0] first x + 2 count 1 block 1x1 sub_block 1x1{{$}}
// CHECK:      %spill = sp.interm "spill" depth subs page [sh, sw] i32 tile_bytes 4096{{$}}
// CHECK:      sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 0{{$}}
// CHECK:      sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1] on movement 0{{$}}
// -----

// A fused section on a fabric without multicast: the sharing decisions with their numbers.
sp.program @p op "tg.matmul" kind gemm phase fused tile 32x32 {
  sp.tensor @a : tensor<64x64xf32> tiles 2x2 input tiled
  sp.tensor @b : tensor<64x64xf32> tiles 2x2 input tiled
  sp.tensor @c : tensor<64x64xf32> tiles 2x2 output tiled
  sp.work @c block 1x1 k 2 by 1
  sp.plan blocked grid 2x2 block 1x1 packing operand_with_store predicted 100 bound dram
  sp.mesh 2x2 movement 2 nocs 1 local 262144
  sp.sites [0, 1]x[0, 1] first x + y * 2 count 1 block 1x1 sub_block 1x1
  %in0 = sp.fifo "in0" depth 2 page [h, kw] f32 tile_bytes 4096
  %in1 = sp.fifo "in1" depth 2 page [kw, w] f32 tile_bytes 4096
  %out = sp.fifo "out" depth 1 page [1, 1] f32 tile_bytes 4096
  %dst = sp.acc "dst" page [sh, sw] f32
  sp.share @a broadcast consumers 2 bytes 8192 hops 1 saves 40 costs 12 copies 1 "broadcasting saves 40 DRAM cycles and costs 12 on the fabric"
  sp.share @b replicated consumers 2 bytes 8192 hops 1 saves 10 costs 128 copies 2 "a fan-out would cost 128 fabric cycles to save 10 DRAM cycles"
  sp.load @a[r0, k0] x [h, kw] -> %in0 on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 on movement 0 noc 0
  sp.matmul_tiles %in0, %in1 -> %out acc %dst on compute
  sp.store %out -> @c[r0 + ti + u, c0 + tj + v] x [1, 1] on movement 0 noc 0
}
// CHECK:      sp.share @a broadcast consumers 2 bytes 8192 hops 1 saves 40 costs 12 copies 1 "broadcasting saves 40 DRAM cycles and costs 12 on the fabric"
// CHECK-NEXT: sp.share @b replicated consumers 2 bytes 8192 hops 1 saves 10 costs 128 copies 2 "a fan-out would cost 128 fabric cycles to save 10 DRAM cycles"
// CHECK-GENERIC: "sp.share"() <{tensor = @a, sharing = #sp<sharing broadcast>, consumers = 2 : i64, bytes = 8192 : i64, hops = 1 : i64, dram_cycles_saved = 40 : i64, fabric_cycles_added = 12 : i64, copies = 1 : i64, why = "broadcasting saves 40 DRAM cycles and costs 12 on the fabric"}> : () -> ()
// -----

// A range's own operand FIFO depths in its memory map (size-buffers' per-range depths): the
// 7x5-tile GEMM on a 4x4 mesh, 8 pages inside and 4 where a boundary range's pages are half as big.
sp.program @c op "tg.matmul" kind gemm phase sized tile 32x32 {
  sp.tensor @a : tensor<224x4096xbf16> tiles 7x128 input tiled
  sp.tensor @b : tensor<4096x160xbf16> tiles 128x5 input tiled
  sp.tensor @c : tensor<224x160xbf16> tiles 7x5 output tiled
  sp.work @c block 2x2 k 128 by 16
  sp.plan blocked grid 3x4 block 2x2 packing operand_with_store multicast a, b predicted 42360 bound dram runner_up "blocked per_site 2x2 block 1x2 k_block 16 k_blocks 8 grid 3x4" 42360 attributes {why = "dram-bound: 8 steps of compute 4352 / movement 4609 / DRAM 3142 cycles (tile-matmul 68.0 cycles: engine 68.0, unpack 38.4), fill 4577, drain 5520", multicast_why = "A multicast over rows of 3 (unicast: 59328 cycles); B multicast over columns of 4 (unicast: 61376 cycles)"}
  sp.mesh 4x4 movement 2 nocs 2 local 1474560
  sp.sites [0, 1]x[0, 2] first x + y * 3 count 1 block 2x2 sub_block 2x2 memory {in0 = 0 depth 8, in1 = 524288 depth 8, out = 1048576, spill = 1048576}
  sp.sites [2, 2]x[0, 2] first x + y * 3 count 1 block 2x1 sub_block 2x1 memory {in0 = 0 depth 8, in1 = 524288 depth 4, out = 655360, spill = 655360}
  sp.sites [0, 1]x[3, 3] first x + y * 3 count 1 block 1x2 sub_block 1x2 memory {in0 = 0 depth 4, in1 = 524288 depth 8, out = 1048576, spill = 1048576}
  sp.sites [2, 2]x[3, 3] first x + y * 3 count 1 block 1x1 sub_block 1x1 memory {in0 = 0 depth 4, in1 = 524288 depth 4, out = 655360, spill = 655360}
  %in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048
  %in1 = sp.fifo "in1" depth 2 page [kw, w] bf16 tile_bytes 2048
  %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
  %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
  %dst = sp.acc "dst" page [sh, sw] bf16
  sp.group @in0_rows %in0 rows [0, 2]x[0, 3] sender 0
  sp.group @in1_columns %in1 columns [0, 2]x[0, 3] sender 0
  sp.load @a[r0, k0] x [h, kw] -> %in0 multicast @in0_rows on movement 1 noc 0
  sp.load @b[k0, c0] x [kw, w] -> %in1 multicast @in1_columns on movement 0 noc 1
  sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4 on compute
  sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] on movement 0 noc 1
}
// CHECK:      sp.sites [0, 1]x[0, 2] first x + y * 3 count 1 block 2x2 sub_block 2x2 memory {in0 = 0 depth 8, in1 = 524288 depth 8, out = 1048576, spill = 1048576}
// CHECK-NEXT: sp.sites [2, 2]x[0, 2] first x + y * 3 count 1 block 2x1 sub_block 2x1 memory {in0 = 0 depth 8, in1 = 524288 depth 4, out = 655360, spill = 655360}
// CHECK-GENERIC: "sp.sites"() <{rect = #sp.rect<[0, 1]x[0, 2]>, first = affine_map<(d0, d1) -> ((d0 + (d1 * 3)))>, count = 1 : i64, block = #sp.pair<2x2>, sub_block = #sp.pair<2x2>, memory = {in0 = array<i64: 0, 8>, in1 = array<i64: 524288, 8>, out = 1048576 : i64, spill = 1048576 : i64}}> : () -> ()
