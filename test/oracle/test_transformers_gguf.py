"""transformers as the oracle of the GGUF path: tiny checkpoints made by transformers itself
(test/oracle/checkpoints.py), converted to GGUF as llama.cpp's converter writes them
(test/oracle/gguf_convert.py), imported by spatial-import (`--step both --dtype f32`) and
evaluated by our reference (tools/interpreters/reference.py), against transformers' own forward.

What is compared, for llama, qwen3 (untied and tied) and qwen3moe, over a prefill of T = 5 and
17 tokens at position 0 from zero caches and one decode step fed by the prefill's caches and
its last greedy token:
- the logits (`%logits`, every row), the final hidden state (`%final`, after the final norm:
  transformers' last_hidden_state) and every K/V cache row written (transformers'
  DynamicCache; llama's K columns are un-permuted first: the converter permuted q/k rows per
  head, so our K cache holds each head's (i, i + D/2) pairs interleaved), each within 1e-5
  relative to transformers (max |ours - theirs| / max |theirs| over the tensor);
- the greedy token of every prefill row and of the decode step, equal.

An F16 file (`--dtype f32`: the weights are rounded to f16 and computed in f32) is compared with
transformers' forward of the same model whose converted-to-F16 weights (every 2-D weight but the
router, which the converter keeps F32) are rounded to f16 the same way: only the weights'
rounding differs from the F32 case, so the same 1e-5 holds.

A Q8_0 file (`--dequantize --dtype f32`: the weights dequantized exactly, no activation
quantization) is compared with transformers' forward of transformers' own dequantization of it.

transformers' own GGUF reader (`load_gguf_checkpoint`, what `from_pretrained(dir,
gguf_file=...)` runs) reads each converted file back: its model's logits equal the original's
and its tokenizer, rebuilt from the file's tokens and merges, encodes as the original does: a
second check of the converter, by code this project did not write.

Unseen checkpoints (other seeds, head dimensions, tied or not) pass the same comparison; one
compiled run on our simulator shows a converted file runs end to end.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf")
pytest.importorskip("safetensors")
pytest.importorskip("tokenizers")

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import CORPUS, Tiny, save  # noqa: E402
from checkpoints import model as tiny_model  # noqa: E402
from gguf_convert import convert, permute  # noqa: E402

from spatial_dialect.tools.frontend.weights import checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.numerics import value_type  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate_values, input_names  # noqa: E402
from spatial_dialect.tools.spatial_import import import_checkpoint  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

TOLERANCE = 1e-5
"""Relative error allowed against transformers in f32: max |ours - theirs| / max |theirs|."""

CACHE = 32
"""Rows of the imported KV caches (at least the longest prefill plus the decode step)."""


def hf_dir(path: Path, t: Tiny):
    """The tiny model of `t`, saved as a Hugging Face directory at `path`."""
    m = tiny_model(t)
    save(m, path)
    return m


def rel(ours: np.ndarray, theirs: np.ndarray) -> float:
    theirs = np.asarray(theirs, np.float64)
    return float(np.max(np.abs(np.asarray(ours, np.float64) - theirs)) / np.max(np.abs(theirs)))


def hf_cache_rows(cache, layer: int, rows: int) -> tuple[np.ndarray, np.ndarray]:
    """(K, V) of a layer as our caches hold them: rows x (kv_heads * head_dim)."""
    entry = cache.layers[layer]
    k, v = (
        x[0].transpose(0, 1).reshape(x.shape[2], -1)[:rows].numpy()
        for x in (entry.keys, entry.values)
    )
    return k, v


def transformers_run(model, ids: list[int]) -> dict:
    """transformers' prefill over `ids` from an empty DynamicCache, then one decode step of the
    prefill's last greedy token."""
    cache = transformers.DynamicCache(config=model.config)
    n = len(ids)
    with torch.no_grad():
        out = model(torch.tensor([ids]), cache=cache, use_cache=True, output_hidden_states=True)
        logits = out.logits[0].numpy()
        hidden = out.hidden_states[-1][0].numpy()
        layers = len(cache.layers)
        caches = [hf_cache_rows(cache, i, n) for i in range(layers)]
        token = int(logits[-1].argmax())
        out2 = model(
            torch.tensor([[token]]), cache=cache, use_cache=True, output_hidden_states=True
        )
        decode_caches = [hf_cache_rows(cache, i, n + 1) for i in range(layers)]
    return {
        "prefill": (logits, hidden, caches),
        "decode": (out2.logits[0].numpy(), out2.hidden_states[-1][0].numpy(), decode_caches),
        "token": token,
    }


def values_by_name(fn, inputs) -> dict[str, np.ndarray]:
    return {v.name_hint: a for v, a in evaluate_values(fn, inputs).items() if v.name_hint}


def step_values(path: Path, fn, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Every named value of one step: `given` (ids, pos, caches) and the checkpoint's tensors."""
    inputs = dict(given)
    inputs.update(checkpoint_inputs(str(path), fn, inputs))
    return values_by_name(fn, inputs)


def our_run(path: Path, ids: list[int], layers: int) -> dict:
    """Our reference over the imported deployment: the same prefill and decode (Q8_0 weights
    dequantized exactly, `--dequantize`)."""
    text = import_checkpoint(
        str(path), "both", tokens=len(ids), cache=CACHE, dtype="f32", dequantize=True
    )
    prefill, decode = parse_module(text).body.ops
    n = len(ids)
    given = {"prefill.ids": np.array(ids, np.int32), "prefill.pos": np.array([0], np.int32)}
    for name, arg in zip(input_names(prefill), prefill.body.block.args, strict=True):
        if name.endswith("_cache"):
            shape, dtype = value_type(arg)
            given[name] = np.zeros(shape, dtype)
    pv = step_values(path, prefill, given)
    token = int(pv["token"][-1])
    given = {"decode.ids": np.array([token], np.int32), "decode.pos": np.array([n], np.int32)}
    for i in range(layers):
        given[f"l{i}_k_cache"], given[f"l{i}_v_cache"] = pv[f"l{i}_kc"], pv[f"l{i}_vc"]
    dv = step_values(path, decode, given)

    def caches(v, rows):
        return [(v[f"l{i}_kc"][:rows], v[f"l{i}_vc"][:rows]) for i in range(layers)]

    return {
        "prefill": (pv["logits"], pv["final"], caches(pv, n)),
        "decode": (dv["logits"], dv["final"], caches(dv, n + 1)),
        "tokens": (pv["token"], dv["token"]),
    }


def un_permute(k: np.ndarray, kv_heads: int) -> np.ndarray:
    """Our llama K columns in transformers' order: our column j holds its column perm[j]."""
    perm = permute(np.arange(k.shape[1]), kv_heads)
    out = np.empty_like(k)
    out[:, perm] = k
    return out


def compare(model, path: Path, arch: str, ids: list[int]) -> dict[str, float]:
    """Relative errors of ours against transformers over a prefill of `ids` and one decode
    step; asserts the greedy tokens agree."""
    theirs = transformers_run(model, ids)
    layers = model.config.num_hidden_layers
    ours = our_run(path, ids, layers)
    kv = model.config.num_key_value_heads
    errors: dict[str, float] = {}
    for step in ("prefill", "decode"):
        (ol, oh, oc), (tl, th, tc) = ours[step], theirs[step]
        errors[f"{step} logits"] = rel(ol, tl)
        errors[f"{step} hidden"] = rel(oh, th)
        for i, ((ok, ov), (tk, tv)) in enumerate(zip(oc, tc, strict=True)):
            ok = un_permute(ok, kv) if arch == "llama" else ok
            errors[f"{step} l{i} K"] = rel(ok, tk)
            errors[f"{step} l{i} V"] = rel(ov, tv)
    prefill_tokens, decode_token = ours["tokens"]
    assert list(prefill_tokens) == list(theirs["prefill"][0].argmax(axis=-1))
    assert int(decode_token[0]) == int(theirs["decode"][0].argmax(axis=-1)[0])
    return errors


def corpus_ids(hf: Path, t: int) -> list[int]:
    """The first t ids of the training text, by the checkpoint's own tokenizer."""
    ids = transformers.AutoTokenizer.from_pretrained(hf)(CORPUS)["input_ids"][:t]
    assert len(ids) == t
    return ids


def assert_close(errors: dict[str, float]) -> None:
    worst = max(errors, key=errors.get)
    assert errors[worst] <= TOLERANCE, f"{worst}: {errors[worst]:.2e} relative (of {errors})"


CASES = {
    "llama": Tiny("llama"),
    "qwen3": Tiny("qwen3"),
    "qwen3_tied": Tiny("qwen3", tied=True),
    "qwen3moe": Tiny("qwen3moe"),
}


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory) -> dict[str, tuple]:
    """name: (transformers model, HF directory, F32 GGUF) of every case, made once."""
    out = {}
    for name, t in CASES.items():
        d = tmp_path_factory.mktemp(name)
        model = hf_dir(d / "hf", t)
        out[name] = (model, d / "hf", convert(d / "hf", d / f"{name}-F32.gguf", "F32"))
    return out


@pytest.mark.parametrize("t", [5, 17])
@pytest.mark.parametrize("name", sorted(CASES))
def test_f32_gguf_agrees_with_transformers(checkpoints, name, t):
    model, hf, path = checkpoints[name]
    assert_close(compare(model, path, CASES[name].arch, corpus_ids(hf, t)))


def f16_rounded(model):
    """The model with the weights an F16 conversion rounds (2-D, not the router) rounded."""
    import copy

    m = copy.deepcopy(model)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if p.ndim >= 2 and not name.endswith("mlp.gate.weight"):
                p.copy_(p.half().float())
    return m


@pytest.mark.parametrize("name", ["llama", "qwen3moe"])
def test_f16_gguf_computed_in_f32_agrees_with_the_rounded_model(checkpoints, tmp_path, name):
    model, hf, _ = checkpoints[name]
    path = convert(hf, tmp_path / f"{name}-F16.gguf", "F16")
    ids = corpus_ids(hf, 5)
    assert_close(compare(f16_rounded(model), path, CASES[name].arch, ids))


UNSEEN = {  # other seeds, head dimensions, tied or not
    "llama_hd64_tied": Tiny("llama", tied=True, seed=1, head_dim=64),
    "llama_hd16": Tiny("llama", seed=4, head_dim=16),
    "qwen3_hd32": Tiny("qwen3", seed=2, head_dim=32),
    "qwen3moe_hd64_tied": Tiny("qwen3moe", tied=True, seed=3, head_dim=64),
}


@pytest.mark.parametrize("name", sorted(UNSEEN))
def test_unseen_checkpoints_agree_with_transformers(tmp_path, name):
    t = UNSEEN[name]
    model = hf_dir(tmp_path / "hf", t)
    path = convert(tmp_path / "hf", tmp_path / "m.gguf", "F32")
    assert_close(compare(model, path, t.arch, corpus_ids(tmp_path / "hf", 5)))
    assert transformers_gguf_logits_error(model, tmp_path / "hf", path) == 0.0


def transformers_gguf_model(hf: Path, path: Path):
    """The model transformers' GGUF reader makes of the file (AutoConfig from its metadata,
    load_gguf_checkpoint's tensors: dequantized, llama's q/k un-permuted, experts unstacked).
    `from_pretrained(dir, gguf_file=...)` does the same but requires accelerate, which is not
    among the test extras. Three facts its config reader does not take from the file are given
    from the file here: head_dim (it reads qwen3's key_length not at all, and qwen3moe's only
    as head_dim), qwen3moe's moe_intermediate_size (expert_feed_forward_length) and tied
    embeddings (no output.weight); left at the class defaults they would not fit the tensors."""
    import gguf
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    reader = gguf.GGUFReader(path)
    arch = reader.fields["general.architecture"].contents()
    given = {
        "head_dim": reader.fields[f"{arch}.attention.key_length"].contents(),
        "tie_word_embeddings": "output.weight" not in {t.name for t in reader.tensors},
    }
    if arch == "qwen3moe":
        given["moe_intermediate_size"] = reader.fields[
            f"{arch}.expert_feed_forward_length"
        ].contents()
    cfg = transformers.AutoConfig.from_pretrained(hf, gguf_file=path.name, **given)
    model = transformers.AutoModelForCausalLM.from_config(cfg).to(torch.float32).eval()
    tensors = load_gguf_checkpoint(str(path), return_tensors=True, model_to_load=model)["tensors"]
    missing, unexpected = model.load_state_dict(tensors, strict=False)
    assert not unexpected and missing == (["lm_head.weight"] if cfg.tie_word_embeddings else [])
    model.tie_weights()
    return model


def transformers_gguf_logits_error(model, hf: Path, path: Path) -> float:
    """max |logits| difference over 17 tokens between the original model and transformers'
    reading of the converted F32 file (0: the file holds exactly the original's weights)."""
    shutil.copy(path, hf / path.name)
    loaded = transformers_gguf_model(hf, hf / path.name)
    ids = torch.tensor([corpus_ids(hf, 17)])
    with torch.no_grad():
        return float((model(ids).logits - loaded(ids).logits).abs().max())


@pytest.mark.parametrize("name", sorted(CASES))
def test_transformers_reads_the_converted_file_back(checkpoints, name):
    """transformers' GGUF reader, a converter this project did not write, recovers the exact
    weights from the file (logits equal), and its tokenizer from the file's tokens and merges
    encodes the text as the checkpoint's own tokenizer does."""
    model, hf, path = checkpoints[name]
    assert transformers_gguf_logits_error(model, hf, path) == 0.0
    from_file = transformers.AutoTokenizer.from_pretrained(hf, gguf_file=path.name)
    own = transformers.AutoTokenizer.from_pretrained(hf)
    assert from_file(CORPUS)["input_ids"] == own(CORPUS)["input_ids"]


def test_the_converted_file_runs_compiled(checkpoints, tmp_path, capsys):
    """One compiled run on our simulator (wormhole_n150): the converted llama file's prefill of
    the tokenizer's 5 ids at position 0 from zero caches, then the decode of transformers'
    greedy token on the caches the prefill wrote, checked against our reference."""
    model, hf, path = checkpoints["llama"]
    ids = corpus_ids(hf, 5)
    token = transformers_run(model, ids)["token"]
    out = tmp_path / "both.mlir"
    out.write_text(import_checkpoint(str(path), "both", tokens=5, cache=CACHE, dtype="f32"))
    inputs = {
        "prefill.ids": np.array(ids, np.int32),
        "prefill.pos": np.array([0], np.int32),
        "decode.ids": np.array([token], np.int32),
        "decode.pos": np.array([5], np.int32),
    }
    for i in range(model.config.num_hidden_layers):
        for c in ("k", "v"):
            kv = model.config.num_key_value_heads * model.config.head_dim
            inputs[f"l{i}_{c}_cache"] = np.zeros((CACHE, kv), np.float32)
    np.savez(tmp_path / "inputs.npz", **inputs)
    argv = [str(out), "--chain", "llama_prefill,llama_decode", "--target", "wormhole_n150"]
    rc = run_main([*argv, "--weights", str(path), "--inputs", str(tmp_path / "inputs.npz")])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "PASS" in text.splitlines()[-1]


@pytest.mark.parametrize("name", ["llama", "qwen3moe"])
def test_q8_0_file(checkpoints, tmp_path, name):
    """A Q8_0 conversion: norms and the router stay F32, every other weight (the embedding and
    the LM head included) is Q8_0, and our reading of it (`--dequantize --dtype f32`) agrees
    within 1e-5 with transformers' forward of transformers' own dequantization of the file."""
    model, hf, _ = checkpoints[name]
    path = convert(hf, hf / f"{name}-Q8_0.gguf", "Q8_0")
    import gguf

    for t in gguf.GGUFReader(path).tensors:
        kept = t.name.endswith(("_norm.weight", "ffn_gate_inp.weight"))
        assert t.tensor_type.name == ("F32" if kept else "Q8_0"), t.name
    loaded = transformers_gguf_model(hf, path)
    assert_close(compare(loaded, path, CASES[name].arch, corpus_ids(hf, 5)))


COMMON_KEYS = (
    "block_count", "context_length", "embedding_length", "feed_forward_length",
    "attention.head_count", "attention.head_count_kv", "rope.freq_base",
    "attention.layer_norm_rms_epsilon",
)  # fmt: skip
TOKENIZER_KEYS = (
    "general.quantization_version", "tokenizer.ggml.model", "tokenizer.ggml.pre",
    "tokenizer.ggml.tokens", "tokenizer.ggml.token_type", "tokenizer.ggml.merges",
    "tokenizer.ggml.eos_token_id",
)  # fmt: skip
EXPECTED_KEYS = {  # the metadata convert_hf_to_gguf.py writes for each, in its order
    "llama": (
        *(f"llama.{k}" for k in COMMON_KEYS),
        "llama.attention.key_length", "llama.attention.value_length", "general.file_type",
        "llama.vocab_size", "llama.rope.dimension_count",
    ),
    "qwen3": (
        *(f"qwen3.{k}" for k in COMMON_KEYS),
        "qwen3.attention.key_length", "qwen3.attention.value_length", "general.file_type",
    ),
    "qwen3moe": (
        *(f"qwen3moe.{k}" for k in COMMON_KEYS),
        "qwen3moe.expert_count", "qwen3moe.expert_used_count",
        "qwen3moe.attention.key_length", "qwen3moe.attention.value_length", "general.file_type",
        "qwen3moe.expert_feed_forward_length",
    ),
}  # fmt: skip


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_converter_writes_the_metadata_llama_cpp_does(checkpoints, name):
    import gguf

    model, hf, path = checkpoints[name]
    arch = CASES[name].arch
    fields = gguf.GGUFReader(path).fields
    general = ("general.architecture", "general.type", "general.name", "general.size_label")
    keys = [k for k in fields if not k.startswith("GGUF.")]
    assert keys == [*general, *EXPECTED_KEYS[arch], *TOKENIZER_KEYS]
    assert fields["general.file_type"].contents() == 0  # ALL_F32
    assert fields["tokenizer.ggml.model"].contents() == "gpt2"
    tokens = fields["tokenizer.ggml.tokens"].contents()
    types = fields["tokenizer.ggml.token_type"].contents()
    vocab = transformers.AutoTokenizer.from_pretrained(hf).get_vocab()
    assert len(tokens) == model.config.vocab_size > len(vocab)
    for token, i in vocab.items():  # the tokenizer's own ids; its one special token CONTROL
        special = token == "<|endoftext|>"
        assert (tokens[i], types[i]) == (
            token,
            gguf.TokenType.CONTROL if special else gguf.TokenType.NORMAL,
        )
    for i in range(len(vocab), len(tokens)):  # padding to the model's rows
        assert (tokens[i], types[i]) == (f"[PAD{i}]", gguf.TokenType.UNUSED)
    assert fields["tokenizer.ggml.eos_token_id"].contents() == vocab["<|endoftext|>"]
    if arch == "qwen3moe":
        assert fields["qwen3moe.expert_feed_forward_length"].contents() == 64
