"""llama.cpp as the outside oracle of an imported Q8_0 checkpoint (issue 25): our logits pick
llama.cpp's next token on at least 95% of the rows, every other row a near tie
(bench/llama_cpp_agreement.py measures it; docs/tg.md#agreement-with-llamacpp states it).

Runs where llama_cpp imports: in the interpreter $LLAMA_CPP_PYTHON names (a virtual environment
of its own, with numpy), else in this one; skipped otherwise."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import llama_cpp_agreement as bench  # noqa: E402

PYTHON = os.environ.get("LLAMA_CPP_PYTHON")
if PYTHON is None:
    pytest.importorskip("llama_cpp")
    PYTHON = sys.executable
elif not bench.llama_cpp_available(PYTHON):
    pytest.skip(f"{PYTHON} cannot import llama_cpp", allow_module_level=True)


@pytest.fixture(scope="module", params=bench.ARCHES)
def checkpoint(request, tmp_path_factory):
    """A tiny Q8_0 checkpoint, the bench's prompts (4 of 16 tokens, seed 0: the 64 rows
    docs/tg.md states) and llama.cpp's logits of them (its default f16 KV cache, and an f32
    one)."""
    arch = request.param
    path = tmp_path_factory.mktemp(arch) / f"{arch}_q8_0.gguf"
    bench.write_gguf(path, bench.Tiny(arch, "Q8_0", converter=True))
    prompts = bench.prompts_of(0, 4, 16, 256)
    theirs = {kv: bench.llama_cpp_logits(PYTHON, path, prompts, kv) for kv in bench.KV_TYPES}
    return arch, path, prompts, theirs


@pytest.mark.parametrize("mode", list(bench.MODES))
def test_top1_agrees_with_llama_cpp(checkpoint, mode):
    arch, path, prompts, theirs = checkpoint
    ours = bench.our_logits(path, prompts, bench.MODES[mode])
    for kv, logits in theirs.items():
        a = bench.agreement(arch, mode, kv, ours, logits)
        assert a.top1 >= 0.95 * a.rows, a
        assert a.top1 + a.near_ties == a.rows, a  # every disagreement a near tie


def test_f32_mode_is_llama_cpp_with_an_f32_cache(checkpoint):
    """--dtype f32 computes what llama.cpp computes with an f32 KV cache, Q8_0 activation
    quantization included: the logits agree to a Q8_0 level at most (where an f32 rounding
    difference upstream, ggml's f32 rope angles or its sum order, moves an element across a
    level), and nearly every row to f32 precision."""
    arch, path, prompts, theirs = checkpoint
    ours = bench.our_logits(path, prompts, {"dtype": "f32"}).reshape(-1, 256)
    want = theirs["f32"].reshape(-1, 256).astype(np.float64)
    rms = np.sqrt(np.mean(want * want, axis=1, keepdims=True))
    err = (np.abs(ours - want) / (np.abs(want) + rms)).max(axis=1)
    assert err.max() < bench.rtol(np.dtype(np.float32), quantized=True), err.max()
    assert np.count_nonzero(err > 1e-5) <= len(err) // 16, err
