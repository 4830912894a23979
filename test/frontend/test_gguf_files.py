"""spatial-import on GGUF files shaped as llama.cpp's converter (convert_hf_to_gguf.py, gguf-py)
writes them for real llama and qwen3 models, not as this project's tiny files are: each imports,
compiles and passes `spatial-run --weights`; a file spatial-import cannot take is one error line
and exit 1, naming what is wrong."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import Tiny, write_gguf  # noqa: E402

from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

PRESETS = ["wormhole_n150", "blackhole_p150", "plasticine", "rtx3060", "h100", "h200"]

CONVERTED = {  # name: the file; each runs on one preset (all six are covered, FAMILIES below)
    # metadata as the converter writes it: general.*, tokenizer.ggml.*, file_type, vocab_size
    "llama_converted_q8_0": Tiny("llama", "Q8_0", converter=True),
    "qwen3_converted_q8_0": Tiny("qwen3", "Q8_0", tied=True, converter=True),
    "qwen3_output_weight": Tiny("qwen3", "Q8_0", converter=True),
    "alignment_64": Tiny("llama", "F16", converter=True, alignment=64),
    "alignment_256_q8_0": Tiny("qwen3", "Q8_0", alignment=256),
    "llama31_rope_freqs": Tiny("llama", "F16", converter=True, rope_freqs=True),
    "llama31_rope_freqs_q8_0": Tiny("llama", "Q8_0", rope_freqs=True),
    "shuffled": Tiny("qwen3", "Q8_0", shuffled=True),
    # optional keys absent: head_dim = d / heads, vocab = token_embd's rows, rope over head_dim
    "no_key_length": Tiny("llama", "F16", omit=("attention.key_length", "attention.value_length")),
    "no_vocab_size": Tiny("llama", "BF16", converter=True, omit=("vocab_size",)),
    "no_rope_dimension_count": Tiny("qwen3", "F16", omit=("rope.dimension_count",)),
    "no_head_count_kv": Tiny("llama", "F16", kv_heads=4, omit=("attention.head_count_kv",)),
    # Qwen3's head_dim * heads != d; GQA ratios
    "qwen3_head_dim_64": Tiny("qwen3", "Q8_0", head_dim=64),
    "qwen3_head_dim_64_f16": Tiny("qwen3", "F16", head_dim=64, tied=True),
    "mha": Tiny("llama", "F16", kv_heads=4),
    "mqa": Tiny("qwen3", "Q8_0", kv_heads=1),
    "gqa_4": Tiny("llama", "Q8_0", heads=8, kv_heads=2, head_dim=32),
    # type mixes
    "q8_0_embedding_f16": Tiny("llama", "Q8_0", embd_type="F16"),
    "q8_0_embedding_f32_tied": Tiny("qwen3", "Q8_0", embd_type="F32", tied=True),
    "q8_0_output_f16": Tiny("llama", "Q8_0", output_type="F16"),
    "q8_0_output_f32": Tiny("qwen3", "Q8_0", output_type="F32"),
    "bf16_with_q8_0_ends": Tiny("qwen3", "BF16", embd_type="Q8_0", output_type="Q8_0"),
    "f32": Tiny("llama", "F32"),
    "f16_norms": Tiny("qwen3", "F16", norm_type="F16"),
    "vocab_200": Tiny("llama", "F16", vocab=200),
}

FAMILIES = {  # one file per family of variations, each on all six presets
    "metadata": Tiny(
        "llama",
        "Q8_0",
        converter=True,
        alignment=64,
        rope_freqs=True,
        shuffled=True,
        omit=("attention.key_length", "attention.value_length", "rope.dimension_count"),
        keys=(("rope.scaling.type", "none"),),
    ),  # fmt: skip
    "shapes": Tiny("qwen3", "Q8_0", converter=True, heads=4, kv_heads=1, head_dim=64),
    "types": Tiny("qwen3", "Q8_0", embd_type="F16", output_type="F32"),
}

REFUSED = {  # name: (the file, what its one error line says)
    "q4_k": (
        Tiny("llama", "Q4_K", d=256, head_dim=64, embd_type="F16"),
        "'blk.0.attn_q.weight' is of type Q4_K, which is not supported; supported: "
        "F32, F16, BF16, Q8_0",
    ),
    "q6_k_output": (
        Tiny("llama", "Q8_0", d=256, output_type="Q6_K"),
        "'output.weight' is of type Q6_K",
    ),
    "another_architecture": (Tiny("gemma", "F16"), "architecture 'gemma' is not supported"),
    "missing_tensor": (
        Tiny("llama", "F16", drop=("blk.1.ffn_up.weight",)),
        "the file has no tensor 'blk.1.ffn_up.weight'",
    ),
    "missing_embedding": (
        Tiny("qwen3", "F16", drop=("token_embd.weight",)),
        "no tensor 'token_embd.weight'",
    ),
    "missing_key": (
        Tiny("llama", "F16", omit=("embedding_length",)),
        "the GGUF metadata has no 'llama.embedding_length'",
    ),
    "missing_block_count": (
        Tiny("qwen3", "F16", omit=("block_count",)),
        "no 'qwen3.block_count'",
    ),
    "head_dim_not_implied": (
        Tiny("llama", "F16", d=96, heads=5, omit=("attention.key_length",)),
        "no 'llama.attention.key_length', and embedding_length 96 is not a multiple of "
        "head_count 5",
    ),
    "shape_disagrees": (
        Tiny("llama", "F16", shapes=(("blk.0.attn_k.weight", (128, 128)),)),
        "tensor 'blk.0.attn_k.weight' is 128x128; the metadata implies 64x128",
    ),
    "one_d_matrix": (
        Tiny("llama", "F16", shapes=(("blk.0.attn_q.weight", (128 * 128,)),)),
        "tensor 'blk.0.attn_q.weight' is 16384; the metadata implies 128x128",
    ),
    "three_d_matrix": (
        Tiny("qwen3", "F16", shapes=(("blk.1.ffn_down.weight", (2, 64, 256)),)),
        "tensor 'blk.1.ffn_down.weight' is 2x64x256; the metadata implies 128x256",
    ),
    "two_d_norm": (
        Tiny("llama", "F16", shapes=(("blk.0.attn_norm.weight", (1, 128)),)),
        "tensor 'blk.0.attn_norm.weight' is 1x128; the metadata implies 128",
    ),
    "vocab_size_disagrees": (
        Tiny("llama", "F16", converter=True, keys=(("vocab_size", 300),)),
        "'llama.vocab_size' says 300 tokens; token_embd.weight has 256 rows",
    ),
    "token_list_disagrees": (
        Tiny(
            "qwen3",
            "F16",
            converter=True,
            shapes=(("token_embd.weight", (250, 128)),),
            omit=("vocab_size",),
        ),  # fmt: skip
        "'tokenizer.ggml.tokens' says 256 tokens; token_embd.weight has 250 rows",
    ),
    "value_length_differs": (
        Tiny("llama", "F16", keys=(("attention.value_length", 64),)),
        "value_length 64 differs from key_length 32",
    ),
    "rope_scaling": (
        Tiny("llama", "F16", keys=(("rope.scaling.type", "linear"), ("rope.scaling.factor", 2.0))),
        "rope scaling 'linear' is not supported",
    ),
    "head_count_kv_not_a_divisor": (
        Tiny("llama", "F16", kv_heads=3),
        "head_count 4 is not a multiple of head_count_kv 3",
    ),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("gguf_files")
    every = {**CONVERTED, **FAMILIES, **{n: f for n, (f, _) in REFUSED.items()}}
    return {name: write_gguf(d / f"{name}.gguf", m) for name, m in every.items()}


def imported_and_run(path: Path, m: Tiny, target: str, tmp_path: Path, capsys) -> str:
    """Imports `path` (--step both; f32 for plasticine, which computes f32) and runs the
    deployment with its weights on `target`: the run's output, asserted PASS."""
    out = tmp_path / f"{target}.mlir"
    extra = ["--dtype", "f32"] if target == "plasticine" else []
    assert import_main([str(path), "--step", "both", *extra, "-o", str(out)]) == 0
    chain = f"{m.arch}_prefill,{m.arch}_decode"
    rc = run_main([str(out), "--target", target, "--chain", chain, "--weights", str(path)])
    text = capsys.readouterr().out
    assert rc == 0 and text.splitlines()[-1].startswith("PASS"), text
    return text


@pytest.mark.parametrize("name", list(CONVERTED))
def test_a_converted_file_imports_and_passes(files, tmp_path, capsys, name):
    target = PRESETS[list(CONVERTED).index(name) % len(PRESETS)]
    imported_and_run(files[name], CONVERTED[name], target, tmp_path, capsys)


@pytest.mark.parametrize("target", PRESETS)
@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_family_passes_on_every_preset(files, tmp_path, capsys, family, target):
    imported_and_run(files[family], FAMILIES[family], target, tmp_path, capsys)


@pytest.mark.parametrize("name", list(REFUSED))
def test_a_file_spatial_import_cannot_take_is_one_line(files, tmp_path, capsys, name):
    rc = import_main([str(files[name]), "--step", "both", "-o", str(tmp_path / "x.mlir")])
    err = capsys.readouterr().err
    assert rc == 1 and err.startswith("spatial-import: error: ") and err.count("\n") == 1, err
    assert REFUSED[name][1] in err


def test_import_reads_no_tensor_data(files, tmp_path, monkeypatch):
    """The header is enough: spatial-import never asks for a tensor's data (a 70B checkpoint
    imports in the time of its header)."""

    def refuse(*_):
        raise AssertionError("spatial-import read tensor data")

    for module in [m for n, m in sys.modules.items() if n.startswith("spatial_dialect.tools")]:
        for reader in ("tensor_array", "q8_0_parts"):
            if hasattr(module, reader):
                monkeypatch.setattr(module, reader, refuse)
    for name in ("llama31_rope_freqs_q8_0", "qwen3_converted_q8_0"):
        out = tmp_path / f"{name}.mlir"
        assert import_main([str(files[name]), "--step", "both", "-o", str(out)]) == 0


def test_a_truncated_converted_file_is_one_line(files, tmp_path, capsys):
    """Cut in the metadata, in the tensor infos, and in the tensor data: the line says where."""
    data = files["qwen3_converted_q8_0"].read_bytes()
    start = gguf.GGUFReader(files["qwen3_converted_q8_0"]).data_offset
    bad = tmp_path / "cut.gguf"
    for cut, says in (
        (100, "the file ends 76 bytes after it (truncated, or a count is wrong)"),
        (start - 40, f"the file ends at byte {start - 40}"),
        (start + 1000, f"runs past the end of the file (byte {start + 1000})"),
        (len(data) - 1, f"runs past the end of the file (byte {len(data) - 1})"),
    ):
        bad.write_bytes(data[:cut])
        rc = import_main([str(bad), "--step", "decode", "-o", str(tmp_path / "x.mlir")])
        err = capsys.readouterr().err
        assert rc == 1 and err.count("\n") == 1 and "not a well-formed GGUF file" in err, (cut, err)
        assert says in err, (cut, err)
