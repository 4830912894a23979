"""tg.moe's `experts` plan linked and run per chip (issue 23, Build 3; docs/tensor-parallel.md#an-
moe-by-experts): chip c holds experts c x H .. c x H + H - 1 and its route sections read its first
held expert from a [1, 1] input the host supplies per chip (`mesh.chip_firsts`). A decoder layer
whose FFN is 8 experts of 64 columns (top 2; 64 is not whole tiles over 4 chips, so only
`experts` splits it there) runs with the plan taken under `spatial-run` against the whole
layer's single-device reference: decode (T = 1, the gathered form) and prefill (T = 5, dense),
with and without a gated shared expert. The default run simulates; the Triton (torchrun, gloo)
and TT-Lang matrix runs with SPATIAL_MESH_FULL=1."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.tools.frontend.layers import Model, MoeBlock, layer_function
from spatial_dialect.tools.spatial_run import main as run_main

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"


def _layer(tmp_path: Path, elt: str, t: int, shared: bool) -> Path:
    block = MoeBlock(8, 2, 64, shared_ffn=256 if shared else 0, shared_gate=shared)
    m = Model("moe", 128, 4, 2, 32, 0, 1e-6, qk_norm=False, elt=elt, moe=block)
    path = tmp_path / f"moe_{elt}_{t}_{int(shared)}.mlir"
    path.write_text(str(ModuleOp([layer_function(m, t, 32)])))
    return path


def _run(capsys, path: Path, mesh: str, backend: str) -> tuple[int, str]:
    rc = run_main([str(path), "--target", mesh, "--backend", backend, "--prefer-experts"])
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


CASES = [("f32", 1, True), ("bf16", 1, False), ("f32", 5, False), ("bf16", 5, True)]


@pytest.mark.parametrize("mesh", ["n300", "p150x4"])
@pytest.mark.parametrize("elt,t,shared", CASES)
def test_experts_by_chip_simulate_to_the_whole_layer(capsys, tmp_path, mesh, elt, t, shared):
    rc, out = _run(capsys, _layer(tmp_path, elt, t, shared), mesh, "sim")
    assert rc == 0 and out.splitlines()[-1] == "PASS: 3 output(s) within tolerance", out


def test_experts_by_chip_over_two_mesh_axes(capsys, tmp_path):
    """t3k (2 x 4): one expert a chip, its first from the chip's row-major index over both axes
    (the chip-first input split on dim 0 over each), fewer held than the token's 2 picks."""
    rc, out = _run(capsys, _layer(tmp_path, "f32", 1, True), "t3k", "sim")
    assert rc == 0 and out.splitlines()[-1] == "PASS: 3 output(s) within tolerance", out


def test_the_link_declares_the_chips_first_expert(tmp_path):
    """The linked deployment: one chip-first input after the function's, split by rows, and every
    route section reads it with the chip's count of experts."""
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.sp import RouteOp
    from spatial_dialect.tools.interpreters.deployment import deployment_of

    module = compile_module(
        _layer(tmp_path, "f32", 1, False).read_text(), "p150x4", prefer_experts=True
    )
    dep = deployment_of(module)
    assert dep is not None and dep.chip_firsts == {"moe__first": 2}
    assert dep.input_names[-1] == "moe__first"
    assert dep.inputs[-1].placements == ("shard(0)",)
    routes = [op for op in module.walk() if isinstance(op, RouteOp)]
    assert len(routes) == 4 and all(r.first is not None and r.held == 2 for r in routes)


def test_chips_that_all_take_chip_0s_experts_fail(capsys, tmp_path, monkeypatch):
    """The check can fail: were every chip's first expert 0 (the held range ignored), each chip
    would weigh its blocks as experts 0 .. H - 1 and the layer would differ from the reference."""
    from spatial_dialect.tools.interpreters import deployment

    real = deployment.deployment_of

    def zero_firsts(module):
        dep = real(module)
        return dep and dataclasses.replace(dep, chip_firsts=dict.fromkeys(dep.chip_firsts, 0))

    monkeypatch.setattr(deployment, "deployment_of", zero_firsts)
    from spatial_dialect.tools.simulator import mesh as sim_mesh

    monkeypatch.setattr(sim_mesh, "deployment_of", zero_firsts)
    rc, out = _run(capsys, _layer(tmp_path, "f32", 5, False), "n300", "sim")
    assert rc == 1 and out.splitlines()[-1].startswith("FAIL: "), out


@pytest.mark.skipif(not FULL, reason="the Triton and TT-Lang matrix runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("backend", ["triton-interpret", "tt-lang-sim"])
@pytest.mark.parametrize("mesh", ["n300", "p150x4"])
@pytest.mark.parametrize("elt,t,shared", CASES)
def test_experts_by_chip_run_per_chip(capsys, tmp_path, backend, mesh, elt, t, shared):
    rc, out = _run(capsys, _layer(tmp_path, elt, t, shared), mesh, backend)
    assert rc == 0 and out.splitlines()[-1] == "PASS: 3 output(s) within tolerance", out
