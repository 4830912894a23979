// spatial-pipeline's distributed-norm reaches tensor-parallel (docs/passes.md#spatial-pipeline):
// forced, each whole-row norm of the tiny step on n300 is linked as the two halves on each chip's
// 64 of 128 columns (docs/passes.md#link-wide-rows-are-blocked-never-refused) with the
// statistics' all_reduce between; off (the default), it stays one replicated rms_norm.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'spatial-pipeline{target=n300 prefer-sharded=true distributed-norm=forced}' | filecheck %s
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'spatial-pipeline{target=n300 prefer-sharded=true}' | filecheck %s --check-prefix=OFF

// CHECK:      sp.program @l0_h_ss op "tg.rms_stats" kind row_reduce
// CHECK:        sp.row_reduce partial sum_squares %in0 -> %out width 64 cols 64 rows 1 block 64 on compute
// CHECK:      mesh.step @l0_h_ss_1 all_reduce @l0_h_ss axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]>
// CHECK-SAME:   : tensor<1x1xf32> -> tensor<1x1xf32>
// CHECK-NEXT: sp.program @l0_h__stats op "tg.rms_apply" kind row_reduce
// CHECK:        sp.row_reduce combine rms_norm %in0 -> %out width 128 cols 128 rows 1 block 128 eps 1.0e-06 on compute
// CHECK:      sp.program @l0_h op "tg.rms_apply" kind map
// CHECK:        sp.map rms_apply %in0, %in1, %in2 [full, cols, rows] -> %out valid 1x64 on compute
// CHECK:      mesh.step @l0_h_1 all_gather @l0_h axis 0

// OFF:        sp.program @l0_h op "tg.rms_norm" kind row_reduce
// OFF-NOT:    tg.rms_stats
