"""`spatial-run --backend triton-interpret | triton`: run the module `-t triton` prints.

The sized sp module is printed as a Python module of Triton kernels (tools/backend/triton/printer.py),
written to a temporary file (Triton reads a kernel's source from its file) and imported; its
host function `run` launches the kernels in program order. `run_interpreted` does that under
TRITON_INTERPRET=1 (Triton's CPU interpreter, torch tensors on the CPU); `run_native` on the
first CUDA GPU. Inputs and outputs are numpy arrays in sp.entry order.

Missing triton/torch, or (native) no CUDA GPU: `BackendUnavailable`. A kernel Triton rejects or
that fails while running, or a runtime index out of range: `BackendFailed` with Triton's message.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.tools.backend.executors import BackendFailed, BackendUnavailable
from spatial_dialect.tools.backend.triton.printer import Emitted, emit_module

INSTALL = "the Triton backends need triton and torch: pip install -e '.[triton]'"


def require() -> Any:
    try:
        import torch  # noqa: F401
        import triton  # noqa: F401
    except ImportError as e:
        raise BackendUnavailable(f"{INSTALL} ({e})") from None
    import torch

    return torch


@contextmanager
def _interpret(on: bool):
    old = os.environ.get("TRITON_INTERPRET")
    os.environ["TRITON_INTERPRET"] = "1" if on else "0"
    try:
        yield
    finally:
        if old is None:
            os.environ.pop("TRITON_INTERPRET", None)
        else:
            os.environ["TRITON_INTERPRET"] = old


_COUNTER = [0]


def load_emitted(emitted: Emitted, directory: str | None = None) -> ModuleType:
    """Imports the printed module from a file (Triton needs the kernels' source file)."""
    _COUNTER[0] += 1
    name = f"spatial_triton_{emitted.entry}_{os.getpid()}_{_COUNTER[0]}"
    folder = Path(directory or tempfile.mkdtemp(prefix="spatial-triton-"))
    path = folder / f"{name}.py"
    path.write_text(emitted.source)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def to_torch(torch: Any, array: np.ndarray) -> Any:
    a = np.ascontiguousarray(array)
    if a.dtype == np.dtype(ml_dtypes.bfloat16):
        return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)
    return torch.from_numpy(a.copy())


def to_numpy(torch: Any, tensor: Any) -> np.ndarray:
    t = tensor.detach().cpu().contiguous()
    if t.dtype == torch.bfloat16:
        return t.view(torch.int16).numpy().view(ml_dtypes.bfloat16).copy()
    return t.numpy().copy()


def _interpreting() -> bool:
    """Whether triton was imported in interpreter mode: the mode is fixed when triton.language
    is first imported (its library functions are @jit), so a process that already imported it
    for compiling runs the interpreter in a child process instead."""
    import triton.language as tl
    from triton.runtime.interpreter import InterpretedFunction

    return isinstance(tl.zeros, InterpretedFunction)


def _run_child(emitted: Emitted, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Runs the printed module's own __main__ under TRITON_INTERPRET=1 in a child process."""
    folder = tempfile.mkdtemp(prefix="spatial-triton-")
    path = Path(folder) / "program.py"
    path.write_text(emitted.source)
    feed = {}
    for n, a in zip(emitted.inputs, inputs, strict=True):
        feed[n] = (
            a.astype(np.float32)
            if np.issubdtype(a.dtype, np.floating) or a.dtype == np.dtype(ml_dtypes.bfloat16)
            else a
        )
    np.savez(Path(folder) / "in.npz", **feed)
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [
            sys.executable,
            str(path),
            "--inputs",
            str(Path(folder) / "in.npz"),
            "--out",
            str(Path(folder) / "out.npz"),
            "--device",
            "cpu",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()
        raise BackendFailed(tail[-1] if tail else f"exit status {proc.returncode}")
    outs = []
    with np.load(Path(folder) / "out.npz") as f:
        for n in emitted.outputs:
            dt = emitted.numpy_dtypes[n]
            outs.append(f[n].astype(ml_dtypes.bfloat16 if dt == "bfloat16" else np.dtype(dt)))
    return outs


def _run(
    module: ModuleOp, inputs: list[np.ndarray], device: str, interpret: bool
) -> list[np.ndarray]:
    emitted = emit_module(module)
    with _interpret(interpret):
        torch = require()
        if interpret and not _interpreting():
            return _run_child(emitted, inputs)
        mod = load_emitted(emitted)
        named = {n: to_torch(torch, a) for n, a in zip(emitted.inputs, inputs, strict=True)}
        try:
            outs = mod.run(named, device=device)
            if device != "cpu":
                torch.cuda.synchronize()
        except IndexError as e:  # a runtime index out of range, checked before the launch
            raise BackendFailed(f"IndexOutOfRange: {e}") from None
        except Exception as e:  # noqa: BLE001 - Triton's own message is the verdict
            raise BackendFailed(f"{type(e).__name__}: {e}") from None
    return [to_numpy(torch, outs[n]) for n in emitted.outputs]


def run_interpreted(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The entry's outputs, the printed Triton module run by Triton's CPU interpreter."""
    return _run(module, inputs, "cpu", True)


def run_native(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """The entry's outputs, the printed Triton module compiled and run on a CUDA GPU."""
    torch = require()
    if _interpreting():
        raise BackendUnavailable("triton was imported in interpreter mode (TRITON_INTERPRET=1)")
    if not torch.cuda.is_available():
        raise BackendUnavailable(
            "no CUDA GPU here (torch.cuda.is_available() is False); "
            "--backend triton-interpret runs the same kernels on the CPU"
        )
    return _run(module, inputs, "cuda", False)
