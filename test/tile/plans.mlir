// tile: the plan the cost model ranks first among the legal ones, with its predicted cycles, its
// bound and the runner-up's cycles; the work items (per-site block, K block, and the grid they are
// dealt over when a site runs several); the output FIFO and the K-block spill the plan implies.
// The unsplit plan space (tile{split-k=1}); split-K is test/tile/split_k.mlir.
// RUN: spatial-opt %s --split-input-file -p 'link,tile{split-k=1}' | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{split-k=1}' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link{target=rtx3060},tile{split-k=1}' | filecheck %s --check-prefix=GPU
// accumulate=bf16, the fast mode: Tensix dest in its 16-bit mode (8 tiles), bf16 partial sums.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16 split-k=1}' | filecheck %s --check-prefix=FAST
// Running tile twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p 'link,tile{split-k=1},tile{split-k=1}' | filecheck %s --check-prefix=WH

// 100x700x500 bf16: 4x22x16 tiles, none dividing the meshes evenly.
func.func @gemm(%a: tensor<100x700xbf16>, %b: tensor<700x500xbf16>) -> tensor<100x500xbf16> {
  %c = tg.matmul %a, %b : (tensor<100x700xbf16>, tensor<700x500xbf16>) -> tensor<100x500xbf16>
  func.return %c : tensor<100x500xbf16>
}
// Wormhole: one block a site, 1x2 (per_site_n = ceil(16 / 8 columns)), K in 2 blocks of 11 with
// the f32 partial sums spilled between them, both operands multicast (the recorded numbers say
// what reading each one per site would cost). Its two 1x1 sub-blocks are written back one after
// the other as the last K block computes them (docs/targets.md#gemm-cycles), which beats the
// runner-up, 1x1 blocks dealt over 8x4 sites in two rounds with the whole K in one block (no
// spill), by 88 cycles. The accumulator is f32 (the tg contract: dest in its fp32 mode, 4 tiles).
// WH:      sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16", split_k = "1"}
// WH:      sp.work @c block 1x2 k 22 by 11{{$}}
// WH-NEXT: sp.plan blocked grid 8x4 block 1x1 packing operand_with_store multicast a, b predicted 9164 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 22 k_blocks 1 grid 8x4" 9252
// WH-SAME: accumulate = "f32: the tg contract; 4 tiles a sub-block; f32 partial sums in local memory"
// WH-SAME: multicast_why = "A multicast over rows of 8 (unicast: 10897 cycles); B multicast over columns of 4 (unicast: 14272 cycles)"
// WH:      %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// WH-NEXT: %spill = sp.interm "spill" depth subs page [sh, sw] f32 tile_bytes 4096
// WH:      %dst = sp.acc "dst" page [sh, sw] f32
// WH:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4
// Blackhole: the same, the runner-up again the 1x1 blocks with the whole K.
// BH:      sp.work @c block 1x2 k 22 by 11{{$}}
// BH-NEXT: sp.plan blocked grid 8x4 block 1x1 packing operand_with_store multicast a, b predicted 7295 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 22 k_blocks 1 grid 8x4" 7415
// BH:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4
// Under accumulate=bf16, one block a site, per_site_m = ceil(4 / 4 rows) and per_site_n =
// ceil(16 / 8 columns), K in 2 blocks of 11; the bf16 output accumulates in place (the 16-bit
// dest's format), so the spill is the output FIFO, one page per sub-block.
// Its two 1x1 sub-blocks are written two at a time (writes_in_pairs): 7231 cycles, not 7260.
// FAST:      sp.options = {accumulate = "bf16", fidelity = "hifi4", format = "bf16", split_k = "1"}
// FAST:      sp.work @c block 1x2 k 22 by 11{{$}}
// FAST-NEXT: sp.plan blocked grid 8x4 block 1x1 packing operand_with_store multicast a, b predicted 7231 bound dram
// FAST-SAME: accumulate = "bf16: the 16-bit accumulator (accumulate=bf16), rounded after every tile-matmul; 8 tiles a sub-block; partial sums in the bf16 output"
// FAST:      %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
// FAST-NEXT: %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
// FAST-NEXT: %dst = sp.acc "dst" page [sh, sw] bf16
// FAST:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4
// A GPU deals blocks out flat: they divide the tiles evenly (1x1 of 4x16), 64 over 22 SMs, the
// fewest SMs that run 3 each (fewer concurrent write-backs than 28 SMs' 3 or fewer), K in 2
// blocks of 11 (each step's reads wait one 400-cycle DRAM round trip, so fewer, longer steps);
// its register accumulator holds the block over both K blocks, so there is no spill, and its
// output goes through a ring of max(sub-blocks, 2) pages.
// GPU:      sp.work @c block 1x1 k 22 by 11
// Predicted: fill 870 (one step's DRAM share: 360 GB/s / 1.777 GHz x 679/696 = 198 B/cycle) + 5
// more steps of compute 1408 (11 tile-matmuls of 128 cycles) + drain 2036 = 9946, the 9947 below.
// GPU-NEXT: sp.plan blocked grid 22x1 block 1x1 packing operand_with_store predicted 9947 bound compute runner_up "blocked per_site 1x1 block 1x1 k_block 11 k_blocks 2" 10009
// GPU:      %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// GPU-NOT:  sp.interm
// GPU:      sp.matmul_tiles %in0, %in1 -> %out acc %dst{{$}}

// -----

// M = 1 (a decode step): one block row. On Tensix a 2-D grid would put it on one row of sites;
// a line of sites folded onto the mesh (tt-metal's 1-D multicast matmul) spreads the block
// columns over more sites and multicasts A along the whole line.
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// The f32 dest holds 4 tiles and its partial sums spill as f32 tiles: on Wormhole, 1x3 blocks
// over a line of 43 with K one tile a step and f32 partial sums in local memory, tied (the first
// found kept) with 1x2 blocks over a line of 64 with K in blocks of 2. A and C are one row: each of
// their tiles moves one row (64 B of bf16) through DRAM, so the DRAM time is B's 32 MiB and little
// else; its tile-matmul (42.7 cycles) is the unpacker's time, not the engine's (19.3).
// WH:      sp.work @y block 1x3 k 128 by 1{{$}}
// WH-NEXT: sp.plan blocked line grid 43x1 block 1x3 packing operand_with_store multicast a predicted 126583 bound dram runner_up "blocked per_site 1x2 block 1x2 k_block 2 k_blocks 64 line 64x1" 126583
// WH-SAME: accumulate = "f32: the tg contract; 4 tiles a sub-block; f32 partial sums in local memory"
// WH-SAME: multicast_why = "A multicast over the line of 43 (unicast: 127872 cycles)"
// WH:      %spill = sp.interm "spill" depth subs page [sh, sw] f32 tile_bytes 4096{{$}}
// BH:      sp.work @y block 1x1 k 128 by 2{{$}}
// BH-NEXT: sp.plan blocked line grid 128x1 block 1x1 packing operand_with_store multicast a predicted 91429 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 4 k_blocks 32 line 128x1" 91531
// The 16-bit mode's bf16 partial sums are half the bytes: 63 cycles less.
// FAST:      sp.work @y block 1x1 k 128 by 2{{$}}
// FAST-NEXT: sp.plan blocked line grid 128x1 block 1x1 packing operand_with_store multicast a predicted 91366 bound dram runner_up "blocked per_site 1x2 block 1x2 k_block 2 k_blocks 64 line 64x1" 91417
// A GPU fills its SMs as far as Little's law asks: an SM keeps one step's block (two tiles of B,
// 4 KiB, and two one-row pages of A, 128 B, with K blocks of 2) in flight per 400-cycle DRAM
// round trip, 9.1 B/cycle, so it takes 22 SMs to stream the 198 B/cycle the DRAM sustains (360 GB/s
// / 1.777 GHz x 679/696); the chosen 26 stream 238 and the runner-up is one cycle behind. Both wait
// on the DRAM, so the time scales with its rate: at the former 0.9 fraction the plan took 184658
// cycles, and 184658 x 0.9 / (679/696) = 170352, within 0.03% of the 170395 here.
// GPU:      sp.work @y block 1x1 k 128 by 2
// GPU-NEXT: sp.plan blocked grid 26x1 block 1x1 packing operand_with_store predicted 170395 bound dram runner_up "blocked per_site 1x1 block 1x1 k_block 2 k_blocks 64" 170396
// GPU-SAME: reads 4224 B in flight a site per 400-cycle round trip = 9.1 B/cycle, x 26 sites = 238 of the DRAM's 198 B/cycle

// -----

// K of one tile: one K block, so no spill anywhere.
func.func @k1(%a: tensor<512x32xbf16>, %b: tensor<32x512xbf16>) -> tensor<512x512xbf16> {
  %c = tg.matmul %a, %b : (tensor<512x32xbf16>, tensor<32x512xbf16>) -> tensor<512x512xbf16>
  func.return %c : tensor<512x512xbf16>
}
// Wormhole: 2x1 blocks of two 1x1 sub-blocks, written two at a time (writes_in_pairs), tied with
// 1x2 blocks of two; one 1x2 sub-block (one write, 3949 cycles) no longer wins.
// WH:      sp.work @c block 2x1 k 1 by 1 over 8x8
// WH-NEXT: sp.plan blocked grid 8x8 block 1x1 packing operand_with_store multicast a, b predicted 3882 bound dram
// WH-NOT:  sp.interm
// BH:      sp.work @c block 2x1 k 1 by 1 over 8x8
// rtx3060 is DRAM-bound here, blocks of 2x1 and 1x1 tied; its step's DRAM share, 539 cycles at the former 0.9
// fraction, is 539 x 0.9 / (679/696) = 497 now.
// GPU:      sp.work @c block 2x1 k 1 by 1
// GPU-NEXT: sp.plan blocked grid 22x1 block 2x1 packing operand_with_store predicted 4097 bound dram runner_up "blocked per_site 2x1 block 1x1 k_block 1 k_blocks 1 grid 22x1" 4097

// -----

// f32 on Tensix: dest in f32 holds 4 tiles, so the sub-block is at most 4 tiles (1x4 here). The
// block's four 1x4 sub-blocks are written two at a time (writes_in_pairs).
func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// WH:      sp.work @c block 4x4 k 32 by 2
// WH-NEXT: sp.plan blocked grid 8x8 block 1x4 packing operand_with_store multicast a, b predicted 64477 bound dram
// WH:      %dst = sp.acc "dst" page [sh, sw] f32
// BH:      sp.work @c block 4x3 k 32 by 2
// Blackhole: 1x3 sub-blocks (four, written two at a time) now beat 4x1 (three, one at a time).
// BH-NEXT: sp.plan blocked grid 11x8 block 1x3 packing operand_with_store multicast a, b predicted 47262 bound dram runner_up "blocked per_site 4x4 block 1x4 k_block 2 k_blocks 16 grid 8x8" 47466
// GPU:      sp.work @c block 1x4 k 32 by 1
// (Compute-bound; the fill, one step's DRAM share, is 1006 x 0.9 / (679/696) = 928 cycles.)
// GPU-NEXT: sp.plan blocked grid 26x1 block 1x4 packing operand_with_store predicted 331164 bound compute
