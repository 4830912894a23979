"""The GGUF container checked byte by byte before llama.cpp's `gguf` reader maps it.

GGUFReader trusts the file: a count or a length it reads drives a loop or a slice before anything
compares it with the file's size (a kv_count of 2**60 loops that many times; an array length past
the end yields a short slice the reader then indexes, an IndexError), a name that is not UTF-8
raises UnicodeDecodeError, an unknown type id a bare ValueError, and a tensor's dimensions are
multiplied in uint64, where they wrap. So `check_file` walks the layout first (GGUF v2 and v3, as
docs/tg.md#importing-gguf-checkpoints links it) with every number bounded by the bytes that remain,
and says what is wrong and where: the byte offset, the key or the tensor. A file it accepts is one
the reader parses without error and whose tensors' data lie inside the file; the checks are those
of ggml's own loader (gguf.cpp: at most 4 dimensions, a row a whole number of blocks, offsets
aligned and following one another, no duplicate keys or tensor names, the element count within
int64), so a file refused here is one llama.cpp refuses too. The walk reads only the header: its cost is linear in the header's
bytes (each key or tensor info takes at least 13 bytes, which bounds every count by the file).
"""

from __future__ import annotations

import mmap
import struct
from pathlib import Path

# GGUF value type ids (gguf.GGUFValueType) -> struct code of a scalar; 8: string, 9: array.
_SCALARS = {
    0: "B",
    1: "b",
    2: "H",
    3: "h",
    4: "I",
    5: "i",
    6: "f",
    7: "?",
    10: "Q",
    11: "q",
    12: "d",
}
_STRING, _ARRAY = 8, 9
_TYPE_NAMES = {
    **dict(enumerate("uint8 int8 uint16 int16 uint32 int32 float32 bool string array".split())),
    10: "uint64",
    11: "int64",
    12: "float64",
}
MAX_DIMS = 4  # GGML_MAX_DIMS
INT64_MAX = 2**63 - 1
SUPPORTED_VERSIONS = (2, 3)


class GGUFFileError(Exception):
    """The bytes are not a well-formed GGUF file; the message says what and where."""


def shown(text: str, limit: int = 60) -> str:
    """A string from the file as one printable line: control characters escaped, long ones cut."""
    s = text.encode("unicode_escape").decode("ascii") if not text.isprintable() else text
    return s if len(s) <= limit else s[:limit] + "..."


class _Walker:
    def __init__(self, buf: mmap.mmap | bytes, size: int):
        self.buf, self.size, self.at, self.order = buf, size, 0, "<"

    def need(self, n: int, what: str) -> None:
        if n > self.size - self.at:
            raise GGUFFileError(
                f"truncated: {what} at byte {self.at} needs {n} byte(s), the file ends at byte "
                f"{self.size}"
            )

    def scalar(self, code: str, what: str) -> int | float | bool:
        n = struct.calcsize(code)
        self.need(n, what)
        (v,) = struct.unpack_from(self.order + code, self.buf, self.at)
        self.at += n
        return v

    def string(self, what: str) -> str:
        start = self.at
        n = int(self.scalar("Q", f"the length of {what}"))
        if n > self.size - self.at:
            raise GGUFFileError(
                f"{what} at byte {start} claims {n} bytes; the file ends at byte {self.size}, "
                f"{self.size - self.at} bytes on (truncated, or the length is wrong)"
            )
        raw = bytes(self.buf[self.at : self.at + n])
        self.at += n
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise GGUFFileError(
                f"{what} at byte {start} is not UTF-8 (byte {start + 8 + e.start} is "
                f"0x{raw[e.start]:02x})"
            ) from None

    def value(self, type_id: int, what: str) -> object:
        """One value of `type_id`; an array's elements are skipped, not kept (only their count
        and their well-formedness matter here)."""
        if type_id in _SCALARS:
            return self.scalar(_SCALARS[type_id], what)
        if type_id == _STRING:
            return self.string(what)
        if type_id != _ARRAY:
            raise GGUFFileError(f"{what} at byte {self.at - 4} has unknown value type id {type_id}")
        item = int(self.scalar("I", f"the element type of {what}"))
        count = int(self.scalar("Q", f"the length of {what}"))
        if item == _ARRAY:
            raise GGUFFileError(f"{what} is an array of arrays, which GGUF readers do not take")
        if item not in _SCALARS and item != _STRING:
            raise GGUFFileError(f"{what} is an array of unknown element type id {item}")
        smallest = 8 if item == _STRING else struct.calcsize(_SCALARS[item])
        if count > (self.size - self.at) // smallest:
            raise GGUFFileError(
                f"{what} claims {count} {_TYPE_NAMES[item]} element(s); the file ends at byte "
                f"{self.size}, {self.size - self.at} bytes on (truncated, or the length is wrong)"
            )
        if item == _STRING:
            for i in range(count):
                self.string(f"element {i} of {what}")
        else:
            self.at += count * smallest
        return count


def check_bytes(buf: mmap.mmap | bytes, size: int) -> int:
    """Walks a GGUF file's header in `buf` (of `size` bytes): the offset of its tensor data, or
    GGUFFileError."""
    w = _Walker(buf, size)
    if size < 4 or bytes(buf[:4]) != b"GGUF":
        head = bytes(buf[: min(size, 4)])
        raise GGUFFileError(f"not a GGUF file: it starts with {head!r}, not b'GGUF'")
    w.at = 4
    version = int(w.scalar("I", "the version"))
    if version & 0xFFFF == 0:  # written on a machine of the other byte order (as GGUFReader)
        w.order = ">"
        version = int.from_bytes(version.to_bytes(4, "little"), "big")
    if version not in SUPPORTED_VERSIONS:
        raise GGUFFileError(
            f"GGUF version {version}; the reader takes versions "
            f"{' and '.join(map(str, SUPPORTED_VERSIONS))}"
        )
    tensor_count = int(w.scalar("Q", "the tensor count"))
    kv_count = int(w.scalar("Q", "the metadata key count"))
    # A key takes at least 13 bytes (its length, type id and a 1-byte value), a tensor info 24.
    need = kv_count * 13 + tensor_count * 24
    if need > size - w.at:
        raise GGUFFileError(
            f"the header claims {kv_count} metadata key(s) and {tensor_count} tensor(s), at "
            f"least {need} bytes, but the file ends {size - w.at} bytes after it (truncated, or "
            "a count is wrong)"
        )
    alignment = _walk_keys(w, kv_count)
    infos = _walk_tensor_infos(w, tensor_count, alignment)
    data = -(-w.at // alignment) * alignment
    _check_data(infos, data, alignment, size)
    return data


def _walk_keys(w: _Walker, kv_count: int) -> int:
    """The metadata: its general.alignment (32 when absent)."""
    keys: dict[str, int] = {}
    alignment = 32
    for n in range(kv_count):
        start = w.at
        key = w.string(f"the name of metadata key {n}")
        if key in keys:
            raise GGUFFileError(
                f"metadata key '{shown(key)}' appears twice (bytes {keys[key]} and {start})"
            )
        keys[key] = start
        type_id = int(w.scalar("I", f"the type of key '{shown(key)}'"))
        value = w.value(type_id, f"the value of key '{shown(key)}'")
        if key == "general.alignment":
            if type_id != 4:
                raise GGUFFileError(
                    f"general.alignment is a {_TYPE_NAMES.get(type_id)}; GGUF says uint32"
                )
            if not isinstance(value, int) or value <= 0 or value & (value - 1):
                raise GGUFFileError(f"general.alignment {value} is not a power of two")
            alignment = value
    return alignment


def _walk_tensor_infos(w: _Walker, tensor_count: int, alignment: int) -> list[tuple[str, int, int]]:
    """(name, bytes of data, data offset) of each tensor info."""
    from gguf import GGML_QUANT_SIZES, GGMLQuantizationType

    infos: list[tuple[str, int, int]] = []
    names: dict[str, int] = {}
    sizes = {int(t): (t.name, *v) for t, v in GGML_QUANT_SIZES.items()}
    for n in range(tensor_count):
        start = w.at
        name = w.string(f"the name of tensor {n}")
        what = f"tensor '{shown(name)}'"
        if name in names:
            raise GGUFFileError(
                f"{what} appears twice (tensor infos at bytes {names[name]} and {start})"
            )
        names[name] = start
        dims_n = int(w.scalar("I", f"the dimension count of {what}"))
        if dims_n > MAX_DIMS:
            raise GGUFFileError(f"{what} has {dims_n} dimensions; ggml takes at most {MAX_DIMS}")
        dims = [int(w.scalar("Q", f"dimension {i} of {what}")) for i in range(dims_n)]
        elements = 1
        for dim in dims:
            if dim > INT64_MAX:
                raise GGUFFileError(f"{what} has a dimension of {dim}, past int64")
            elements *= dim
        if elements > INT64_MAX:
            raise GGUFFileError(
                f"{what} of {' x '.join(map(str, dims))} has more elements than int64 counts"
            )
        type_id = int(w.scalar("I", f"the type of {what}"))
        if type_id not in sizes:
            known = GGMLQuantizationType.__members__.values()
            raise GGUFFileError(
                f"{what} has unknown type id {type_id} (ggml's are "
                f"{min(map(int, known))} to {max(map(int, known))}, less removed ones)"
            )
        type_name, block, type_size = sizes[type_id]
        if dims and dims[0] % block:
            raise GGUFFileError(
                f"{what} is {type_name}, whose blocks hold {block} elements, but its rows hold "
                f"{dims[0]}"
            )
        offset = int(w.scalar("Q", f"the data offset of {what}"))
        if offset % alignment:
            raise GGUFFileError(
                f"{what}'s data offset {offset} is not a multiple of the alignment {alignment}"
            )
        infos.append((name, elements // block * type_size, offset))
    return infos


def _check_data(infos: list[tuple[str, int, int]], data: int, alignment: int, size: int) -> None:
    """Each tensor's data where ggml's loader expects it, and inside the file."""
    # ggml's loader lays the tensors' data out in the order of their infos, each padded to the
    # alignment, and refuses any other offset: an offset into another tensor's bytes would read
    # them as this tensor's, finite numbers of the wrong meaning that nothing later can tell.
    expected = 0
    for name, nbytes, offset in infos:
        if offset != expected:
            raise GGUFFileError(
                f"tensor '{shown(name)}''s data offset is {offset}; the tensors before it end at "
                f"{expected} (ggml lays them out one after another, each padded to {alignment})"
            )
        expected += -(-nbytes // alignment) * alignment
        if data + offset + nbytes > size:
            raise GGUFFileError(
                f"tensor '{shown(name)}''s data (bytes {data + offset} to {data + offset + nbytes}) "
                f"runs past the end of the file (byte {size})"
            )


def check_file(path: str | Path) -> int:
    """`check_bytes` of the file at `path` (mapped, so a large file's data is never read)."""
    with open(path, "rb") as f:
        size = f.seek(0, 2)
        if size == 0:
            raise GGUFFileError("the file is empty")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as buf:
            return check_bytes(buf, size)
