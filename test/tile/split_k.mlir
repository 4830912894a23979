// tile: split-K is a candidate on a mesh with rectangle multicast; the plan records its decision
// (`split_why`: the chosen plan's cycles against the best plan of the other kind, or where the
// pruning never priced that kind's best, the floor no plan of it goes below) and the work
// its K slices; place stacks the slices' grids along the axis, fuse-operands cuts each row or
// column group at the slice edge, size-buffers lays out the partials FIFO. The partial sums pass
// at the accumulator's precision: f32 by default (4096-byte tiles), bf16 with accumulate=bf16.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{accumulate=bf16}' | filecheck %s --check-prefix=BH16
// RUN: spatial-opt %s --split-input-file -p 'spatial-pipeline{target=wormhole_n150}' | filecheck %s --check-prefix=WH
// split-k=1 turns it off: no split, and nothing to record.
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile{split-k=1}' | filecheck %s --check-prefix=OFF
// A GPU splits too, its slices side by side along its line of SMs, each dealing its blocks flat;
// the sums go through DRAM, the last of a block's items to arrive adding them (docs/targets.md#split-k).
// RUN: spatial-opt %s --split-input-file -p 'link{target=h200},tile' | filecheck %s --check-prefix=GPU

// 128x4096x1024 bf16 (Llama k/v at T = 128): 4 x 128 x 32 tiles. Unsplit, 4 block rows leave
// most of blackhole's 10 rows of sites idle; K slices stacked along y fill them: 2 slices of 64
// K tiles on 11x4 sites (1x3 blocks, one hand-over), with either accumulator. The runner-up with
// the 16-bit accumulator, 2x3 blocks on 11x2 sites, writes back two 1x3 sub-blocks a block, one
// DRAM round trip each (docs/targets.md#gemm-cycles): 29179 cycles, 197 more.
// With f32 accumulation (the default) the partial sums handed over and the K-block spill
// reloaded are f32 tiles, twice the bytes.
func.func @kv(%a: tensor<128x4096xbf16>, %b: tensor<4096x1024xbf16>) -> tensor<128x1024xbf16> {
  %c = tg.matmul %a, %b : (tensor<128x4096xbf16>, tensor<4096x1024xbf16>) -> tensor<128x1024xbf16>
  func.return %c : tensor<128x1024xbf16>
}
// BH:      sp.work @c block 1x3 k 128 by 4 split 2 along y
// BH-NEXT: sp.plan blocked grid 11x4 block 1x3 packing operand_with_store multicast a, b predicted 29450 bound dram
// BH-SAME: runner_up "blocked per_site 1x3 block 1x1 k_block 8 k_blocks 8 grid 11x4 split 2 along y" 29563
// BH-SAME: split_why = "K split 2 along y (29450 cycles); every unsplit plan takes at least 31881 cycles"
// BH:      %partials = sp.fifo "partials" depth subs * 2 page [sh, sw] f32 tile_bytes 4096
// BH:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill partials %partials fidelity hifi4
// BH16:      sp.work @c block 1x3 k 128 by 4 split 2 along y
// BH16-NEXT: sp.plan blocked grid 11x4 block 1x3 packing operand_with_store multicast a, b predicted 28982 bound dram
// BH16-SAME: runner_up "blocked per_site 2x3 block 1x3 k_block 4 k_blocks 16 grid 11x2 split 2 along y" 29179
// BH16-SAME: split_why = "K split 2 along y (28982 cycles); every unsplit plan takes at least 31881 cycles"
// BH16:      %partials = sp.fifo "partials" depth subs * 2 page [sh, sw] bf16 tile_bytes 2048
// BH16:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill partials %partials fidelity hifi4
// OFF:     sp.work @c block 1x3 k 128 by 16{{$}}
// OFF-NOT: split_why
// OFF-NOT: partials
// On h200 4 slices of 32 K tiles, each dealing its 32 blocks of 2x2 tiles over 33 SMs, beat 1x1
// blocks on 128 SMs walking all of K through their own links (8152 cycles).
// GPU:      sp.work @c block 2x2 k 128 by 8 split 4 along x
// GPU-NEXT: sp.plan blocked grid 33x1 block 2x2 packing operand_with_store predicted 7811 bound dram
// GPU-SAME: split-K adds f32 partial sums through DRAM
// GPU-SAME: split_why = "K split 4 along x (7811 cycles); best unsplit: blocked per_site 1x1 block 1x1 k_block 16 k_blocks 8 (8152 cycles)"

// -----

// 64x2048x96 f32 on wormhole: 2 x 64 x 3 tiles, 6 blocks; 4 K slices of 16 tiles stacked along
// y, each on a 3x2 grid: 4 ranges, one per slice, items numbered slice after slice (6 a slice).
// The column groups of B are cut every 2 sites (a slice's column); the rows of A lie in one slice.
func.func @deep(%a: tensor<64x2048xf32>, %b: tensor<2048x96xf32>) -> tensor<64x96xf32> {
  %c = tg.matmul %a, %b : (tensor<64x2048xf32>, tensor<2048x96xf32>) -> tensor<64x96xf32>
  func.return %c : tensor<64x96xf32>
}
// WH:      sp.work @c block 1x1 k 64 by 8 split 4 along y
// WH-NEXT: sp.plan blocked grid 3x2 block 1x1 {{.*}} predicted 7720 bound dram
// WH-SAME: split_why = "K split 4 along y (7720 cycles); every unsplit plan takes at least 11873 cycles"
// WH:      sp.sites [0, 2]x[0, 1] first x + y * 3 count 1 block 1x1 sub_block 1x1 memory {in0 = 0, in1 = 65536, out = 131072, spill = 131072, partials = 135168}
// WH-NEXT: sp.sites [0, 2]x[2, 3] first x + y * 3 count 1
// WH-NEXT: sp.sites [0, 2]x[4, 5] first x + y * 3 count 1
// WH-NEXT: sp.sites [0, 2]x[6, 7] first x + y * 3 count 1
// WH:      %partials = sp.fifo "partials" depth subs * 2 page [sh, sw] f32 tile_bytes 4096
// WH:      sp.group @in0_rows %in0 rows [0, 2]x[0, 7] sender 0
// WH-NEXT: sp.group @in1_columns %in1 columns [0, 2]x[0, 7] every 2 sender 0
// GPU:      sp.work @c block 1x1 k 64 by 8 split 4 along x
// GPU-NEXT: sp.plan blocked grid 33x1 block 1x1 packing operand_with_store predicted 3696 bound dram

// -----

// 2048^3 bf16 on blackhole: 64 tiles over 13 columns. With the 16-bit accumulator, split-K
// wins: two slices of 13x5 sites, 32 K tiles each, stacked along y, K blocks of one tile with
// the partial sums in the bf16 output. With f32 accumulation every K block after the first
// reloads its block's f32 partial sums, so a 13x5 block with short K blocks costs far more; the
// unsplit 7x5 blocks over all 13x10 sites, K in 4 blocks of 16 (compute-bound; each of the last
// block's seven 1x5 sub-blocks written back as it is computed, docs/targets.md#gemm-cycles), are
// cheaper than any split plan. With the 16-bit accumulator the slices take K blocks of 8.
func.func @square(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16> {
  %c = tg.matmul %a, %b : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  func.return %c : tensor<2048x2048xbf16>
}
// BH:      sp.work @c block 7x5 k 64 by 16{{$}}
// BH-NEXT: sp.plan blocked grid 13x10 {{.*}} predicted 183563 bound compute
// BH-SAME: split_why = "K not split (183563 cycles); every split-K plan takes at least 193435 cycles"
// BH-NOT:  partials
// BH16:      sp.work @c block 13x5 k 64 by 8 split 2 along y
// BH16-NEXT: sp.plan blocked grid 13x5
// BH16-SAME: split_why = "K split 2 along y (161696 cycles); best unsplit: blocked per_site 7x5 block 1x5 k_block 16 k_blocks 4 grid 13x10 (171710 cycles)"
// GPU:      sp.work @c block 4x4 k 64 by 4{{$}}
// GPU:      split_why = "K not split (43986 cycles); every split-K plan takes at least 53265 cycles"

// -----

// 256^3 bf16 on wormhole: 8 x 8 tiles, one a site, one K block of 8; splitting K leaves half
// the sites reading 1x2 blocks and adds the partial sums' trip, and its two 1x1 sub-blocks are
// written back one round trip after the other (3780 cycles at least), so the plan is unsplit and
// records the floor no split plan goes below. (2048^3, 64 tiles a site, prices no split at all.)
func.func @fills(%a: tensor<256x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<256x256xbf16> {
  %c = tg.matmul %a, %b : (tensor<256x256xbf16>, tensor<256x256xbf16>) -> tensor<256x256xbf16>
  func.return %c : tensor<256x256xbf16>
}
// WH:      sp.work @c block 1x1 k 8 by 8{{$}}
// WH-NEXT: sp.plan blocked grid 8x8 block 1x1 {{.*}} predicted 3248
// WH-SAME: split_why = "K not split (3248 cycles); every split-K plan takes at least 3780 cycles"
// WH-NOT:  partials

// -----

// 2048^3 bf16 on wormhole: 64 tiles a site fill the mesh; split-K is not priced (SPLIT_TILES),
// and nothing is recorded.
func.func @full(%a: tensor<2048x2048xbf16>, %b: tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16> {
  %c = tg.matmul %a, %b : (tensor<2048x2048xbf16>, tensor<2048x2048xbf16>) -> tensor<2048x2048xbf16>
  func.return %c : tensor<2048x2048xbf16>
}
// WH:      sp.work @c block 2x2 k 64 by 32 over 8x8
// WH-NOT:  split_why
