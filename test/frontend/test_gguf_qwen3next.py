"""spatial-import of a qwen3next checkpoint without transformers: a random state dict of
transformers' names written by the oracle's converter (test/oracle/qwen3next_gguf.py, llama.cpp's
transformations). The step's layers follow full_attention_interval; q_proj's query and gate
halves and ssm_ba's b and a are load-time slices; the partial rope's permutation and A_log's
recovery from ssm_a are checked against the state dict; bad files are refused in one line."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

pytest.importorskip("gguf")

import sys  # noqa: E402

sys.path.insert(0, str(Path(__file__).parents[1] / "oracle"))
from qwen3next_gguf import random_state, write_qwen3next_gguf  # noqa: E402

from spatial_dialect.tools.frontend.next_model import rope_permutation  # noqa: E402
from spatial_dialect.tools.frontend.weights import WeightsError, checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

HD, R, D = 32, 8, 64


def config(**changes) -> SimpleNamespace:
    c = dict(
        vocab_size=320, hidden_size=D, intermediate_size=96, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, head_dim=HD, linear_num_key_heads=2,
        linear_num_value_heads=4, linear_key_head_dim=32, linear_value_head_dim=32,
        linear_conv_kernel_dim=4, num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32,
        shared_expert_intermediate_size=64, max_position_embeddings=64, rms_norm_eps=1e-6,
        tie_word_embeddings=False, full_attention_interval=2,
        rope_parameters={"rope_theta": 10000.0, "partial_rotary_factor": R / HD},
    )  # fmt: skip
    c.update(changes)
    c["layer_types"] = [
        "linear_attention" if (i + 1) % c["full_attention_interval"] else "full_attention"
        for i in range(c["num_hidden_layers"])
    ]
    return SimpleNamespace(**c)


@pytest.fixture(scope="module")
def model(tmp_path_factory):
    c = config()
    state = random_state(c)
    path = write_qwen3next_gguf(c, state, tmp_path_factory.mktemp("next") / "tiny.gguf")
    return c, state, path


def imported(path: Path, out: Path, *args: str) -> str:
    assert import_main([str(path), "--dtype", "f32", "-o", str(out), *args]) == 0
    return out.read_text()


def test_layers_follow_the_interval(model, tmp_path):
    _, _, path = model
    text = imported(path, tmp_path / "both.mlir", "--step", "both", "--tokens", "4")
    prefill, decode = text.split("func.func @qwen3next_decode")
    for step in (prefill, decode):
        assert step.count("tg.gated_delta") == 2 and step.count("tg.attention") == 2
        assert step.count("tg.moe") == 4 and step.count("tg.causal_conv") == 2
    assert "%l0_qkv = tg.matmul" in prefill and "%l1_attn = tg.attention" in prefill
    assert "%l2_core, %l2_recurrent_state_next = tg.gated_delta" in prefill
    assert (
        '%blk.1.attn_q.weight.query: tensor<64x128xf32> {gguf.tensor = "blk.1.attn_q.weight", '
        'gguf.layout = "kn", gguf.slice = array<i64: 64, 0, 32>, '
        "gguf.partial_rope = array<i64: 32, 8>}"
    ) in prefill
    assert "gguf.slice = array<i64: 4, 2, 2>" in prefill  # ssm_ba's a: per key head [b b | a a]
    assert 'gguf.value = "log(-x)"' in prefill
    assert "gguf.rope_dims = 8 : i64" in prefill
    assert "%l1_gated = tg.mul %l1_attn, %l1_gate_act" in prefill


def test_rope_permutation_puts_transformers_pairs_on_neox_pairs():
    perm = rope_permutation(HD, R)
    assert sorted(perm) == list(range(HD))
    for i in range(R // 2):
        assert (perm[i], perm[i + HD // 2]) == (i, i + R // 2)
    assert rope_permutation(HD, HD) == list(range(HD))


def test_weights_slice_permute_and_recover_a_log(model, tmp_path):
    c, state, path = model
    text = imported(path, tmp_path / "decode.mlir", "--step", "decode")
    fn = next(iter(parse_module(text).body.ops))
    got = checkpoint_inputs(str(path), fn, {"pos": np.array([3], np.int32)})
    q_proj = state["model.layers.1.self_attn.q_proj.weight"].reshape(4, 2 * HD, D)
    perm = rope_permutation(HD, R)
    query = q_proj[:, :HD][:, perm].reshape(-1, D).T
    gate = q_proj[:, HD:].reshape(-1, D).T
    np.testing.assert_array_equal(got["blk.1.attn_q.weight.query"], query)
    np.testing.assert_array_equal(got["blk.1.attn_q.weight.gate"], gate)
    k_norm = state["model.layers.1.self_attn.k_norm.weight"] + 1
    np.testing.assert_array_equal(got["blk.1.attn_k_norm.weight"][0], k_norm[perm])
    ba = state["model.layers.0.linear_attn.in_proj_ba.weight"].reshape(2, 4, D)
    np.testing.assert_array_equal(got["blk.0.ssm_ba.weight.b"], ba[:, :2].reshape(-1, D).T)
    np.testing.assert_array_equal(got["blk.0.ssm_ba.weight.a"], ba[:, 2:].reshape(-1, D).T)
    a_log = state["model.layers.0.linear_attn.A_log"]
    np.testing.assert_allclose(got["blk.0.ssm_a"][0], a_log, rtol=1e-6, atol=1e-6)
    # the rope tables: cos / sin of (3 + i) base^(-2j/r) for j < r/2, angle 0 beyond
    theta = 10000.0 ** (-2.0 * np.arange(R // 2) / R)
    want = np.concatenate([np.cos(3 * theta), np.ones(HD // 2 - R // 2)]).astype(np.float32)
    np.testing.assert_allclose(got["cos"][0], want, rtol=1e-6)
    assert not got["sin"][0, R // 2 :].any()


def refusal(capsys, path: Path, tmp_path: Path) -> str:
    assert import_main([str(path), "--step", "decode", "-o", str(tmp_path / "x.mlir")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    return err


def test_inconsistent_heads_are_refused(capsys, tmp_path):
    c = config(linear_num_value_heads=3)
    path = write_qwen3next_gguf(c, random_state(c), tmp_path / "bad.gguf")
    assert "ssm.time_step_rank is not a multiple of group_count" in refusal(capsys, path, tmp_path)


def test_a_tensor_of_another_shape_is_refused(model, capsys, tmp_path):
    c, state, _ = model
    bad = {"blk.2.ssm_conv1d.weight": np.zeros((256, 3), np.float32)}
    path = write_qwen3next_gguf(c, state, tmp_path / "bad.gguf", overrides=bad)
    err = refusal(capsys, path, tmp_path)
    assert "tensor 'blk.2.ssm_conv1d.weight' is 256x3; the metadata implies 256x4" in err


def test_a_positive_ssm_a_is_refused_by_weights(model, tmp_path):
    c, state, _ = model
    path = write_qwen3next_gguf(
        c, state, tmp_path / "bad.gguf", overrides={"blk.0.ssm_a": np.ones(4, np.float32)}
    )
    fn = next(iter(parse_module(imported(path, tmp_path / "d.mlir", "--step", "decode")).body.ops))
    with pytest.raises(WeightsError, match="'blk.0.ssm_a' must be negative"):
        checkpoint_inputs(str(path), fn, {})


def test_another_architecture_is_refused_naming_qwen3next(model, capsys, tmp_path):
    import gguf

    path = tmp_path / "mamba.gguf"
    w = gguf.GGUFWriter(str(path), "mamba")
    w.add_tensor("token_embd.weight", np.zeros((4, 32), np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    err = refusal(capsys, path, tmp_path)
    assert "architecture 'mamba' is not supported" in err and "qwen3next" in err


def test_the_first_layers_alone(model, tmp_path):
    _, _, path = model
    text = imported(path, tmp_path / "two.mlir", "--step", "prefill", "--layers", "2")
    assert text.count("tg.gated_delta") == 1 and text.count("tg.attention") == 1
    assert "blk.2." not in text and "qwen3next, 2/4 layer(s)" in text


def test_logits_and_hidden_state_as_outputs(model):
    from spatial_dialect.tools.frontend.next_model import next_checkpoint_step, read_next_header

    _, header = read_next_header(model[2])
    fn = next_checkpoint_step(header, 2, 8, 4, "f32", "step", extra=("final", "logits"))
    outputs = [t.get_shape() for t in fn.function_type.outputs.data]
    assert outputs[-2:] == [(2, 320), (2, 64)]  # logits, then the final hidden state
    assert len(outputs) == 1 + 8 + 2


def test_several_slices_concatenate_each_groups_parts():
    from xdsl.dialects.builtin import DenseArrayBase, i64

    from spatial_dialect.tools.frontend.weights import selected_rows

    fused = np.arange(2 * 6).reshape(2 * 6, 1)  # 2 groups of [a a | b | c c c]
    cut = {"gguf.slice": DenseArrayBase.from_list(i64, [6, 0, 2, 6, 3, 3])}
    np.testing.assert_array_equal(
        selected_rows("t", fused, cut)[:, 0], [0, 1, 6, 7, 3, 4, 5, 9, 10, 11]
    )
    for bad in ([6, 0], [5, 0, 2], [6, 4, 3], [6, 0, 0]):
        cut = {"gguf.slice": DenseArrayBase.from_list(i64, bad)}
        with pytest.raises(WeightsError, match="gguf.slice|not whole groups"):
            selected_rows("t", fused, cut)


def test_the_hf_namespace_reads_the_same_transforms_and_its_own():
    """hf.slice is gguf.slice's rule over a Hugging Face tensor; hf.value "1+x" is a zero-centred
    norm's effective weight; the "conv" layout is a torch Conv1d kernel as taps x channels."""
    from xdsl.dialects.builtin import DenseArrayBase, StringAttr, i64

    from spatial_dialect.tools.frontend.arguments import arrange, selected_rows

    fused = np.arange(12, dtype=np.float32).reshape(12, 1)
    cut = DenseArrayBase.from_list(i64, [6, 0, 2, 6, 3, 3])
    np.testing.assert_array_equal(
        selected_rows("t", fused, {"hf.slice": cut}, "hf"),
        selected_rows("t", fused, {"gguf.slice": cut}),
    )
    np.testing.assert_array_equal(  # another namespace's attribute is not this format's
        selected_rows("t", fused, {"gguf.slice": cut}, "hf"), fused
    )
    w = np.array([-0.5, 0.25], np.float32)
    np.testing.assert_array_equal(
        selected_rows("w", w, {"hf.value": StringAttr("1+x")}, "hf"), [0.5, 1.25]
    )
    with pytest.raises(WeightsError, match=r"hf.value 'exp\(x\)' of 'w' is not one of"):
        selected_rows("w", w, {"hf.value": StringAttr("exp(x)")}, "hf")
    kernel = np.arange(3 * 4, dtype=np.float32).reshape(3, 1, 4)  # channels x 1 x taps
    np.testing.assert_array_equal(arrange(kernel, "conv"), kernel[:, 0, :].T)
    with pytest.raises(WeightsError, match=r"channels x 1 x taps, got \[3, 4\]"):
        arrange(kernel[:, 0, :], "conv")
