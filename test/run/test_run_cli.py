"""spatial-run as users call it: output lines, exit statuses, errors without tracebacks."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from spatial_dialect.tools import spatial_run
from spatial_dialect.tools.interpreters.compare import RTOL
from spatial_dialect.tools.spatial_run import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
TINY = ["tiny_decode.mlir", "tiny_prefill.mlir", "gemm_small.mlir"]


def run(capsys, *argv: str) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.mark.parametrize("example", TINY)
def test_reference_only_on_the_small_examples(capsys, example):
    status, out, _ = run(capsys, EXAMPLES / example, "--reference-only")
    lines = out.strip().splitlines()
    assert status == 0 and lines[-1].startswith("PASS")
    assert re.search(r"crc32 [0-9a-f]{8}", out)


def test_reference_only_names_each_output(capsys):
    _, out, _ = run(capsys, EXAMPLES / "tiny_decode.mlir", "--reference-only")
    assert re.search(r"^token\s+1 i32 ", out, re.M)
    assert re.search(r"^l0_kc\s+64x64 bf16 ", out, re.M)


def test_the_seed_decides_the_inputs_and_save_reproduces_them(capsys, tmp_path):
    path = EXAMPLES / "tiny_prefill.mlir"
    first = run(capsys, path, "--reference-only", "--seed", "5", "--save", tmp_path / "r.npz")[1]
    again = run(capsys, path, "--reference-only", "--seed", "5")[1]
    other = run(capsys, path, "--reference-only", "--seed", "6")[1]
    replay = run(capsys, path, "--reference-only", "--inputs", tmp_path / "r.npz")[1]
    body = lambda text: text.splitlines()[1:]  # noqa: E731 - the header names the input source
    assert body(first) == body(again) == body(replay) and body(first) != body(other)
    assert "20 input(s) from file, 0 drawn" in replay
    with np.load(tmp_path / "r.npz") as saved:
        assert "reference/token" in saved.files and "ids" in saved.files


def test_an_index_out_of_range_in_given_inputs_is_a_clear_error(capsys, tmp_path):
    np.savez(tmp_path / "ids.npz", ids=np.array([600], np.int32))
    status, _, err = run(
        capsys, EXAMPLES / "tiny_decode.mlir", "--reference-only", "--inputs", tmp_path / "ids.npz"
    )
    assert status == 1
    assert "tg.gather_rows: id 600 outside [0, 512) (ids[0])" in err


def test_user_errors_exit_1_with_one_message(capsys, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n  %y = tg.nope %x\n}")
    (tmp_path / "bad.npz").write_text("not an archive")
    small = EXAMPLES / "gemm_small.mlir"
    cases = [
        ([small, "--reference-only", "--inputs", tmp_path / "none.npz"], "cannot open"),
        ([small, "--reference-only", "--inputs", tmp_path / "bad.npz"], "cannot read inputs"),
        ([small, "--reference-only", "--save", tmp_path / "no" / "x.npz"], "cannot write"),
        ([tmp_path / "missing.mlir", "--reference-only"], "cannot open"),
        ([bad, "--reference-only"], "cannot parse"),
        (
            [EXAMPLES / "gemm_small.mlir", "--reference-only", "--entry", "g"],
            "no function @g (the file has @gemm)",
        ),
        (
            [EXAMPLES / "gemm_small.mlir", "--target", "no_such_chip"],
            "unknown target 'no_such_chip'",
        ),
    ]
    for argv, message in cases:
        status, _, err = run(capsys, *argv)
        assert status == 1 and message in err and err.startswith("spatial-run: error:")


def test_usage_errors_exit_2(capsys):
    # neither --target nor --reference-only
    assert run(capsys, EXAMPLES / "gemm_small.mlir")[0] == 2
    assert run(capsys, EXAMPLES / "gemm_small.mlir", "--seed", "x")[0] == 2
    budget = ("--target", "wormhole_n150", "--work-budget", "-1")
    assert run(capsys, EXAMPLES / "gemm_small.mlir", *budget)[0] == 2


def test_help_documents_the_tolerances(capsys):
    status, out, _ = run(capsys, "--help")
    text = " ".join(out.split())
    assert (
        status == 0
        and "rtol: bf16 0.0625" in text
        and "(bf16 0.125, f16 0.015625 with --accumulate bf16)" in text
    )


def test_the_docstring_states_the_rule_s_numbers():
    doc = spatial_run.__doc__ or ""
    for name, exponent in (("bf16", 4), ("f16", 7), ("f32", 14)):
        assert RTOL[name] == 2.0**-exponent and f"2^-{exponent} for {name}" in doc


def test_the_console_script_runs():
    script = Path(sys.executable).parent / "spatial-run"
    done = subprocess.run(
        [script, EXAMPLES / "gemm_small.mlir", "--reference-only"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0 and done.stdout.splitlines()[-1].startswith("PASS")
