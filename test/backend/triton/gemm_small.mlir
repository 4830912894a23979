// RUN: spatial-opt %examples/gemm_small.mlir -p 'spatial-pipeline{target=h100}' -t triton | filecheck %s
// RUN: not spatial-opt %examples/gemm_small.mlir -p 'link{target=h100}' -t triton 2>&1 | filecheck %s --check-prefix=REFUSED

// One kernel per section, its plan and predicted time as comments, the numbers read from the IR.
// The whole K in one block: each step's reads wait a 400-cycle DRAM round trip, so one step.
// CHECK: TARGET = 'h100'
// CHECK: # section @c: tg.matmul (kind gemm)
// CHECK-NEXT: # plan: sp.plan blocked grid 132x1 block 1x1
// CHECK-NEXT: # predicted: 1536 cycles = 0.839 us (dram-bound)
// CHECK-NEXT: # block 1x1 tiles (BLOCK_M=32, BLOCK_N=32), K 7 tiles by 7 (BLOCK_K=224); grid 15 program(s), 15 item(s); num_stages 2 (FIFO depth)
// CHECK: def c_kernel(T_a, T_b, T_c, SITES, ITEMS):
// CHECK: for k0 in range(0, 7, 7):
// CHECK: tl.dot(a, b, out_dtype=tl.float32, input_precision="ieee")
// CHECK: C_SITES = [(0, 1), (1, 1)
// CHECK: def run(inputs, device="cuda", every=False):
// CHECK: c_kernel[(15,)](t['a'], t['b'], t['c'], {{.*}}num_warps=4, num_stages=2)
// CHECK: if __name__ == "__main__":

// REFUSED: spatial-opt: error: TritonNotEmitted: section @c: phase linked: run spatial-pipeline first
