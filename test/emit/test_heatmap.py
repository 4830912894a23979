"""The per-site view of a sized program (the heat map's data) and the heat map itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.emit.heatmap import main, site_load

GEMM = """
func.func @gemm(%a: tensor<4096x4096xbf16>, %b: tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16> {
  %c = tg.matmul %a, %b : (tensor<4096x4096xbf16>, tensor<4096x4096xbf16>) -> tensor<4096x4096xbf16>
  func.return %c : tensor<4096x4096xbf16>
}
"""


def test_site_load_counts_every_output_tile_once() -> None:
    module = compile_module(GEMM, target="blackhole_p150")
    (program,) = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    tiles, used = site_load(program)
    # 128 tile rows over 10 site rows: 13 each, 11 in the last; 128 columns over 13: 10 each, 8.
    assert tiles[0][0] == 13 * 10 and tiles[0][12] == 13 * 8
    assert tiles[9][0] == 11 * 10 and tiles[9][12] == 11 * 8
    assert sum(map(sum, tiles)) == 128 * 128
    assert all(b > 0 for row in used for b in row)


def test_heatmap_png(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib")
    sized = tmp_path / "sized.mlir"
    sized.write_text(str(compile_module(GEMM, target="blackhole_p150")))
    out = tmp_path / "mesh.png"
    assert main([str(sized), str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_heatmap_refuses_an_unsized_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = tmp_path / "gemm.mlir"
    source.write_text(GEMM)
    assert main([str(source), str(tmp_path / "x.png")]) == 1
    assert "heatmap: error: WrongPhase" in capsys.readouterr().err
