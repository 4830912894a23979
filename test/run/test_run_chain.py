"""spatial-run --chain: several functions of one file run in order as one deployment, compiled
together, each output feeding the later functions' input of the same name."""

from __future__ import annotations

import numpy as np
import pytest

from spatial_dialect.tools.spatial_run import main

# @write alone would keep the cache in rows, @read tiles it: compiled together they agree on
# tiles (test/link/deployment.mlir), and the chain runs @read on the cache @write updated.
DEPLOYMENT = """
func.func @write(%cache: tensor<64x64xf32>, %rows: tensor<8x64xf32>, %pos: tensor<1xi32>) -> tensor<64x64xf32> {
  %c = tg.set_rows %cache, %rows, %pos : (tensor<64x64xf32>, tensor<8x64xf32>, tensor<1xi32>) -> tensor<64x64xf32>
  func.return %c : tensor<64x64xf32>
}
func.func @read(%cache: tensor<64x64xf32>, %w: tensor<64x64xf32>, %rows: tensor<8x64xf32>) -> (tensor<64x64xf32>, tensor<8x64xf32>) {
  %y = tg.matmul %cache, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %z = tg.add %rows, %rows : (tensor<8x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  func.return %y, %z : tensor<64x64xf32>, tensor<8x64xf32>
}
"""


@pytest.fixture
def program(tmp_path):
    path = tmp_path / "deployment.mlir"
    path.write_text(DEPLOYMENT)
    return path


def run(capsys, *argv) -> tuple[int, str, str]:
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return status, out, err


@pytest.mark.parametrize("target", ["wormhole_n150", "h100", "plasticine"])
def test_a_chain_passes_and_says_what_fed_what(capsys, program, target):
    status, out, _ = run(capsys, program, "--target", target, "--chain", "write,read")
    lines = out.splitlines()
    assert status == 0, out
    assert lines[0] == (
        "spatial-run: @write, 0 input(s) from file, 3 drawn with seed 0, "
        "0 fed and 0 shared by earlier entries"
    )
    # %cache is @write's output (the cache it updated in place, by the cache's name); %rows is
    # @write's input, the same tensor; %w is @read's own
    assert lines[2] == (
        "spatial-run: @read, 0 input(s) from file, 1 drawn with seed 0, "
        "1 fed and 1 shared by earlier entries"
    )
    assert lines[-1] == "PASS: 3 output(s) within tolerance"


def test_the_reference_is_chained(capsys, program, tmp_path):
    """@read's output is computed on @write's: the saved run holds @read's y equal to the
    updated cache times w, rows written at pos, under each function's name and each output's
    chain name (the updated cache as `cache`, the input it feeds, not its SSA name `c`)."""
    saved = tmp_path / "run.npz"
    chain = ["--reference-only", "--chain", "@write,@read"]
    status, out, _ = run(capsys, program, *chain, "--save", saved)
    assert status == 0 and out.splitlines()[-1] == "PASS reference only: 3 output(s) evaluated"
    with np.load(saved) as run_:
        cache, rows, pos, w = (run_[k] for k in ("cache", "rows", "pos", "w"))
        updated = cache.copy()
        updated[pos[0] : pos[0] + 8] = rows
        np.testing.assert_array_equal(run_["reference/write/cache"], updated)
        assert "reference/write/c" not in run_.files
        np.testing.assert_allclose(run_["reference/read/y"], updated @ w, rtol=1e-5, atol=1e-4)
        assert not any(k.startswith("simulated/") for k in run_.files)
    # the saved inputs replay the chain: every own input from the file, none drawn
    status, replay, _ = run(capsys, program, *chain, "--inputs", saved)
    assert "@write, 3 input(s) from file, 0 drawn" in replay
    assert "@read, 1 input(s) from file, 0 drawn" in replay
    assert [line for line in replay.splitlines() if "crc32" in line] == [
        line for line in out.splitlines() if "crc32" in line
    ]


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--chain", "write,nope"], "no function @nope (the file has @write, @read)"),
        (["--chain", "write,read,write"], "--chain names @write twice"),
    ],
)
def test_a_bad_chain_is_one_line(capsys, program, argv, says):
    status, out, err = run(capsys, program, "--reference-only", *argv)
    assert status == 1 and not out and err.count("\n") == 1 and says in err, err


def test_an_output_of_another_type_than_the_input_it_feeds_is_refused(capsys, tmp_path):
    path = tmp_path / "bad.mlir"
    path.write_text(
        "func.func @a(%x: tensor<4x32xf32>) -> tensor<4x32xf32> {\n"
        "  %y = tg.silu %x : (tensor<4x32xf32>) -> tensor<4x32xf32>\n"
        "  func.return %y : tensor<4x32xf32>\n}\n"
        "func.func @b(%y: tensor<2x32xf32>) -> tensor<2x32xf32> {\n"
        "  %z = tg.silu %y : (tensor<2x32xf32>) -> tensor<2x32xf32>\n"
        "  func.return %z : tensor<2x32xf32>\n}\n"
    )
    status, _, err = run(capsys, path, "--reference-only", "--chain", "a,b")
    assert status == 1 and err.count("\n") == 1
    assert "@b takes %y as 2x32xf32, but an earlier entry's output named so is 4x32xf32" in err


def test_entry_and_chain_are_one_choice(capsys, program):
    status, _, err = run(capsys, program, "--reference-only", "--entry", "write", "--chain", "a,b")
    assert status == 2 and "not allowed with argument" in err


# @step's %s is state computed anew (not updated in place): `chain.state` names the output that
# holds its next value, which the next step's %s takes (Qwen3-Next's conv and recurrent states).
STATE = """
func.func @first(%s: tensor<32x32xf32> {chain.state = "s_next"}, %x: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %s_next = tg.add %s, %x : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %s_next : tensor<32x32xf32>
}
func.func @second(%s: tensor<32x32xf32> {chain.state = "s_next"}, %y: tensor<32x32xf32>) -> tensor<32x32xf32> {
  %s_next = tg.add %s, %y : (tensor<32x32xf32>, tensor<32x32xf32>) -> tensor<32x32xf32>
  func.return %s_next : tensor<32x32xf32>
}
"""


@pytest.mark.parametrize("target", [None, "h100"])
def test_a_state_named_by_chain_state_is_carried(capsys, tmp_path, target):
    path = tmp_path / "state.mlir"
    path.write_text(STATE)
    saved = tmp_path / "run.npz"
    where = ["--target", target] if target else ["--reference-only"]
    status, out, _ = run(capsys, path, *where, "--chain", "first,second", "--save", saved)
    assert status == 0, out
    assert "@second, 0 input(s) from file, 1 drawn with seed 0, 1 fed and 0 shared" in out
    with np.load(saved) as run_:
        s, x, y = run_["s"], run_["x"], run_["y"]
        np.testing.assert_allclose(run_["reference/second/s_next"], s + x + y, rtol=1e-6)
