"""Qwen3-Next from a Hugging Face directory, checked by transformers: a tiny Qwen3NextForCausalLM
saved by transformers itself (save_pretrained: fused in_proj_qkvz and in_proj_ba, the conv
kernel channels x 1 x taps, A_log, zero-centred norm weights stored as w, one tensor per expert),
imported by `spatial-import DIR --dtype f32` and filled by `spatial-run --weights DIR`'s loader.
The prefill of 5 tokens from zero states and one decode step agree with transformers' forward
and cache as the GGUF path's test checks them (test_qwen3next.check_prefill_then_decode:
logits, final hidden state, K/V caches un-permuted, conv and recurrent states within 1e-5
relative, equal greedy tokens); one compiled chain runs on our simulator for wormhole_n150; and
what the step does not express is refused in one line."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

sys.path.insert(0, str(Path(__file__).parent))
from checkpoints import Tiny, hf_checkpoint, model  # noqa: E402
from test_qwen3next import CACHE, T, check_prefill_then_decode, tiny_model  # noqa: E402

from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

BUILT: dict[str, tuple] = {}


def built(variant: str, tmp_path_factory) -> tuple:
    """(model, its HF directory, the imported deployment --dtype f32) of `variant`: "seen" is
    checkpoints.py's tiny qwen3next (4 layers, one full attention, 2 key heads of 2 value heads,
    8 experts); "unseen" test_qwen3next's tied variant (every 3rd layer full attention, one KV
    head, as many value heads as key heads, 8 experts of which 3 a token)."""
    if variant not in BUILT:
        d = tmp_path_factory.mktemp(f"qwen3next_hf_{variant}")
        if variant == "seen":
            m, path = model(Tiny("qwen3next")), hf_checkpoint(d / "hf", Tiny("qwen3next"))
        else:
            m, path = tiny_model("tied"), d / "hf"
            m.save_pretrained(path)
        program = d / "both.mlir"
        args = [str(path), "--step", "both", "--tokens", str(T), "--cache", str(CACHE)]
        assert import_main([*args, "--dtype", "f32", "-o", str(program)]) == 0
        BUILT[variant] = m, path, program
    return BUILT[variant]


@pytest.mark.parametrize("variant", ["seen", "unseen"])
def test_prefill_then_decode_agree_with_transformers(tmp_path_factory, variant):
    check_prefill_then_decode(*built(variant, tmp_path_factory))


def test_the_arguments_name_the_hf_tensors_and_transforms(tmp_path_factory):
    _, _, program = built("seen", tmp_path_factory)
    text = program.read_text()
    assert "tokenizer tokenizer.json" in text.splitlines()[0]
    qkvz = "model.layers.0.linear_attn.in_proj_qkvz.weight"
    # per key head [q 32 | k 32 | v 2 x 32 | z 2 x 32]: [q | k | v] of both heads, then z
    assert (
        f'%{qkvz}.qkv: tensor<128x256xf32> {{hf.tensor = "{qkvz}", hf.layout = "kn", '
        "hf.slice = array<i64: 192, 0, 32, 192, 32, 32, 192, 64, 64>}" in text
    )
    assert f'hf.tensor = "{qkvz}", hf.layout = "kn", hf.slice = array<i64: 192, 128, 64>' in text
    assert (
        'conv1d.weight: tensor<4x256xf32> {hf.tensor = "model.layers.0.linear_attn.conv1d' in text
    )
    assert 'hf.tensor = "model.layers.0.linear_attn.A_log", hf.layout = "rows"}' in text
    assert 'hf.tensor = "model.norm.weight", hf.layout = "rows", hf.value = "1+x"}' in text
    assert 'linear_attn.norm.weight", hf.layout = "rows"}' in text  # the gated norm: as stored
    assert 'hf.layout = "kn", hf.slice = array<i64: 128, 0, 64>, hf.partial_rope' in text
    assert "hf.rope_dims = 16 : i64" in text


def test_compiled_chain_passes_on_the_simulator(tmp_path_factory, capsys):
    _, path, program = built("seen", tmp_path_factory)
    args = [str(program), "--target", "wormhole_n150", "--weights", str(path)]
    assert run_main([*args, "--chain", "qwen3next_prefill,qwen3next_decode"]) == 0, (
        capsys.readouterr()
    )
    assert "PASS" in capsys.readouterr().out


def test_a_bias_the_step_does_not_add_is_refused(tmp_path_factory, tmp_path, capsys):
    """A conv1d built with bias=True (transformers' has none): refused, not ignored."""
    from safetensors.numpy import load_file, save_file

    _, path, _ = built("seen", tmp_path_factory)
    bad = tmp_path / "bias"
    shutil.copytree(path, bad)
    tensors = load_file(bad / "model.safetensors")
    tensors["model.layers.0.linear_attn.conv1d.bias"] = tensors["model.layers.0.linear_attn.A_log"]
    save_file(tensors, bad / "model.safetensors", metadata={"format": "pt"})
    capsys.readouterr()
    assert import_main([str(bad), "--step", "decode", "-o", str(tmp_path / "o.mlir")]) == 1
    err = capsys.readouterr().err
    assert err == (
        "spatial-import: error: the checkpoint has a bias "
        "'model.layers.0.linear_attn.conv1d.bias', which the step does not add\n"
    )


def _edited(src: Path, dst: Path, **changes) -> Path:
    shutil.copytree(src, dst)
    config = json.loads((dst / "config.json").read_text())
    config.update(changes)
    (dst / "config.json").write_text(json.dumps(config))
    return dst


REFUSED = {
    "linear_num_key_heads": ({"linear_num_key_heads": "2"}, "'linear_num_key_heads' must be"),
    "layer_types": (
        {"layer_types": ["full_attention"] + ["linear_attention"] * 3},
        "not every 1-th full attention",
    ),
    "partial_rotary_factor": (
        {"rope_parameters": {"rope_theta": 1e4, "partial_rotary_factor": 1.5}},
        "partial_rotary_factor",
    ),
    "rotated columns": (
        {"rope_parameters": {"rope_theta": 1e4, "partial_rotary_factor": 0.2}},
        "partial_rotary_factor 0.2 of head_dim 64 rotates 12.8 columns",
    ),
    "value heads": ({"linear_num_value_heads": 3}, "linear_num_value_heads 3 x"),
    "norm_topk_prob": ({"norm_topk_prob": False}, "norm_topk_prob false"),
    "sliding_window": ({"layer_types": ["sliding_attention"] * 4}, "sliding_attention"),
    "head_dim": ({"head_dim": 32}, "self_attn.q_proj.weight' is 512x128; config.json implies"),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_what_the_step_does_not_express_is_refused_in_one_line(
    tmp_path_factory, tmp_path, capsys, case
):
    _, path, _ = built("seen", tmp_path_factory)
    changes, message = REFUSED[case]
    bad = _edited(path, tmp_path / "bad", **changes)
    capsys.readouterr()  # what building the checkpoint printed
    assert import_main([str(bad), "--step", "decode", "-o", str(tmp_path / "o.mlir")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err, err
