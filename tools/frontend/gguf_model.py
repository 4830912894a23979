"""The GGUF header of a llama-, qwen3- or qwen3moe-architecture checkpoint: its dimensions (metadata) and
its tensors' names, shapes and types, read with llama.cpp's `gguf` package (GGUFReader maps the
file and parses the header; no tensor data is read until `tensor_array` asks for one).

Every problem is a `GGUFError` with one message: a file that is not GGUF, a truncated or
malformed one, an architecture or a weight type this project does not import, a missing key or
tensor, shapes or counts that disagree with the metadata, a rope scaling. Which keys are read,
their defaults, and what is ignored: docs/tg.md#importing-gguf-checkpoints.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from spatial_dialect.tools.frontend.gguf_file import GGUFFileError, check_file, shown

ARCHITECTURES = ("llama", "qwen3", "qwen3moe")
"""The architectures spatial-import writes."""

SUPPORTED_TYPES = ("F32", "F16", "BF16", "Q8_0")
"""The GGML tensor types spatial-import accepts."""


class GGUFError(Exception):
    """The file cannot be imported; the message says why."""


@dataclass
class TensorInfo:
    name: str
    shape: tuple[int, ...]  # numpy order (ggml's ne reversed): a weight is out x in
    type: str  # GGML type name: F32, F16, BF16, Q8_0, ...
    index: int  # position in the reader's tensor list


@dataclass
class ModelHeader:
    path: str
    arch: str
    d: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int
    eps: float
    rope_base: float
    rope_dims: int
    vocab: int
    context: int
    tensors: dict[str, TensorInfo] = field(default_factory=dict)
    # qwen3moe: every layer's FFN is a mixture of `experts` experts of `ffn` rows, `experts_used`
    # of them a token (0: a dense FFN)
    experts: int = 0
    experts_used: int = 0

    @property
    def tied(self) -> bool:
        """The LM head reuses the embedding table (no output.weight)."""
        return "output.weight" not in self.tensors

    @property
    def qk_norm(self) -> bool:
        return self.arch in ("qwen3", "qwen3moe")

    @property
    def rope_style(self) -> str:
        # llama.cpp: LLM_ARCH_LLAMA ropes adjacent pairs (its converter permutes q and k for
        # that), LLM_ARCH_QWEN3 ropes (i, i + D/2), the neox style.
        return "interleaved" if self.arch == "llama" else "neox"


def open_reader(path: str | Path) -> Any:
    """GGUFReader of `path`, or GGUFError."""
    try:
        from gguf import GGUFReader
    except ImportError:
        raise GGUFError(
            "the 'gguf' package is not installed (pip install 'spatial-dialect[gguf]')"
        ) from None
    p = Path(path)
    if not p.exists():
        raise GGUFError(f"cannot open '{p}': no such file")
    if not p.is_file():
        raise GGUFError(f"cannot open '{p}': not a regular file (a GGUF checkpoint is one file)")
    try:
        check_file(p)
    except GGUFFileError as e:
        raise GGUFError(f"'{p}' is not a well-formed GGUF file: {e}") from None
    except OSError as e:
        raise GGUFError(f"cannot read '{p}': {e.strerror}") from None
    try:
        return GGUFReader(p, "r")
    except Exception as e:  # noqa: BLE001 - check_file's walk should leave nothing to raise
        raise GGUFError(
            f"'{p}' is not a readable GGUF file: {type(e).__name__}: {shown(str(e))}"
        ) from None


def _field(reader: Any, key: str, default: Any = None) -> Any:
    f = reader.fields.get(key)
    if f is None:
        if default is None:
            raise GGUFError(f"the GGUF metadata has no '{key}'")
        return default
    try:
        value = f.contents()
    except Exception as e:  # noqa: BLE001
        raise GGUFError(f"the GGUF metadata '{key}' is malformed: {e}") from None
    return value


def _int(reader: Any, key: str, default: int | None = None) -> int:
    v = _field(reader, key, default)
    if isinstance(v, list):  # a per-layer array (e.g. head_count_kv): all must agree
        if not v:
            raise GGUFError(f"the GGUF metadata '{key}' is an empty array")
        if len(set(map(repr, v))) != 1:
            raise GGUFError(f"'{key}' differs between layers ({shown(repr(v))}); not supported")
        v = v[0]
    if not isinstance(v, int | np.integer) or isinstance(v, bool) or v <= 0:
        raise GGUFError(
            f"the GGUF metadata '{key}' must be a positive integer, got {shown(repr(v))}"
        )
    return int(v)


def _length(reader: Any, key: str, default: int) -> int:
    """The element count of an array key (not decoded: a tokenizer's list is long)."""
    f = reader.fields.get(key)
    return default if f is None else len(f.data)


def _float(reader: Any, key: str, default: float | None = None) -> float:
    v = _field(reader, key, default)
    number = isinstance(v, float | int | np.floating | np.integer) and not isinstance(v, bool)
    # inf passes `> 0` but is no epsilon or base: rms_norm would divide by it (every output 0);
    # the programs hold these numbers as f32 attributes, so they must be positive in f32 too
    with np.errstate(over="ignore"):
        in_f32 = number and 0 < np.float32(v) < np.inf
    if not number or not 0 < v < math.inf or not in_f32:
        raise GGUFError(
            f"the GGUF metadata '{key}' must be a positive finite number in f32's range, got "
            f"{shown(repr(v))}"
        )
    return float(v)


def tensor_infos(reader: Any) -> dict[str, TensorInfo]:
    """The file's tensors by name: numpy shapes (ggml's ne reversed), GGML type names."""
    tensors: dict[str, TensorInfo] = {}
    for i, t in enumerate(reader.tensors):
        type_name = getattr(t.tensor_type, "name", str(t.tensor_type))
        shape = tuple(int(n) for n in reversed(list(t.shape)))
        tensors[t.name] = TensorInfo(t.name, shape, type_name, i)
    return tensors


def _str(reader: Any, key: str, default: str | None = None) -> str:
    v = _field(reader, key, default)
    if not isinstance(v, str):
        raise GGUFError(f"the GGUF metadata '{key}' must be a string, got {shown(repr(v))}")
    return v


def read_header(path: str | Path) -> tuple[Any, ModelHeader]:
    """(the reader, the model's header) of a llama or qwen3 GGUF file."""
    reader = open_reader(path)
    arch = _str(reader, "general.architecture")
    if arch not in ARCHITECTURES:
        raise GGUFError(
            f"architecture '{shown(arch)}' is not supported; spatial-import writes "
            f"{', '.join(ARCHITECTURES)}"
        )
    tensors = tensor_infos(reader)
    a = arch
    d = _int(reader, f"{a}.embedding_length")
    heads = _int(reader, f"{a}.attention.head_count")
    if f"{a}.attention.key_length" not in reader.fields and d % heads:
        raise GGUFError(
            f"the GGUF metadata has no '{a}.attention.key_length', and embedding_length {d} is "
            f"not a multiple of head_count {heads} to imply it"
        )
    head_dim = _int(reader, f"{a}.attention.key_length", d // heads)
    # A qwen3moe layer's FFN is its experts (expert_feed_forward_length rows each).
    moe = arch == "qwen3moe"
    ffn_key = f"{a}.expert_feed_forward_length" if moe else f"{a}.feed_forward_length"
    header = ModelHeader(
        path=str(path),
        arch=arch,
        d=d,
        layers=_int(reader, f"{a}.block_count"),
        heads=heads,
        kv_heads=_int(reader, f"{a}.attention.head_count_kv", heads),
        head_dim=head_dim,
        ffn=_int(reader, ffn_key),
        eps=_float(reader, f"{a}.attention.layer_norm_rms_epsilon", 1e-5),
        rope_base=_float(reader, f"{a}.rope.freq_base", 10000.0),
        rope_dims=_int(reader, f"{a}.rope.dimension_count", head_dim),
        vocab=0,
        context=_int(reader, f"{a}.context_length", 2048),
        tensors=tensors,
        experts=_int(reader, f"{a}.expert_count") if moe else 0,
        experts_used=_int(reader, f"{a}.expert_used_count") if moe else 0,
    )
    if header.experts_used > header.experts:
        raise GGUFError(
            f"expert_used_count {header.experts_used} exceeds expert_count {header.experts}"
        )
    if "token_embd.weight" not in tensors:
        raise GGUFError("the file has no tensor 'token_embd.weight' (the embedding table)")
    header.vocab = tensors["token_embd.weight"].shape[0]
    # The vocabulary is the embedding table's rows; what the metadata says of it must agree.
    stated = {
        f"{a}.vocab_size": _int(reader, f"{a}.vocab_size", header.vocab),
        "tokenizer.ggml.tokens": _length(reader, "tokenizer.ggml.tokens", header.vocab),
    }
    for key, n in stated.items():
        if n != header.vocab:
            raise GGUFError(f"'{key}' says {n} tokens; token_embd.weight has {header.vocab} rows")
    vl = _int(reader, f"{a}.attention.value_length", head_dim)
    if vl != head_dim:
        raise GGUFError(f"value_length {vl} differs from key_length {head_dim}; not supported")
    scaling = _str(reader, f"{a}.rope.scaling.type", "none")
    if scaling != "none":
        # The rope tables are base^(-2j/D) of the position (and rope_freqs.weight's divisors);
        # a scaled rope (linear, yarn, longrope) computes other angles.
        raise GGUFError(f"rope scaling '{shown(scaling)}' is not supported (only unscaled rope)")
    if header.heads % header.kv_heads:
        raise GGUFError(f"head_count {heads} is not a multiple of head_count_kv {header.kv_heads}")
    if header.rope_dims != head_dim:
        raise GGUFError(
            f"rope.dimension_count {header.rope_dims} differs from the head dimension {head_dim} "
            "(partial rotary embedding); not supported"
        )
    check_layer_count(header)
    check_tensors(header)
    return reader, header


_BLOCK = re.compile(r"blk\.(\d+)\.")


def check_layer_count(h: ModelHeader) -> None:
    """block_count against the layers the file holds tensors of, before anything builds a table
    of block_count entries (a count of 2**40 would take minutes and all memory to refuse)."""
    present = {int(m.group(1)) for name in h.tensors if (m := _BLOCK.match(name))}
    missing = next(i for i in range(len(present) + 1) if i not in present)
    if h.layers > missing:
        held = f"blk.0 to blk.{missing - 1}" if missing else "none"
        raise GGUFError(
            f"block_count is {h.layers}, but the file holds the tensors of {missing} layer(s) "
            f"({held})"
        )


def expected_shapes(h: ModelHeader, layers: int | None = None) -> dict[str, tuple[int, ...]]:
    """The numpy shape of every tensor the step reads, by GGUF name."""
    d, hd = h.d, h.head_dim
    q, kv = h.heads * hd, h.kv_heads * hd
    shapes: dict[str, tuple[int, ...]] = {"token_embd.weight": (h.vocab, d)}
    for i in range(h.layers if layers is None else layers):
        b = f"blk.{i}."
        shapes.update(
            {
                b + "attn_norm.weight": (d,),
                b + "attn_q.weight": (q, d),
                b + "attn_k.weight": (kv, d),
                b + "attn_v.weight": (kv, d),
                b + "attn_output.weight": (d, q),
                b + "ffn_norm.weight": (d,),
            }
        )
        if h.experts:  # the router, then the experts stacked along ggml's last axis
            e = h.experts
            shapes[b + "ffn_gate_inp.weight"] = (e, d)
            shapes[b + "ffn_gate_exps.weight"] = (e, h.ffn, d)
            shapes[b + "ffn_up_exps.weight"] = (e, h.ffn, d)
            shapes[b + "ffn_down_exps.weight"] = (e, d, h.ffn)
        else:
            shapes[b + "ffn_gate.weight"] = (h.ffn, d)
            shapes[b + "ffn_up.weight"] = (h.ffn, d)
            shapes[b + "ffn_down.weight"] = (d, h.ffn)
        if h.qk_norm:
            shapes[b + "attn_q_norm.weight"] = (hd,)
            shapes[b + "attn_k_norm.weight"] = (hd,)
    shapes["output_norm.weight"] = (d,)
    if not h.tied:
        shapes["output.weight"] = (h.vocab, d)
    if "rope_freqs.weight" in h.tensors:
        shapes["rope_freqs.weight"] = (hd // 2,)
    return shapes


def check_tensors(h: ModelHeader, layers: int | None = None) -> None:
    """Every tensor the step reads is present, of the shape the metadata implies, of a
    supported type."""
    check_shapes(h.tensors, expected_shapes(h, layers))


def check_shapes(tensors: dict[str, TensorInfo], shapes: dict[str, tuple[int, ...]]) -> None:
    """Each tensor of `shapes` is in `tensors`, of that shape, of a supported type."""
    for name, shape in shapes.items():
        t = tensors.get(name)
        if t is None:
            raise GGUFError(f"the file has no tensor '{name}'")
        if t.shape != shape:
            raise GGUFError(
                f"tensor '{name}' is {'x'.join(map(str, t.shape))}; the metadata implies "
                f"{'x'.join(map(str, shape))}"
            )
        if t.type not in SUPPORTED_TYPES:
            raise GGUFError(
                f"tensor '{name}' is of type {t.type}, which is not supported; supported: "
                f"{', '.join(SUPPORTED_TYPES)}"
            )


def q8_0_parts(raw: np.ndarray, shape: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
    """(values i8 of `shape`, scales f16 of shape[:-1] x shape[-1]/32) of Q8_0 bytes; blocks run
    along the last (ggml's first) axis."""
    rows = int(np.prod(shape[:-1])) if len(shape) > 1 else 1
    blocks = np.ascontiguousarray(raw, dtype=np.uint8).reshape(rows, shape[-1] // 32, 34)
    scales = blocks[..., :2].copy().view(np.float16).reshape(*shape[:-1], shape[-1] // 32)
    values = blocks[..., 2:].copy().view(np.int8).reshape(shape)
    return values, scales


def tensor_array(reader: Any, info: TensorInfo) -> np.ndarray:
    """The tensor's data in numpy order: F32/F16 as they are, BF16 as ml_dtypes.bfloat16,
    Q8_0 dequantized to f32 exactly as gguf.quants.dequantize."""
    import ml_dtypes

    from spatial_dialect.tools.interpreters.q8_0 import dequantize

    t = reader.tensors[info.index]
    try:
        data = np.asarray(t.data)
        if info.type in ("F32", "F16"):
            array = data.reshape(info.shape)
        elif info.type == "BF16":
            raw = np.ascontiguousarray(data).view(np.uint16).reshape(info.shape)
            array = raw.view(ml_dtypes.bfloat16)
        elif info.type == "Q8_0":
            values, scales = q8_0_parts(data, info.shape)
            check_finite(info, scales, "block scale")
            return dequantize(values, scales, axis=len(info.shape) - 1)
        else:
            raise GGUFError(f"tensor '{info.name}' is of type {info.type}, which is not supported")
    except (ValueError, TypeError) as e:
        raise GGUFError(
            f"cannot read tensor '{info.name}' of '{reader.data.filename}' (truncated?): {e}"
        ) from None
    check_finite(info, array, "value")
    return array


def check_finite(info: TensorInfo, array: np.ndarray, what: str) -> None:
    """A weight is a finite number. GGUF has no checksum: a NaN or an inf is the one sign of
    damaged data (or of data read at the wrong offset) that can be told from a real weight, and
    it would turn every output of a run into NaN while the run reports a comparison."""
    with np.errstate(invalid="ignore"):  # ml_dtypes' bfloat16 warns of the NaNs it finds
        finite = np.isfinite(array)
    if not finite.all():
        first = np.unravel_index(int(np.argmin(finite)), array.shape)
        raise GGUFError(
            f"tensor '{info.name}' holds {int(finite.size - finite.sum())} non-finite {what}(s) "
            f"(NaN or inf), the first at {tuple(map(int, first))}: the file's data is damaged"
        )


# The metadata readers under public names, for the other architectures' headers
# (tools/frontend/next_model.py): one definition of each rule (positive, per-layer agreement).
metadata = _field
metadata_int = _int
metadata_float = _float
metadata_str = _str
