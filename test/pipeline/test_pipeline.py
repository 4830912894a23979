"""The pipeline from Python, next to other xDSL dialects: a Context with func, arith and linalg
as well as tg and sp, passes looked up by name through PassPipeline, each pass the identity on its
own output, the report's contract, and the compile-speed and IR-size budgets of the issue."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.arith import Arith
from xdsl.dialects.builtin import Builtin, ModuleOp
from xdsl.dialects.func import Func
from xdsl.dialects.linalg import Linalg
from xdsl.parser import Parser
from xdsl.passes import PassPipeline
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException

from spatial_dialect import sp
from spatial_dialect.passes import get_all_passes
from spatial_dialect.passes.pipeline import SpatialPipelinePass, compile_module
from spatial_dialect.sp import SP, Phase
from spatial_dialect.tg import TG
from spatial_dialect.tools.emit.report import report

MIXED = """
func.func @gemm(%a: tensor<96x200xbf16>, %b: tensor<200x160xbf16>) -> tensor<96x160xbf16> {
  %c = tg.matmul %a, %b : (tensor<96x200xbf16>, tensor<200x160xbf16>) -> tensor<96x160xbf16>
  func.return %c : tensor<96x160xbf16>
}
func.func @axpy(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %s = linalg.add ins(%x, %y : tensor<4xf32>, tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32>
  %one = arith.constant 1 : i32
  func.return %s : tensor<4xf32>
}
"""

GEMM_4096 = """
func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
"""

TARGETS = ["wormhole_n150", "blackhole_p150", "plasticine", "rtx3060", "h100"]


def text(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def mixed_context() -> Context:
    from xdsl.dialects.tensor import Tensor

    ctx = Context()
    for dialect in (Builtin, Func, Arith, Linalg, Tensor, TG, SP):
        ctx.load_dialect(dialect)
    return ctx


def test_pipeline_through_pass_pipeline_next_to_linalg() -> None:
    ctx = mixed_context()
    module = Parser(ctx, MIXED.replace("bf16", "f32")).parse_module()
    PassPipeline.parse_spec(
        get_all_passes(), "spatial-pipeline{target=blackhole_p150 fidelity=hifi2}"
    ).apply(ctx, module)
    module.verify()
    (program,) = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    assert program.phase_value == Phase.SIZED
    # The linalg function is not ours: it is left as it was.
    printed = text(module)
    assert (
        "linalg.add" in printed
        and "func.func @axpy" in printed
        and "func.func @gemm" not in printed
    )
    assert 'sp.options = {accumulate = "f32", fidelity = "hifi2", format = "bf16"}' in printed


@pytest.mark.parametrize("target", TARGETS)
def test_every_pass_is_the_identity_on_its_own_output(target: str) -> None:
    dtype = "f32" if target == "plasticine" else "bf16"
    ctx = mixed_context()
    module = Parser(ctx, MIXED.replace("bf16", dtype)).parse_module()
    for p in SpatialPipelinePass(target=target).passes():
        p.apply(ctx, module)
        once = text(module)
        p.apply(ctx, module)
        assert text(module) == once, p.name
        module.verify()


@pytest.mark.parametrize("target", TARGETS)
def test_report_contract(target: str) -> None:
    dtype = "f32" if target == "plasticine" else "bf16"
    module = compile_module(MIXED.replace("bf16", dtype), target, ctx=mixed_context())
    r = json.loads(json.dumps(report(module)))
    assert r["target"] == target
    (section,) = r["sections"]
    for key in (
        "name",
        "op",
        "plan",
        "predicted_cycles",
        "predicted_us",
        "roofline_us",
        "dram_bytes",
        "noc_bytes",
        "sites",
        "peak_local_bytes",
    ):
        assert key in section, key
    assert section["op"] == "tg.matmul"
    assert section["predicted_us"] >= section["roofline_us"] > 0
    assert set(r["total"]) >= {"predicted_us", "roofline_us"}
    assert r["total"]["predicted_us"] == section["predicted_us"]


def test_4096_gemm_blackhole_ir_stays_compact() -> None:
    """The IR's size, not the compile's time (bench/compile_speed.py measures that)."""
    sizes = {}
    for target in ("wormhole_n150", "blackhole_p150"):
        sizes[target] = len(text(compile_module(GEMM_4096, target=target)))
    # 13x10 has four site shapes where 8x8 has one: a few lines, not a copy of the program.
    assert sizes["blackhole_p150"] <= 1.3 * sizes["wormhole_n150"], sizes


@settings(max_examples=60, deadline=None)
@given(
    m=st.integers(1, 700),
    k=st.integers(1, 700),
    n=st.integers(1, 700),
    dtypes=st.sampled_from([("bf16", "bf16"), ("bf16", "f32"), ("f32", "f32"), ("i8", "i32")]),
    target=st.sampled_from(TARGETS),
)
def test_any_gemm_compiles_or_is_refused_by_name(
    m: int, k: int, n: int, dtypes: tuple[str, str], target: str
) -> None:
    """Any shape on any target: a verified sized program, or a typed diagnostic (never a crash)."""
    i, o = dtypes
    a, b, c = f"tensor<{m}x{k}x{i}>", f"tensor<{k}x{n}x{i}>", f"tensor<{m}x{n}x{o}>"
    source = f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
    try:
        module = compile_module(source, target=target)
    except DiagnosticException as err:
        assert type(err).__name__ in ("UnsupportedDatatype", "NoLegalPlan"), err
        return
    (program,) = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    assert program.phase_value == Phase.SIZED
