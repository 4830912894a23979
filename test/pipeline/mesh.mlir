// spatial-pipeline on a WHOLE function and a mesh preset runs tensor-parallel first, then link and
// the rest for the mesh's chip (docs/passes.md#spatial-pipeline): one deployment from a whole
// program. prefer-sharded reaches the pass from the pipeline; without it the tiny step is cheaper
// replicated (no step), and the decision is recorded on the per-chip function.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'spatial-pipeline{target=n300 prefer-sharded=true}' | filecheck %s --check-prefix=SPLIT
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'spatial-pipeline{target=n300}' | filecheck %s --check-prefix=PRICED
// A per-chip function is taken as it is (the pass leaves it alone): the same module either way.
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'tensor-parallel{mesh=n300 prefer-sharded=true}' -o %t.chip
// RUN: spatial-opt %t.chip -p 'spatial-pipeline{target=n300}' > %t.a
// RUN: spatial-opt %examples/tiny_decode.mlir -p 'spatial-pipeline{target=n300 prefer-sharded=true}' > %t.b
// RUN: diff %t.a %t.b

// SPLIT:      builtin.module attributes {sp.target = "n300"
// SPLIT:      mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
// SPLIT:      sp.entry @tiny_step({{.*}}mesh.inputs = [#mesh.sharding<@n300, [replicate]>
// SPLIT:      mesh.step @l0_o_1 all_reduce @l0_o axis 0
// SPLIT:      mesh.step @l0_down_1 all_reduce @l0_down axis 0
// SPLIT:      mesh.step @token argmax_gather @logits axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> {{.*}} : tensor<1x256xbf16> -> tensor<1xi32>

// PRICED:     builtin.module attributes {sp.target = "n300"
// PRICED:     sp.entry @tiny_step(
// PRICED-NOT: mesh.step
