"""The `2d` product plan (docs/tensor-parallel.md: K split over one mesh axis and N over the
other, tt-metal's Galaxy layout) run over t3k (2x4) by every executor: the whole program compiled
by spatial-pipeline, its whole inputs sharded per the entry, each chip's sections run on its own
shard, the partial sum all-reduced over ONE mesh axis (ttnn's cluster axis; a torch.distributed
group per line of chips under torchrun) and gathered over the other, and the unsharded output
compared with the whole program's single-device reference.

The tiny programs of test/run/Inputs/mesh_2d_*.mlir and examples/gemm_small.mlir take `2d` with
--prefer-sharded (the tiny layers' products do not: their column and row splits are cheaper), so
each test first checks the plan and its collectives, by hand, then runs it. By default the residual
program runs under tt-lang-sim and triton-interpret (about 30 s on 2 cores); every program under
every executor with SPATIAL_MESH_FULL=1 (12 runs, about 5 min), and a layer that takes `2d` by
price (test_tensor_parallel's medium layer: WO) under tt-lang-sim and triton-interpret (about 7
min more)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.mesh import AllGatherOp, AllReduceOp
from spatial_dialect.mesh.interface import interface
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.tools.spatial_run import main as run_main
from spatial_dialect.tools.spatial_run import parse_module

ROOT = Path(__file__).resolve().parents[2]
INPUTS = ROOT / "test" / "run" / "Inputs"
FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"

# program -> (the weight's placements, the collectives after the product: (kind, mesh axis)).
# [shard(1), shard(0)]: the weight's dim 1 over axis 0 and its dim 0 over axis 1; for a [K, N]
# weight that is K over the 4-chip axis (the partial sum's all_reduce runs over it) and N over
# the 2-chip axis (gathered last); for the transposed [N, K] weight, the other order of axes.
PROGRAMS = {
    "residual": (
        INPUTS / "mesh_2d_residual.mlir",
        ("shard(1)", "shard(0)"),
        [("all_reduce", 1), ("all_gather", 0)],
    ),
    "q8_0": (
        INPUTS / "mesh_2d_q8_0.mlir",
        ("shard(1)", "shard(0)"),
        [("all_reduce", 1), ("all_gather", 0)],
    ),
    "transposed": (
        INPUTS / "mesh_2d_transposed.mlir",
        ("shard(1)", "shard(0)"),
        [("all_reduce", 0), ("all_gather", 1)],
    ),
    "gemm_small": (
        ROOT / "examples" / "gemm_small.mlir",
        ("shard(1)", "shard(0)"),
        [("all_reduce", 1), ("all_gather", 0)],
    ),
}


def _check_plan(name: str) -> Path:
    """The program's product takes `2d` over t3k with prefer-sharded, with the weight block and
    the per-axis collectives PROGRAMS names."""
    path, weight, steps = PROGRAMS[name]
    module = parse_module(path.read_text())
    TensorParallelPass("t3k", True).apply(Context(), module)
    fn = next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))
    product = next(op for op in fn.body.block.ops if op.name.startswith("tg.matmul"))
    assert product.attributes["tp.plan"].data == "2d", product
    ins, _ = interface(fn)
    assert ins[1].placements == weight
    kinds = {AllReduceOp: "all_reduce", AllGatherOp: "all_gather"}
    got = [
        (kinds[type(op)], op.axis.value.data)
        for op in fn.body.block.ops
        if type(op) in kinds
    ]  # fmt: skip
    assert got == steps
    return path


def _run(capsys, *argv: str) -> tuple[int, str]:
    rc = run_main([*map(str, argv)])
    cap = capsys.readouterr()
    return rc, cap.out + cap.err


@pytest.mark.parametrize("backend", ["tt-lang-sim", "triton-interpret"])
def test_a_2d_product_runs_over_t3k(capsys, backend):
    if backend == "tt-lang-sim":
        pytest.importorskip("ttl")
    else:
        pytest.importorskip("triton")
    path = _check_plan("residual")
    rc, out = _run(capsys, path, "--target", "t3k", "--prefer-sharded", "--backend", backend)
    assert rc == 0 and out.splitlines()[-1] == "PASS: 1 output(s) within tolerance", out


def test_an_all_reduce_over_the_whole_mesh_fails(capsys, monkeypatch):
    """The comparison can fail: the 2d plan's all_reduce summed over BOTH mesh axes (as a
    collective that ignores its axis would) adds the other N block's partial sums in, which the
    whole program's reference catches."""
    from spatial_dialect.mesh import Collective
    from spatial_dialect.tools.interpreters import collectives, deployment

    def whole_mesh(stack, rank, _axis, *_):
        for axis in range(rank):
            stack = collectives.all_reduce(stack, rank, axis)
        return stack

    monkeypatch.setitem(deployment.STEP_FUNCTIONS, Collective.ALL_REDUCE, whole_mesh)
    rc, out = _run(capsys, _check_plan("residual"), "--target", "t3k", "--prefer-sharded")
    assert rc == 1 and out.splitlines()[-1].startswith("FAIL: "), out


@pytest.mark.skipif(not FULL, reason="the 2d matrix runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("backend", ["sim", "tt-lang-sim", "triton-interpret"])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_every_2d_program_runs_under_every_executor(capsys, name, backend):
    path = _check_plan(name)
    rc, out = _run(capsys, path, "--target", "t3k", "--prefer-sharded", "--backend", backend)
    assert rc == 0 and out.splitlines()[-1] == "PASS: 1 output(s) within tolerance", out


@pytest.mark.skipif(not FULL, reason="the medium layer runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("backend", ["triton-interpret", "tt-lang-sim"])
def test_a_layer_that_takes_2d_by_price_runs(capsys, tmp_path, backend):
    """test_tensor_parallel's medium layer (d = 2048, f32) takes WO's 2d plan by price over t3k,
    with no prefer-sharded, beside the heads over the 4-chip axis and FF2's row split over both
    axes; spatial-run compiles it as a user would and runs it (on 2 shared cores: triton-interpret
    about 80 s wall, tt-lang-sim about 5.5 min)."""
    sys.path.insert(0, str(ROOT / "test" / "tensor_parallel"))
    from test_tensor_parallel import MEDIUM

    from spatial_dialect.tools.frontend.layers import layer_function

    module = ModuleOp([layer_function(MEDIUM, 1, 32)])
    path = tmp_path / "medium.mlir"
    path.write_text(str(module))
    TensorParallelPass("t3k").apply(Context(), module)
    fn = next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))
    plans = {
        op.results[0].name_hint: op.attributes["tp.plan"].data
        for op in fn.body.block.ops
        if "tp.plan" in op.attributes
    }
    assert (plans["o"], plans["down"]) == ("2d", "row")
    rc, out = _run(capsys, path, "--target", "t3k", "--backend", backend)
    assert rc == 0 and out.splitlines()[-1] == "PASS: 3 output(s) within tolerance", out
