"""The worked example of docs/extending.md, run by every executor: tg.softplus (one registration
in each of seven files) computes the reference's softplus in the simulator on every preset, in
the TT-Lang program under tt-lang-sim and in the Triton program under Triton's interpreter, at
magnitudes where a naive log(1 + exp(x)) overflows (|x| up to 90)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from spatial_dialect.targets import PRESETS
from spatial_dialect.tools.spatial_run import main

PROGRAM = """
func.func @softplus_step(%x: tensor<40x72x{e}>) -> tensor<40x72x{e}> {{
  %y = tg.softplus %x : (tensor<40x72x{e}>) -> tensor<40x72x{e}>
  func.return %y : tensor<40x72x{e}>
}}
"""


def _run(tmp_path, capsys, target: str, *backend: str) -> str:
    elt = "bf16" if PRESETS[target].has_dtype("bf16") else "f32"
    path = tmp_path / "softplus.mlir"
    path.write_text(PROGRAM.format(e=elt))
    x = np.linspace(-90.0, 90.0, 40 * 72, dtype=np.float32).reshape(40, 72)
    np.savez(tmp_path / "x.npz", x=x)
    code = main([str(path), "--target", target, "--inputs", str(tmp_path / "x.npz"), *backend])
    text = capsys.readouterr().out
    assert code == 0, text
    assert text.strip().splitlines()[-1].startswith("PASS"), text
    return text


@pytest.mark.parametrize("target", sorted(PRESETS))
def test_the_simulator_computes_softplus(tmp_path, capsys, target):
    _run(tmp_path, capsys, target)


@pytest.mark.skipif(importlib.util.find_spec("ttl") is None, reason="tt-lang-sim not installed")
def test_tt_lang_sim_computes_softplus(tmp_path, capsys):
    _run(tmp_path, capsys, "wormhole_n150", "--backend", "tt-lang-sim")


@pytest.mark.skipif(importlib.util.find_spec("triton") is None, reason="triton not installed")
def test_the_triton_interpreter_computes_softplus(tmp_path, capsys):
    _run(tmp_path, capsys, "h100", "--backend", "triton-interpret")
