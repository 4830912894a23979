"""spatial-import and spatial-run --weights on tiny GGUF files written here (nothing is
downloaded), and the Q8_0 numerics of tg against gguf.quants, bit for bit."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

gguf = pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import write_tiny  # noqa: E402

from spatial_dialect.tools.interpreters import q8_0 as gguf_quant  # noqa: E402
from spatial_dialect.tools.interpreters.reference import input_names  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import entry_function, parse_module  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

PRESETS = ["wormhole_n150", "blackhole_p150", "plasticine", "rtx3060", "h100", "h200"]
MODELS = {  # name: (arch, weight type, tied embeddings)
    "llama_f16": ("llama", "F16", False),
    "llama_q8_0": ("llama", "Q8_0", False),
    "qwen3_f16": ("qwen3", "F16", True),
    "qwen3_q8_0": ("qwen3", "Q8_0", True),
}


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("gguf")
    return {n: write_tiny(d / f"{n}.gguf", a, w, tied) for n, (a, w, tied) in MODELS.items()}


def _import(model: Path, out: Path, *extra: str) -> int:
    return import_main([str(model), "-o", str(out), *extra])


@pytest.mark.parametrize("target", PRESETS)
@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("step", ["decode", "prefill"])
def test_import_compiles_and_passes(models, tmp_path, capsys, name, target, step):
    out = tmp_path / "step.mlir"
    # Q8_0 weights stay Q8_0 (no --dequantize), activations in the type the target prefers
    # (Q8_0: bf16 on Tensix, f16 on a GPU); plasticine computes in f32
    extra = ["--dtype", "f32"] if target == "plasticine" else ["--target", target]
    assert _import(models[name], out, "--step", step, *extra) == 0
    rc = run_main([str(out), "--target", target, "--weights", str(models[name])])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "PASS" in text.splitlines()[-1]


@pytest.mark.parametrize(
    "arch, target, run",
    [
        ("qwen3", "wormhole_n150", ["--chain", "qwen3_prefill,qwen3_decode"]),
        ("qwen3", "blackhole_p150", ["--chain", "qwen3_prefill,qwen3_decode"]),
        ("llama", "plasticine", ["--entry", "llama_prefill", "--seed", "4"]),
    ],
)
def test_q8_0_drawn_inputs_pass_with_a_level_of_room(tmp_path, capsys, arch, target, run):
    """Tensix widens both Q8_0 operands to bf16, so every product differs from ggml's by about
    an ulp, which each later quantized activation may turn into a level (seed 0 measured 7.9e-2
    in qwen3's l1_kc); plasticine computes exactly in f32, but one f32 ulp that flips one level
    cascades just as well (seed 4: 3.3e-2 in llama's l1_kc, against f32's 2^-14). The outputs
    are checked with one level's room (docs/simulator.md#tolerances)."""
    model = write_tiny(tmp_path / f"{arch}_q8_0.gguf", arch, "Q8_0")
    out = tmp_path / "both.mlir"
    dtype = ["--dtype", "f32"] if target == "plasticine" else []
    assert _import(model, out, "--step", "both", *dtype) == 0
    rc = run_main([str(out), "--target", target, *run])
    text = capsys.readouterr().out
    assert rc == 0, text
    assert "+1 Q8_0 level" in text


def test_weights_are_the_checkpoint(models, tmp_path):
    out = tmp_path / "step.mlir"
    assert _import(models["qwen3_q8_0"], out, "--step", "decode", "--dequantize") == 0
    fn = next(iter(parse_module(out.read_text()).body.ops))
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    inputs = checkpoint_inputs(str(models["qwen3_q8_0"]), fn, {"pos": np.array([5], np.int32)})
    reader = gguf.GGUFReader(models["qwen3_q8_0"])
    t = next(t for t in reader.tensors if t.name == "blk.1.attn_q.weight")
    want = gguf.quants.dequantize(t.data, t.tensor_type).reshape(128, 128)
    np.testing.assert_array_equal(inputs["blk.1.attn_q.weight"], want.T)
    # tied: ONE table argument, [vocab, d] as the file stores it, read by the gather and the head
    assert "output.weight" not in inputs
    t = next(t for t in reader.tensors if t.name == "token_embd.weight")
    table = gguf.quants.dequantize(t.data, t.tensor_type).reshape(256, 128)
    np.testing.assert_array_equal(inputs["token_embd.weight"], table)
    theta = 1e6 ** (-2 * np.arange(16) / 32)
    np.testing.assert_allclose(inputs["cos"][0], np.cos(5 * theta), rtol=1e-6)


def _types(text: str) -> dict[str, str]:
    """Each argument's type, by name, in the first function of an imported module."""
    fn = entry_function(parse_module(text))
    return {n: str(a.type) for n, a in zip(input_names(fn), fn.body.block.args, strict=True)}


@pytest.mark.parametrize(
    "name, extra, activations",
    [
        ("qwen3_q8_0", [], "bf16"),  # Q8_0 alone: the target's preference, bf16 without one
        ("qwen3_q8_0", ["--target", "wormhole_n150"], "bf16"),
        ("qwen3_q8_0", ["--target", "h100"], "f16"),
        ("llama_q8_0", ["--target", "plasticine"], "f32"),
        ("qwen3_f16", ["--target", "wormhole_n150"], "f16"),  # F16 weights stay F16
        ("llama_f16", [], "f16"),
        ("qwen3_q8_0", ["--target", "h100", "--dtype", "bf16"], "bf16"),
        ("llama_q8_0", ["--dtype", "f32"], "f32"),
    ],
)
def test_llama_cpp_precision_is_the_default(models, tmp_path, name, extra, activations):
    """Weights stay in their stored format, activations compute in one 16-bit type, and the
    norm weights and rope tables stay f32 beside them (docs/tg.md#precision-llamacpps)."""
    out = tmp_path / "step.mlir"
    assert _import(models[name], out, "--step", "decode", *extra) == 0
    types = _types(out.read_text())
    d, half = 128, 16
    for norm in ("blk.0.attn_norm.weight", "blk.1.ffn_norm.weight", "output_norm.weight"):
        assert types[norm] == f"tensor<1x{d}xf32>", norm
    if name.startswith("qwen3"):
        assert types["blk.0.attn_q_norm.weight"] == "tensor<1x32xf32>"
    assert types["cos"] == types["sin"] == f"tensor<1x{half}xf32>"
    assert types["l0_k_cache"] == f"tensor<256x64x{activations}>"
    q = types["blk.0.attn_q.weight"]
    assert q == ("tensor<128x128xi8>" if "q8_0" in name else "tensor<128x128xf16>")


@pytest.mark.parametrize(
    "name, target, backend",
    [("qwen3_q8_0", "wormhole_n150", "tt-lang-sim"), ("llama_q8_0", "h100", "triton-interpret")],
)
def test_the_default_precision_runs_under_the_vendor_executors(
    models, tmp_path, capsys, name, target, backend
):
    """f32 norm weights and rope tables beside bf16 (Tensix) or f16 (h100) activations, the
    prefill then the decode on its caches, through TT-Lang's simulator and Triton's interpreter."""
    out = tmp_path / "both.mlir"
    assert _import(models[name], out, "--step", "both", "--target", target) == 0
    arch = name.split("_")[0]
    chain = ["--chain", f"{arch}_prefill,{arch}_decode", "--weights", str(models[name])]
    rc = run_main([str(out), "--target", target, "--backend", backend, *chain])
    text = capsys.readouterr().out
    assert rc == 0 and text.splitlines()[-1].startswith("PASS"), text


def test_an_unknown_target_is_one_line(models, tmp_path, capsys):
    assert (
        _import(models["llama_q8_0"], tmp_path / "o.mlir", "--step", "decode", "--target", "x") == 1
    )
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--target: unknown target 'x'" in err


def test_q8_0_weights_stay_q8_0(models, tmp_path):
    """Every Q8_0 weight is i8 values and f16 scales read by tg.matmul_q8_0 (activation q8_0);
    --dequantize declares them f32 instead."""
    out = tmp_path / "q8.mlir"
    assert _import(models["qwen3_q8_0"], out, "--step", "decode") == 0
    text = out.read_text()
    assert text.count("tg.matmul_q8_0") == 2 * 7 + 1  # 7 per layer and the (tied) LM head
    assert "tg.matmul " not in text and "tensor<128x128xf32>" not in text
    # tied: the head reads the one table, [vocab, d] blocked along d as stored, transposed
    assert "%output.weight" not in text
    assert (
        "tg.matmul_q8_0 %final, %token_embd.weight, %token_embd.weight.scales "
        'activation "q8_0" transpose_b true : (tensor<1x128xbf16>, tensor<256x128xi8>, '
        "tensor<256x4xf16>) -> tensor<1x256xbf16>"
    ) in text
    # the gather takes the id's row of values and scales and dequantizes that row only
    assert text.count("tg.dequantize_q8_0") == 1
    assert (
        "tg.dequantize_q8_0 %x.values, %x.scales axis 1 : (tensor<1x128xi8>, tensor<1x4xf16>) "
        "-> tensor<1x128xbf16>"
    ) in text
    assert _import(models["qwen3_q8_0"], out, "--step", "decode", "--dequantize") == 0
    text = out.read_text()
    assert "tg.matmul_q8_0" not in text
    assert "tg.matmul %final, %token_embd.weight transpose_b true" in text


def test_q8_0_parts_are_the_checkpoint(models, tmp_path):
    out = tmp_path / "step.mlir"
    assert _import(models["llama_q8_0"], out, "--step", "decode") == 0
    fn = next(iter(parse_module(out.read_text()).body.ops))
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    inputs = checkpoint_inputs(str(models["llama_q8_0"]), fn, {"pos": np.array([0], np.int32)})
    reader = gguf.GGUFReader(models["llama_q8_0"])
    t = next(t for t in reader.tensors if t.name == "blk.0.ffn_down.weight")
    want = gguf.quants.dequantize(t.data, t.tensor_type).reshape(128, 256)
    v, s = inputs["blk.0.ffn_down.weight"], inputs["blk.0.ffn_down.weight.scales"]
    assert v.dtype == np.int8 and s.dtype == np.float16 and v.shape == (256, 128)
    np.testing.assert_array_equal(gguf_quant.dequantize(v, s, axis=0), want.T)


def test_header_only_and_errors(models, tmp_path, capsys):
    out = tmp_path / "x.mlir"
    # not a GGUF file, and a truncated one: one line, exit 1, no traceback
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf file at all")
    assert _import(bad, out, "--step", "decode") == 1
    err = capsys.readouterr().err
    assert err.startswith("spatial-import: error:") and "Traceback" not in err
    data = models["llama_f16"].read_bytes()
    for cut in (16, 200, len(data) // 3):
        bad.write_bytes(data[:cut])
        assert _import(bad, out, "--step", "decode") == 1
        err = capsys.readouterr().err
        assert err.startswith("spatial-import: error:") and err.count("\n") == 1, err
    assert _import(tmp_path / "missing.gguf", out, "--step", "decode") == 1


def test_unsupported_type_refused_by_name(tmp_path, capsys):
    path = tmp_path / "q4.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    for key, v in [("block_count", 1), ("embedding_length", 64), ("feed_forward_length", 64)]:
        w.add_uint32(f"llama.{key}", v)
    w.add_head_count(2)
    w.add_head_count_kv(2)
    rng = np.random.default_rng(0)
    q4 = gguf.quants.quantize(
        rng.standard_normal((64, 64)).astype(np.float32), gguf.GGMLQuantizationType.Q4_0
    )
    w.add_tensor("token_embd.weight", np.zeros((32, 64), np.float16))
    for n in ["attn_q", "attn_k", "attn_v", "attn_output", "ffn_gate", "ffn_up", "ffn_down"]:
        w.add_tensor(f"blk.0.{n}.weight", q4, raw_dtype=gguf.GGMLQuantizationType.Q4_0)
    for n in ["blk.0.attn_norm.weight", "blk.0.ffn_norm.weight", "output_norm.weight"]:
        w.add_tensor(n, np.ones(64, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    assert _import(path, tmp_path / "o.mlir", "--step", "decode") == 1
    err = capsys.readouterr().err
    assert "Q4_0" in err and "F32, F16, BF16, Q8_0" in err


@pytest.mark.parametrize("shape", [(4, 64), (3, 256), (64, 32)])
def test_q8_0_numerics_bit_for_bit(shape):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal(shape) * 3).astype(np.float32)
    x[0, :32] = 0  # a zero block
    raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q8_0)
    values, scales = gguf_quant.quantize(x, axis=1, rule="ref")  # gguf follows the ref rule
    blocks = raw.reshape(shape[0], -1, 34)
    np.testing.assert_array_equal(scales, blocks[..., :2].copy().view(np.float16)[..., 0])
    np.testing.assert_array_equal(values, blocks[..., 2:].copy().view(np.int8).reshape(shape))
    want = gguf.quants.dequantize(raw, gguf.GGMLQuantizationType.Q8_0)
    got = gguf_quant.dequantize(values, scales, axis=1)
    assert got.dtype == want.dtype and np.array_equal(got.view(np.uint32), want.view(np.uint32))
    # along axis 0 (a K x N weight): the same blocks, transposed
    np.testing.assert_array_equal(gguf_quant.dequantize(values.T, scales.T, axis=0), want.T)


def _reproducer() -> np.ndarray:
    """Issue 25's block: 0.6414374 * (127 / 2.29472) is 35.499996 in f32, and
    0.6414374 * (1 / (2.29472 / 127)) is exactly 35.5."""
    x = np.zeros((1, 32), np.float32)
    x[0, :2] = [2.29472, 0.6414374]
    return x


def test_q8_0_rules_on_the_reproducer_block():
    x = _reproducer()
    x86, _ = gguf_quant.quantize(x, axis=1, rule="x86")
    ref, _ = gguf_quant.quantize(x, axis=1, rule="ref")
    assert list(x86[0, :2]) == [127, 35]  # llama.cpp on x86 (AVX2 quantize_row_q8_0)
    assert list(ref[0, :2]) == [127, 36]  # quantize_row_q8_0_ref
    raw = gguf.quants.quantize(x, gguf.GGMLQuantizationType.Q8_0)  # the outside oracle of ref
    assert list(raw.view(np.int8)[0, 2:4]) == [127, 36]
    assert np.array_equal(gguf_quant.quantize(x, axis=1)[0], x86)  # x86 is the default


def test_q8_0_x86_rule_by_hand():
    """The x86 rule against hand-computed blocks: ties to even where x * (127 / max|x|) is an
    exact half (max|x| = 127: the multiplier is 1), and a zero block stays zero."""
    x = np.zeros((2, 32), np.float32)
    x[0, :6] = [127.0, 0.5, 1.5, 2.5, -2.5, -3.5]
    want = np.zeros((2, 32), np.int8)
    want[0, :6] = [127, 0, 2, 2, -2, -4]  # half to even (roundf: 1, 2, 3, -3, -4)
    values, scales = gguf_quant.quantize(x, axis=1, rule="x86")
    np.testing.assert_array_equal(values, want)
    assert scales[0, 0] == np.float16(1.0) and scales[1, 0] == 0
    ref, _ = gguf_quant.quantize(x, axis=1, rule="ref")
    assert list(ref[0, :6]) == [127, 1, 2, 3, -3, -4]


def test_matmul_q8_0_reference():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 64)).astype(np.float32)
    wv, ws = gguf_quant.quantize(rng.standard_normal((64, 5)).astype(np.float32), axis=0)
    wf = gguf_quant.dequantize(wv, ws, axis=0)
    np.testing.assert_array_equal(gguf_quant.matmul_q8_0(a, wv, ws, "float"), a @ wf)
    for activation, rule in gguf_quant.RULES.items():
        _check_matmul_q8_0(a, wv, ws, wf, activation, rule)


def _check_matmul_q8_0(a, wv, ws, wf, activation: str, rule: str) -> None:
    qa, da = gguf_quant.quantize(a, axis=1, rule=rule)
    # ggml_vec_dot_q8_0_q8_0, written out as a scalar loop
    want = np.zeros((3, 5), np.float32)
    for i in range(3):
        for j in range(5):
            s = np.float32(0)
            for b in range(2):
                sumi = int(
                    np.dot(
                        qa[i, 32 * b : 32 * b + 32].astype(np.int64),
                        wv[32 * b : 32 * b + 32, j].astype(np.int64),
                    )
                )
                s = np.float32(s + np.float32(sumi) * (np.float32(da[i, b]) * np.float32(ws[b, j])))
            want[i, j] = s
    np.testing.assert_array_equal(gguf_quant.matmul_q8_0(a, wv, ws, activation), want)
    assert np.abs(want - a @ wf).max() < 0.02 * np.abs(want).max()


# ── One deployment: --step both, compiled together, run as a chain ───────────────────────────

BOTH = ["llama_q8_0", "qwen3_q8_0"]
CHAIN = {"llama": "llama_prefill,llama_decode", "qwen3": "qwen3_prefill,qwen3_decode"}


def _both(models, tmp_path, name: str, *extra: str) -> Path:
    out = tmp_path / "both.mlir"
    assert _import(models[name], out, "--step", "both", *extra) == 0
    return out


def test_both_is_one_module_of_prefill_and_decode(models, tmp_path):
    """The weights and caches keep their names in both functions (one tensor each); each step's
    own inputs are prefixed by the step, since they differ in shape."""
    module = parse_module(_both(models, tmp_path, "qwen3_q8_0").read_text())
    prefill, decode = module.body.ops
    assert (prefill.sym_name.data, decode.sym_name.data) == ("qwen3_prefill", "qwen3_decode")
    args = [{a.name_hint: a.type for a in f.body.block.args} for f in (prefill, decode)]
    shared = args[0].keys() & args[1].keys()
    tied = {"token_embd.weight", "token_embd.weight.scales"}  # the gathers' and the head's
    assert {"l0_k_cache", "l1_v_cache", "blk.1.ffn_down.weight", *tied} <= shared
    assert all(args[0][n] == args[1][n] for n in shared)
    own = {n for a in args for n in a} - shared
    assert own == {f"{s}.{n}" for s in ("prefill", "decode") for n in ("ids", "pos", "cos", "sin")}
    assert str(args[0]["prefill.ids"]) == "tensor<8xi32>"
    assert str(args[1]["decode.ids"]) == "tensor<1xi32>"
    # --weights computes each step's rope tables from its own position
    from spatial_dialect.tools.frontend.weights import checkpoint_inputs

    theta = 1e6 ** (-2 * np.arange(16) / 32)
    for f, step, pos in ((prefill, "prefill", 3), (decode, "decode", 11)):
        given = {f"{step}.pos": np.array([pos], np.int32)}
        cos = checkpoint_inputs(str(models["qwen3_q8_0"]), f, given)[f"{step}.cos"]
        np.testing.assert_allclose(cos[0], np.cos(pos * theta), rtol=1e-2, atol=1e-2)


def _compiled(path: Path, target: str):
    from spatial_dialect.passes.pipeline import compile_module

    return compile_module(path.read_text(), target=target)


@pytest.mark.parametrize("target", PRESETS)
@pytest.mark.parametrize("name", BOTH)
def test_both_compiles_with_one_cache_layout(models, tmp_path, name, target):
    """Compiled together, the cache prefill writes is the cache decode reads: each is one DRAM
    tensor in one layout in every section of both functions, recorded as agreed, and no section
    makes a twin of it (no bridge between the two programs)."""
    from spatial_dialect import sp
    from spatial_dialect.tools.emit.report import section_functions

    extra = ["--dtype", "f32"] if target == "plasticine" else []
    module = _compiled(_both(models, tmp_path, name, *extra), target)
    agreed = module.attributes["sp.agreed"].data
    owner = section_functions(module)
    arch = name.split("_")[0]
    for cache in ("l0_k_cache", "l0_v_cache", "l1_k_cache", "l1_v_cache"):
        assert agreed[cache].data == f"tiled: @{arch}_prefill, @{arch}_decode"
        seen = {
            (owner[p], t.role.data.value, t.layout.data.value)
            for p in module.walk()
            if isinstance(p, sp.ProgramOp)
            for t in p.ops_of(sp.TensorOp)
            if t.sym_name.data.startswith(cache)
        }
        assert {layout for *_, layout in seen} == {"tiled"}, seen
        assert (f"{arch}_prefill", "output", "tiled") in seen  # prefill's scatter writes it
        assert (f"{arch}_decode", "input", "tiled") in seen  # decode's attention reads it
        twins = [p.sym_name.data for p in module.walk() if isinstance(p, sp.ProgramOp)]
        assert not [n for n in twins if n.startswith(f"{cache}__")]


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150", "h100"])
@pytest.mark.parametrize(
    "name, weights",
    # Drawn inputs for the F16 models: a Q8_0 weight's drawn i8 values and f16 scales are not
    # yet scaled like a checkpoint's (tools/interpreters/inputs.py draws them as plain integers and floats).
    [("llama_q8_0", True), ("qwen3_q8_0", True), ("llama_f16", False), ("qwen3_f16", False)],
)
def test_prefill_then_decode_passes(models, tmp_path, capsys, name, weights, target):
    """spatial-run --chain: the prefill, then the decode on the caches the simulated prefill
    wrote, each equal to the reference chained the same way."""
    path = _both(models, tmp_path, name)
    extra = ["--weights", str(models[name])] if weights else []
    rc = run_main([str(path), "--target", target, "--chain", CHAIN[name.split("_")[0]], *extra])
    lines = capsys.readouterr().out.splitlines()
    assert rc == 0, "\n".join(lines)
    heads = [line for line in lines if line.startswith("spatial-run: @")]
    assert len(heads) == 2 and ", 5 fed and " in heads[1], heads
    assert lines[-1] == "PASS: 10 output(s) within tolerance"


def test_a_bad_checkpoint_is_one_line(models, tmp_path, capsys):
    """spatial-run --weights with a checkpoint that does not fit: a tensor type spatial-import
    does not read (Q4_0), a tensor the program names that the file lacks (a llama file for a
    qwen3 program), a tensor of another shape (another FFN width): one line, exit 1."""
    program = tmp_path / "step.mlir"
    assert _import(models["qwen3_f16"], program, "--step", "decode") == 0
    cases = {
        "q4_0": (write_tiny(tmp_path / "q4.gguf", "qwen3", "Q4_0", True), "Q4_0"),
        "names": (models["llama_f16"], "has no tensor 'blk.0.attn_q_norm.weight'"),
        "shapes": (
            write_tiny(tmp_path / "ffn.gguf", "qwen3", "F16", True, ffn=384),
            "the function declares (128, 256)",
        ),
    }
    for path, says in cases.values():
        rc = run_main([str(program), "--target", "h100", "--weights", str(path)])
        out, err = capsys.readouterr()
        assert rc == 1 and "PASS" not in out and "FAIL" not in out
        assert err.startswith("spatial-run: error: --weights:") and err.count("\n") == 1, err
        assert says in err and "Traceback" not in err
