"""spatial-import of a qwen3moe checkpoint (a tiny one written here): each layer's FFN is one
tg.moe over the router and the stacked experts (llama.cpp's qwen3moe: softmax over every expert,
the top expert_used_count, renormalized), and --weights stacks each expert's transpose."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import Tiny, write_gguf  # noqa: E402

from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

E, USED, FFN, D = 8, 2, 64, 128


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("moe")
    return {
        w: write_gguf(d / f"{w}.gguf", Tiny("qwen3moe", w, tied=w == "Q8_0", ffn=FFN))
        for w in ("F16", "Q8_0")
    }


def test_each_layer_is_one_moe(models, tmp_path):
    out = tmp_path / "decode.mlir"
    assert import_main([str(models["F16"]), "--step", "decode", "-o", str(out)]) == 0
    text = out.read_text()
    assert text.count("tg.moe") == 2 and "tg.swiglu" not in text
    assert (
        "tg.moe %l0_n2, %blk.0.ffn_gate_inp.weight, %blk.0.ffn_gate_exps.weight, "
        '%blk.0.ffn_up_exps.weight, %blk.0.ffn_down_exps.weight top_k 2 scores "softmax" '
        "renormalize true : (tensor<1x128xf16>, tensor<128x8xf16>, tensor<1024x64xf16>, "
        "tensor<1024x64xf16>, tensor<512x128xf16>) -> tensor<1x128xf16>"
    ) in text
    assert "attn_q_norm" in text  # Qwen3's per-head q/k norms


def test_weights_stack_each_experts_transpose(models, tmp_path):
    out = tmp_path / "decode.mlir"
    assert import_main([str(models["Q8_0"]), "--step", "decode", "-o", str(out)]) == 0
    fn = next(iter(parse_module(out.read_text()).body.ops))
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    inputs = checkpoint_inputs(str(models["Q8_0"]), fn, {"pos": np.array([0], np.int32)})
    reader = gguf.GGUFReader(models["Q8_0"])
    t = next(t for t in reader.tensors if t.name == "blk.1.ffn_down_exps.weight")
    down = gguf.quants.dequantize(t.data, t.tensor_type).reshape(E, D, FFN)  # E x out x in
    got = inputs["blk.1.ffn_down_exps.weight"]  # in the program's type, bf16
    for e in range(E):  # expert e's rows of K (its FFN_in) hold its in x out
        np.testing.assert_array_equal(got[e * FFN : (e + 1) * FFN], down[e].T.astype(got.dtype))
    t = next(t for t in reader.tensors if t.name == "blk.0.ffn_gate_inp.weight")
    router = gguf.quants.dequantize(t.data, t.tensor_type).reshape(E, D)
    np.testing.assert_array_equal(inputs["blk.0.ffn_gate_inp.weight"], router.T.astype(got.dtype))


@pytest.mark.parametrize(
    "weights, target",
    [
        ("F16", "wormhole_n150"),
        ("Q8_0", "blackhole_p150"),
        ("Q8_0", "h100"),
        ("Q8_0", "plasticine"),
    ],
)
def test_a_deployment_passes_with_the_checkpoint(models, tmp_path, capsys, weights, target):
    out = tmp_path / "both.mlir"
    dtype = ["--dtype", "f32"] if target == "plasticine" else []
    assert import_main([str(models[weights]), "--step", "both", *dtype, "-o", str(out)]) == 0
    chain = "qwen3moe_prefill,qwen3moe_decode"
    rc = run_main(
        [str(out), "--target", target, "--chain", chain, "--weights", str(models[weights])]
    )
    text = capsys.readouterr().out
    assert rc == 0, text
    assert text.splitlines()[-1].startswith("PASS")


def test_more_experts_used_than_there_are_is_refused(tmp_path, capsys):
    model = write_gguf(
        tmp_path / "bad.gguf", Tiny("qwen3moe", "F16", ffn=FFN, keys=(("expert_used_count", 9),))
    )
    assert import_main([str(model), "--step", "decode", "-o", str(tmp_path / "x.mlir")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["spatial-import: error: expert_used_count 9 exceeds expert_count 8"]
