"""Issue 25, item 6: each bad input fuzzing found in spatial-import and spatial-run, by name, ends in
one error line saying what is wrong, and exit 1: no traceback, no "internal error", no PASS over
inputs the file did not give, no minutes spent building a table of 2**40 layers. Each runs in a
forked child under a memory limit (fuzzlib.isolated), so a blow-up fails here rather than the
machine; the time limit is a guard, and bench/fuzz.py --gguf prints how long each case takes."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parent))
import fuzzlib  # noqa: E402
import gguf_mutants as gm  # noqa: E402

from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LIMIT_S = 30
MEMORY = 2 << 30


@pytest.fixture(scope="module")
def work():
    d = fuzzlib.workdir()
    gm.write_gguf(d / "llama.gguf", gm.BASES["llama_q8_0"])
    gm.write_gguf(d / "qwen3.gguf", gm.BASES["qwen3_f16"])
    gm.programs_of(d, {"llama": d / "llama.gguf", "qwen3": d / "qwen3.gguf"})
    return d


def mutated(work: Path, name: str, change, base: str = "llama") -> Path:
    """The base file with `change(layout)` applied, written as NAME.gguf."""
    layout = gm.parse(work / f"{base}.gguf")
    data = change(layout)
    path = work / f"{name}.gguf"
    path.write_bytes(data if isinstance(data, bytes) else layout.to_bytes())
    return path


def one_line(main, argv: list[str], says: str) -> None:
    r = fuzzlib.isolated(main, argv, LIMIT_S, MEMORY)
    assert not r.hung and r.rc == 1, (r.rc, r.stderr[-2000:])
    assert r.stderr.count("\n") == 1 and ": error: " in r.stderr, r.stderr[-2000:]
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert says in r.stderr, r.stderr


def imports_as(path: Path, says: str, *extra: str) -> None:
    one_line(import_main, [str(path), "--step", "decode", *extra, "-o", f"{path}.mlir"], says)


def set_key(name: str, type_id: int, value: object, item: int = gm.U32):
    return lambda layout: layout.set(name, type_id, value, item)


def tensor(name: str, field: int, value):
    def change(layout: gm.Layout) -> None:
        t = next(t for t in layout.tensors if t[0] == name.encode())
        t[field] = value

    return change


def string_length(key: str, n: int):
    def change(layout: gm.Layout) -> None:
        kv = layout.kv(key)
        kv[2] = struct.pack("<Q", n) + kv[2][8:]

    return change


def tensor_name(old: str, new: bytes):
    return tensor(old, 0, new)


BAD_FILES = {  # name: (the change to the llama base, what the one line says)
    "block_count_2_40": (
        set_key("llama.block_count", gm.U64, 2**40),
        "block_count is 1099511627776, but the file holds the tensors of 2 layer(s) "
        "(blk.0 to blk.1)",
    ),
    "block_count_3": (
        set_key("llama.block_count", gm.U32, 3),
        "block_count is 3, but the file holds the tensors of 2 layer(s)",
    ),
    "eps_inf": (
        set_key("llama.attention.layer_norm_rms_epsilon", gm.F32, float("inf")),
        "'llama.attention.layer_norm_rms_epsilon' must be a positive finite number in f32's "
        "range, got inf",
    ),
    "eps_nan": (
        set_key("llama.attention.layer_norm_rms_epsilon", gm.F64, float("nan")),
        "got nan",
    ),
    "eps_past_f32": (
        set_key("llama.attention.layer_norm_rms_epsilon", gm.F64, 1e300),
        "in f32's range, got 1e+300",
    ),
    "freq_base_minus_inf": (
        set_key("llama.rope.freq_base", gm.F32, float("-inf")),
        "'llama.rope.freq_base' must be a positive finite number",
    ),
    "eps_a_string": (
        set_key("llama.attention.layer_norm_rms_epsilon", gm.STRING, "1e-5"),
        "got '1e-5'",
    ),
    "eps_a_bool": (
        set_key("llama.attention.layer_norm_rms_epsilon", gm.BOOL, True),
        "got True",
    ),
    "kv_count_huge": (
        lambda layout: setattr(layout, "counts", (None, 2**60)),
        "the header claims 1152921504606846976 metadata key(s)",
    ),
    "tensor_count_huge": (
        lambda layout: setattr(layout, "counts", (2**63, None)),
        "and 9223372036854775808 tensor(s)",
    ),
    "key_not_utf8": (
        lambda layout: layout.kvs[0].__setitem__(0, b"gen\xffral.architecture"),
        "the name of metadata key 0 at byte 24 is not UTF-8 (byte 35 is 0xff)",
    ),
    "string_value_not_utf8": (
        set_key("general.architecture", gm.STRING, b"ll\xc3"),
        "the value of key 'general.architecture' at byte 56 is not UTF-8 (byte 66 is 0xc3)",
    ),
    "tensor_name_not_utf8": (
        tensor_name("token_embd.weight", b"token\xed\xa0\x80embd"),
        "is not UTF-8",
    ),
    "architecture_with_a_newline": (
        set_key("general.architecture", gm.STRING, "llama\nrm -rf"),
        "architecture 'llama\\nrm -rf' is not supported",
    ),
    "architecture_a_number": (
        set_key("general.architecture", gm.U32, 7),
        "'general.architecture' must be a string, got 7",
    ),
    "string_length_huge": (
        string_length("general.architecture", 2**62),
        "the value of key 'general.architecture' at byte 56 claims 4611686018427387904 bytes",
    ),
    "array_length_huge": (
        lambda layout: layout.kv("tokenizer.ggml.tokens").__setitem__(
            2, struct.pack("<IQ", gm.STRING, 2**61) + layout.kv("tokenizer.ggml.tokens")[2][12:]
        ),
        "the value of key 'tokenizer.ggml.tokens' claims 2305843009213693952 string element(s)",
    ),
    "unknown_value_type": (
        lambda layout: layout.kv("llama.block_count").__setitem__(1, 99),
        "the value of key 'llama.block_count' at byte",
    ),
    "array_of_arrays": (
        lambda layout: layout.kv("tokenizer.ggml.scores").__setitem__(
            2, struct.pack("<I", gm.ARRAY) + layout.kv("tokenizer.ggml.scores")[2][4:]
        ),
        "'tokenizer.ggml.scores' is an array of arrays",
    ),
    "unknown_tensor_type": (
        tensor("output_norm.weight", 2, 99),
        "tensor 'output_norm.weight' has unknown type id 99",
    ),
    "removed_tensor_type": (tensor("output_norm.weight", 2, 4), "has unknown type id 4"),
    "tensor_five_dims": (
        lambda layout: layout.n_dims.__setitem__(0, 5),
        "has 5 dimensions; ggml takes at most 4",
    ),
    "tensor_dims_overflow": (
        tensor("output_norm.weight", 1, [2**32, 2**32]),
        "tensor 'output_norm.weight' of 4294967296 x 4294967296 has more elements than int64",
    ),
    "tensor_dim_huge": (
        tensor("output_norm.weight", 1, [2**40]),
        "tensor 'output_norm.weight''s data (bytes",
    ),
    "q8_0_row_not_whole_blocks": (
        tensor("blk.0.attn_q.weight", 1, [48, 64]),
        "is Q8_0, whose blocks hold 32 elements, but its rows hold 48",
    ),
    "tensor_offset_past_the_end": (
        lambda layout: layout.tensors[-1].__setitem__(3, layout.tensors[-1][3] + 2**20),
        "'s data offset is",
    ),
    "tensor_offset_misaligned": (
        lambda layout: layout.tensors[3].__setitem__(3, layout.tensors[3][3] + 1),
        "is not a multiple of the alignment 32",
    ),
    "tensor_offset_into_another": (
        lambda layout: layout.tensors[3].__setitem__(3, 0),
        "data offset is 0; the tensors before it end at",
    ),
    "duplicate_tensor": (
        lambda layout: layout.tensors.append(list(layout.tensors[0])),
        "tensor 'token_embd.weight' appears twice",
    ),
    "duplicate_key": (
        lambda layout: layout.kvs.append(list(layout.kv("llama.block_count"))),
        "metadata key 'llama.block_count' appears twice",
    ),
    "alignment_not_a_power_of_two": (set_key("general.alignment", gm.U32, 48), "48 is not a power"),
    "alignment_u64": (set_key("general.alignment", gm.U64, 64), "general.alignment is a uint64"),
    "version_4": (lambda layout: setattr(layout, "version", 4), "GGUF version 4"),
    "not_gguf": (lambda layout: b"PK\x03\x04" + bytes(40), "not a GGUF file: it starts with"),
    "empty": (lambda layout: b"", "the file is empty"),
    "truncated_in_the_header": (
        lambda layout: layout.to_bytes()[:20],
        "truncated: the metadata key count at byte 16 needs 8 byte(s), the file ends at byte 20",
    ),
}


@pytest.mark.parametrize("name", list(BAD_FILES))
def test_a_bad_gguf_is_one_line_from_both_tools(work, name):
    change, says = BAD_FILES[name]
    path = mutated(work, name, change)
    imports_as(path, says)
    one_line(run_main, [str(work / "llama.mlir"), "--reference-only", "--weights", str(path)], says)


def test_a_nan_in_the_weights_is_refused_by_spatial_run(work):
    """GGUF has no checksum; a non-finite weight is damage that can be told (spatial-import reads
    no tensor data, so it is spatial-run --weights that says it)."""
    layout = gm.parse(work / "qwen3.gguf")
    embd = next(t for t in layout.tensors if t[0] == b"token_embd.weight")
    at = embd[3] + 2 * 70  # F16: element 70, row 1 column 6
    layout.data = layout.data[:at] + np.float16("nan").tobytes() + layout.data[at + 2 :]
    path = work / "nan.gguf"
    path.write_bytes(layout.to_bytes())
    says = (
        "tensor 'token_embd.weight' holds 1 non-finite value(s) (NaN or inf), the first at (1, 6)"
    )
    one_line(run_main, [str(work / "qwen3.mlir"), "--reference-only", "--weights", str(path)], says)


def test_weights_that_supply_nothing_are_an_error(work):
    program = str(ROOT / "examples" / "tiny_decode.mlir")
    weights = str(work / "llama.gguf")
    says = "no argument of @tiny_step has a gguf.rope or gguf.tensor attribute"
    one_line(run_main, [program, "--reference-only", "--weights", weights], says)

    # a file whose tensors are named otherwise: none is the program's
    def rename(layout: gm.Layout) -> None:
        for i, t in enumerate(layout.tensors):
            t[0] = f"t{i}".encode()

    other = str(mutated(work, "renamed", rename))
    says = "the file has no tensor 'token_embd.weight'"
    one_line(run_main, [str(work / "llama.mlir"), "--reference-only", "--weights", other], says)
    # another model's file: its tensors are not the program's shapes
    qwen3 = str(work / "qwen3.mlir")
    says = "tensor 'blk.0.attn_k.weight' gives %blk.0.attn_k.weight the shape (64, 32)"
    one_line(run_main, [qwen3, "--reference-only", "--weights", weights], says)


@pytest.mark.parametrize(
    "argv, says",
    [
        (["--seed", "-1"], "the seed -1 is negative; a seed is an integer >= 0"),
        (["--inputs", "{text}"], "is not an .npz file (a zip of .npy arrays, as --save writes)"),
        (["--inputs", "{truncated}"], "cannot read inputs from"),
        (["--inputs", "{crc}"], "Bad CRC-32"),
        (["--inputs", "{npy}"], "holds one array (.npy), not an .npz of named inputs"),
        (["--inputs", "{empty}"], "it is empty, not an .npz"),
        (["--inputs", "{raw}"], "its member 'ids' is not a .npy array"),
        (["--inputs", "{work}"], "cannot open"),
        (["--save", "{work}"], "cannot write"),  # np.savez would have written {work}.npz
        (["--memory-budget", "1e999GiB"], "--memory-budget must be a positive number of bytes"),
    ],
    ids=[
        "seed",
        "text",
        "truncated",
        "crc",
        "npy",
        "empty",
        "raw_member",
        "directory",
        "save_a_directory",
        "memory_budget_inf",
    ],  # fmt: skip
)
def test_a_bad_run_argument_is_one_line(work, argv, says):
    import zipfile

    np.savez(work / "good.npz", ids=np.zeros(1, np.int32))
    files = {
        "text": work / "inputs.txt",
        "truncated": work / "truncated.npz",
        "crc": work / "crc.npz",
        "npy": work / "one.npy",
        "empty": work / "empty.npz",
        "raw": work / "raw.npz",
        "work": work,
    }
    files["text"].write_text("ids = 1\n")
    good = (work / "good.npz").read_bytes()
    files["truncated"].write_bytes(good[: len(good) // 2])
    damaged = bytearray(good)
    damaged[good.index(b"NUMPY") + 40] ^= 0xFF  # inside the stored member: its CRC fails
    files["crc"].write_bytes(bytes(damaged))
    np.save(files["npy"], np.zeros(1))
    files["empty"].write_bytes(b"")
    with zipfile.ZipFile(files["raw"], "w") as z:
        z.writestr("ids.npy", b"not an array")
    argv = [a.format(**files) for a in argv]
    program = str(ROOT / "examples" / "tiny_decode.mlir")
    one_line(run_main, [program, "--reference-only", *argv], says)


@pytest.mark.parametrize(
    "extra, says",
    [
        (["--tokens", "0"], "--tokens 0"),
        (["--cache", "0"], "--cache 0"),
        (["--cache", str(2**40)], "exceeds the model's context_length 512"),
        (["--layers", "0"], "--layers 0: the model has 2 layer(s)"),
        (["--layers", str(2**40)], "the model has 2 layer(s)"),
    ],
    ids=["tokens_0", "cache_0", "cache_2_40", "layers_0", "layers_2_40"],
)
def test_a_bad_import_argument_is_one_line(work, extra, says):
    imports_as(work / "llama.gguf", says, *extra)


def test_a_directory_without_config_json_is_not_a_checkpoint(work):
    # A directory is read as a Hugging Face checkpoint; this one (of GGUF files) has no config.json.
    imports_as(work, "has no config.json (not a Hugging Face checkpoint directory)")


def test_an_internal_error_of_spatial_import_is_one_line(monkeypatch, capsys, tmp_path):
    import spatial_dialect.tools.spatial_import as si

    def broken(args):
        raise KeyError("a bug")

    monkeypatch.setattr(si, "import_model", broken)
    assert si.main(["x.gguf", "--step", "decode", "-o", str(tmp_path / "o.mlir")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "internal error: KeyError" in err
