"""The executors `spatial-run --backend NAME` checks a compiled program with.

Every backend runs the sized sp module that spatial-pipeline produced, with the options it was
given and no others (the program a backend checks is the one `-t report` priced: split-K and
flash decoding's splits print on every backend), and returns the entry function's outputs;
spatial-run then compares them with the numpy reference under one tolerance table
(tools/interpreters/compare.py), whichever executor ran them:

    sim               our functional simulator (tools/simulator/program.py), the default
    tt-lang-sim       the TT-Lang program `-t ttlang` prints, run by Tenstorrent's simulator
    triton-interpret  the Triton module `-t triton` prints, run by Triton's CPU interpreter
    triton            the same module, compiled and run on an NVIDIA GPU

A runner is `run(module, inputs) -> outputs`: `inputs` are the arrays of the entry's DRAM
inputs in `sp.entry` order, the outputs come back in `sp.entry` order. The target is the one the
module records (link wrote it; `passes.target_choice.recorded_target` reads it, sub-grid and budget
included), so a runner cannot run a program for another chip than it was compiled for. Runners
are imported lazily, so a backend's heavy dependencies (torch) load only when it is chosen.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

import numpy as np
from xdsl.dialects.builtin import ModuleOp


class BackendUnavailable(Exception):
    """The executor cannot run here (not installed, no GPU): one line that says what to
    install. Not a FAIL: nothing ran."""


class BackendFailed(Exception):
    """The executor ran the program and rejected it (a deadlock, a local-memory overflow, a
    bad copy): the executor's own message. A FAIL."""


Runner = Callable[[ModuleOp, list[np.ndarray]], list[np.ndarray]]

BACKENDS: dict[str, tuple[str, str]] = {
    "sim": ("spatial_dialect.tools.simulator.program", "simulate"),
    "tt-lang-sim": ("spatial_dialect.tools.backend.ttlang.runner", "run_tt_lang_sim"),
    "triton-interpret": ("spatial_dialect.tools.backend.triton.runner", "run_interpreted"),
    "triton": ("spatial_dialect.tools.backend.triton.runner", "run_native"),
}
"""Backend name -> (module, runner function)."""

MESH_BACKENDS: dict[str, tuple[str, str]] = {
    "sim": ("spatial_dialect.tools.simulator.mesh", "simulate_mesh"),
    "tt-lang-sim": ("spatial_dialect.tools.backend.ttlang.runner", "run_tt_lang_sim_mesh"),
    "triton-interpret": (
        "spatial_dialect.tools.backend.triton.mesh_runner",
        "run_interpreted_mesh",
    ),
    "triton": ("spatial_dialect.tools.backend.triton.mesh_runner", "run_native_mesh"),
}
"""Backend name -> (module, runner function) of a deployment over a mesh
(docs/mesh.md#the-linked-deployment). A mesh runner is `run(module, whole_inputs) ->
whole_outputs`: it shards the WHOLE inputs per the entry's placements, runs every chip and the
steps, and unshards the outputs, through the shared plumbing (tools/interpreters/deployment.py)."""


Q8_0_AS_STORED = frozenset({"tt-lang-sim"})
"""The backends whose program holds a Q8_0 tensor in the format the target stores it in
(Target.q8_0_storage: bfp8_b on Tensix), not as ggml's blocks: spatial-run checks their outputs
with the bfp8_b term of tools/interpreters/compare.py. The others compute ggml's Q8_0 exactly."""


def backend_runner(name: str) -> Runner:
    module, function = BACKENDS[name]
    return getattr(import_module(module), function)


def mesh_runner(name: str) -> Runner:
    """The runner of a deployment over a mesh on backend `name`."""
    if name not in MESH_BACKENDS:
        raise BackendUnavailable(
            f"backend {name} does not run deployments over a mesh yet "
            f"(those that do: {', '.join(sorted(MESH_BACKENDS))})"
        )
    module, function = MESH_BACKENDS[name]
    return getattr(import_module(module), function)
