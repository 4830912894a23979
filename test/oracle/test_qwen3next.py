"""Qwen3-Next checked from outside: a tiny Qwen3NextForCausalLM made by transformers (seeded
random weights, f32), written to GGUF as llama.cpp's converter writes it (qwen3next_gguf.py),
imported by spatial-import --dtype f32 and evaluated by our reference over a prefill of 5 tokens
from zero states and one decode step. Logits, the final hidden state, the KV caches (our K cache
holds each head's columns in the partial-rope permutation: un-permuted here), the conv states and
the Gated DeltaNet recurrent states agree with transformers' forward and its cache to 1e-5
relative; the greedy tokens are equal."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from qwen3next_gguf import write_qwen3next_gguf  # noqa: E402

from spatial_dialect.tools.frontend.next_model import (  # noqa: E402
    hf_config,
    read_next_header,
    rope_permutation,
)
from spatial_dialect.tools.frontend.weights import checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate_values  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

T, CACHE = 5, 16
IDS = [17, 250, 3, 99, 310]

SHARED = dict(
    vocab_size=320,
    hidden_size=64,
    intermediate_size=96,
    linear_key_head_dim=32,
    linear_value_head_dim=32,
    linear_conv_kernel_dim=4,
    moe_intermediate_size=32,
    shared_expert_intermediate_size=64,
    max_position_embeddings=64,
)
VARIANTS = {
    # 4 layers, full attention every 2nd; 2 key heads of 2 value heads each; GQA 4:2
    "untied": dict(
        seed=0,
        num_hidden_layers=4,
        full_attention_interval=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=32,
        linear_num_key_heads=2,
        linear_num_value_heads=4,
        num_experts=4,
        num_experts_per_tok=2,
        tie_word_embeddings=False,
    ),
    # unseen by the code's author while writing it: tied head, every 3rd layer full attention,
    # head_dim 64 (rope over 16 columns), one kv head, as many value heads as key heads
    "tied": dict(
        seed=1,
        num_hidden_layers=3,
        full_attention_interval=3,
        num_attention_heads=2,
        num_key_value_heads=1,
        head_dim=64,
        linear_num_key_heads=2,
        linear_num_value_heads=2,
        num_experts=8,
        num_experts_per_tok=3,
        tie_word_embeddings=True,
    ),
}


def tiny_model(variant: str):
    settings = dict(VARIANTS[variant])
    seed = settings.pop("seed")
    config = transformers.Qwen3NextConfig(**SHARED, **settings)
    torch.manual_seed(seed)
    model = transformers.Qwen3NextForCausalLM(config).float().eval()
    with torch.no_grad():  # every parameter random, the zero-centred norms' too
        for name, p in model.named_parameters():
            if not name.endswith("A_log"):
                p.normal_(0.0, 0.3 if p.ndim == 1 else 0.15)
    return model


BUILT: dict[str, tuple] = {}


def built(variant: str, tmp_path_factory) -> tuple:
    """(model, its GGUF, the imported deployment --dtype f32) of `variant`, built once."""
    if variant not in BUILT:
        d = tmp_path_factory.mktemp(f"qwen3next_{variant}")
        model = tiny_model(variant)
        state = {k: v.detach().float().numpy() for k, v in model.state_dict().items()}
        gguf_path = write_qwen3next_gguf(model.config, state, d / "tiny.gguf")
        program = d / "both.mlir"
        args = [str(gguf_path), "--step", "both", "--tokens", str(T), "--cache", str(CACHE)]
        assert import_main([*args, "--dtype", "f32", "-o", str(program)]) == 0
        BUILT[variant] = model, gguf_path, program
    return BUILT[variant]


@pytest.fixture(scope="module", params=sorted(VARIANTS))
def checkpoint(tmp_path_factory, request):
    return built(request.param, tmp_path_factory)


def transformers_steps(model):
    """(prefill output, decode output, cache after prefill, cache after decode)."""
    ids = torch.tensor([IDS])
    with torch.no_grad():
        pre = model(ids, use_cache=True, output_hidden_states=True)
        cache = pre.past_key_values
        snapshot = snapshot_cache(model, cache)
        nxt = pre.logits[0, -1].argmax().reshape(1, 1)
        dec = model(nxt, cache=cache, use_cache=True, output_hidden_states=True)
    return pre, dec, snapshot, snapshot_cache(model, dec.past_key_values)


def snapshot_cache(model, cache) -> dict[str, np.ndarray]:
    """Each layer's states in our layout: K/V caches rows x (heads x head_dim), the conv state's
    last K - 1 rows of the channels, the recurrent state (v_heads x dk) x dv."""
    out: dict[str, np.ndarray] = {}
    for i, kind in enumerate(model.config.layer_types):
        layer = cache.layers[i]
        if kind == "full_attention":
            for name, x in (("k", layer.keys), ("v", layer.values)):
                x = x[0].permute(1, 0, 2)  # positions x heads x head_dim
                out[f"l{i}_{name}"] = x.reshape(x.shape[0], -1).numpy().copy()
        else:
            conv = layer.conv_states[0][0].T.numpy()  # positions x channels
            out[f"l{i}_conv"] = conv[-(model.config.linear_conv_kernel_dim - 1) :].copy()
            s = layer.recurrent_states[0][0]  # v_heads x dk x dv
            out[f"l{i}_state"] = s.reshape(-1, s.shape[-1]).numpy().copy()
    return out


def unpermuted_k(config, k: np.ndarray) -> np.ndarray:
    """Our K cache rows with each head's columns back in transformers' order."""
    hd = config.head_dim
    perm = np.asarray(
        rope_permutation(hd, int(hd * config.rope_parameters["partial_rotary_factor"]))
    )
    heads = k.reshape(k.shape[0], -1, hd)
    out = np.empty_like(heads)
    out[..., perm] = heads
    return out.reshape(k.shape)


def close(got: np.ndarray, want: np.ndarray, what: str) -> None:
    err = np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)
    assert err <= 1e-5, f"{what}: relative error {err:.2e}"


def run_reference(program: Path, gguf_path: Path, fn_name: str, given: dict[str, np.ndarray]):
    module = parse_module(program.read_text())
    fn = next(f for f in module.body.ops if f.sym_name.data == fn_name)
    inputs = {**given, **checkpoint_inputs(str(gguf_path), fn, given)}
    values = evaluate_values(fn, inputs)
    return {v.name_hint: a for v, a in values.items() if v.name_hint}


def zero_states(model, prefix: str = "") -> dict[str, np.ndarray]:
    c = model.config
    conv = 2 * c.linear_num_key_heads * c.linear_key_head_dim
    conv += c.linear_num_value_heads * c.linear_value_head_dim
    out = {}
    for i, kind in enumerate(c.layer_types):
        if kind == "full_attention":
            for name in ("k_cache", "v_cache"):
                out[f"l{i}_{name}"] = np.zeros(
                    (CACHE, c.num_key_value_heads * c.head_dim), np.float32
                )
        else:
            out[f"l{i}_conv_state"] = np.zeros((c.linear_conv_kernel_dim - 1, conv), np.float32)
            rows = c.linear_num_value_heads * c.linear_key_head_dim
            out[f"l{i}_recurrent_state"] = np.zeros((rows, c.linear_value_head_dim), np.float32)
    return out


def test_prefill_then_decode_agree_with_transformers(checkpoint):
    check_prefill_then_decode(*checkpoint)


def check_prefill_then_decode(model, gguf_path: Path, program: Path) -> None:
    """`program` (--step both, --dtype f32) with the weights of `gguf_path` (a GGUF file or a
    Hugging Face directory) against transformers' `model`."""
    pre, dec, after_prefill, after_decode = transformers_steps(model)
    layer_types = model.config.layer_types

    states = zero_states(model)
    given = {**states, "prefill.ids": np.array(IDS, np.int32), "prefill.pos": np.zeros(1, np.int32)}
    ours = run_reference(program, gguf_path, "qwen3next_prefill", given)
    close(ours["logits"], pre.logits[0].numpy(), "prefill logits")
    close(ours["final"], pre.hidden_states[-1][0].numpy(), "prefill final hidden state")
    token = int(ours["token"][-1])
    assert token == int(pre.logits[0, -1].argmax())

    carried = {}
    for i, kind in enumerate(layer_types):
        if kind == "full_attention":
            kc, vc = ours[f"l{i}_kc"], ours[f"l{i}_vc"]
            close(
                unpermuted_k(model.config, kc[:T]), after_prefill[f"l{i}_k"], f"layer {i} K cache"
            )
            close(vc[:T], after_prefill[f"l{i}_v"], f"layer {i} V cache")
            assert not kc[T:].any() and not vc[T:].any()
            carried |= {f"l{i}_k_cache": kc, f"l{i}_v_cache": vc}
        else:
            conv, state = ours[f"l{i}_conv_state_next"], ours[f"l{i}_recurrent_state_next"]
            close(conv, after_prefill[f"l{i}_conv"], f"layer {i} conv state")
            close(state, after_prefill[f"l{i}_state"], f"layer {i} recurrent state")
            carried |= {f"l{i}_conv_state": conv, f"l{i}_recurrent_state": state}

    given = {
        **carried,
        "decode.ids": np.array([token], np.int32),
        "decode.pos": np.array([T], np.int32),
    }
    ours = run_reference(program, gguf_path, "qwen3next_decode", given)
    close(ours["logits"], dec.logits[0].numpy(), "decode logits")
    close(ours["final"], dec.hidden_states[-1][0].numpy(), "decode final hidden state")
    assert int(ours["token"][0]) == int(dec.logits[0, -1].argmax())
    for i, kind in enumerate(layer_types):
        if kind == "full_attention":
            close(
                unpermuted_k(model.config, ours[f"l{i}_kc"][: T + 1]),
                after_decode[f"l{i}_k"],
                f"layer {i} K",
            )
            close(ours[f"l{i}_vc"][: T + 1], after_decode[f"l{i}_v"], f"layer {i} V")
        else:
            close(ours[f"l{i}_conv_state_next"], after_decode[f"l{i}_conv"], f"layer {i} conv")
            close(ours[f"l{i}_recurrent_state_next"], after_decode[f"l{i}_state"], f"layer {i} S")


def test_compiled_chain_passes_on_the_simulator(tmp_path_factory, capsys):
    _, gguf_path, program = built("untied", tmp_path_factory)  # one compiled run suffices
    chain = "qwen3next_prefill,qwen3next_decode"
    args = [
        str(program),
        "--target",
        "wormhole_n150",
        "--chain",
        chain,
        "--weights",
        str(gguf_path),
    ]
    assert run_main(args) == 0, capsys.readouterr()
    assert "PASS" in capsys.readouterr().out


def test_config_json_gives_the_gguf_headers_dimensions(checkpoint):
    model, gguf_path, _ = checkpoint
    _, header = read_next_header(gguf_path)
    from_config = hf_config(model.config.to_dict())
    for name in [f.name for f in dataclasses.fields(header)]:
        if name in ("eps", "rope_base"):  # GGUF stores them as f32
            assert np.float32(getattr(from_config, name)) == getattr(header, name), name
        elif name not in ("path", "tensors"):
            assert getattr(from_config, name) == getattr(header, name), name
