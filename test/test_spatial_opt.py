"""spatial-opt as a user meets it: every mistake is a message and exit 1, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatial_dialect.tools.spatial_opt import main

GOOD = """func.func @f(%a: tensor<64x128xf32>, %b: tensor<128x32xf32>) -> tensor<64x32xf32> {
  %c = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
  func.return %c : tensor<64x32xf32>
}
"""

MISTAKES = {
    "truncated": (GOOD[:120], [], "Expected"),
    "unknown op": (GOOD.replace('"tg.matmul"', '"tg.matmull"'), [], "tg.matmull is not registered"),
    "wrong operand count": (
        "func.func @f(%a: tensor<4x8xf32>) {\n"
        '  %c = "tg.matmul"(%a) : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
        "  func.return\n}\n",
        [],
        "Expected 2 operands, but got 1",
    ),
    "bad property type": (
        "func.func @f(%a: tensor<4x8xf32>) {\n"
        '  %c = "tg.scale"(%a) <{factor = 2 : i64}> : (tensor<4x8xf32>) -> tensor<4x8xf32>\n'
        "  func.return\n}\n",
        [],
        "tg.scale: property factor must be an f32 float",
    ),
    "unknown pass": (GOOD, ["-p", "no-such-pass"], "Unrecognized passes: ['no-such-pass']"),
    "unknown pass option": (GOOD, ["-p", "cse{nope=1}"], "nope"),
    "malformed pass spec": (GOOD, ["-p", "cse{"], "error"),
}


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_mistake_is_one_message_and_exit_1(case, tmp_path: Path, capsys):
    text, flags, expected = MISTAKES[case]
    src = tmp_path / "input.mlir"
    src.write_text(text)
    assert main([str(src), *flags]) == 1
    err = capsys.readouterr().err
    assert expected in err
    assert "Traceback" not in err


def test_missing_file(tmp_path: Path, capsys):
    assert main([str(tmp_path / "absent.mlir")]) == 1
    err = capsys.readouterr().err
    assert "absent.mlir': no such file" in err and "Traceback" not in err


def test_good_input_round_trips(tmp_path: Path, capsys):
    src = tmp_path / "input.mlir"
    src.write_text(GOOD)
    assert main([str(src)]) == 0
    assert "tg.matmul %a, %b" in capsys.readouterr().out
