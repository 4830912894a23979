"""Tied embeddings: ONE table [vocab, d] is the gather's and the LM head's. The head reads it
transposed (transpose_b) and the gather reads its rows from the table the head lays out tiled,
with no whole-table untilize, no transpose section and no copy; a Q8_0 table's gather takes the
ids' rows of its values and scales and dequantizes those only. The compiled programs equal the
reference, and the reference equals products computed here without the op under test."""

from __future__ import annotations

import numpy as np
import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.targets import PRESETS
from spatial_dialect.tools.interpreters import q8_0 as gguf_quant
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

TIED = """
func.func @tied(%table: tensor<1024x256xbf16>, %ids: tensor<3xi32>, %x: tensor<3x256xbf16>) -> (tensor<3x256xbf16>, tensor<3x1024xbf16>) {
  %e = tg.gather_rows %table, %ids : (tensor<1024x256xbf16>, tensor<3xi32>) -> tensor<3x256xbf16>
  %y = tg.matmul %x, %table transpose_b true : (tensor<3x256xbf16>, tensor<1024x256xbf16>) -> tensor<3x1024xbf16>
  func.return %e, %y : tensor<3x256xbf16>, tensor<3x1024xbf16>
}
"""

TIED_Q8_0 = """
func.func @tied(%v: tensor<300x256xi8>, %s: tensor<300x8xf16>, %ids: tensor<5xi32>, %x: tensor<5x256xELT>) -> (tensor<5x256xELT>, tensor<5x300xELT>, tensor<5x300xELT>) {
  %gv = tg.gather_rows %v, %ids : (tensor<300x256xi8>, tensor<5xi32>) -> tensor<5x256xi8>
  %gs = tg.gather_rows %s, %ids : (tensor<300x8xf16>, tensor<5xi32>) -> tensor<5x8xf16>
  %e = tg.dequantize_q8_0 %gv, %gs axis 1 : (tensor<5x256xi8>, tensor<5x8xf16>) -> tensor<5x256xELT>
  %y = tg.matmul_q8_0 %x, %v, %s activation "q8_0" transpose_b true : (tensor<5x256xELT>, tensor<300x256xi8>, tensor<300x8xf16>) -> tensor<5x300xELT>
  %z = tg.matmul_q8_0 %x, %v, %s activation "float" transpose_b true : (tensor<5x256xELT>, tensor<300x256xi8>, tensor<300x8xf16>) -> tensor<5x300xELT>
  func.return %e, %y, %z : tensor<5x256xELT>, tensor<5x300xELT>, tensor<5x300xELT>
}
"""


def simulate(text: str, target: str, seed: int):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    report = compare_outputs(fn, reference, values, simulated_outputs(fn, module, inputs))
    assert all(c.bad == 0 for c in report), report
    sections = [p for p in module.walk() if isinstance(p, sp.ProgramOp)]
    return sections, inputs, reference


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150", "h100"])
def test_the_head_reads_the_gathered_table_transposed(target):
    sections, inputs, reference = simulate(TIED, target, 3)
    assert [p.source_op.data for p in sections] == ["tg.gather_rows", "tg.matmul"]
    tables = {t.sym_name.data: t for p in sections for t in p.ops_of(sp.TensorOp)}
    assert str(tables["table"].type) == "tensor<1024x256xbf16>"  # one table, as stored
    assert "table" in sections[0].attributes["table_layout"].data  # type: ignore[union-attr]
    assert (reference["e"] == inputs["table"][inputs["ids"]]).all()
    x, table = (inputs[n].astype(np.float32) for n in ("x", "table"))
    want = np.einsum("mk,nk->mn", x, table)  # each row of x against each row of the table
    np.testing.assert_allclose(reference["y"].astype(np.float32), want, rtol=2**-8, atol=1e-3)


@pytest.mark.parametrize("target", sorted(PRESETS))
def test_a_q8_0_table_is_gathered_by_rows_and_read_transposed(target):
    elt = "f32" if target == "plasticine" else "bf16"
    sections, inputs, reference = simulate(TIED_Q8_0.replace("ELT", elt), target, 5)
    ops = [p.source_op.data for p in sections]
    # the scales' gather has no section: its rows come with the values'
    assert ops.count("tg.gather_rows") == 1 and ops.count("tg.dequantize_q8_0") == 1
    gather = sections[ops.index("tg.gather_rows")]
    table, rows = (t for t in gather.ops_of(sp.TensorOp) if t.sym_name.data != "ids")
    assert (str(table.type), table.storage, table.scales_name) == (
        "tensor<300x256xi8>",
        "q8_0",
        "s",
    )
    assert (str(rows.type), rows.storage) == ("tensor<5x256xi8>", "q8_0")
    # the dequantize widens the 5 gathered rows, never the 300-row table
    dequantize = sections[ops.index("tg.dequantize_q8_0")]
    (src,) = (t for t in dequantize.ops_of(sp.TensorOp) if t.role.data == sp.TensorRole.INPUT)
    assert src.sym_name.data == "gv" and src.shape2d == (5, 256)
    v, s, ids = inputs["v"], inputs["s"], inputs["ids"]
    want = gguf_quant.dequantize(v[ids], s[ids], axis=1)  # exact in f32
    np.testing.assert_array_equal(reference["e"], want.astype(reference["e"].dtype))


def test_the_q8_0_head_is_the_untransposed_product_of_the_transposed_table():
    """tg.matmul_q8_0 transpose_b over [vocab, d] values and [vocab, d/32] scales equals the
    untransposed op over their transposes ([d, vocab] values blocked along d)."""
    fn = entry_function(parse_module(TIED_Q8_0.replace("ELT", "f32")))
    inputs = draw_inputs(fn, 7)
    _, y, z = evaluate(fn, inputs)
    kn = """
func.func @kn(%x: tensor<5x256xf32>, %v: tensor<256x300xi8>, %s: tensor<8x300xf16>) -> (tensor<5x300xf32>, tensor<5x300xf32>) {
  %y = tg.matmul_q8_0 %x, %v, %s activation "q8_0" : (tensor<5x256xf32>, tensor<256x300xi8>, tensor<8x300xf16>) -> tensor<5x300xf32>
  %z = tg.matmul_q8_0 %x, %v, %s activation "float" : (tensor<5x256xf32>, tensor<256x300xi8>, tensor<8x300xf16>) -> tensor<5x300xf32>
  func.return %y, %z : tensor<5x300xf32>, tensor<5x300xf32>
}
"""
    want = evaluate(
        entry_function(parse_module(kn)),
        {"x": inputs["x"], "v": inputs["v"].T.copy(), "s": inputs["s"].T.copy()},
    )
    np.testing.assert_array_equal(y, want[0])
    np.testing.assert_array_equal(z, want[1])


UNTIED = """
func.func @untied(%table_t: tensor<256x1024xbf16>, %x: tensor<3x256xbf16>) -> tensor<3x1024xbf16> {
  %y = tg.matmul %x, %table_t : (tensor<3x256xbf16>, tensor<256x1024xbf16>) -> tensor<3x1024xbf16>
  func.return %y : tensor<3x1024xbf16>
}
"""


@pytest.mark.parametrize("target", ["wormhole_n150", "h100"])
def test_b_read_transposed_is_priced_as_the_same_bytes(target):
    """The head over the [vocab, d] table gets the plan and the cycles of the product over the
    [d, vocab] transposed copy: a block of B is the same bytes either way."""

    def gemm_plan(text: str) -> str:
        module = compile_module(entry_function(parse_module(text)), target)
        (gemm,) = (
            p
            for p in module.walk()
            if isinstance(p, sp.ProgramOp) and p.source_op.data == "tg.matmul"
        )
        plan = gemm.one(sp.PlanOp)
        assert plan is not None
        return str(plan)

    assert gemm_plan(TIED) == gemm_plan(UNTIED)
