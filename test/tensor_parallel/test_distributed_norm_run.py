"""The distributed rms_norm's sections run (passes/link/rows.py: tg.rms_stats as `sum_squares`
partials, and their combine where a chip's columns are wider than the f32 accumulator;
tg.rms_apply as the blocked form's combine and apply map): spatial-run with
`--distributed-norm forced` over n300 and p150x4 compiles every whole-row norm into the two
halves with the statistics' all_reduce between, runs every chip and the collectives, and matches
the whole function's single-device reference; the two halves alone (a fused residual, tile rows,
a chip's columns that are not whole tiles, a count n other than the chip's columns) match the tg
reference on one chip; a Llama-like layer (1024 columns, 512 a chip over n300: blocked
statistics) passes too. The simulator runs by default; triton-interpret and tt-lang-sim (about
12-50 s a case on 2 cores) with SPATIAL_MESH_FULL=1.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp import ProgramOp, RowReduceOp
from spatial_dialect.tools.frontend.layers import Model, layer_function
from spatial_dialect.tools.spatial_run import main as run_main

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

HALVES = """
func.func @halves(%x: tensor<40x64xbf16>, %r: tensor<40x64xbf16>, %w: tensor<1x64xbf16>) -> (tensor<40x1xf32>, tensor<40x64xbf16>) {
  %ss = tg.rms_stats %x, %r : (tensor<40x64xbf16>, tensor<40x64xbf16>) -> tensor<40x1xf32>
  %y = tg.rms_apply %x, %ss, %w, %r eps 1.0e-05 n 128 : (tensor<40x64xbf16>, tensor<40x1xf32>, tensor<1x64xbf16>, tensor<40x64xbf16>) -> tensor<40x64xbf16>
  func.return %ss, %y : tensor<40x1xf32>, tensor<40x64xbf16>
}
func.func @wide(%x: tensor<40x300xbf16>, %r: tensor<40x300xbf16>, %w: tensor<1x300xbf16>) -> (tensor<40x1xf32>, tensor<40x300xbf16>) {
  %ss = tg.rms_stats %x, %r : (tensor<40x300xbf16>, tensor<40x300xbf16>) -> tensor<40x1xf32>
  %y = tg.rms_apply %x, %ss, %w, %r eps 1.0e-05 n 600 : (tensor<40x300xbf16>, tensor<40x1xf32>, tensor<1x300xbf16>, tensor<40x300xbf16>) -> tensor<40x300xbf16>
  func.return %ss, %y : tensor<40x1xf32>, tensor<40x300xbf16>
}
func.func @decode(%x: tensor<1x48xf32>, %w: tensor<1x48xf32>) -> (tensor<1x1xf32>, tensor<1x48xf32>) {
  %ss = tg.rms_stats %x : (tensor<1x48xf32>) -> tensor<1x1xf32>
  %y = tg.rms_apply %x, %ss, %w eps 1.0e-06 n 96 : (tensor<1x48xf32>, tensor<1x1xf32>, tensor<1x48xf32>) -> tensor<1x48xf32>
  func.return %ss, %y : tensor<1x1xf32>, tensor<1x48xf32>
}
"""
"""The halves on one chip: their own sum stands for the all-reduced one; n (128, 600, 96) is
twice the chip's columns, as on a 2-chip mesh, so a count taken from the chip's columns fails.
@wide's 300 columns (10 tiles, the last part padding) are wider than Tensix's 4-tile f32
accumulator: rms_stats is 5 blocks' partials and their `sum_squares` combine."""

WIDE = Model("wide", 1024, 8, 2, 64, 2048, 1e-6, qk_norm=False, elt="f32")
"""A Llama-like layer whose 1024-column rows split over n300 are 512 columns (16 tiles) a chip:
every distributed norm's statistics are blocked (4 blocks of 4 tiles on Tensix)."""

MESH_RUNS = [("tiny_decode", "n300"), ("tiny_prefill_f32", "n300"), ("tiny_decode", "p150x4")]
"""One row and 40 tile rows over 2 chips; 16 columns a chip (not whole tiles) over 4."""

BACKENDS = ("triton-interpret", "tt-lang-sim")


def _pass(capsys, argv: list[str], outputs: int) -> None:
    rc = run_main(argv)
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1] == f"PASS: {outputs} output(s) within tolerance", out


def _mesh(capsys, example: str, mesh: str, backend: str) -> None:
    path = EXAMPLES / f"{example}.mlir"
    argv = [str(path), "--target", mesh, "--prefer-sharded", "--distributed-norm", "forced"]
    _pass(capsys, [*argv, "--backend", backend], 3)


def _wide(capsys, tmp_path, backend: str) -> None:
    path = tmp_path / "wide.mlir"
    path.write_text(str(ModuleOp([layer_function(WIDE, 4, 32)])))
    argv = [str(path), "--target", "n300", "--prefer-sharded", "--distributed-norm", "forced"]
    _pass(capsys, [*argv, "--backend", backend], 3)


def _halves(capsys, tmp_path, fn: str, backend: str) -> None:
    path = tmp_path / "halves.mlir"
    path.write_text(HALVES)
    _pass(capsys, [str(path), "--target", "wormhole_n150", "--entry", fn, "--backend", backend], 2)


def test_forced_norms_are_linked_as_the_two_halves():
    """The run below is of the distributed form: every whole-row norm of the tiny step is a
    rms_stats section and an rms_apply combine and map on each chip."""
    text = (EXAMPLES / "tiny_decode.mlir").read_text()
    module = compile_module(text, "n300", prefer_sharded=True, distributed_norm="forced")
    ops = [p.source_op.data for p in module.walk() if isinstance(p, ProgramOp)]
    assert ops.count("tg.rms_stats") == 3 and ops.count("tg.rms_apply") == 6
    assert "tg.rms_norm" in ops  # the per-head q/k norms stay as they were


def test_a_wide_layers_statistics_are_blocked():
    """The run below is of the blocked statistics: each norm's rms_stats over a chip's 512
    columns is 4 partials of 128 columns and their sum."""
    module = compile_module(
        str(ModuleOp([layer_function(WIDE, 4, 32)])),
        "n300",
        prefer_sharded=True,
        distributed_norm="forced",
    )
    stages = [
        (s.form.data, s.kind.data, s.cols, s.block)
        for p in module.walk()
        if isinstance(p, ProgramOp) and p.source_op.data == "tg.rms_stats"
        for s in p.ops_of(RowReduceOp)
    ]
    assert (
        stages == [("partial", "sum_squares", 512, 128), ("combine", "sum_squares", 512, 128)] * 2
    )


def test_spatial_run_passes_a_wide_layer_in_the_simulator(capsys, tmp_path):
    _wide(capsys, tmp_path, "sim")


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: the backends' interpreters")
@pytest.mark.parametrize("backend", BACKENDS)
def test_spatial_run_passes_a_wide_layer_on_the_backends(capsys, tmp_path, backend):
    pytest.importorskip("triton" if backend == "triton-interpret" else "ttl")
    _wide(capsys, tmp_path, backend)


@pytest.mark.parametrize("example,mesh", MESH_RUNS)
def test_spatial_run_passes_forced_norms_in_the_simulator(capsys, example, mesh):
    _mesh(capsys, example, mesh, "sim")


@pytest.mark.parametrize("fn", ["halves", "wide", "decode"])
def test_the_halves_pass_in_the_simulator(capsys, tmp_path, fn):
    _halves(capsys, tmp_path, fn, "sim")


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: the backends' interpreters")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("example,mesh", MESH_RUNS)
def test_spatial_run_passes_forced_norms_on_the_backends(capsys, example, mesh, backend):
    pytest.importorskip("triton" if backend == "triton-interpret" else "ttl")
    _mesh(capsys, example, mesh, backend)


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: the backends' interpreters")
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", ["halves", "wide", "decode"])
def test_the_halves_pass_on_the_backends(capsys, tmp_path, fn, backend):
    pytest.importorskip("triton" if backend == "triton-interpret" else "ttl")
    _halves(capsys, tmp_path, fn, backend)


def test_the_flag_needs_a_mesh(capsys):
    argv = [str(EXAMPLES / "tiny_decode.mlir"), "--target", "h100", "--distributed-norm", "forced"]
    assert run_main(argv) == 2
    err = capsys.readouterr().err
    assert err.endswith("--distributed-norm needs a mesh preset as --target (e.g. n300)\n")
