// spatial-import --batch B --paged auto (docs/tg.md#choosing-the-page-size): the block size is
// priced on --target (targets/paging.py) and the decode function records the choice, its price,
// the runner-up's and the expected waste of a user's last block as `tg.page_size` (7936 B: half of
// a 32-row block less half a row, 15.5 rows of 64 f16, in 2 layers' K and V).
// RUN: %python -c "import sys; sys.path.insert(0, '%S/..'); from tiny_gguf import Tiny, write_gguf; write_gguf('%t.gguf', Tiny('qwen3', 'F16', tied=True))"
// RUN: spatial-import %t.gguf --step both --tokens 4 --cache 128 --batch 3 --paged auto --target wormhole_n150 -o %t.mlir
// RUN: filecheck %s --input-file %t.mlir

// CHECK:       3 user(s), paged in blocks of 32 rows (priced on wormhole_n150: {{[0-9]+}} cycles a step, runner-up 64 at {{[0-9]+}})
// CHECK-LABEL: func.func @qwen3_prefill(
// CHECK-NOT:     tg.page_size
// CHECK:         %prefill.block_table: tensor<1x4xi32>,
// CHECK-LABEL: func.func @qwen3_decode(
// CHECK:         %decode.block_table: tensor<3x4xi32>,
// CHECK:         attributes {tg.page_size = {target = "wormhole_n150", block = 32 : i64, cycles = {{[0-9]+}} : i64, overhead_cycles = {{[0-9]+}} : i64, waste_cycles = {{[0-9]+}} : i64, waste_bytes_per_user = 7936 : i64, pool_bytes = {{[0-9]+}} : i64, runner_up = 64 : i64, runner_up_cycles = {{[0-9]+}} : i64}} {
// CHECK:         tg.batch_attention {{.*}} block_size 32
