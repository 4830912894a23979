"""The head ops through the vendors' executors: head_slice, join and head_matmul compile to copy
maps and GEMMs whose loads carry constant column offsets, and each backend must honour them
(a printer that dropped an offset would read the wrong heads and FAIL here, not silently)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

INPUTS = Path(__file__).parent / "Inputs"
CASES = [
    ("fused_qkv.mlir", "h100", "triton-interpret"),
    ("head_matmul.mlir", "h100", "triton-interpret"),
    ("fused_qkv.mlir", "wormhole_n150", "tt-lang-sim"),
    ("head_matmul.mlir", "blackhole_p150", "tt-lang-sim"),
]


@pytest.mark.parametrize("program, target, backend", CASES)
def test_head_ops_pass_under_the_backend(program, target, backend):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_run",
            str(INPUTS / program),
            "--target",
            target,
            "--backend",
            backend,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip().splitlines()[-1].startswith("PASS"), run.stdout
