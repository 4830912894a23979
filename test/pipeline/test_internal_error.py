"""An sp verifier error on what the compiler built is the compiler's bug, and says so.

Every program the tg verifier accepts either compiles or is refused by a named rule of link or of
the target before sp is built (docs/passes.md#shared-the-compiler-never-refuses-its-own-output), so an sp
verifier error on a pass's output must never read as a refusal of the user's program. These tests
break one sp verifier on purpose (monkeypatched) and check that `compile_module`, spatial-opt
and spatial-run all report an internal error, at the tg op whose section is wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp.errors import InternalError, TypeMismatch
from spatial_dialect.tools import spatial_opt, spatial_run

ROPE = """func.func @r(%x: tensor<32x64xbf16>, %cos: tensor<32x16xf32>, %sin: tensor<32x16xf32>) -> tensor<32x64xbf16> {
  %y = tg.rope %x, %cos, %sin head_dim 32 style "neox" : (tensor<32x64xbf16>, tensor<32x16xf32>, tensor<32x16xf32>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
"""


@pytest.fixture
def broken_rope(monkeypatch):
    """sp.rope's verifier rejecting everything: a stand-in for a pass that builds a wrong sp op."""

    def reject(self) -> None:
        raise TypeMismatch("rope: broken on purpose")

    monkeypatch.setattr(sp.RopeOp, "verify_", reject)


def test_compile_module_raises_internal_error(broken_rope):
    with pytest.raises(
        InternalError,
        match="internal error: the sp program after "
        "spatial-pipeline fails the sp verifier: rope: broken on purpose",
    ):
        compile_module(ROPE, "wormhole_n150")


def test_spatial_opt_says_internal_error_at_the_op(broken_rope, tmp_path: Path, capsys):
    src = tmp_path / "r.mlir"
    src.write_text(ROPE)
    rc = spatial_opt.main([str(src), "-p", "spatial-pipeline{target=wormhole_n150}"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{src}:2:3: error: internal error: the sp program after size-buffers" in err
    assert "rope: broken on purpose" in err
    assert "refused" not in err


def test_spatial_run_says_internal_error_not_compile_refused(broken_rope, tmp_path, capsys):
    src = tmp_path / "r.mlir"
    src.write_text(ROPE)
    rc = spatial_run.main([str(src), "--target", "wormhole_n150"])
    err = capsys.readouterr().err
    assert rc == 1
    assert f"{src}:2:3: error: internal error: the sp program after spatial-pipeline" in err
    assert "compile refused" not in err
