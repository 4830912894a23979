// tile: the plan the cost model ranks first among the legal ones, with its predicted cycles, its
// bound and the runner-up's cycles; the work items (per-site block, K block); the output FIFO and
// the K-block spill the plan implies.
// RUN: spatial-opt %s --split-input-file -p link,tile | filecheck %s --check-prefix=WH
// RUN: spatial-opt %s --split-input-file -p 'link{target=blackhole_p150},tile' | filecheck %s --check-prefix=BH
// RUN: spatial-opt %s --split-input-file -p 'link{target=rtx3060},tile' | filecheck %s --check-prefix=GPU
// Running tile twice changes nothing.
// RUN: spatial-opt %s --split-input-file -p link,tile,tile | filecheck %s --check-prefix=WH

// 100x700x500 bf16: 4x22x16 tiles, none dividing the meshes evenly.
func.func @gemm(%a: tensor<100x700xbf16>, %b: tensor<700x500xbf16>) -> tensor<100x500xbf16> {
  %c = tg.matmul %a, %b : (tensor<100x700xbf16>, tensor<700x500xbf16>) -> tensor<100x500xbf16>
  func.return %c : tensor<100x500xbf16>
}
// On Tensix, per_site_m = ceil(4 / rows used) and per_site_n = ceil(16 / columns used): 4 rows
// of 1 tile and 8 columns of 2 tiles, K in 2 blocks of 11 tiles; the bf16 output accumulates in
// place (the 16-bit dest's format), so the spill is the output FIFO, one page per sub-block.
// WH:      sp.options = {fidelity = "hifi4", format = "bf16"}
// WH:      sp.work @c block 1x2 k 22 by 11
// WH-NEXT: sp.plan blocked grid 8x4 block 1x2 packing operand_with_store predicted 9310 bound "dram" runner_up "blocked per_site 1x2 block 1x1 k_block 11 k_blocks 2" 9310
// WH:      %out = sp.fifo "out" depth subs page [sh, sw] bf16 tile_bytes 2048
// WH-NEXT: %spill = sp.interm "spill" depth subs page [sh, sw] bf16 tile_bytes 2048 alias %out
// WH:      sp.matmul_tiles %in0, %in1 -> %out acc %dst spill %spill fidelity hifi4
// BH:      sp.work @c block 1x2 k 22 by 11
// BH-NEXT: sp.plan blocked grid 8x4 block 1x2 packing operand_with_store predicted 7400 bound "dram"
// A GPU deals blocks out flat: they divide the tiles evenly (1x1 of 4x16); its register
// accumulator holds the block over all 22 K blocks, so there is no spill, and its output goes
// through a ring of max(sub-blocks, 2) pages.
// GPU:      sp.work @c block 1x1 k 22 by 1
// GPU-NEXT: sp.plan blocked grid 28x1 block 1x1 packing operand_with_store predicted 10076 bound "compute" runner_up "blocked per_site 1x1 block 1x1 k_block 2 k_blocks 11" 10134
// GPU:      %out = sp.fifo "out" depth 2 page [sh, sw] bf16 tile_bytes 2048
// GPU-NOT:  sp.interm
// GPU:      sp.matmul_tiles %in0, %in1 -> %out acc %dst{{$}}

// -----

// M = 1 (a decode step): one block row; on Tensix the 2-D map puts it on one row of sites.
func.func @decode(%x: tensor<1x4096xbf16>, %w: tensor<4096x4096xbf16>) -> tensor<1x4096xbf16> {
  %y = tg.matmul %x, %w : (tensor<1x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<1x4096xbf16>
  func.return %y : tensor<1x4096xbf16>
}
// WH:      sp.work @y block 1x16 k 128 by 8
// WH-NEXT: sp.plan blocked grid 8x1 block 1x8 packing operand_with_store predicted 145652 bound "dram"
// BH:      sp.work @y block 1x10 k 128 by 4
// BH-NEXT: sp.plan blocked grid 13x1 block 1x5 packing operand_with_store predicted 92438 bound "dram" runner_up "blocked per_site 1x10 block 1x2 k_block 4 k_blocks 32" 92694
// GPU:      sp.work @y block 1x1 k 128 by 1
// GPU-NEXT: sp.plan blocked grid 28x1 block 1x1 packing operand_with_store predicted 168564 bound "dram"

// -----

// K of one tile: one K block, so no spill anywhere.
func.func @k1(%a: tensor<512x32xbf16>, %b: tensor<32x512xbf16>) -> tensor<512x512xbf16> {
  %c = tg.matmul %a, %b : (tensor<512x32xbf16>, tensor<32x512xbf16>) -> tensor<512x512xbf16>
  func.return %c : tensor<512x512xbf16>
}
// WH:      sp.work @c block 2x2 k 1 by 1
// WH-NEXT: sp.plan blocked grid 8x8 block 2x2 packing operand_with_store predicted 4641 bound "dram"
// WH-NOT:  sp.interm
// BH:      sp.work @c block 2x2 k 1 by 1
// GPU:      sp.work @c block 1x1 k 1 by 1
// GPU-NEXT: sp.plan blocked grid 28x1 block 1x1 packing operand_with_store predicted 3202 bound "dram" runner_up "blocked per_site 2x1 block 2x1 k_block 1 k_blocks 1" 3491

// -----

// f32 on Tensix: dest in f32 holds 4 tiles, so the sub-block is at most 4 tiles (1x4 here).
func.func @f32(%a: tensor<1024x1024xf32>, %b: tensor<1024x1024xf32>) -> tensor<1024x1024xf32> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xf32>, tensor<1024x1024xf32>) -> tensor<1024x1024xf32>
  func.return %c : tensor<1024x1024xf32>
}
// WH:      sp.work @c block 4x4 k 32 by 2
// WH-NEXT: sp.plan blocked grid 8x8 block 1x4 packing operand_with_store predicted 62952 bound "dram"
// WH:      %dst = sp.acc "dst" page [sh, sw] f32
// BH:      sp.work @c block 4x3 k 32 by 2
// BH-NEXT: sp.plan blocked grid 11x8 block 4x1 packing operand_with_store predicted 46815 bound "dram" runner_up "blocked per_site 4x3 block 1x3 k_block 2 k_blocks 16" 46821
// GPU:      sp.work @c block 2x1 k 32 by 1
// GPU-NEXT: sp.plan blocked grid 28x1 block 2x1 packing operand_with_store predicted 525805 bound "compute"
