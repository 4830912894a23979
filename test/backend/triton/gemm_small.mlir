// RUN: spatial-opt %examples/gemm_small.mlir -p 'spatial-pipeline{target=h100}' -t triton | filecheck %s
// RUN: not spatial-opt %examples/gemm_small.mlir -p 'link{target=h100}' -t triton 2>&1 | filecheck %s --check-prefix=REFUSED

// One kernel per section, its plan and predicted time as comments, the numbers read from the IR.
// The whole K in one block: each step's reads wait a 400-cycle DRAM round trip, so one step.
// CHECK: TARGET = 'h100'
// CHECK: # section @c: tg.matmul (kind gemm)
// CHECK-NEXT: # plan: sp.plan blocked grid 132x1 block 1x1 packing operand_with_store predicted 1592
// CHECK-NEXT: #   runner_up "blocked per_site 1x1 block 1x1 k_block 7 k_blocks 1 grid 15x1" 1592
// CHECK:      # predicted: 1592 cycles = 0.870 us (dram-bound)
// CHECK:      # block 1x1 tiles (BLOCK_M=32, BLOCK_N=32), K 7 tiles by 7 (BLOCK_K=224); grid 15 program(s), 15
// CHECK-NEXT: #   item(s); num_stages 2 (FIFO depth)
// CHECK: def c_kernel(T_a, T_b, T_c, SITES, ITEMS):
// CHECK: for k0 in range(0, 7, 7):
// CHECK: tl.dot(a, b, out_dtype=tl.float32, input_precision="ieee")
// CHECK: C_SITES = [
// CHECK-NEXT: (0, 1), (1, 1), (2, 1)
// CHECK: def launch(t, device):
// CHECK: c_kernel[(15,)](
// CHECK-NEXT: t['a'],
// CHECK-NEXT: t['b'],
// CHECK-NEXT: t['c'],
// CHECK-NEXT: _table(C_SITES, device),
// CHECK-NEXT: _table(C_ITEMS, device),
// CHECK-NEXT: num_warps=4,
// CHECK-NEXT: num_stages=2,
// CHECK: def run(inputs, device="cuda", every=False):
// CHECK: if __name__ == "__main__":

// REFUSED: spatial-opt: error: TritonNotEmitted: section @c: phase linked: run spatial-pipeline first
