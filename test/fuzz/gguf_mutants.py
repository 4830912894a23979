"""Seeded mutants of well-formed tiny GGUF files (issue 25, item 6), for spatial-import and
`spatial-run --weights`: the file is taken apart by gguf's own reader into its fields, one field is
changed as a broken writer or a hostile file would (a huge count, length or dimension, a key of
another type, a non-finite float, an unknown type id, a tensor offset out of range or misaligned,
a duplicate name, a string that is not UTF-8 or holds a newline, a dropped key or tensor), and the
file is written back; or its bytes are damaged (fuzzlib's truncation at every region, bit flips,
overwrites). The structure is parsed here independently of tools/frontend/gguf_file.py, whose
checks these mutants test."""

from __future__ import annotations

import random
import struct
import sys
from dataclasses import dataclass, field
from pathlib import Path

import fuzzlib

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "frontend"))
from tiny_gguf import Tiny, write_gguf  # noqa: E402

BASES = {  # the files every mutant starts from: tokenizer arrays, tied heads, experts
    "llama_q8_0": Tiny("llama", "Q8_0", converter=True, d=64, heads=2, kv_heads=1, ffn=64),
    "qwen3_f16": Tiny("qwen3", "F16", tied=True, alignment=64, d=64, heads=2, kv_heads=2, ffn=64),
    "qwen3moe_bf16": Tiny("qwen3moe", "BF16", d=64, heads=2, kv_heads=1, ffn=32, experts=4),
}

# GGUF value type ids
U8, I8, U16, I16, U32, I32, F32, BOOL, STRING, ARRAY, U64, I64, F64 = range(13)
_CODE = {U8: "B", I8: "b", U16: "H", I16: "h", U32: "I", I32: "i", F32: "f", BOOL: "?",
         U64: "Q", I64: "q", F64: "d"}  # fmt: skip


def encode(type_id: int, value: object, item: int = U32) -> bytes:
    """A GGUF value of `type_id` (an array's elements of type `item`)."""
    if type_id == STRING:
        raw = value if isinstance(value, bytes) else str(value).encode()
        return struct.pack("<Q", len(raw)) + raw
    if type_id == ARRAY:
        items = list(value)  # type: ignore[call-overload]
        return struct.pack("<IQ", item, len(items)) + b"".join(encode(item, v) for v in items)
    return struct.pack("<" + _CODE[type_id], value)


@dataclass
class Layout:
    """A GGUF file as fields: each key (name, type id, encoded value), each tensor info (name,
    ggml dims, type id, data offset), the data; `to_bytes` writes it back, honouring overrides
    of what a well-formed writer derives (counts, lengths)."""

    version: int
    kvs: list[list] = field(default_factory=list)  # [name bytes, type id, value bytes]
    tensors: list[list] = field(default_factory=list)  # [name bytes, dims, type id, offset]
    data: bytes = b""
    alignment: int = 32
    counts: tuple[int | None, int | None] = (None, None)  # tensor_count, kv_count
    n_dims: dict[int, int] = field(default_factory=dict)  # tensor index -> stated n_dims
    magic: bytes = b"GGUF"
    regions: list[tuple[int, int]] = field(default_factory=list)  # filled by to_bytes

    def kv(self, name: str) -> list | None:
        return next((kv for kv in self.kvs if kv[0] == name.encode()), None)

    def set(self, name: str, type_id: int, value: object, item: int = U32) -> None:
        kv = self.kv(name)
        if kv is None:
            self.kvs.append([name.encode(), type_id, encode(type_id, value, item)])
        else:
            kv[1:] = [type_id, encode(type_id, value, item)]

    def to_bytes(self) -> bytes:
        t_count = len(self.tensors) if self.counts[0] is None else self.counts[0]
        k_count = len(self.kvs) if self.counts[1] is None else self.counts[1]
        out = bytearray(self.magic + struct.pack("<IQQ", self.version, t_count, k_count))
        self.regions = [(0, len(out))]
        for name, type_id, value in self.kvs:
            start = len(out)
            out += struct.pack("<Q", len(name)) + name + struct.pack("<I", type_id) + value
            self.regions.append((start, len(out)))
        for i, (name, dims, type_id, offset) in enumerate(self.tensors):
            start = len(out)
            out += struct.pack("<Q", len(name)) + name
            out += struct.pack("<I", self.n_dims.get(i, len(dims)))
            out += b"".join(struct.pack("<Q", d) for d in dims)
            out += struct.pack("<IQ", type_id, offset)
            self.regions.append((start, len(out)))
        out += b"\0" * (-len(out) % self.alignment)
        self.regions.append((len(out), len(out) + len(self.data)))
        return bytes(out) + self.data


def parse(path: Path) -> Layout:
    """The fields of a well-formed file, read by gguf's reader."""
    import gguf

    reader = gguf.GGUFReader(path)
    raw = path.read_bytes()
    layout = Layout(version=int(reader.fields["GGUF.version"].parts[0][0]))
    for f in reader.fields.values():
        if f.name.startswith("GGUF."):
            continue
        value = b"".join(p.tobytes() for p in f.parts[3:])
        layout.kvs.append([f.parts[1].tobytes(), int(f.parts[2][0]), value])
    for t in reader.tensors:
        p = t.field.parts
        layout.tensors.append([p[1].tobytes(), [int(d) for d in p[3]], int(p[4][0]), int(p[5][0])])
    layout.alignment = int(reader.alignment)
    layout.data = raw[reader.data_offset :]
    return layout


HUGE = (2**31, 2**32 - 1, 2**40, 2**63 - 1, 2**64 - 1)
NONFINITE = (float("inf"), float("-inf"), float("nan"), 0.0, -1e-5, 1e308, 5e-324)
DIMENSION_KEYS = ("embedding_length", "attention.head_count", "attention.head_count_kv",
                  "feed_forward_length", "expert_feed_forward_length", "context_length",
                  "attention.key_length", "vocab_size", "expert_count", "expert_used_count",
                  "rope.dimension_count")  # fmt: skip
FLOAT_KEYS = ("attention.layer_norm_rms_epsilon", "rope.freq_base")
OTHER_VALUES = ((STRING, "x"), (STRING, "lla\nma"), (F32, 1.5), (BOOL, True), (I64, -5), (U8, 7),
                (F64, float("nan")), (ARRAY, [1, 2, 3]), (ARRAY, []), (I32, -1))  # fmt: skip


def _arch(layout: Layout) -> str:
    kv = layout.kv("general.architecture")
    return kv[2][8:].decode() if kv else "llama"


def mutate(layout: Layout, rng: random.Random) -> tuple[str, bytes]:
    """One mutation of `layout` (changed in place): (kind, the file's bytes)."""
    a = _arch(layout)
    kind = rng.choice(
        ["bytes", "bytes", "bytes", "bytes", "count", "block_count", "dimension", "key_type",
         "nonfinite", "string_length", "utf8", "type_id", "array_length", "tensor_dims",
         "tensor_type", "tensor_offset", "duplicate", "alignment", "drop", "version", "name"]
    )  # fmt: skip
    if kind == "bytes":  # damage the header's bytes; truncation anywhere, the data included
        clean = layout.to_bytes()
        regions = layout.regions[:-1] if rng.random() < 0.8 else layout.regions
        sub, data = fuzzlib.byte_mutation(clean, rng, regions)
        return f"bytes:{sub}", data
    if kind == "count":
        which = rng.randrange(2)
        stated = [len(layout.tensors), len(layout.kvs)][which]
        value = rng.choice([*HUGE[1:], 0, stated + 1, stated - 1])
        layout.counts = (value, None) if which == 0 else (None, value)
        kind += ":" + ("tensors" if which == 0 else "keys")
    elif kind == "block_count":
        type_id, value = rng.choice([(U64, 2**40), (U32, 2**32 - 1), (U32, 0), (I32, -1),
                                     (U32, 3), (U32, 1000), (U64, 2**64 - 1)])  # fmt: skip
        layout.set(f"{a}.block_count", type_id, value)
    elif kind == "dimension":
        key = f"{a}.{rng.choice(DIMENSION_KEYS)}"
        type_id, value = rng.choice([(U32, 0), (U32, 1), (U32, 3), (U32, 2**31), (U32, 2**32 - 1),
                                     (U64, 2**40), (U64, 2**63), (I32, -1)])  # fmt: skip
        layout.set(key, type_id, value)
        kind += ":" + key
    elif kind == "key_type":
        kv = rng.choice(layout.kvs)
        type_id, value = rng.choice(OTHER_VALUES)
        kv[1:] = [type_id, encode(type_id, value)]
        kind += ":" + kv[0].decode()
    elif kind == "nonfinite":
        key = f"{a}.{rng.choice(FLOAT_KEYS)}"
        value = rng.choice(NONFINITE)
        layout.set(key, F64 if abs(value) > 3e38 else rng.choice([F32, F64]), value)
    elif kind == "string_length":  # a key's name or a string value claims another length
        kv = rng.choice([kv for kv in layout.kvs if kv[1] == STRING] + layout.kvs[:3])
        n = rng.choice([*HUGE, len(kv[2]) + 1, 2**16])
        if kv[1] == STRING and rng.random() < 0.5:
            kv[2] = struct.pack("<Q", n) + kv[2][8:]
        else:  # the name: rewrite the file's bytes where its length is
            data = layout.to_bytes()
            at = layout.regions[1 + layout.kvs.index(kv)][0]
            return kind, data[:at] + struct.pack("<Q", n % 2**64) + data[at + 8 :]
    elif kind == "utf8":
        bad = rng.choice([b"\xff", b"\xc3", b"\xed\xa0\x80", b"\n", b"\x00"])
        target = rng.choice(["key", "string", "tensor"])
        if target == "tensor":
            t = rng.choice(layout.tensors)
            t[0] = t[0][:3] + bad + t[0][4:]
        elif target == "key":
            kv = rng.choice(layout.kvs)
            kv[0] = kv[0][:2] + bad + kv[0][3:]
        else:
            kv = rng.choice([kv for kv in layout.kvs if kv[1] == STRING])
            kv[2] = encode(STRING, kv[2][8:10] + bad + kv[2][10:])
        kind += ":" + target
    elif kind == "type_id":
        kv = rng.choice(layout.kvs)
        bad = rng.choice([13, 99, 2**32 - 1])
        if kv[1] == ARRAY and rng.random() < 0.5:
            kv[2] = struct.pack("<I", rng.choice([bad, ARRAY])) + kv[2][4:]
        else:
            kv[1] = bad
    elif kind == "array_length":
        arrays = [kv for kv in layout.kvs if kv[1] == ARRAY]
        if not arrays:
            layout.set(f"{a}.attention.head_count_kv", ARRAY, [1] * 3)
            arrays = [layout.kv(f"{a}.attention.head_count_kv")]
        kv = rng.choice(arrays)
        count = struct.unpack_from("<Q", kv[2], 4)[0]
        n = rng.choice([*HUGE, count + 1, count * 2, 0])
        kv[2] = kv[2][:4] + struct.pack("<Q", n) + kv[2][12:]
    elif kind == "tensor_dims":
        i = rng.randrange(len(layout.tensors))
        t = layout.tensors[i]
        how = rng.choice(["dim", "n_dims", "overflow", "swap"])
        if how == "dim":
            t[1][rng.randrange(len(t[1]))] = rng.choice([0, 1, 31, *HUGE])
        elif how == "n_dims":
            layout.n_dims[i] = rng.choice([0, 5, 2**32 - 1, len(t[1]) + 1])
        elif how == "overflow":
            t[1] = [2**32, 2**32] if rng.random() < 0.5 else [2**62, 4]
        else:
            t[1] = t[1][::-1]
        kind += ":" + how
    elif kind == "tensor_type":
        t = rng.choice(layout.tensors)
        t[2] = rng.choice([99, 4, 2**32 - 1, 0, 1, 2, 8, 12, 30, 14])
    elif kind == "tensor_offset":
        t = rng.choice(layout.tensors)
        other = rng.choice(layout.tensors)[3]
        t[3] = rng.choice([len(layout.data) + 64, 2**64 - 1, 2**63, t[3] + 1, other, 0])
    elif kind == "duplicate":
        if rng.random() < 0.5:
            t = rng.choice(layout.tensors)
            layout.tensors.append([t[0], list(t[1]), t[2], t[3]])
            kind += ":tensor"
        else:
            layout.kvs.append(list(rng.choice(layout.kvs)))
            kind += ":key"
    elif kind == "alignment":
        type_id, value = rng.choice([(U32, 0), (U32, 3), (U32, 2**31), (U64, 64), (STRING, "32"),
                                     (U32, 1), (U32, 4096)])  # fmt: skip
        layout.set("general.alignment", type_id, value)
    elif kind == "drop":
        if rng.random() < 0.5:
            layout.kvs.pop(rng.randrange(len(layout.kvs)))
        else:
            layout.tensors.pop(rng.randrange(len(layout.tensors)))
    elif kind == "version":
        layout.version = rng.choice([0, 1, 4, 2**32 - 1, 0x03000000, 2])
    else:  # name: the magic, or the architecture
        if rng.random() < 0.3:
            layout.magic = rng.choice([b"GGUG", b"\0\0\0\0", b"GGML", b"FUGG"])
        else:
            layout.set(
                "general.architecture", STRING, rng.choice(["gemma", "", "llama\n", "x" * 5000])
            )
    return kind, layout.to_bytes()


def gguf_mutants(workdir: Path, count: int, seed: int) -> list[tuple[str, str, bytes]]:
    """(name, kind, bytes) for `count` mutants, deterministic in `seed`, over BASES (written once
    into `workdir`)."""
    rng = random.Random(seed)
    bases = {name: write_gguf(workdir / f"{name}.gguf", m) for name, m in BASES.items()}
    out = []
    for n in range(count):
        base = list(BASES)[n % len(BASES)]
        kind, data = mutate(parse(bases[base]), rng)
        out.append((f"{base}#{n}", kind, data))
    return out


@dataclass
class Run:
    tool: str
    name: str
    kind: str
    verdict: str  # fuzzlib.binary_verdict
    seconds: float
    stderr: str


def programs(workdir: Path) -> dict[str, Path]:
    """Each base's decode step, imported once: what `spatial-run --weights MUTANT` runs."""
    return programs_of(workdir, {name: workdir / f"{name}.gguf" for name in BASES})


def programs_of(workdir: Path, files: dict[str, Path]) -> dict[str, Path]:
    """NAME.mlir in `workdir`: the decode step spatial-import writes for each file."""
    from spatial_dialect.tools.spatial_import import main

    out = {}
    for name, path in files.items():
        out[name] = workdir / f"{name}.mlir"
        assert main([str(path), "--step", "decode", "-o", str(out[name])]) == 0
    return out


def gguf_case(
    name: str,
    kind: str,
    data: bytes,
    workdir: Path,
    steps: dict[str, Path],
    limit_s: int,
    memory_bytes: int,
) -> list[Run]:
    """The mutant through spatial-import and through `spatial-run --weights` (reference only: the
    file is what is tested, not the compiler), each isolated (fuzzlib.isolated)."""
    from spatial_dialect.tools.spatial_import import main as import_main
    from spatial_dialect.tools.spatial_run import main as run_main

    path = workdir / f"{name.replace('#', '_')}.gguf"
    path.write_bytes(data)
    step = steps[name.split("#")[0]]
    runs = []
    for tool, main, argv in (
        ("spatial-import", import_main, [str(path), "--step", "decode", "-o", str(path) + ".mlir"]),
        ("spatial-run", run_main, [str(step), "--reference-only", "--weights", str(path)]),
    ):
        r = fuzzlib.isolated(main, argv, limit_s, memory_bytes)
        runs.append(Run(tool, name, kind, fuzzlib.binary_verdict(r), r.seconds, r.stderr))
    path.unlink()
    return runs
