"""Unseen programs run over a mesh (issue 23's acceptance: "unseen programs PASS on n300 and
p150x4"): llama-like layers drawn from seeds the tensor-parallel sweep never uses (its seeds are
0..69), each compiled WHOLE by `spatial-pipeline{target=MESH prefer-sharded=true}` (the split is
forced, so the collectives run) and run by spatial-run on every chip against the whole
function's single-device reference. The default run takes one layer per mesh under our
simulator; SPATIAL_MESH_FULL=1 runs six per mesh under the simulator, tt-lang-sim and Triton's
interpreter (torchrun, one rank per chip)."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.tools.frontend.layers import layer_function
from spatial_dialect.tools.spatial_run import main as run_main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensor_parallel"))
from test_tensor_parallel import random_model  # noqa: E402

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
MESHES = ("n300", "p150x4")
SEEDS = range(100, 106) if FULL else range(100, 101)
BACKENDS = ("sim", "tt-lang-sim", "triton-interpret") if FULL else ("sim",)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize("seed", SEEDS)
def test_an_unseen_layer_passes_over_the_mesh(capsys, tmp_path, seed, mesh, backend):
    model, tokens, cache = random_model(random.Random(seed), seed)
    path = tmp_path / f"{model.name}.mlir"
    module = ModuleOp([layer_function(model, tokens, cache)])
    module.verify()
    path.write_text(str(module))
    argv = [str(path), "--target", mesh, "--prefer-sharded", "--backend", backend]
    rc = run_main(argv)
    out = capsys.readouterr().out
    assert rc == 0 and out.splitlines()[-1].startswith("PASS"), f"{model} T={tokens}\n{out}"
