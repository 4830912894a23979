"""`spatial-run --backend triton-interpret | triton` on a deployment over a mesh of chips: the
printed SPMD module (printer.py, steps.py, mesh_host.py) launched once per chip by torchrun.

Every chip runs the same printed program on its own shard; the collectives between its kernels go
through torch.distributed (gloo under Triton's CPU interpreter, NCCL on GPUs). `run_*_mesh` are
executors.MESH_BACKENDS' runners (WHOLE inputs and outputs, entry order): they shard and unshard
through the shared plumbing (tools/interpreters/deployment.py) around `run_*_chips`, which take
and give STACKS (docs/mesh.md#reference-semantics: per entry tensor one array whose leading axes
are the mesh's and whose trailing ones are a chip's shard).

Decided here, and why:

- **torchrun, run as `python -m torch.distributed.run`** with the interpreter that runs spatial-run:
  the `torchrun` script sits beside that interpreter only when the venv installed it, while the
  module is there wherever torch is. `--standalone` takes a free port, so two runs on one machine
  never meet at torchrun's default port.
- **Files between the runner and the ranks**: chip r's shards in `in.{r}.npz`, its outputs in
  `out.{r}.npz` (bf16 as f32, as host.py's main reads and writes them); the printed program is the
  one a person runs, so the runner adds no entry point of its own.
- **A failing rank's last line is the verdict** (`BackendFailed`): torchrun's own report of a
  failed child names only the exit status, so each rank's stderr goes to a log file (torchrun's
  `--log-dir`, `--redirects 2`) and the first rank's last line that is not a warning is read back.
  A run that outlasts TIMEOUT_S has hung (a collective some rank never reached): torchrun runs in
  a session of its own, so the ranks it started are killed with it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.tools.backend.executors import BackendFailed, BackendUnavailable
from spatial_dialect.tools.backend.triton.printer import emit_module
from spatial_dialect.tools.backend.triton.runner import require
from spatial_dialect.tools.interpreters.deployment import (
    Deployment,
    deployment_of,
    shard_inputs,
    unshard_outputs,
)

TIMEOUT_S = 900
"""A run of every chip that takes longer has hung (a collective one rank never reached)."""


def _as_file(array: np.ndarray) -> np.ndarray:
    """An input as the printed program reads it: floats (bf16 too) as f32, ints as they are."""
    if np.issubdtype(array.dtype, np.floating) or array.dtype == np.dtype(ml_dtypes.bfloat16):
        return array.astype(np.float32)
    return array


def _failure(logs: Path, chips: int, rc: int) -> str:
    for rank in range(chips):
        for err in sorted(logs.rglob(f"{rank}/stderr.log")):
            lines = [
                line.strip()
                for line in err.read_text(errors="replace").splitlines()
                if line.strip() and "Warning" not in line and not line.startswith(" ")
            ]
            if lines:
                return f"rank {rank}: {lines[-1]}"
    return f"torchrun exit status {rc}"


def _deployment(module: ModuleOp) -> Deployment:
    dep = deployment_of(module)
    if dep is None:
        raise BackendFailed("the module is no deployment over a mesh (its entry has no placements)")
    return dep


def _torchrun(folder: Path, chips: int, device: str) -> None:
    """Every rank of the printed program in `folder`, each on its own files; a rank that fails,
    or a run that hangs (its whole process group is killed), raises BackendFailed."""
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        f"--nproc_per_node={chips}",
        "--log-dir",
        str(folder / "logs"),
        "--redirects",
        "2",
        str(folder / "program.py"),
        "--inputs",
        str(folder / "in.{rank}.npz"),
        "--out",
        str(folder / "out.{rank}.npz"),
        "--device",
        device,
    ]
    env = dict(os.environ, TRITON_INTERPRET="1" if device == "cpu" else "0")
    # A session of its own: on a hang, the ranks torchrun started are killed with it.
    proc = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    try:
        rc = proc.wait(timeout=TIMEOUT_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        raise BackendFailed(f"the {chips} ranks did not finish in {TIMEOUT_S} s") from None
    if rc != 0:
        raise BackendFailed(_failure(folder / "logs", chips, rc))


def run_chips(module: ModuleOp, stacks: list[np.ndarray], device: str) -> list[np.ndarray]:
    """The entry's outputs as stacks, every chip's printed program run by torchrun: Triton's CPU
    interpreter over gloo on "cpu", compiled kernels over NCCL on "cuda"."""
    emitted = emit_module(module)
    shape = _deployment(module).mesh_shape
    chips = int(np.prod(shape))
    with tempfile.TemporaryDirectory(prefix="spatial-triton-mesh-") as name:
        folder = Path(name)
        (folder / "program.py").write_text(emitted.source)
        for rank in range(chips):
            chip = np.unravel_index(rank, shape)
            feed = {n: _as_file(s[chip]) for n, s in zip(emitted.inputs, stacks, strict=True)}
            np.savez(folder / f"in.{rank}.npz", **feed)
        _torchrun(folder, chips, device)
        per_chip = []
        for rank in range(chips):
            with np.load(folder / f"out.{rank}.npz") as f:
                per_chip.append([f[n] for n in emitted.outputs])
    outs = []
    for i, n in enumerate(emitted.outputs):
        dt = emitted.numpy_dtypes[n]
        stack = np.stack([chip[i] for chip in per_chip]).reshape(*shape, *per_chip[0][i].shape)
        outs.append(stack.astype(ml_dtypes.bfloat16 if dt == "bfloat16" else np.dtype(dt)))
    return outs


def run_interpreted_chips(module: ModuleOp, stacks: list[np.ndarray]) -> list[np.ndarray]:
    """The entry's outputs as stacks: every chip under Triton's CPU interpreter, gloo between."""
    require()
    return run_chips(module, stacks, "cpu")


def run_native_chips(module: ModuleOp, stacks: list[np.ndarray]) -> list[np.ndarray]:
    """The entry's outputs as stacks: every chip on its own CUDA GPU, NCCL between."""
    torch = require()
    chips = _deployment(module).chips
    if torch.cuda.device_count() < chips:
        raise BackendUnavailable(
            f"the deployment runs on {chips} CUDA GPUs, one per chip; "
            f"{torch.cuda.device_count()} here (--backend triton-interpret runs it on the CPU)"
        )
    return run_chips(module, stacks, "cuda")


def run_interpreted_mesh(module: ModuleOp, whole: list[np.ndarray]) -> list[np.ndarray]:
    """The deployment's WHOLE outputs from its WHOLE inputs, every chip under the interpreter."""
    dep = _deployment(module)
    return unshard_outputs(dep, run_interpreted_chips(module, shard_inputs(dep, whole)))


def run_native_mesh(module: ModuleOp, whole: list[np.ndarray]) -> list[np.ndarray]:
    """The deployment's WHOLE outputs from its WHOLE inputs, every chip on its own CUDA GPU."""
    dep = _deployment(module)
    return unshard_outputs(dep, run_native_chips(module, shard_inputs(dep, whole)))
