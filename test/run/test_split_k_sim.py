"""Split-K programs under the simulator: each K slice walks its own K blocks, the partial sums
pass slice to slice through the partials FIFO of the next slice's site, and only the last slice
stores; the result equals the reference. Removing the reduction is caught."""

from __future__ import annotations

import pytest

from spatial_dialect import sp
from spatial_dialect.tools.inputs import draw_inputs
from spatial_dialect.tools.sim_machine import SimulationError
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    compile_function,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)


def gemm(m: int, k: int, n: int, elt: str):
    a, b, c = (f"tensor<{r}x{s}x{elt}>" for r, s in ((m, k), (k, n), (m, n)))
    return entry_function(
        parse_module(
            f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
        )
    )


def compiled(m, k, n, elt, target, grid):
    fn = gemm(m, k, n, elt)
    module = compile_function(fn, target, **({"grid": grid} if grid else {}))
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return fn, module, section


def run(fn, module):
    inputs = draw_inputs(fn, 0)
    reference, values = reference_outputs(fn, inputs)
    return compare_outputs(fn, reference, values, simulated_outputs(fn, module, inputs))


@pytest.mark.parametrize(
    "m, k, n, elt, grid, slices, along, over",
    [
        # 4 slices along y, both operands multicast (B's column groups cut at each slice), spill.
        (64, 2048, 96, "f32", None, 4, "y", None),
        # Slices along x, partial tiles at both edges of the output.
        (100, 256, 100, "f32", "4x4", 2, "x", None),
        # bf16 partial sums (the 16-bit accumulator's type), several sub-blocks a block.
        (64, 2048, 200, "bf16", "4x4", 4, "y", None),
        # Several blocks a site in rounds, in each slice.
        (256, 512, 512, "bf16", "4x4", 2, "y", (4, 2)),
    ],
)
def test_split_k_programs_equal_the_reference(m, k, n, elt, grid, slices, along, over):
    fn, module, section = compiled(m, k, n, elt, "wormhole_n150", grid)
    work = section.one(sp.WorkOp)
    assert (work.k_slices, work.split_axis, work.over) == (slices, along, over)
    (result,) = run(fn, module)
    assert result.ok, result.line()


def test_mutation_split_without_its_reduction_is_reported():
    fn, module, section = compiled(64, 2048, 96, "f32", "wormhole_n150", None)
    old = section.one(sp.MatmulTilesOp)
    new = sp.MatmulTilesOp(old.in0, old.in1, old.out, old.acc, old.spill, None, old.engine)
    section.body.block.insert_op_before(new, old)
    old.detach()
    with pytest.raises(SimulationError, match="4 K slices and no partials FIFO"):
        run(fn, module)
