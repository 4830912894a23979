"""Measured against predicted kernel times on a CUDA GPU, in one go: rows of GPU calibration data.

    python bench/gpu_calibrate.py [--target h200] [--out bench/results/gpu_calibration.csv]
                                  [--reps 20] [--no-decode]

For every case (the GEMM suite below, then the decode steps) the program is compiled as
``spatial-run --backend triton`` compiles it (``spatial-pipeline{target=T}``, then ``-t triton``),
its printed module is imported, its inputs are made once on the GPU, and its ``launch`` (every
kernel of the program, in program order) is timed with ``torch.cuda.Event`` pairs: a warm-up call
(which also compiles the kernels), then ``--reps`` timed calls; the median is the measured time.
The predicted time is the sum of the sections' ``predicted`` cycles at the target's clock (what
``spatial-run`` prints as the prediction). One CSV row per case: the device as torch names it, the
target, the case, M K N for a GEMM, measured and predicted microseconds, and their ratio.

Why the whole launch and not one kernel: a decode step is many sections, each its own kernel,
and the model predicts each section alone, with no launch gaps; the measured minus the predicted
over a step of many small kernels is what launch latency costs. GEMM cases are one section.

Without a CUDA GPU (or without torch / triton) the script prints one line and exits 1 before
compiling anything. The suite is sized to finish in a few minutes on an H200 (compiles dominate).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import os
import statistics
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "gpu_calibration.csv"
# Compute-bound squares, the published calibration shapes (targets/data/gpu_gemm_throughput.csv),
# and the decode-shaped GEMVs / skinny GEMMs of Llama-3-8B (T = 1 and 128).
GEMMS: list[tuple[int, int, int]] = [
    (1024, 1024, 1024),
    (2048, 2048, 2048),
    (4096, 4096, 4096),
    (8192, 8192, 8192),
    (4224, 8192, 2048),
    (1, 4096, 4096),
    (1, 4096, 14336),
    (1, 14336, 4096),
    (128, 4096, 4096),
    (128, 4096, 14336),
]
DECODES = ["examples/tiny_decode.mlir", "examples/llama3_8b_decode.mlir"]
# The target a device name implies (the first match wins): torch.cuda.get_device_name().
DEVICE_TARGETS = [("H200", "h200"), ("H100", "h100"), ("RTX 3060", "rtx3060")]


class NoGpu(Exception):
    """No CUDA GPU, torch or triton here: the one line the script prints."""


@dataclass(frozen=True)
class Row:
    date: str
    device: str
    target: str
    case: str
    m: int | None
    k: int | None
    n: int | None
    measured_us: float
    predicted_us: float
    reps: int

    @property
    def ratio(self) -> float:
        return self.measured_us / self.predicted_us


COLUMNS = [f.name for f in fields(Row)] + ["ratio"]


def gemm_text(m: int, k: int, n: int, dtype: str = "bf16") -> str:
    """A one-op program: C = A B, M x K by K x N (as examples/generate.py writes gemm_2048.mlir)."""
    a, b, c = f"tensor<{m}x{k}x{dtype}>", f"tensor<{k}x{n}x{dtype}>", f"tensor<{m}x{n}x{dtype}>"
    return (
        f"func.func @gemm(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n"
        f"  func.return %c : {c}\n"
        "}\n"
    )


def make_row(
    device: str,
    target: str,
    case: str,
    mkn: tuple[int, int, int] | None,
    times_us: Sequence[float],
    predicted_us: float,
    date: str | None = None,
) -> Row:
    """A calibration row from the timed calls (median) and the prediction. Refuses an empty
    timing or a prediction that is not positive, naming the case."""
    if not times_us:
        raise ValueError(f"{case}: no timed calls")
    if predicted_us <= 0:
        raise ValueError(f"{case}: predicted time {predicted_us} us is not positive")
    m, k, n = mkn if mkn else (None, None, None)
    return Row(
        date or datetime.date.today().isoformat(),
        device,
        target,
        case,
        m,
        k,
        n,
        round(statistics.median(times_us), 3),
        round(predicted_us, 3),
        len(times_us),
    )


def write_rows(path: Path, rows: Sequence[Row]) -> None:
    """Appends rows to the CSV, writing the header when the file is new or empty."""
    path.parent.mkdir(parents=True, exist_ok=True)
    new = not path.exists() or path.stat().st_size == 0
    with path.open("a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({**asdict(r), "ratio": round(r.ratio, 4)})


def target_for(device: str) -> str | None:
    return next((t for key, t in DEVICE_TARGETS if key in device), None)


def require_gpu() -> tuple[object, str]:
    """torch and the device name, or NoGpu with why."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        raise NoGpu("TRITON_INTERPRET=1 is set: the native Triton backend cannot run")
    try:
        import torch
        import triton  # noqa: F401
    except ImportError as e:
        raise NoGpu(f"needs torch and triton ({e})") from None
    if not torch.cuda.is_available():
        raise NoGpu("no CUDA GPU here (torch.cuda.is_available() is False)")
    return torch, torch.cuda.get_device_name(0)


# ── the GPU side (runs only where require_gpu succeeded) ───────────────────────────────────────


def _inputs(torch, mod) -> dict:
    """Every DRAM tensor of the printed module made once on the GPU, as its run() makes them:
    inputs drawn small (floats) or zero (indices: a valid position / token), the rest zero."""
    gen = torch.Generator(device="cuda").manual_seed(0)
    t = {}
    for name, (shape, dtype, _) in mod.TENSORS.items():
        if name in mod.INPUTS and dtype.is_floating_point:
            t[name] = (torch.randn(shape, generator=gen, device="cuda") * 0.1).to(dtype)
        else:
            t[name] = torch.zeros(shape, dtype=dtype, device="cuda")
    return t


def _time(torch, call: Callable[[], None], reps: int) -> list[float]:
    call()  # compiles every kernel, warms the caches
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        call()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)  # ms -> us
    return times


def measure(torch, device: str, target: str, case: str, text: str, mkn, reps: int) -> Row:
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.targets import load_target
    from spatial_dialect.tools.backend.triton.printer import emit_module
    from spatial_dialect.tools.backend.triton.runner import load_emitted
    from spatial_dialect.tools.spatial_run import predicted_us

    module = compile_module(text, target)
    mod = load_emitted(emit_module(module))
    t = _inputs(torch, mod)
    times = _time(torch, lambda: mod.launch(t, "cuda"), reps)
    predicted = sum(us for _, us in predicted_us(module, load_target(target)))
    return make_row(device, target, case, mkn, times, predicted)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--target", help="preset to compile for (default: the device's, by its name)")
    ap.add_argument(
        "--out", type=Path, default=RESULTS, help=f"CSV to append to (default {RESULTS})"
    )
    ap.add_argument("--reps", type=int, default=20, help="timed calls per case (default 20)")
    ap.add_argument("--no-decode", action="store_true", help="the GEMM suite only")
    args = ap.parse_args(argv)
    os.environ["TRITON_INTERPRET"] = os.environ.get("TRITON_INTERPRET", "0")
    try:
        torch, device = require_gpu()
    except NoGpu as e:
        print(f"gpu_calibrate: {e}", file=sys.stderr)
        return 1
    target = args.target or target_for(device)
    if target is None:
        print(f"gpu_calibrate: no preset for {device!r}; pass --target", file=sys.stderr)
        return 1
    cases = [(f"gemm {m}x{k}x{n} bf16", gemm_text(m, k, n), (m, k, n)) for m, k, n in GEMMS]
    if not args.no_decode:
        cases += [(Path(p).stem, (ROOT / p).read_text(), None) for p in DECODES]
    rows = []
    for case, text, mkn in cases:
        try:
            row = measure(torch, device, target, case, text, mkn, args.reps)
        except Exception as e:  # noqa: BLE001 - one case failing must not lose the others' rows
            print(f"{case}: failed: {type(e).__name__}: {e}", file=sys.stderr)
            continue
        rows.append(row)
        print(
            f"{case:<32} measured {row.measured_us:>10.1f} us  predicted "
            f"{row.predicted_us:>10.1f} us  ratio {row.ratio:.2f}",
            flush=True,
        )
        write_rows(args.out, [row])
    print(f"wrote {len(rows)} rows to {args.out}")
    return 0 if len(rows) == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())
