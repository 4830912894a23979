// The pipeline's options change what they say and are recorded on the module (and in the report).
// RUN: spatial-opt %s -p 'spatial-pipeline{fidelity=lofi}' | filecheck %s --check-prefix=LOFI
// RUN: spatial-opt %s -p 'spatial-pipeline{format=bfp8_b}' | filecheck %s --check-prefix=BFP8
// RUN: spatial-opt %s -p 'spatial-pipeline{grid=4x4}' | filecheck %s --check-prefix=GRID
// RUN: spatial-opt %s -p 'spatial-pipeline{grid=4x4 accumulate=bf16}' | filecheck %s --check-prefix=ACC16
// RUN: not spatial-opt %s -p 'spatial-pipeline{accumulate=f16}' 2>&1 | filecheck %s --check-prefix=BADACC
// RUN: spatial-opt %s -p 'spatial-pipeline{target=blackhole_p150 grid=11x10 split-k=1}' -t report | filecheck %s --check-prefix=REPORT

func.func @gemm(%a: tensor<1024x1024xbf16>, %b: tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16> {
  %c = tg.matmul %a, %b : (tensor<1024x1024xbf16>, tensor<1024x1024xbf16>) -> tensor<1024x1024xbf16>
  func.return %c : tensor<1024x1024xbf16>
}
// LoFi: 16 cycles a tile-matmul instead of HiFi4's 64.
// LOFI:      sp.options = {accumulate = "f32", fidelity = "lofi", format = "bf16"}
// LOFI:      sp.matmul_tiles {{.*}} fidelity lofi on compute
// bfp8_b tiles are 1088 bytes in DRAM and in local memory.
// BFP8:      sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bfp8_b"}
// BFP8:      %in0 = sp.fifo "in0" depth {{[0-9]+}} page [h, kw] bf16 as "bfp8_b" tile_bytes 1088
// Only a 4x4 sub-grid of the mesh: its 16 sites as a line folded onto it, 2x2-tile blocks, 16 a
// site, the whole K in one block, in 1x1 sub-blocks: the last block's four pages are written
// back as each is computed, which under the DRAM-bound steps ends sooner than 2x2 (one page)
// written after the whole block (docs/targets.md#gemm-cycles).
// GRID:      sp.options = {accumulate = "f32", fidelity = "hifi4", format = "bf16", grid = "4x4"}
// GRID:      sp.work @c block 2x2 k 32 by 32 over 16x1
// GRID:      sp.mesh 4x4 movement 2 nocs 2
// GRID:      sp.sites [0, 3]x[0, 3] first x * 16 + y * 64 count 16 block 2x2 sub_block 1x1
// GRID:      %dst = sp.acc "dst" page [sh, sw] f32
// accumulate=bf16: the sub-grid runs 4 blocks of 4x4 a site (2 rounds each way), K in blocks of 2,
// in 1x4 sub-blocks, each written back as the last K block computes it, two writes in flight
// (docs/targets.md#gemm-cycles); the steps are compute-bound.
// ACC16:      sp.options = {accumulate = "bf16", fidelity = "hifi4", format = "bf16", grid = "4x4"}
// ACC16:      sp.work @c block 4x4 k 32 by 2 over 4x4
// ACC16:      sp.sites [0, 3]x[0, 3] first x * 4 + y * 16 count 4 block 4x4 sub_block 1x4
// ACC16:      %dst = sp.acc "dst" page [sh, sw] bf16
// BADACC: accumulate f16: use one of f32, bf16
// REPORT:      "target": "blackhole_p150",
// REPORT-NEXT: "options": {
// REPORT-NEXT:   "accumulate": "f32",
// REPORT-NEXT:   "fidelity": "hifi4",
// REPORT-NEXT:   "format": "bf16",
// REPORT-NEXT:   "grid": "11x10"
// 32 tiles over at most 11 columns and 10 rows of sites: the plan takes 11 x 8 of them.
// REPORT:      "grid": [
// REPORT-NEXT:   11,
// REPORT-NEXT:   8
// REPORT:      "sites": 88,
