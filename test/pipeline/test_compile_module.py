"""The one context builder and the one compile function (passes/pipeline.py), as the CLIs and the
tests call them: program text and parsed functions compile to the same module, the caller's
functions are left as they were, a refusal is the pass's typed diagnostic, and spatial-run parses
with the same context, so a file that mixes tg functions with other dialects runs its tg entry."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatial_dialect.passes.pipeline import compile_module, default_context
from spatial_dialect.sp.errors import UnsupportedDatatype
from spatial_dialect.tools.spatial_run import entry_function, main, parse_module

GEMM = (Path(__file__).resolve().parents[2] / "examples" / "gemm_small.mlir").read_text()

OTHER_DIALECTS = """
func.func @increment(%x: i32) -> i32 {
  %one = arith.constant 1 : i32
  %y = arith.addi %x, %one : i32
  func.return %y : i32
}
"""


def test_text_and_parsed_functions_compile_to_the_same_module():
    parsed = parse_module(GEMM)
    fn = entry_function(parsed)
    before = str(fn)
    from_text = compile_module(GEMM, "wormhole_n150", grid="2x2")
    from_function = compile_module(fn, "wormhole_n150", grid="2x2")
    assert str(from_text) == str(from_function)
    assert str(fn) == before  # compiled from a clone: the caller's function is untouched
    assert fn.parent_op() is parsed


def test_a_refusal_is_the_pass_s_typed_diagnostic():
    with pytest.raises(UnsupportedDatatype, match="target plasticine has no datatype 'bf16'"):
        compile_module(GEMM.replace("f32", "bf16"), "plasticine")


def test_the_context_holds_xdsl_s_dialects_beside_tg_and_sp():
    names = set(default_context().registered_dialect_names)
    assert {"builtin", "func", "arith", "linalg", "tg", "sp"} <= names


def test_spatial_run_runs_the_tg_entry_of_a_file_with_other_dialects(tmp_path, capsys):
    path = tmp_path / "mixed.mlir"
    path.write_text(OTHER_DIALECTS + GEMM)
    status = main([str(path), "--entry", "gemm", "--target", "wormhole_n150"])
    out = capsys.readouterr().out
    assert status == 0 and out.strip().splitlines()[-1].startswith("PASS"), out
