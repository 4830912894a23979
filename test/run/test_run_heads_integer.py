"""The head ops (head_slice, join, head_matmul) and the integer ops (int_requant, int_clamp):
compiled, simulated and compared with the reference on every target family, on shapes whose last
part is not whole tiles; the Python builders infer the result types; TT-Lang refuses the
integer maps by name."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from xdsl.builder import ImplicitBuilder
from xdsl.dialects import builtin, func
from xdsl.dialects.builtin import Float32Type, TensorType, i8, i32

from spatial_dialect import tg
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

TARGETS = ["wormhole_n150", "blackhole_p150", "plasticine", "h100"]


def t(shape: str, elt: str) -> str:
    return f"tensor<{shape}x{elt}>"


def fused_qkv(rows: int, e: str) -> str:
    """A fused QKV projection of 4 q heads, 2 k and 2 v heads of 32, split and joined back as
    (v, q); k's head 1 alone, a part that is not the last."""
    x, q, kv, j = t(f"{rows}x256", e), t(f"{rows}x128", e), t(f"{rows}x64", e), t(f"{rows}x192", e)
    k1 = t(f"{rows}x32", e)
    return f"""func.func @f(%x: {x}) -> ({j}, {k1}) {{
  %q = tg.head_slice %x head_dim 32 first 0 heads 4 : ({x}) -> {q}
  %v = tg.head_slice %x head_dim 32 first 6 heads 2 : ({x}) -> {kv}
  %k1 = tg.head_slice %x head_dim 32 first 5 heads 1 : ({x}) -> {k1}
  %j = tg.join %v, %q : ({kv}, {q}) -> {j}
  func.return %j, %k1 : {j}, {k1}
}}"""


def ragged_join(e: str) -> str:
    """The last part ends inside a tile; the first part's slice is whole tiles."""
    x, a, b, j = t("40x200", e), t("40x64", e), t("40x72", e), t("40x136", e)
    return f"""func.func @f(%x: {x}, %b: {b}) -> {j} {{
  %a = tg.head_slice %x head_dim 8 first 0 heads 8 : ({x}) -> {a}
  %j = tg.join %a, %b : ({a}, {b}) -> {j}
  func.return %j : {j}
}}"""


def head_matmul(rows: int, e: str, out: str | None = None) -> str:
    a, b, y = t(f"{rows}x128", e), t("128x64", e), t(f"{rows}x256", out or e)
    return f"""func.func @f(%a: {a}, %b: {b}) -> {y} {{
  %y = tg.head_matmul %a, %b heads 4 : ({a}, {b}) -> {y}
  func.return %y : {y}
}}"""


def clamp(elt: str, lo: int, hi: int) -> str:
    x = t("40x72", elt)
    return f"""func.func @f(%x: {x}) -> {x} {{
  %y = tg.int_clamp %x lo {lo} hi {hi} : ({x}) -> {x}
  func.return %y : {x}
}}"""


def requant(scale: float, zp: int) -> str:
    x, y = t("40x72", "i32"), t("40x72", "i8")
    return f"""func.func @f(%x: {x}) -> {y} {{
  %y = tg.int_requant %x scale {scale} zero_point {zp} : ({x}) -> {y}
  %c = tg.int_clamp %y lo -20 hi 90 : ({y}) -> {y}
  func.return %c : {y}
}}"""


def run(text: str, target: str, seed: int = 0):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    return reference, compare_outputs(fn, reference, values, simulated_outputs(fn, module, inputs))


def float_elt(target: str) -> str:
    return "f32" if target == "plasticine" else "bf16"


FLOAT_CASES = {
    "fused_qkv_prefill": lambda e: fused_qkv(40, e),
    "fused_qkv_decode": lambda e: fused_qkv(1, e),
    "ragged_join": ragged_join,
    "head_matmul_prefill": lambda e: head_matmul(40, e),
    "head_matmul_decode": lambda e: head_matmul(1, e),
}


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("case", sorted(FLOAT_CASES))
def test_head_ops_simulate_to_the_reference(case, target):
    _, comparisons = run(FLOAT_CASES[case](float_elt(target)), target)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


@pytest.mark.parametrize("target", TARGETS)
def test_head_matmul_with_an_f32_result(target):
    e = float_elt(target)
    _, comparisons = run(head_matmul(8, e, "f32"), target)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


@pytest.mark.parametrize("target", TARGETS)
def test_int_clamp_is_exact(target):
    elt = "i32" if target == "plasticine" else "i8"
    reference, comparisons = run(clamp(elt, -5, 9), target)
    assert all(c.ok and c.max_abs == 0 for c in comparisons)
    (y,) = reference.values() if isinstance(reference, dict) else reference
    assert y.min() == -5 and y.max() == 9  # inputs in [-16, 16]: both bounds bite


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150", "h100"])
@pytest.mark.parametrize("scale, zp", [(0.5, 3), (9.1, -7)])
def test_int_requant_is_exact(target, scale, zp):
    _, comparisons = run(requant(scale, zp), target)
    assert all(c.ok and c.max_abs == 0 for c in comparisons)


def test_int_requant_rounds_half_to_even_and_saturates():
    from spatial_dialect.tools.interpreters.numerics import int_requant

    x = np.array([[1, 3, 5, -1, -3, 1000, -1000]], np.int32)
    assert int_requant(x, 0.5, 0).tolist() == [[0, 2, 2, 0, -2, 127, -128]]
    assert int_requant(x, 0.5, 10).tolist() == [[10, 12, 12, 10, 8, 127, -128]]


def test_int_requant_is_refused_by_name_where_the_chip_has_no_i8():
    fn = entry_function(parse_module(requant(0.5, 0)))
    with pytest.raises(Exception, match="no datatype 'i8'"):
        compile_module(fn, "plasticine")


def test_builders_infer_the_result_types():
    f32 = Float32Type()
    module = builtin.ModuleOp([])
    args = [TensorType(f32, [4, 256]), TensorType(f32, [128, 64]), TensorType(i32, [4, 64])]
    with ImplicitBuilder(module.body):
        fn = func.FuncOp("f", (args, []))
    with ImplicitBuilder(fn.body) as (x, w, acc):
        q = tg.HeadSliceOp(x, head_dim=32, first=0, heads=4)
        k = tg.HeadSliceOp(x, head_dim=32, first=4, heads=2)
        j = tg.JoinOp([k, q])
        m = tg.HeadMatmulOp(q, w, heads=4)
        r = tg.IntRequantOp(acc, scale=0.25, zero_point=-1)
        c = tg.IntClampOp(r, lo=-10, hi=10)
        func.ReturnOp()
    module.verify()
    assert q.res.type == TensorType(f32, [4, 128]) and k.res.type == TensorType(f32, [4, 64])
    assert j.res.type == TensorType(f32, [4, 192])
    assert m.res.type == TensorType(f32, [4, 256])
    assert r.res.type == TensorType(i8, [4, 64]) and c.res.type == r.res.type


@pytest.mark.parametrize(
    "target, backend, message",
    [("wormhole_n150", "ttlang", "sp.map requant: its i8 result: ttnn has no int8 tensor")],
)
def test_backends_refuse_the_integer_maps_by_name(tmp_path, target, backend, message):
    """TT-Lang refuses them (Triton prints them: test/backend/triton/test_triton_integer.py)."""
    path = tmp_path / "requant.mlir"
    path.write_text(requant(0.5, 0))
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_opt",
            str(path),
            "-p",
            f"spatial-pipeline{{target={target}}}",
            "-t",
            backend,
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 1
    assert message in proc.stderr and "Traceback" not in proc.stderr
