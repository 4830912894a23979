"""transformers checks what `spatial-import DIR` makes of its own checkpoints.

Tiny llama, qwen3 (untied and tied) and qwen3moe directories are written by transformers
(test/oracle/checkpoints.py: save_pretrained of a seeded model). Each is imported with
`--dtype f32`, its weights filled as `spatial-run --weights DIR` fills them, and the program is
evaluated by our reference (tools/interpreters/reference.py) for a prefill of T = 5 and 17 tokens
at position 0 from zero caches, then one decode step of the prefill's greedy token on the caches
the prefill wrote. transformers' forward (its DynamicCache for the caches) is the oracle: the
logits (`%logits`), the final hidden state (`%final`: after the final rms norm, which is what
transformers' last hidden state is), every K/V cache row written so far (post-rope, post q/k
norm) agree within 1e-5 relative (to the tensor's largest magnitude), and every greedy token is
the same.

"Unseen" checkpoints vary what the tests above fixed: another seed, tied embeddings for llama,
another head_dim, three layers.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import Tiny, config, hf_checkpoint  # noqa: E402

from spatial_dialect.tools.frontend.weights import checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate_values  # noqa: E402
from spatial_dialect.tools.spatial_import import import_checkpoint  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

TOLERANCE = 1e-5
CACHE = 32

SEEN = {
    "llama": Tiny("llama"),
    "qwen3": Tiny("qwen3"),
    "qwen3_tied": Tiny("qwen3", tied=True),
    "qwen3moe": Tiny("qwen3moe"),
}


def _step(path: Path, step: str, t: int):
    text = import_checkpoint(str(path), step, tokens=t, cache=CACHE, dtype="f32")
    (fn,) = parse_module(text).ops
    return fn


def _run(path: Path, fn, ids: np.ndarray, pos: int, caches: dict[str, np.ndarray]):
    """Our reference's values of the step by name: ids at `pos` over `caches`."""
    inputs = {"ids": ids.astype(np.int32), "pos": np.array([pos], np.int32), **caches}
    inputs.update(checkpoint_inputs(str(path), fn, inputs))
    values = evaluate_values(fn, inputs)
    return {v.name_hint: a for v, a in values.items() if v.name_hint}


def _close(ours: np.ndarray, theirs: np.ndarray, what: str) -> None:
    theirs = np.asarray(theirs, np.float64)
    err = np.max(np.abs(np.asarray(ours, np.float64) - theirs)) / np.max(np.abs(theirs))
    assert err <= TOLERANCE, f"{what}: relative error {err:.3g} > {TOLERANCE}"


def _cache_rows(cache, layer: int) -> tuple[np.ndarray, np.ndarray]:
    """transformers' layer caches as ours: rows = positions, columns head-major."""
    lay = cache.layers[layer]
    k, v = (x[0].transpose(0, 1).reshape(x.shape[2], -1).numpy() for x in (lay.keys, lay.values))
    return k, v


def _check_caches(ours: dict, cache, layers: int, rows: int, when: str) -> None:
    """Every layer's K and V cache: the `rows` written so far as transformers', the rest zero."""
    for i in range(layers):
        for c, theirs in zip("kv", _cache_rows(cache, i), strict=True):
            mine = ours[f"l{i}_{c}c"]
            _close(mine[:rows], theirs, f"{when} layer {i} {c} cache")
            assert not mine[rows:].any(), f"{when}: rows past the written ones stay zero"


def check_against_transformers(path: Path, layers: int, t: int, seed: int = 0) -> None:
    model = transformers.AutoModelForCausalLM.from_pretrained(path, dtype=torch.float32).eval()
    vocab = model.config.vocab_size
    ids = np.random.default_rng(seed).integers(0, vocab, size=t)
    kv = model.config.num_key_value_heads * model.config.head_dim
    zeros = np.zeros((CACHE, kv), np.float32)
    caches = {f"l{i}_{c}_cache": zeros for i in range(layers) for c in "kv"}

    ours = _run(path, _step(path, "prefill", t), ids, 0, caches)
    with torch.no_grad():
        out = model(torch.tensor(ids[None]), use_cache=True, output_hidden_states=True)
    _close(ours["logits"], out.logits[0].numpy(), "prefill logits")
    _close(ours["final"], out.hidden_states[-1][0].numpy(), "prefill final hidden state")
    assert list(ours["token"]) == list(out.logits[0].argmax(-1).numpy()), "prefill tokens"
    _check_caches(ours, out.past_key_values, layers, t, "prefill")

    # one decode step: the prefill's last greedy token, at position t, over the caches it wrote
    token = np.array([ours["token"][-1]])
    caches = {f"l{i}_{c}_cache": ours[f"l{i}_{c}c"] for i in range(layers) for c in "kv"}
    dec = _run(path, _step(path, "decode", 1), token, t, caches)
    with torch.no_grad():
        out = model(
            torch.tensor(token[None]),
            past_key_values=out.past_key_values,
            use_cache=True,
            output_hidden_states=True,
        )
    _close(dec["logits"], out.logits[0].numpy(), "decode logits")
    _close(dec["final"], out.hidden_states[-1][0].numpy(), "decode final hidden state")
    assert list(dec["token"]) == list(out.logits[0].argmax(-1).numpy()), "decode token"
    _check_caches(dec, out.past_key_values, layers, t + 1, "decode")


@pytest.fixture(scope="module")
def seen(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hf")
    return {name: hf_checkpoint(root / name, tiny) for name, tiny in SEEN.items()}


@pytest.mark.parametrize("t", [5, 17])
@pytest.mark.parametrize("name", sorted(SEEN))
def test_prefill_and_decode_match_transformers(seen, name, t):
    check_against_transformers(seen[name], SEEN[name].layers, t)


def _unseen(path: Path, tiny: Tiny, shard: str | None = None, **changes) -> Path:
    """A checkpoint of `tiny` with config fields changed, written by transformers."""
    torch.manual_seed(tiny.seed)
    cfg = config(tiny)
    for k, v in changes.items():
        setattr(cfg, k, v)
    cls = transformers.AutoModelForCausalLM.from_config(cfg).__class__
    torch.manual_seed(tiny.seed)
    model = cls(cfg).to(torch.float32).eval()
    with torch.no_grad():
        for n, p in model.named_parameters():
            if "norm" in n:
                p.copy_(p + 0.1 * torch.randn_like(p))
    model.save_pretrained(path, **({"max_shard_size": shard} if shard else {}))
    return path


UNSEEN = {
    "llama_seed7": (Tiny("llama", seed=7), {}),
    "llama_tied": (Tiny("llama", tied=True, seed=3), {}),
    "qwen3_head_dim_32": (Tiny("qwen3", seed=5, layers=3), {"head_dim": 32}),
    "qwen3moe_tied_seed9": (Tiny("qwen3moe", tied=True, seed=9), {}),
    # shards of at most 200 kB and model.safetensors.index.json, as transformers writes them
    "qwen3_sharded": (Tiny("qwen3", seed=11), {"shard": "200KB"}),
}


@pytest.mark.parametrize("name", sorted(UNSEEN))
def test_unseen_checkpoints_match_transformers(tmp_path, name):
    tiny, changes = UNSEEN[name]
    path = _unseen(tmp_path / name, tiny, **changes)
    assert ("shard" in changes) == (path / "model.safetensors.index.json").is_file()
    check_against_transformers(path, tiny.layers, 17, seed=tiny.seed)


def test_a_bf16_checkpoint_computes_in_bf16_and_passes(tmp_path, capsys):
    """transformers' bf16 save: the program computes in bf16 (the tensors' type), the weights
    are the checkpoint's bf16 values, and the compiled deployment passes on Tensix."""
    from spatial_dialect.tools.spatial_run import main as run_main

    path = tmp_path / "bf16"
    model = transformers.Qwen3ForCausalLM(config(Tiny("qwen3", tied=True)))
    model.to(torch.bfloat16).save_pretrained(path)
    assert '"dtype": "bfloat16"' in (path / "config.json").read_text()
    text = import_checkpoint(str(path), "both", tokens=5, cache=CACHE)
    assert "weights BF16 computed in bf16" in text.splitlines()[0]
    (tmp_path / "both.mlir").write_text(text)
    argv = [str(tmp_path / "both.mlir"), "--target", "wormhole_n150", "--weights", str(path)]
    rc = run_main([*argv, "--chain", "qwen3_prefill,qwen3_decode"])
    out = capsys.readouterr().out
    assert rc == 0 and "PASS" in out.splitlines()[-1], out
    fn = parse_module(text).ops.first
    filled = checkpoint_inputs(str(path), fn, {"prefill.pos": np.zeros(1, np.int32)})
    table = model.model.embed_tokens.weight.detach().float().numpy()
    np.testing.assert_array_equal(filled["model.embed_tokens.weight"].astype(np.float32), table)
