"""`python -m spatial_dialect.tools.xdsl_run`: xdsl-run with TgFunctions, on tg functions whose
tensor arguments are given as dense attributes."""

from __future__ import annotations

import subprocess
import sys

import pytest

from spatial_dialect.tools.interpreters.numerics import EvaluationError, OutOfRange
from spatial_dialect.tools.xdsl_run import main

ADD = """func.func @f(%a: tensor<1x2xf32>, %b: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %c = tg.add %a, %b : (tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %c : tensor<1x2xf32>
}
"""

GATHER = """func.func @g(%t: tensor<2x2xbf16>, %ids: tensor<3xi32>) -> (tensor<3x2xbf16>, tensor<2xi32>) {
  %r = tg.gather_rows %t, %ids : (tensor<2x2xbf16>, tensor<3xi32>) -> tensor<3x2xbf16>
  %m = tg.argmax %t : (tensor<2x2xbf16>) -> tensor<2xi32>
  func.return %r, %m : tensor<3x2xbf16>, tensor<2xi32>
}
"""

TABLE = "dense<[[1.0, 2.5], [3.0, -1.0]]> : tensor<2x2xbf16>"


def run(tmp_path, capsys, program: str, symbol: str, args: str) -> str:
    path = tmp_path / "prog.mlir"
    path.write_text(program)
    main([str(path), "--symbol", symbol, "--verbose", "--args", args])
    return capsys.readouterr().out


def test_a_tg_function_runs_with_tensor_arguments(tmp_path, capsys):
    args = "dense<[[1.0, 2.0]]> : tensor<1x2xf32>, dense<[[3.0, 4.0]]> : tensor<1x2xf32>"
    assert run(tmp_path, capsys, ADD, "f", args) == "result: [[4. 6.]]\n"


def test_bf16_and_integer_arguments_and_two_results(tmp_path, capsys):
    out = run(tmp_path, capsys, GATHER, "g", f"{TABLE}, dense<[1, 0, 1]> : tensor<3xi32>")
    assert out == "result: (\n    [[3 -1]\n [1 2.5]\n [3 -1]],\n    [1 0]\n)\n"


def test_an_index_out_of_range_is_the_reference_error(tmp_path, capsys):
    with pytest.raises(OutOfRange, match=r"tg.gather_rows: id 5 outside \[0, 2\)"):
        run(tmp_path, capsys, GATHER, "g", f"{TABLE}, dense<[1, 0, 5]> : tensor<3xi32>")


def test_an_argument_of_another_shape_is_refused(tmp_path, capsys):
    table = "dense<[[1.0, 2.5, 3.0]]> : tensor<1x3xbf16>"
    with pytest.raises(EvaluationError, match="does not have the shape tensor<2x2xbf16>"):
        run(tmp_path, capsys, GATHER, "g", f"{table}, dense<[1, 0, 1]> : tensor<3xi32>")


def test_it_runs_as_a_module(tmp_path):
    path = tmp_path / "prog.mlir"
    path.write_text(ADD)
    args = "dense<[[1.5, 2.0]]> : tensor<1x2xf32>, dense<[[3.0, -4.0]]> : tensor<1x2xf32>"
    command = ["-m", "spatial_dialect.tools.xdsl_run", str(path), "--symbol", "f", "--verbose"]
    done = subprocess.run(
        [sys.executable, *command, "--args", args], capture_output=True, text=True, check=True
    )
    assert done.stdout == "result: [[ 4.5 -2. ]]\n"
