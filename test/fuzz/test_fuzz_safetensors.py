"""Mutated Hugging Face checkpoints (issue 25, item 6) through spatial-import DIR and
spatial-run --weights DIR, in-process: each of >= 150 seeded mutants of a safetensors header,
a config.json or a shard index ends in exit 0, or exit 1 with one line on stderr; never an
internal error or a traceback, never a hang, never a memory blow-up (the process's peak RSS
grows by less than MEMORY_MB over the whole run).

The mutants start from tiny llama, qwen3moe and qwen3next (a Gated DeltaNet layer and a gated
attention layer) directories (one of them sharded) written by test/frontend/tiny_hf.py. spatial-run fills the program imported from the unmutated directory,
so a mutant the importer refuses still reaches the weights path."""

from __future__ import annotations

import json
import random
import resource
import shutil
import struct
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parents[1] / "frontend"))
import fuzzlib  # noqa: E402
from tiny_hf import write_tiny_hf  # noqa: E402

from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

SEED = 25
COUNT = 220
LIMIT_S = 20
MEMORY_MB = 1024
BASES = {
    "llama": ("llama", 1),
    "moe": ("qwen3moe", 1),
    "next": ("qwen3next", 1),
    "sharded": ("llama", 3),
}

HUGE = [2**31, 2**40, 2**63 - 1, 2**64 + 5, 10**30]
BAD_VALUES = [None, "12", [4], {"a": 1}, True, -1, 0, 1.5, 2**40, -(2**63), "NaN"]
CONFIG_KEYS = [
    "architectures",
    "hidden_size",
    "intermediate_size",
    "num_hidden_layers",
    "num_attention_heads",
    "num_key_value_heads",
    "head_dim",
    "hidden_act",
    "max_position_embeddings",
    "rms_norm_eps",
    "rope_parameters",
    "tie_word_embeddings",
    "vocab_size",
    "dtype",
    "attention_bias",
    "num_experts",
    "num_experts_per_tok",
    "moe_intermediate_size",
    "norm_topk_prob",
    "mlp_only_layers",
    "layer_types",
    "rope_scaling",
    "use_sliding_window",
    "partial_rotary_factor",
    "decoder_sparse_step",
    "torch_dtype",
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
    "shared_expert_intermediate_size",
    "full_attention_interval",
]


def _split(raw: bytes) -> tuple[dict, bytes]:
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def _join(header: object, data: bytes, text: bytes | None = None) -> bytes:
    body = text if text is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(body)) + body + data


def mutate_safetensors(raw: bytes, rng: random.Random) -> tuple[str, bytes]:
    header, data = _split(raw)
    names = [k for k in header if k != "__metadata__"]
    name = rng.choice(names)
    entry = header[name]
    kind = rng.choice(
        [
            "length_huge", "length_small", "truncate", "bytes", "bad_json", "dtype", "offsets_out",
            "offsets_overlap", "offsets_type", "shape_disagree", "shape_type", "huge_dim",
            "missing_key", "drop_tensor", "rename", "nan", "metadata", "duplicate", "nesting",
            "swap_data",
        ]
    )  # fmt: skip
    (n,) = struct.unpack("<Q", raw[:8])
    if kind == "length_huge":
        return kind, struct.pack("<Q", rng.choice([*HUGE[:3], len(raw), 100_000_001])) + raw[8:]
    if kind == "length_small":
        return kind, struct.pack("<Q", rng.randrange(0, n)) + raw[8:]
    if kind == "truncate":
        return kind, raw[: rng.randrange(0, len(raw))]
    if kind == "bytes":
        b = bytearray(raw)
        for _ in range(rng.randint(1, 8)):
            b[rng.randrange(0, 8 + n)] = rng.randrange(256)
        return kind, bytes(b)
    if kind == "bad_json":
        text = json.dumps(header).encode()
        cut = rng.randrange(len(text))
        return kind, _join(None, data, text[:cut] + rng.choice([b"", b"{", b"]", b"\xff", b","]))
    if kind == "dtype":
        entry["dtype"] = rng.choice(
            ["F12", "", "f32", "I8", "F64", "U8", "F8_E4M3", 5, None, "BF16"]
        )
    elif kind == "offsets_out":
        entry["data_offsets"] = [entry["data_offsets"][0], len(data) + rng.choice([1, 4, 2**40])]
    elif kind == "offsets_overlap":
        other = header[rng.choice(names)]
        size = entry["data_offsets"][1] - entry["data_offsets"][0]
        begin = other["data_offsets"][0] + rng.choice([0, 4])
        entry["data_offsets"] = [begin, begin + size]
    elif kind == "offsets_type":
        entry["data_offsets"] = rng.choice(
            [[0], "0", [1.5, 2.5], [-1, 4], [8, 4], None, [0, 2**64]]
        )
    elif kind == "shape_disagree":
        entry["shape"] = rng.choice([entry["shape"] + [1], entry["shape"][::-1], [7], []])
    elif kind == "shape_type":
        entry["shape"] = rng.choice([[-4], [1.5], [True], ["4"], [[4]], "4", None, {}])
    elif kind == "huge_dim":
        entry["shape"] = rng.choice([[2**40, 2**40], [2**63], [0, 2**62], [2**64 + 5], [10**30]])
    elif kind == "missing_key":
        del entry[rng.choice(["dtype", "shape", "data_offsets"])]
    elif kind == "drop_tensor":
        del header[name]
    elif kind == "rename":
        header[name + ".x"] = header.pop(name)
    elif kind == "nan":
        text = json.dumps(header).replace(json.dumps(entry["shape"]), "[NaN]", 1).encode()
        return kind, _join(None, data, text)
    elif kind == "metadata":
        header["__metadata__"] = rng.choice([{"format": 1}, [1], "pt", None])
    elif kind == "duplicate":
        text = json.dumps(header).encode()
        dup = json.dumps({name: entry})[1:-1].encode()
        return kind, _join(None, data, text[:-1] + b", " + dup + b"}")
    elif kind == "nesting":
        return kind, _join(None, data, b"[" * rng.choice([1000, 100_000]))
    elif kind == "swap_data":  # a valid header whose tensors read each other's bytes
        other = header[rng.choice(names)]
        if other["dtype"] == entry["dtype"] and other["shape"] == entry["shape"]:
            entry["data_offsets"], other["data_offsets"] = (
                other["data_offsets"],
                entry["data_offsets"],
            )
    return kind, _join(header, data)


def mutate_config(cfg: dict, rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(["value", "delete", "json", "nan", "huge", "rope", "arch", "dtype", "deep"])
    key = rng.choice(CONFIG_KEYS)
    if kind == "value":
        cfg[key] = rng.choice(BAD_VALUES)
    elif kind == "delete":
        cfg.pop(key, None)
    elif kind == "json":
        text = json.dumps(cfg)
        return kind, text[: rng.randrange(len(text))].encode()
    elif kind == "nan":
        key = rng.choice(["rms_norm_eps", "hidden_size", "vocab_size", "rope_parameters"])
        text = json.dumps({**cfg, key: 0.5}).replace(
            "0.5", rng.choice(["NaN", "Infinity", "-Infinity"])
        )
        return f"{kind}:{key}", text.encode()
    elif kind == "huge":
        cfg[key] = rng.choice(HUGE)
    elif kind == "rope":
        cfg["rope_parameters"] = rng.choice(
            [
                {"rope_type": "llama3", "factor": 8.0, "rope_theta": 5e5},
                {"rope_type": "yarn", "rope_theta": 1e4},
                {"rope_theta": -1.0},
                {"rope_theta": 1e400},
                {"rope_type": None, "rope_theta": "big"},
                {"rope_type": [1], "rope_theta": 1e4},
                {"rope_type": {"a": 1}},
                [],
            ]
        )
    elif kind == "arch":
        cfg["architectures"] = rng.choice([[], ["GPT2LMHeadModel"], "LlamaForCausalLM", [1], None])
    elif kind == "dtype":
        cfg["dtype"] = rng.choice(["bfloat16", "float16", "int8", "", 3, "float64", [1], {}])
    elif kind == "deep":
        cfg["rope_parameters"] = json.loads("[" * 50 + "]" * 50)
    label = f"{kind}:{key}" if kind in ("value", "delete", "huge") else kind
    return label, json.dumps(cfg).encode()


def mutate_index(index: dict, shard_files: list[str], rng: random.Random) -> tuple[str, bytes]:
    kind = rng.choice(["missing_shard", "traversal", "not_dict", "json", "wrong_shard", "drop"])
    weight_map = index["weight_map"]
    name = rng.choice(sorted(weight_map))
    if kind == "missing_shard":
        weight_map[name] = "model-00009-of-00003.safetensors"
    elif kind == "traversal":
        weight_map[name] = rng.choice(["../config.json", "/etc/passwd", "sub/x.safetensors", ""])
    elif kind == "not_dict":
        index["weight_map"] = rng.choice([[], "x", None, {name: 3}])
    elif kind == "json":
        text = json.dumps(index)
        return kind, text[: rng.randrange(len(text))].encode()
    elif kind == "wrong_shard":
        weight_map[name] = rng.choice([f for f in shard_files if f != weight_map[name]])
    elif kind == "drop":
        del weight_map[name]
    return kind, json.dumps(index).encode()


def mutants(count: int, seed: int) -> list[tuple[str, str, str]]:
    """(case name, base, kind) for `count` seeded cases; the files are made by `materialize`."""
    rng = random.Random(seed)
    out = []
    for n in range(count):
        base = rng.choice(sorted(BASES))
        target = rng.choice(
            ["safetensors", "safetensors", "config"] + (["index"] if base == "sharded" else [])
        )
        out.append((f"hf#{n}", base, target))
    return out


def materialize(case: tuple[str, str, str], bases: dict[str, Path], work: Path) -> tuple[Path, str]:
    """The mutant directory of `case` (a copy of its base with one file mutated) and its kind."""
    name, base, target = case
    rng = random.Random(f"{SEED}:{name}")
    out = work / name.replace("#", "_")
    shutil.rmtree(out, ignore_errors=True)
    shutil.copytree(bases[base], out)
    shards = sorted(p.name for p in out.glob("*.safetensors"))
    if target == "safetensors":
        file = out / rng.choice(shards)
        kind, data = mutate_safetensors(file.read_bytes(), rng)
        file.write_bytes(data)
    elif target == "config":
        kind, data = mutate_config(json.loads((out / "config.json").read_text()), rng)
        (out / "config.json").write_bytes(data)
    else:
        index = out / "model.safetensors.index.json"
        kind, data = mutate_index(json.loads(index.read_text()), shards, rng)
        index.write_bytes(data)
        if kind == "missing_shard" and rng.random() < 0.5:  # a shard the index names, deleted
            (out / rng.choice(shards)).unlink()
            kind = "deleted_shard"
    return out, f"{target}:{kind}"


@pytest.fixture(scope="module")
def bases(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("hf-bases")
    out = {}
    for name, (arch, shards) in BASES.items():
        layers = 2 if arch == "qwen3next" else 1  # a DeltaNet layer and an attention layer
        out[name] = write_tiny_hf(root / name, arch, layers=layers, shards=shards)
        step = root / f"{name}.mlir"
        assert import_main([str(out[name]), "--step", "decode", "-o", str(step)]) == 0
    return out


@pytest.fixture(scope="module")
def peak():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    yield
    grown = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown < MEMORY_MB, f"peak RSS grew by {grown:.0f} MB over the mutants"


def test_the_generator_makes_enough_cases(bases, tmp_path):
    cases = mutants(COUNT, SEED)
    assert len(cases) >= 150
    kinds = {materialize(c, bases, tmp_path)[1] for c in cases}
    assert len({k.split(":")[0] + ":" + k.split(":")[1] for k in kinds}) >= 25, sorted(kinds)


def _one_line(rc: int | None, err: str, hung: bool, what: str) -> None:
    verdict = fuzzlib.classify(rc, err, hung)
    assert verdict in ("success", "diagnostic"), f"{what}: {verdict}: {err[-2000:]}"
    if verdict == "diagnostic":
        assert err.count("\n") == 1, f"{what}: not one line: {err[-2000:]}"


@pytest.mark.parametrize("case", mutants(COUNT, SEED), ids=lambda c: f"{c[0]}-{c[1]}-{c[2]}")
def test_mutant(case, bases, tmp_path, peak):
    mutant, kind = materialize(case, bases, tmp_path)
    argv = [str(mutant), "--step", "decode", "-o", str(tmp_path / "step.mlir")]
    rc, _, err, hung = fuzzlib.run_tool(import_main, argv, LIMIT_S)
    _one_line(rc, err, hung, f"spatial-import {kind}")
    program = bases[case[1]].parent / f"{case[1]}.mlir"
    argv = [str(program), "--weights", str(mutant), "--reference-only"]
    rc, _, err, hung = fuzzlib.run_tool(run_main, argv, LIMIT_S)
    _one_line(rc, err, hung, f"spatial-run --weights {kind}")
