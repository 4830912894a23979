"""spatial-run over a mesh of a batched decode step (issue 24's Build 4, "with the multi-chip issue,
per chip as well"): a tiny step of B = 3 users, contiguous and paged KV caches, compiled for n300
and p150x4 with --prefer-sharded (tensor-parallel splits tg.batch_set_rows and tg.batch_attention
by heads), run by each executor -- our simulator, tt-lang-sim (each chip's sections on its own
shard, then the collectives) and Triton's interpreter (one gloo rank per chip) -- and compared with
the WHOLE step's single-device reference.

A paged cache runs on TT-Lang as the gather of each user's blocks into a contiguous scratch (a
host step) and then the contiguous attention (docs/passes.md, the batched step on targets whose
kernels cannot address DRAM by an id they read).

The default run takes the case no other file runs (tt-lang-sim on n300, contiguous) and a
deployment that drops its all_reduces and must FAIL: about 10 s alone on this 2-core machine (the
tt-lang-sim run is 6 s of it; 45 s beside other jobs). SPATIAL_MESH_FULL=1 adds the rest of the
matrix, 2 meshes x 2 layouts x 3 executors (tt-lang-sim about 40 s a case, Triton's interpreter
27-37 s, our simulator 2-3 s).
test/tensor_parallel/test_tp_batched.py runs the sim and triton cases at B = 8 too."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from spatial_dialect.tools.spatial_run import main as run_main

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "test" / "tensor_parallel"))
from test_tp_batched import BLOCK, _step  # noqa: E402

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
USERS = 3
# (mesh, block, backend) run by default: tt-lang-sim is the executor test_tp_batched does not run
DEFAULT = [("n300", None, "tt-lang-sim")]
MATRIX = [
    (mesh, block, backend)
    for mesh in ("n300", "p150x4")
    for block in (None, BLOCK)
    for backend in ("sim", "tt-lang-sim", "triton-interpret")
    if (mesh, block, backend) not in DEFAULT
]


def _ids(cases):
    return [f"{m}-{'paged' if b else 'contiguous'}-{e}" for m, b, e in cases]


def _program(tmp_path: Path, block: int | None) -> Path:
    path = tmp_path / "step.mlir"
    path.write_text(str(_step(USERS, block)))
    return path


def _run(capsys, tmp_path, mesh: str, block: int | None, backend: str):
    if backend == "triton-interpret":
        pytest.importorskip("triton")
        pytest.importorskip("torch")
    if backend == "tt-lang-sim":
        pytest.importorskip("ttl")
    argv = [_program(tmp_path, block), "--target", mesh, "--prefer-sharded", "--backend", backend]
    rc = run_main([*map(str, argv)])
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def _check(capsys, tmp_path, mesh: str, block: int | None, backend: str):
    rc, out, err = _run(capsys, tmp_path, mesh, block, backend)
    assert "Traceback" not in err, err
    assert rc == 0, out + err
    lines = out.splitlines()
    assert lines[0].startswith(f"spatial-run: @tiny_b{USERS}, 0 input(s) from file"), out
    # the step's outputs: each user's token, then layer 0's caches written at each user's row
    assert [line.split()[:2] for line in lines[1:4]] == [
        ["token", str(USERS)],
        ["l0_kc", lines[2].split()[1]],
        ["l0_vc", lines[3].split()[1]],
    ]
    assert lines[-1].startswith("PASS: 3 output(s) within tolerance"), out


@pytest.mark.parametrize("case", DEFAULT, ids=_ids(DEFAULT))
def test_a_batched_step_runs_per_chip_under_tt_lang_sim(capsys, tmp_path, case):
    _check(capsys, tmp_path, *case)


def test_a_batched_deployment_that_skips_its_all_reduces_fails(capsys, tmp_path, monkeypatch):
    """The whole reference can catch a wrong deployment: with every all_reduce doing nothing
    (each chip keeps its partial sum of o and down), the batched step's tokens and caches of the
    next layer differ from the whole step's."""
    from spatial_dialect.mesh import Collective
    from spatial_dialect.tools.interpreters import deployment

    monkeypatch.setitem(deployment.STEP_FUNCTIONS, Collective.ALL_REDUCE, lambda s, *_: s)
    rc, out, _ = _run(capsys, tmp_path, "n300", BLOCK, "sim")
    assert rc == 1 and out.splitlines()[-1].startswith("FAIL: "), out


@pytest.mark.skipif(not FULL, reason="every mesh x layout x executor with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("case", MATRIX, ids=_ids(MATRIX))
def test_every_batched_step_runs_over_the_mesh(capsys, tmp_path, case):
    _check(capsys, tmp_path, *case)
