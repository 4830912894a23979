"""Unseen batched decode steps (issue 24's acceptance: "So do unseen programs"): whole greedy
steps of llama-like models drawn from seeds no other test uses (test_tensor_parallel's
`random_model`: head_dim 32 or 64, 1-8 heads over 1-8 KV heads, widths 64-256, q/k norms, f32,
bf16 and Q8_0 weights), each with B users at their own positions over contiguous or paged KV
caches (`Batch.decode`, as `spatial-import --batch B [--paged N]` writes it), compiled by the
pipeline for the target and run by `spatial-run` against the step's reference (positions drawn
per user, one user idle: tools/interpreters/inputs.py).

The default run takes one step on wormhole_n150 under our simulator (a few seconds);
SPATIAL_BATCH_FULL=1 runs four seeds on wormhole_n150, blackhole_p150 and h100 under the
simulator, tt-lang-sim (Tensix targets) and Triton's interpreter: 32 cases PASS in 374 s
(2026-12-02, a 2-core machine shared with other jobs)."""

from __future__ import annotations

import dataclasses
import os
import random
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.tools.frontend.layers import Batch, ExampleNames, step_function
from spatial_dialect.tools.spatial_run import main as run_main

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tensor_parallel"))
from test_tensor_parallel import random_model  # noqa: E402

FULL = os.environ.get("SPATIAL_BATCH_FULL") == "1"
SEEDS = range(300, 304) if FULL else range(300, 301)
TARGETS = ("wormhole_n150", "blackhole_p150", "h100") if FULL else ("wormhole_n150",)
BACKENDS = ("sim", "tt-lang-sim", "triton-interpret") if FULL else ("sim",)
GPUS = ("h100",)


def unseen_step(seed: int) -> tuple[ModuleOp, str]:
    """A drawn model's batched step: its vocabulary (256 or 512, tied or not), users (1, 3 or
    8), cache rows a user (32 or 64) and layout (contiguous, or paged in blocks of 8 or 16) drawn
    from the same seed."""
    rng = random.Random(seed)
    model, _, cache = random_model(rng, seed)
    model = dataclasses.replace(model, vocab=rng.choice([256, 512]), tied=rng.random() < 0.3)
    users = rng.choice([1, 3, 8])
    block = rng.choice([None, 8, 16])
    fn = step_function(
        model,
        ExampleNames(model.q8_0),
        1,
        cache,
        1,
        f"{model.name}_b{users}",
        Batch.decode(users, cache, block),
    )
    module = ModuleOp([fn])
    module.verify()
    layout = "contiguous" if block is None else f"paged {block}"
    return module, f"{model} B={users} S={cache} {layout}"


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("seed", SEEDS)
def test_an_unseen_batched_step_passes(capsys, tmp_path, seed, target, backend):
    if backend == "tt-lang-sim":
        if target in GPUS:
            pytest.skip("TT-Lang prints for Tensix targets")
        pytest.importorskip("ttl")
    if backend == "triton-interpret":
        pytest.importorskip("triton")
        pytest.importorskip("torch")
    module, what = unseen_step(seed)
    path = tmp_path / "step.mlir"
    path.write_text(str(module))
    rc = run_main([str(path), "--target", target, "--backend", backend])
    cap = capsys.readouterr()
    assert "Traceback" not in cap.err, cap.err
    assert rc == 0 and cap.out.splitlines()[-1].startswith("PASS"), f"{what}\n{cap.out}{cap.err}"
