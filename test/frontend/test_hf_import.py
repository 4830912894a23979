"""spatial-import DIR and spatial-run --weights DIR on tiny Hugging Face directories written
here with numpy (test/frontend/tiny_hf.py): what the program is named and carries, that it
compiles and passes on a Tensix and a GPU target, sharded checkpoints, and every refusal as one
line with exit 1. transformers' own checkpoints and numbers: test/oracle/test_transformers_hf.py."""

from __future__ import annotations

import json
import struct
import sys
import time
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from tiny_hf import safetensors_bytes, tiny_tensors, write_tiny_hf  # noqa: E402

from spatial_dialect.tools.frontend.safetensors_header import (  # noqa: E402
    SafetensorsError,
    read_header,
    tensor_data,
)
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402


def _import(model: Path, out: Path, *extra: str) -> int:
    return import_main([str(model), "-o", str(out), "--step", "decode", *extra])


def _refused(capsys, model: Path, tmp_path: Path, *needles: str, extra: tuple = ()) -> None:
    start = time.monotonic()
    assert _import(model, tmp_path / "x.mlir", *extra) == 1
    err = capsys.readouterr().err
    assert err.startswith("spatial-import: error:") and err.count("\n") == 1, err
    assert "Traceback" not in err
    for n in needles:
        assert n in err, err
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize(
    "arch, dtype, tied, target",
    [
        ("llama", "BF16", False, "wormhole_n150"),
        ("qwen3", "F16", True, "h100"),
        ("qwen3moe", "BF16", False, "wormhole_n150"),
        ("qwen3moe", "F32", True, "h100"),
    ],
)
def test_import_compiles_and_passes(tmp_path, capsys, arch, dtype, tied, target):
    model = write_tiny_hf(tmp_path / "m", arch, dtype, tied)
    out = tmp_path / "both.mlir"
    assert import_main([str(model), "-o", str(out), "--step", "both", "--tokens", "4"]) == 0
    text = out.read_text()
    elt = {"F32": "f32", "F16": "f16", "BF16": "bf16"}[dtype]
    assert f"computed in {elt}" in text.splitlines()[0]
    rc = run_main(
        [
            str(out),
            "--target",
            target,
            "--weights",
            str(model),
            "--chain",
            f"{arch}_prefill,{arch}_decode",
        ]
    )
    report = capsys.readouterr().out
    assert rc == 0, report
    assert "PASS" in report.splitlines()[-1]
    # only the ids are drawn: every weight is the checkpoint's, and a --weights chain starts from
    # zero caches at position 0
    first = report.splitlines()[0]
    assert ", 1 drawn with seed" in first and first.endswith("from zero state at position 0")


@pytest.mark.parametrize(
    "backend, target, module",
    [("tt-lang-sim", "wormhole_n150", "ttl"), ("triton-interpret", "h100", "triton")],
)
def test_vendor_executors_pass_on_an_hf_moe(tmp_path, capsys, backend, target, module):
    """The compiled deployment of a bf16 Qwen3-MoE directory, with its weights, under the vendors'
    own executors."""
    pytest.importorskip(module)
    model = write_tiny_hf(tmp_path / "m", "qwen3moe", "BF16", layers=1)
    out = tmp_path / "both.mlir"
    assert import_main([str(model), "-o", str(out), "--step", "both", "--tokens", "4"]) == 0
    chain = ["--chain", "qwen3moe_prefill,qwen3moe_decode"]
    rc = run_main(
        [str(out), "--target", target, "--backend", backend, "--weights", str(model), *chain]
    )
    report = capsys.readouterr().out
    assert rc == 0 and "PASS" in report.splitlines()[-1], report


def test_names_and_layouts(tmp_path):
    model = write_tiny_hf(tmp_path / "m", "qwen3moe", tied=True)
    out = tmp_path / "d.mlir"
    assert _import(model, out) == 0
    text = out.read_text()
    q = "%model.layers.1.self_attn.q_proj.weight: tensor<64x128xf32>"
    assert f'{q} {{hf.tensor = "model.layers.1.self_attn.q_proj.weight", hf.layout = "kn"}}' in text
    assert (
        "%model.layers.0.mlp.experts.down_proj: tensor<128x64xf32> "
        '{hf.tensor = "model.layers.0.mlp.experts.{e}.down_proj.weight", hf.layout = "experts"}'
    ) in text
    assert '%cos: tensor<1x16xf32> {hf.rope = "cos", hf.rope_theta = 1.000000e+04 : f64}' in text
    assert (
        "lm_head" not in text and "%model.embed_tokens.weight transpose_b true" in text
    )  # tied: the table, transposed
    assert "interleaved" not in text  # transformers ropes llama and qwen3 the neox way


def test_weights_are_the_checkpoint(tmp_path):
    """--save writes the inputs as filled: each the checkpoint's tensor, laid out."""
    model = write_tiny_hf(tmp_path / "m", "qwen3moe")
    out, saved = tmp_path / "d.mlir", tmp_path / "run.npz"
    assert _import(model, out) == 0
    assert (
        run_main(
            [
                str(out),
                "--target",
                "h100",
                "--weights",
                str(model),
                "--save",
                str(saved),
                "--reference-only",
            ]
        )
        == 0
    )
    inputs = np.load(saved)
    t = tiny_tensors("qwen3moe")
    key = next(k for k in inputs.files if k.endswith("model.layers.1.self_attn.k_proj.weight"))
    np.testing.assert_array_equal(inputs[key], t["model.layers.1.self_attn.k_proj.weight"].T)
    key = next(k for k in inputs.files if k.endswith("model.layers.0.mlp.experts.up_proj"))
    stack = np.concatenate(
        [t[f"model.layers.0.mlp.experts.{e}.up_proj.weight"].T for e in range(4)]
    )
    np.testing.assert_array_equal(inputs[key], stack)


def test_sharded_checkpoint_is_the_single_file_one(tmp_path):
    one = write_tiny_hf(tmp_path / "one", "qwen3")
    three = write_tiny_hf(tmp_path / "three", "qwen3", shards=3)
    assert _import(one, tmp_path / "a.mlir") == 0 and _import(three, tmp_path / "b.mlir") == 0
    a, b = ((tmp_path / f).read_text().split("\n", 1)[1] for f in ("a.mlir", "b.mlir"))
    assert a == b


def test_transformers_4_spelling_is_the_same_program(tmp_path):
    """rope_theta / rope_scaling / torch_dtype (transformers 4) mean what transformers 5's
    rope_parameters / dtype do."""
    v5 = write_tiny_hf(tmp_path / "v5", "qwen3")
    v4 = _edit_config(
        write_tiny_hf(tmp_path / "v4", "qwen3"),
        drop=("rope_parameters", "dtype"),
        rope_theta=10000.0,
        rope_scaling=None,
        torch_dtype="float32",
    )
    cfg = json.loads((v4 / "config.json").read_text())
    assert "rope_parameters" not in cfg and cfg["rope_theta"] == 10000.0
    assert _import(v5, tmp_path / "a.mlir") == 0 and _import(v4, tmp_path / "b.mlir") == 0
    a, b = ((tmp_path / f).read_text().split("\n", 1)[1] for f in ("a.mlir", "b.mlir"))
    assert a == b
    _edit_config(v4, torch_dtype="bfloat16")
    assert _import(v4, tmp_path / "c.mlir") == 1


def _edit_config(model: Path, drop: tuple[str, ...] = (), **changes) -> Path:
    """`model` with config.json's `drop` keys removed and `changes` set (None: null)."""
    cfg = json.loads((model / "config.json").read_text())
    for k in drop:
        del cfg[k]
    cfg.update(changes)
    (model / "config.json").write_text(json.dumps(cfg))
    return model


@pytest.mark.parametrize(
    "changes, needles",
    [
        (
            {"rope_parameters": {"rope_type": "llama3", "factor": 8.0, "rope_theta": 5e5}},
            ["'llama3'"],
        ),
        ({"rope_scaling": {"type": "yarn", "factor": 4.0}}, ["'yarn'", "only unscaled rope"]),
        ({"use_sliding_window": True, "sliding_window": 4096}, ["sliding window", "4096"]),
        ({"layer_types": ["sliding_attention", "full_attention"]}, ["sliding_attention"]),
        ({"attention_bias": True}, ["attention_bias"]),
        ({"mlp_bias": True}, ["mlp_bias"]),
        ({"hidden_act": "gelu"}, ["'gelu'", "silu"]),
        ({"tie_word_embeddings": True}, ["tie_word_embeddings is true", "has lm_head.weight"]),
        ({"dtype": "bfloat16"}, ["is F32", "bfloat16"]),
        ({"dtype": "int8"}, ["'int8'"]),
        ({"architectures": ["MistralForCausalLM"]}, ["MistralForCausalLM", "LlamaForCausalLM"]),
        ({"architectures": None}, ["'architectures'"]),
        ({"hidden_size": 96}, ["is 96x64", "implies 96x96"]),
        ({"num_hidden_layers": 2**40}, ["num_hidden_layers 1099511627776", "2 layer(s)"]),
        ({"vocab_size": 2**40}, ["vocab_size 1099511627776"]),
        ({"rms_norm_eps": -1e-6}, ["rms_norm_eps", "positive finite"]),
        ({"num_attention_heads": 0}, ["num_attention_heads", "positive integer"]),
        ({"num_key_value_heads": 3}, ["not a multiple of num_key_value_heads 3"]),
        ({"partial_rotary_factor": 0.5}, ["partial rotary"]),
        # values of a type nothing expects (a list or an object where a string goes)
        ({"dtype": [1]}, ["dtype [1]"]),
        ({"rope_parameters": {"rope_type": [1]}}, ["rope scaling [1]"]),
        ({"rope_scaling": {"type": {"a": 1}}}, ["rope scaling {'a': 1}"]),
        ({"layer_types": [{"a": 1}]}, ["layer_types"]),
        ({"hidden_act": [1]}, ["hidden_act [1]"]),
    ],
)
def test_unsupported_configs_refused_by_name(tmp_path, capsys, changes, needles):
    model = _edit_config(write_tiny_hf(tmp_path / "m", "llama"), **changes)
    _refused(capsys, model, tmp_path, *needles)


@pytest.mark.parametrize(
    "text, needle",
    [
        ("{", "not valid JSON"),
        ('{"hidden_size": NaN}', "non-finite number NaN"),
        ('{"a": 1, "a": 2}', "appears twice"),
        ("[1, 2]", "not a JSON object"),
        ("[" * 100000, "nests too deeply"),
        ("\xff\xfe", "not valid JSON"),
    ],
)
def test_malformed_config_json(tmp_path, capsys, text, needle):
    model = write_tiny_hf(tmp_path / "m", "llama")
    (model / "config.json").write_bytes(
        text.encode("latin-1") if text.startswith("\xff") else text.encode()
    )
    _refused(capsys, model, tmp_path, needle)


def test_checkpoint_problems(tmp_path, capsys):
    three = write_tiny_hf(tmp_path / "three", "llama", shards=3)
    (three / "model-00002-of-00003.safetensors").unlink()
    _refused(capsys, three, tmp_path, "shard 'model-00002-of-00003.safetensors'", "missing")
    empty = tmp_path / "empty"
    empty.mkdir()
    _refused(capsys, empty, tmp_path, "no config.json")
    nofile = _edit_config(write_tiny_hf(tmp_path / "nofile", "llama"))
    (nofile / "model.safetensors").unlink()
    _refused(capsys, nofile, tmp_path, "neither model.safetensors")
    mixed = write_tiny_hf(tmp_path / "mixed", "qwen3")
    t = tiny_tensors("qwen3")
    t["model.layers.0.self_attn.k_norm.weight"] = t[
        "model.layers.0.self_attn.k_norm.weight"
    ].astype(np.float16)
    (mixed / "model.safetensors").write_bytes(safetensors_bytes(t))
    _refused(capsys, mixed, tmp_path, "'model.layers.0.self_attn.k_norm.weight' is F16", "float32")
    _refused(capsys, nofile / "config.json", tmp_path, "give its directory")
    layers = write_tiny_hf(tmp_path / "layers", "llama")
    _refused(capsys, layers, tmp_path, "--layers 3", extra=("--layers", "3"))


def test_weights_refuse_a_program_from_elsewhere(tmp_path, capsys):
    model = write_tiny_hf(tmp_path / "m", "llama")
    example = Path(__file__).parents[2] / "examples" / "tiny_decode.mlir"
    assert run_main([str(example), "--target", "h100", "--weights", str(model)]) == 1
    err = capsys.readouterr().err
    assert "no argument with an hf.tensor attribute" in err and err.count("\n") == 1, err


def _header_file(
    tmp_path: Path, header: object, data: bytes = b"\0" * 16, length: int | None = None
):
    text = json.dumps(header).encode()
    p = tmp_path / "h.safetensors"
    p.write_bytes(struct.pack("<Q", len(text) if length is None else length) + text + data)
    return p


@pytest.mark.parametrize(
    "header, length, needle",
    [
        (
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
            2**40,
            "exceeds safetensors' limit",
        ),
        (
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
            10**6,
            "exceeds the file's",
        ),
        (
            {"a": {"dtype": "F12", "shape": [4], "data_offsets": [0, 16]}},
            None,
            "unknown dtype 'F12'",
        ),
        ({"a": {"dtype": "F32", "shape": [-4], "data_offsets": [0, 16]}}, None, "non-negative"),
        ({"a": {"dtype": "F32", "shape": [True], "data_offsets": [0, 4]}}, None, "non-negative"),
        (
            {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 32]}},
            None,
            "within the 16 data bytes",
        ),
        ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 16]}}, None, "needs 12"),
        ({"a": {"dtype": "F32", "shape": [2**40, 2**40], "data_offsets": [0, 16]}}, None, "needs"),
        ({"a": {"dtype": "F32", "shape": [4]}}, None, "dtype, shape and data_offsets"),
        (
            {
                "a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 12]},
                "b": {"dtype": "F32", "shape": [2], "data_offsets": [8, 16]},
            },
            None,
            "overlap",
        ),
        ({"__metadata__": {"format": 1}}, None, "__metadata__"),
        ([1], None, "not a JSON object"),
    ],
)
def test_safetensors_header_checks(tmp_path, header, length, needle):
    with pytest.raises(SafetensorsError, match=needle):
        read_header(_header_file(tmp_path, header, length=length))


def test_safetensors_reads_what_it_maps(tmp_path):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    p = tmp_path / "m.safetensors"
    p.write_bytes(safetensors_bytes({"a": a, "b": a[0].astype(np.float16)}))
    h = read_header(p)
    assert (h["a"].dtype, h["a"].shape, h["b"].shape) == ("F32", (2, 3), (3,))
    np.testing.assert_array_equal(tensor_data(h["a"]), a)
    np.testing.assert_array_equal(tensor_data(h["b"]), a[0])
