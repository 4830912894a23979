"""Q8_0 products compiled for every preset and simulated: equal to the reference (ggml's
numerics, tools/interpreters/q8_0.py); the int8 dot of a GPU bit for bit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.targets import PRESETS
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

PROGRAM = """
func.func @mm(%x: tensor<40x256xELT>, %wv: tensor<256x96xi8>, %ws: tensor<8x96xf16>) -> (tensor<40x96xELT>, tensor<40x96xELT>) {
  %n = tg.scale %x factor 5.0e-01 : (tensor<40x256xELT>) -> tensor<40x256xELT>
  %y = tg.matmul_q8_0 %n, %wv, %ws activation "q8_0" : (tensor<40x256xELT>, tensor<256x96xi8>, tensor<8x96xf16>) -> tensor<40x96xELT>
  %z = tg.matmul_q8_0 %n, %wv, %ws activation "float" : (tensor<40x256xELT>, tensor<256x96xi8>, tensor<8x96xf16>) -> tensor<40x96xELT>
  func.return %y, %z : tensor<40x96xELT>, tensor<40x96xELT>
}
"""


def run(target: str, elt: str):
    fn = entry_function(parse_module(PROGRAM.replace("ELT", elt)))
    module = compile_module(fn, target)
    inputs = draw_inputs(fn, 0)
    reference, values = reference_outputs(fn, inputs)
    simulated = simulated_outputs(fn, module, inputs)
    return module, reference, compare_outputs(fn, reference, values, simulated), simulated


@pytest.mark.parametrize("target", sorted(PRESETS))
def test_q8_0_products_pass_on_every_preset(target):
    elt = "f32" if target == "plasticine" else "bf16"
    module, _, report, _ = run(target, elt)
    assert all(c.bad == 0 for c in report), report
    # One view of %n (written once), shared by the product that quantizes its activation.
    views = [
        p
        for p in module.walk()
        if isinstance(p, sp.ProgramOp) and p.source_op.data == "quantize_q8_0"
    ]
    assert [p.sym_name.data for p in views] == ["n__q8_0_1"]


def test_the_int8_dot_equals_ggml_bit_for_bit():
    _, reference, _, simulated = run("h100", "f32")
    np.testing.assert_array_equal(simulated["y"], reference["y"])


RULES = Path(__file__).parent / "Inputs" / "q8_0_rules.mlir"


@pytest.mark.parametrize(
    "target, backend",
    [("h100", "sim"), ("h100", "triton-interpret"), ("wormhole_n150", "sim")],
)
def test_each_rounding_rule_runs_as_the_reference_says(tmp_path, target, backend):
    """Issue 25's block [2.29472, 0.6414374, 0, ...] quantized by llama.cpp's x86 rule
    (activation "q8_0": 35) and by ggml's reference rule ("q8_0_ref": 36), read through a weight
    that picks the second element: the executor's output is f32(f16(d)) * 35 and * 36 exactly,
    where the comparison's one-level tolerance would have let either rule pass."""
    a = np.zeros((4, 64), np.float32)
    a[:, :2] = [2.29472, 0.6414374]
    wv = np.zeros((64, 32), np.int8)
    wv[1, :] = 1
    np.savez(tmp_path / "in.npz", a=a, wv=wv, ws=np.ones((2, 32), np.float16))
    cmd = [sys.executable, "-m", "spatial_dialect.tools.spatial_run", str(RULES)]
    cmd += ["--target", target, "--backend", backend, "--inputs", str(tmp_path / "in.npz")]
    cmd += ["--save", str(tmp_path / "out.npz")]
    run = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    d = np.float32(np.float16(np.float32(2.29472) / np.float32(127)))
    out = np.load(tmp_path / "out.npz")
    for who in ("reference", "simulated"):
        np.testing.assert_array_equal(out[f"{who}/x86"], np.full((4, 32), d * 35, np.float32))
        np.testing.assert_array_equal(out[f"{who}/ref"], np.full((4, 32), d * 36, np.float32))
