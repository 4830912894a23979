"""Tied embeddings: the gather reads its rows from the table the LM head lays out tiled, with no
whole-table untilize, and the compiled program equals the reference."""

from __future__ import annotations

import pytest

from spatial_dialect import sp
from spatial_dialect.tools.inputs import draw_inputs
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    compile_function,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

TIED = """
func.func @tied(%table: tensor<1024x256xbf16>, %ids: tensor<3xi32>, %x: tensor<3x1024xbf16>) -> (tensor<3x256xbf16>, tensor<3x256xbf16>) {
  %e = tg.gather_rows %table, %ids : (tensor<1024x256xbf16>, tensor<3xi32>) -> tensor<3x256xbf16>
  %y = tg.matmul %x, %table : (tensor<3x1024xbf16>, tensor<1024x256xbf16>) -> tensor<3x256xbf16>
  func.return %e, %y : tensor<3x256xbf16>, tensor<3x256xbf16>
}
"""


@pytest.mark.parametrize("target", ["wormhole_n150", "h100"])
def test_the_gather_reads_the_tiled_table(target):
    fn = entry_function(parse_module(TIED))
    module = compile_function(fn, target)
    sections = [p for p in module.walk() if isinstance(p, sp.ProgramOp)]
    assert [p.source_op.data for p in sections] == ["tg.gather_rows", "tg.matmul"]
    inputs = draw_inputs(fn, 3)
    reference, values = reference_outputs(fn, inputs)
    report = compare_outputs(fn, reference, values, simulated_outputs(fn, module, inputs))
    assert all(c.bad == 0 for c in report), report
    assert (reference["e"] == inputs["table"][inputs["ids"]]).all()
