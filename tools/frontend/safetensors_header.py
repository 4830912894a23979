"""A safetensors file's header, read strictly: what spatial-import needs of a Hugging Face
checkpoint's weights (their names, dtypes, shapes and where they lie), without their data.

The format (huggingface/safetensors): an 8-byte little-endian header length N, N bytes of UTF-8
JSON mapping each tensor's name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets
into the data that follows the header) and an optional "__metadata__" of strings, then the data.
The reader is our own, not the safetensors package, so that every field is checked and every
problem is one `SafetensorsError` line naming the file and the field: a header length past the
file (or past safetensors' own 100 MB limit, so a mutated length cannot make us allocate
gigabytes), JSON that does not parse or repeats a key or spells NaN / Infinity, an unknown dtype,
a shape that is not a list of non-negative integers, offsets outside the data or disagreeing with
shape x dtype, two tensors' bytes overlapping. Only `tensor_data` reads data, by np.memmap (BF16
as ml_dtypes.bfloat16), for `spatial-run --weights`.
"""

from __future__ import annotations

import json
import math
import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MAX_HEADER = 100_000_000
"""The largest header safetensors itself accepts (its MAX_HEADER_SIZE)."""

DTYPE_BYTES = {
    "BOOL": 1,
    "U8": 1,
    "I8": 1,
    "F8_E5M2": 1,
    "F8_E4M3": 1,
    "I16": 2,
    "U16": 2,
    "F16": 2,
    "BF16": 2,
    "I32": 4,
    "U32": 4,
    "F32": 4,
    "F64": 8,
    "I64": 8,
    "U64": 8,
}
"""Every dtype the safetensors format names, and its element size in bytes."""

FLOATS = ("F32", "F16", "BF16")
"""The dtypes whose data `tensor_data` reads (the weights spatial-import accepts)."""


class SafetensorsError(Exception):
    """The file's header is not a valid safetensors header; the message says where."""


@dataclass(frozen=True)
class TensorEntry:
    name: str
    dtype: str  # safetensors' name: F32, F16, BF16, ...
    shape: tuple[int, ...]  # as stored: a torch Linear's weight is out x in
    file: Path
    offset: int  # of the first byte, from the start of the file
    nbytes: int


def _no_constant(name: str) -> float:
    raise ValueError(f"non-finite number {name}")


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    out: dict[str, object] = {}
    for k, v in pairs:
        if k in out:
            raise ValueError(f"key '{k}' appears twice")
        out[k] = v
    return out


def strict_json(text: bytes | str, what: str) -> object:
    """JSON as RFC 8259 has it: no NaN or Infinity, no repeated keys, no nesting deep enough to
    exhaust the interpreter's stack; a ValueError naming `what` otherwise."""
    try:
        return json.loads(text, parse_constant=_no_constant, object_pairs_hook=_unique)
    except RecursionError:
        raise ValueError(f"{what} nests too deeply") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise ValueError(f"{what} is not valid JSON: {e}") from None


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def read_header(path: str | Path) -> dict[str, TensorEntry]:
    """Every tensor of the safetensors file at `path`, by name, checked (module docstring)."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            size = p.stat().st_size
            raw = f.read(8)
            if len(raw) < 8:
                raise SafetensorsError(f"'{p}' is not a safetensors file: {size} byte(s)")
            (n,) = struct.unpack("<Q", raw)
            if n > MAX_HEADER or n > size - 8:
                raise SafetensorsError(
                    f"'{p}': the header length {n} exceeds the file's {size - 8} bytes after it"
                    if n <= MAX_HEADER
                    else f"'{p}': the header length {n} exceeds safetensors' limit {MAX_HEADER}"
                )
            text = f.read(n)
    except OSError as e:
        raise SafetensorsError(f"cannot read '{p}': {e.strerror}") from None
    try:
        header = strict_json(text, "the header")
    except ValueError as e:
        raise SafetensorsError(f"'{p}': {e}") from None
    if not isinstance(header, dict):
        raise SafetensorsError(f"'{p}': the header is not a JSON object")
    data_size = size - 8 - n
    base = 8 + n
    entries: dict[str, TensorEntry] = {}
    for name, info in header.items():
        if name == "__metadata__":
            if not isinstance(info, dict) or not all(isinstance(v, str) for v in info.values()):
                raise SafetensorsError(f"'{p}': __metadata__ is not a map of strings")
            continue
        entries[name] = _entry(p, name, info, base, data_size)
    spans = sorted((e.offset, e.offset + e.nbytes, e.name) for e in entries.values() if e.nbytes)
    for (_, end, a), (begin, _, b) in zip(spans, spans[1:], strict=False):
        if begin < end:
            raise SafetensorsError(f"'{p}': the data of tensors '{a}' and '{b}' overlap")
    return entries


def _entry(p: Path, name: str, info: object, base: int, data_size: int) -> TensorEntry:
    where = f"'{p}': tensor '{name}'"
    if not isinstance(info, dict) or set(info) != {"dtype", "shape", "data_offsets"}:
        raise SafetensorsError(f"{where} is not an object of dtype, shape and data_offsets")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if not isinstance(dtype, str) or dtype not in DTYPE_BYTES:
        raise SafetensorsError(f"{where} has an unknown dtype {dtype!r}")
    if not isinstance(shape, list) or not all(_is_int(s) and s >= 0 for s in shape):
        raise SafetensorsError(f"{where} has shape {shape!r}, not a list of non-negative integers")
    if (
        not isinstance(offsets, list)
        or len(offsets) != 2
        or not all(_is_int(o) for o in offsets)
        or not 0 <= offsets[0] <= offsets[1] <= data_size
    ):
        raise SafetensorsError(
            f"{where} has data_offsets {offsets!r}, not [begin, end] within the {data_size} "
            "data bytes"
        )
    nbytes = math.prod(shape) * DTYPE_BYTES[dtype]
    if offsets[1] - offsets[0] != nbytes:
        raise SafetensorsError(
            f"{where} spans {offsets[1] - offsets[0]} bytes; its shape {shape} of {dtype} needs "
            f"{nbytes}"
        )
    return TensorEntry(name, dtype, tuple(shape), p, base + offsets[0], nbytes)


def tensor_data(t: TensorEntry) -> np.ndarray:
    """The tensor's data, mapped (not read until used): F32 / F16 as they are, BF16 as
    ml_dtypes.bfloat16."""
    import ml_dtypes

    types = {"F32": np.dtype("<f4"), "F16": np.dtype("<f2"), "BF16": np.dtype(ml_dtypes.bfloat16)}
    if t.dtype not in types:
        raise SafetensorsError(f"tensor '{t.name}' is {t.dtype}; only {', '.join(FLOATS)} are read")
    try:
        if t.nbytes == 0:
            return np.zeros(t.shape, types[t.dtype])
        return np.memmap(t.file, types[t.dtype], "r", t.offset, t.shape)
    except (OSError, ValueError) as e:
        raise SafetensorsError(f"cannot map tensor '{t.name}' of '{t.file}': {e}") from None
