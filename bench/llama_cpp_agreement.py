"""How often an imported Q8_0 checkpoint picks llama.cpp's next token: top-1 and top-5 agreement
of our logits with llama.cpp's, per precision mode (issue 25, docs/tg.md#agreement-with-llamacpp).

    .venv/bin/python bench/llama_cpp_agreement.py [--llama-python PY] [--prompts N] [--tokens T]
                                                  [--d D] [--json]

llama.cpp is llama-cpp-python (`pip install llama-cpp-python`, 0.3.36 measured); it runs in a
subprocess of `--llama-python` (default: this interpreter, or $LLAMA_CPP_PYTHON), so it may live
in a virtual environment of its own that has numpy. Nothing is downloaded: the checkpoints are
the tiny llama and qwen3 files test/frontend/tiny_gguf.py writes with llama.cpp's `gguf` writer as
its converter does (2 layers, d = 128, vocab 256, every matrix Q8_0, norms F32, tokenizer
metadata included; `--d 512`: 8 heads of 64 over 4 kv heads, ffn 1536), and the prompts are seeded
token ids.

Per checkpoint, prompt and mode, spatial-import writes the prefill step (`--tokens T`, position 0,
zero caches) and the reference (tools/interpreters/reference.py) evaluates it with the
checkpoint's tensors (tools/frontend/weights.py); our logits are its `%logits` value (one row per
prompt token), llama.cpp's those of `Llama(logits_all=True).eval(ids)` on its CPU backend. The
modes, each against llama.cpp with its default f16 KV cache and with an f32 one: the default
precision for Tensix (`--target wormhole_n150`: bf16 activations) and for a
GPU (`--target h100`: f16), and `--dtype f32` (the exact mode); in every mode the Q8_0 products
quantize their activation by llama.cpp's x86 rule.

A row agrees at top-1 where both arg-maxes are one token; a disagreement is a near tie where
llama.cpp's logit at our token is within the tolerance spatial-run grants an arg-max of our
logits' type (tools/interpreters/compare.py: rtol of the type plus one Q8_0 level, times
|max| + rms of the row) of llama.cpp's maximum. Top-5 agreement: both five largest logits are the
same set of tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "test" / "frontend"))

from tiny_gguf import Tiny, write_gguf  # noqa: E402

from spatial_dialect.tools.frontend.weights import checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.compare import rtol  # noqa: E402
from spatial_dialect.tools.interpreters.numerics import value_type  # noqa: E402
from spatial_dialect.tools.interpreters.reference import (  # noqa: E402
    evaluate_values,
    input_names,
)
from spatial_dialect.tools.spatial_import import import_checkpoint  # noqa: E402
from spatial_dialect.tools.spatial_run import entry_function, parse_module  # noqa: E402

ARCHES = ("llama", "qwen3")
MODES: dict[str, dict[str, str]] = {
    "default wormhole_n150 (bf16)": {"target": "wormhole_n150"},
    "default h100 (f16)": {"target": "h100"},
    "--dtype f32": {"dtype": "f32"},
}
"""Each mode's spatial-import options."""

LLAMA_CPP = """
import json, sys
import numpy as np
import llama_cpp
path, prompts, out, kv = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3], int(sys.argv[4])
n = max(len(p) for p in prompts)
m = llama_cpp.Llama(model_path=path, logits_all=True, n_ctx=max(64, n), n_batch=n, n_threads=2,
                    n_gpu_layers=0, verbose=False, type_k=kv, type_v=kv)
rows = []
for ids in prompts:
    m.reset()
    m.eval(ids)
    rows.append(np.array(m.scores[: len(ids)], dtype=np.float32))
np.save(out, np.stack(rows))
"""
"""The llama.cpp side, run by --llama-python: the logits of every prompt's every token."""


def llama_python() -> str:
    return os.environ.get("LLAMA_CPP_PYTHON", sys.executable)


def llama_cpp_available(python: str) -> bool:
    """Whether `python` imports llama_cpp."""
    run = subprocess.run(
        [python, "-c", "import llama_cpp, numpy"], capture_output=True, timeout=120, check=False
    )
    return run.returncode == 0


KV_TYPES = {"f32": 0, "f16": 1}
"""ggml's type ids of the KV cache types llama.cpp may keep (its default: f16)."""


def llama_cpp_logits(
    python: str, path: Path, prompts: list[list[int]], kv: str = "f16"
) -> np.ndarray:
    """llama.cpp's logits, prompts x tokens x vocab, its KV cache of type `kv`."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "logits.npy"
        subprocess.run(
            [python, "-c", LLAMA_CPP, str(path), json.dumps(prompts), str(out), str(KV_TYPES[kv])],
            check=True,
            timeout=600,
            capture_output=True,
        )
        return np.load(out)


def our_logits(path: Path, prompts: list[list[int]], mode: dict[str, str]) -> np.ndarray:
    """The reference's `%logits` of the imported prefill step, prompts x tokens x vocab, in the
    step's activation type."""
    t = len(prompts[0])
    text = import_checkpoint(str(path), "prefill", tokens=t, cache=max(64, t), **mode)
    fn = entry_function(parse_module(text))
    logits = next(r for op in fn.body.walk() for r in op.results if r.name_hint == "logits")
    rows = []
    for ids in prompts:
        inputs: dict[str, np.ndarray] = {}
        for name, arg in zip(input_names(fn), fn.body.block.args, strict=True):
            shape, dtype = value_type(arg)
            inputs[name] = np.zeros(shape, dtype)  # pos 0, zero caches
        inputs["ids"] = np.asarray(ids, np.int32)
        inputs.update(checkpoint_inputs(str(path), fn, inputs))
        rows.append(evaluate_values(fn, inputs)[logits])
    return np.stack(rows)  # in the program's type


@dataclass
class Agreement:
    arch: str
    mode: str
    kv: str  # llama.cpp's KV cache type
    rows: int
    top1: int
    near_ties: int  # top-1 disagreements within the tolerance
    top5: int
    tolerance: float
    max_gap: float  # the largest relative gap of a top-1 disagreement (0: none)
    max_err: float  # the largest |ours - llama.cpp| / (|llama.cpp| + rms of its row)


def agreement(arch: str, mode: str, kv: str, ours: np.ndarray, theirs: np.ndarray) -> Agreement:
    """Top-1 and top-5 agreement of our logits (in the program's type) with llama.cpp's."""
    tol = rtol(ours.dtype, quantized=True)
    a = ours.astype(np.float32).reshape(-1, ours.shape[-1])
    b = theirs.reshape(-1, theirs.shape[-1])
    rows = np.arange(a.shape[0])
    pick, want = a.argmax(axis=1), b.argmax(axis=1)
    wide = b.astype(np.float64)
    rms = np.sqrt(np.mean(wide * wide, axis=1))
    gap = (wide[rows, want] - wide[rows, pick]) / (np.abs(wide[rows, want]) + rms)
    differ = pick != want
    top5 = [set(np.argsort(-a[i])[:5]) == set(np.argsort(-b[i])[:5]) for i in rows]
    err = np.abs(a - wide) / (np.abs(wide) + rms[:, None])
    return Agreement(
        arch,
        mode,
        kv,
        len(rows),
        int(np.count_nonzero(~differ)),
        int(np.count_nonzero(differ & (gap <= tol))),
        int(sum(top5)),
        tol,
        float(gap[differ].max()) if differ.any() else 0.0,
        float(err.max()),
    )


def prompts_of(seed: int, count: int, tokens: int, vocab: int) -> list[list[int]]:
    rng = np.random.default_rng(seed)
    return [[int(i) for i in rng.integers(3, vocab, tokens)] for _ in range(count)]


def tiny(arch: str, d: int) -> Tiny:
    """The tiny Q8_0 checkpoint of width d (128: tiny_gguf's own; else heads of 64, ffn 3d)."""
    if d == 128:
        return Tiny(arch, "Q8_0", converter=True)
    heads = d // 64
    return Tiny(
        arch, "Q8_0", converter=True, d=d, ffn=3 * d, heads=heads, kv_heads=heads // 2, head_dim=64
    )


def measure(python: str, count: int, tokens: int, d: int, directory: Path) -> list[Agreement]:
    out = []
    for arch in ARCHES:
        path = write_gguf(directory / f"{arch}_q8_0.gguf", tiny(arch, d))
        prompts = prompts_of(0, count, tokens, 256)
        theirs = {kv: llama_cpp_logits(python, path, prompts, kv) for kv in KV_TYPES}
        for mode, options in MODES.items():
            ours = our_logits(path, prompts, options)
            out += [agreement(arch, mode, kv, ours, theirs[kv]) for kv in KV_TYPES]
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--llama-python", default=llama_python())
    parser.add_argument("--prompts", type=int, default=16)
    parser.add_argument("--tokens", type=int, default=16)
    parser.add_argument("--d", type=int, default=128, help="the checkpoints' width")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not llama_cpp_available(args.llama_python):
        print(f"llama_cpp_agreement: {args.llama_python} cannot import llama_cpp", file=sys.stderr)
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(args.llama_python, args.prompts, args.tokens, args.d, Path(tmp))
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=1))
        return 0
    print(
        f"{'model':<6} {'mode':<28} {'llama.cpp kv':<12} {'rows':>4} {'top-1':>5} {'ties':>4} "
        f"{'top-5':>5} {'tol':>6} {'max gap':>8} {'max err':>8}"
    )
    for r in results:
        print(
            f"{r.arch:<6} {r.mode:<28} {r.kv:<12} {r.rows:>4} {r.top1:>5} {r.near_ties:>4} "
            f"{r.top5:>5} {r.tolerance:>6.4f} {r.max_gap:>8.2e} {r.max_err:>8.2e}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
