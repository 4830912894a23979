"""bench/import_checkpoint.py: its 2-layer smoke checkpoint is a sparse file of the real size,
spatial-import reads its header alone, and the compiled step carries every Q8_0 weight byte."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402


def test_smoke_checkpoint_imports_from_its_header(tmp_path):
    bench = load("import_checkpoint")
    path = tmp_path / "model.gguf"
    size = bench.write_sparse_gguf(path, bench.SMOKE)
    # the Q8_0 bytes of the table and the LM head (128256 x 4096 each) and of 2 layers (q, o
    # 4096 x 4096; k, v 1024 x 4096; gate, up, down 14336 x 4096), 34 bytes per 32 values
    q8 = (2 * 128256 * 4096 + 2 * (2 * 4096 * 4096 + 2 * 1024 * 4096 + 3 * 14336 * 4096)) // 32 * 34
    assert path.stat().st_size == size > q8
    assert path.stat().st_blocks * 512 < 1 << 20  # a hole: no tensor data is on the disk
    out = tmp_path / "decode.mlir"
    bench.import_step(path, "decode", out)
    program = out.read_text()
    assert program.count("tg.matmul_q8_0") == 2 * 7 + 1
    row = bench.measure(program, "wormhole_n150")
    assert row.q8_0_weight_bytes == q8
    assert row.predicted_us >= row.roofline_us > 0
