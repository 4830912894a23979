"""Q8_0 programs under Triton's CPU interpreter (docs/backend-triton.md#q8_0-tensors): the
activation's Q8_0 view, the int8 dot and the dequantize path of tg.matmul_q8_0 (transposed too),
tg.dequantize_q8_0, and tiny imported Q8_0 models, each compared with the numpy reference
(tools/interpreters/q8_0.py: ggml's numerics), never with the printer's own output."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("triton")
pytest.importorskip("torch")

from spatial_dialect.passes.pipeline import compile_module  # noqa: E402
from spatial_dialect.tools.interpreters.inputs import draw_inputs  # noqa: E402
from spatial_dialect.tools.spatial_run import (  # noqa: E402
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)
from spatial_dialect.tools.spatial_run import main as spatial_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]

PRODUCTS = """
func.func @mm(%x: tensor<4x64xT>, %wv: tensor<64x96xi8>, %ws: tensor<2x96xf16>, %tv: tensor<96x64xi8>, %ts: tensor<96x2xf16>) -> (tensor<4x96xT>, tensor<4x96xT>, tensor<4x96xT>, tensor<4x96xT>, tensor<96x64xT>) {
  %y = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0" : (tensor<4x64xT>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xT>
  %z = tg.matmul_q8_0 %x, %wv, %ws activation "float" : (tensor<4x64xT>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xT>
  %yt = tg.matmul_q8_0 %x, %tv, %ts activation "q8_0" transpose_b true : (tensor<4x64xT>, tensor<96x64xi8>, tensor<96x2xf16>) -> tensor<4x96xT>
  %zt = tg.matmul_q8_0 %x, %tv, %ts activation "float" transpose_b true : (tensor<4x64xT>, tensor<96x64xi8>, tensor<96x2xf16>) -> tensor<4x96xT>
  %d = "tg.dequantize_q8_0"(%tv, %ts) <{axis = 1 : i64}> : (tensor<96x64xi8>, tensor<96x2xf16>) -> tensor<96x64xT>
  func.return %y, %z, %yt, %zt, %d : tensor<4x96xT>, tensor<4x96xT>, tensor<4x96xT>, tensor<4x96xT>, tensor<96x64xT>
}
"""


def interpreted(text: str, target: str = "h100", given: dict | None = None):
    """(reference, reference values, Triton's outputs, comparison) of the entry of `text`."""
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    inputs = {**draw_inputs(fn, 0), **(given or {})}
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, "triton-interpret")
    return reference, got, compare_outputs(fn, reference, values, got)


def test_the_q8_0_products_and_dequantize_equal_ggml_in_f32() -> None:
    """In f32 every rounding is the reference's: the int8 dot of the view and the weight (both
    orientations) equals ggml's Q8_0 x Q8_0 dot bit for bit, the dequantized table is exact."""
    reference, got, report = interpreted(PRODUCTS.replace("xT>", "xf32>"))
    assert all(c.bad == 0 for c in report), report
    for name in ("y", "yt", "d"):
        np.testing.assert_array_equal(got[name], reference[name], err_msg=name)


@pytest.mark.parametrize("target", ["h100", "rtx3060"])
def test_the_q8_0_products_pass_in_bf16(target: str) -> None:
    _, _, report = interpreted(PRODUCTS.replace("xT>", "xbf16>"), target)
    assert all(c.bad == 0 for c in report), report


IDENTITY = """
func.func @q(%x: tensor<4x64xf32>, %wv: tensor<64x64xi8>, %ws: tensor<2x64xf16>) -> tensor<4x64xf32> {
  %y = tg.matmul_q8_0 %x, %wv, %ws activation "ACT" : (tensor<4x64xf32>, tensor<64x64xi8>, tensor<2x64xf16>) -> tensor<4x64xf32>
  func.return %y : tensor<4x64xf32>
}
"""


@pytest.mark.parametrize(
    "activation, ties",
    [
        ("q8_0", [127.0, 2.0, -2.0, 0.0, -2.0, 3.0]),  # llama.cpp's x86 rule: half to even
        ("q8_0_ref", [127.0, 3.0, -3.0, 1.0, -2.0, 3.0]),  # roundf: half away from zero
    ],
)
def test_the_view_rounds_ties_by_its_rule_and_keeps_zero_blocks(activation, ties) -> None:
    """Through a unit weight the product is the view dequantized: f32(d) * q of each element.
    A block whose largest magnitude is 127 has d = 1 and 127 / max|x| = 1, so x.5 is a tie,
    rounded by the activation's rule; an all-zero block has d = 0 and q = 0."""
    x = np.zeros((4, 64), np.float32)
    x[0, :6] = [127.0, 2.5, -2.5, 0.5, -1.5, 3.49]  # block 0 of row 0; block 1 stays zero
    x[1] = np.linspace(-3.0, 5.0, 64, dtype=np.float32)
    x[2, 32:] = 1e-3  # one value repeated: d = 1e-3 / 127, every q = 127
    x[3, :32] = -np.arange(32, dtype=np.float32) / 7
    given = {
        "x": x,
        "wv": np.eye(64, dtype=np.int8),
        "ws": np.ones((2, 64), np.float16),
    }
    reference, got, _ = interpreted(IDENTITY.replace("ACT", activation), given=given)
    np.testing.assert_array_equal(got["y"], reference["y"])
    # worked by hand: d = 1, q = x rounded by the rule
    np.testing.assert_array_equal(got["y"][0, :6], ties)
    np.testing.assert_array_equal(got["y"][0, 32:], np.zeros(32, np.float32))


# ── Tiny imported Q8_0 models ─────────────────────────────────────────────────────────────────


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("gguf")
    sys.path.insert(0, str(ROOT / "test" / "frontend"))
    from tiny_gguf import write_tiny

    d = tmp_path_factory.mktemp("q8_0")
    return {
        "llama": write_tiny(d / "llama.gguf", "llama", "Q8_0", tied=False),
        "qwen3": write_tiny(d / "qwen3.gguf", "qwen3", "Q8_0", tied=True),
    }


def _passes(model: Path, step: Path, capsys, *extra: str) -> list[str]:
    code = spatial_run(
        [str(step), "--target", "h100", "--backend", "triton-interpret", "--weights", str(model)]
        + list(extra)
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[-1].startswith("PASS"), "\n".join(lines)
    return lines


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_a_tiny_q8_0_model_decodes_under_the_interpreter(models, tmp_path, capsys, arch) -> None:
    """Every weight product is the int8 dot over the Q8_0 weight; the embedding gathers Q8_0
    rows and dequantizes them; qwen3's tied head reads the Q8_0 table transposed."""
    from spatial_dialect.tools.spatial_import import main as spatial_import

    out = tmp_path / "decode.mlir"
    assert spatial_import([str(models[arch]), "--step", "decode", "-o", str(out)]) == 0
    assert ("transpose_b true" in out.read_text()) == (arch == "qwen3")
    _passes(models[arch], out, capsys)


@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_a_tiny_q8_0_model_prefills_then_decodes(models, tmp_path, capsys, arch) -> None:
    """--step both --chain: the decode reads the caches the interpreted prefill wrote."""
    from spatial_dialect.tools.spatial_import import main as spatial_import

    out = tmp_path / "both.mlir"
    assert spatial_import([str(models[arch]), "--step", "both", "-o", str(out)]) == 0
    lines = _passes(models[arch], out, capsys, "--chain", f"{arch}_prefill,{arch}_decode")
    assert lines[-1] == "PASS: 10 output(s) within tolerance"
