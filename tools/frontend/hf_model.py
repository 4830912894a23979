"""A Hugging Face checkpoint directory's header: config.json, the safetensors headers of
model.safetensors (or of the shards a model.safetensors.index.json names), and tokenizer.json's
path (recorded, not read: the program takes ids). No tensor data is read.

What is imported, by `architectures[0]` of config.json: LlamaForCausalLM, Qwen3ForCausalLM,
Qwen3MoeForCausalLM and Qwen3NextForCausalLM, each an `Architecture` (its tensors' names by `Role`
and its flags) in `ARCHITECTURES`. Qwen3-Next differs from Llama's family by hooks: its layers'
tensor shapes, its own config keys (next_model.hf_config, the same NextConfig a GGUF header
gives) and its program (next_model.next_step_function, the GGUF step's, named by
next_model.HF_FORMAT), so one definition of the step serves both formats.

Both config spellings are read: transformers 5's `rope_parameters` and `dtype`, and the older
`rope_theta` / `rope_scaling` and `torch_dtype`. Everything the step does not compute is refused
by name rather than ignored, since ignoring it would give a program that runs and is wrong: a
scaled rope (llama3, linear, yarn, ...), partial rotary embedding (but in Qwen3-Next, whose
step has it), sliding windows in use (a layer type the architecture does not compute),
attention or MLP biases, an activation other than silu, MoE models with dense layers between,
tie_word_embeddings disagreeing with whether lm_head.weight is there, a bias beside a weight the
step reads (Qwen3-Next's conv1d has none in transformers), a tensor whose dtype is
not config.json's, a shard the index names that is not there. Every problem is one `HFError`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spatial_dialect.tools.frontend.gguf_model import GGUFError
from spatial_dialect.tools.frontend.layers import Role
from spatial_dialect.tools.frontend.next_model import (
    HF_FORMAT,
    HF_TENSORS,
    NextNames,
    hf_config,
    next_step_function,
    stored_shapes,
)
from spatial_dialect.tools.frontend.safetensors_header import (
    FLOATS,
    SafetensorsError,
    TensorEntry,
    read_header,
    strict_json,
)


class HFError(Exception):
    """The directory cannot be imported; the message says why."""


LLAMA_TENSORS: dict[Role, tuple[str, str]] = {
    Role.TABLE: ("model.embed_tokens.weight", "rows"),
    Role.FINAL_NORM: ("model.norm.weight", "rows"),
    Role.LM_HEAD: ("lm_head.weight", "kn"),
    Role.ATTN_NORM: ("input_layernorm.weight", "rows"),
    Role.Q: ("self_attn.q_proj.weight", "kn"),
    Role.K: ("self_attn.k_proj.weight", "kn"),
    Role.V: ("self_attn.v_proj.weight", "kn"),
    Role.O: ("self_attn.o_proj.weight", "kn"),
    Role.Q_NORM: ("self_attn.q_norm.weight", "rows"),
    Role.K_NORM: ("self_attn.k_norm.weight", "rows"),
    Role.FFN_NORM: ("post_attention_layernorm.weight", "rows"),
    Role.GATE: ("mlp.gate_proj.weight", "kn"),
    Role.UP: ("mlp.up_proj.weight", "kn"),
    Role.DOWN: ("mlp.down_proj.weight", "kn"),
    Role.ROUTER: ("mlp.gate.weight", "kn"),
    # one tensor per expert in the file ({e}); "experts" stacks them as the GGUF layout does
    Role.EXPERTS_GATE: ("mlp.experts.{e}.gate_proj.weight", "experts"),
    Role.EXPERTS_UP: ("mlp.experts.{e}.up_proj.weight", "experts"),
    Role.EXPERTS_DOWN: ("mlp.experts.{e}.down_proj.weight", "experts"),
}
"""transformers' tensor of each weight (a layer's after `model.layers.N.`) and its layout, the
layouts meaning what they mean for GGUF (tools/frontend/weights.py `arrange`): a torch Linear's
weight is out x in, as a GGUF tensor in numpy order is. Llama, Qwen3 and Qwen3-MoE share it."""

LAYER_PREFIX = "model.layers.{i}."


@dataclass(frozen=True)
class Architecture:
    """One architecture spatial-import reads from a Hugging Face directory."""

    name: str  # the program's name prefix (@qwen3_decode), GGUF's spelling
    tensors: dict[Role, tuple[str, str]]
    qk_norm: bool = False
    moe: bool = False
    # the layer_types entries it computes, and whether its rope may be partial
    layer_types: tuple[str, ...] = ("full_attention",)
    partial_rope: bool = False
    # The hooks of an architecture unlike Llama's (Qwen3-Next): `layer_shapes(h, i)`, the
    # shape as stored of each role's tensor in layer i (default: attention_layer_shapes);
    # `configure(config, h)`, reading its own config keys into h.extra and refusing what it
    # does not compute; `step`, the builder of its program (hf_program.checkpoint_step calls
    # it with the header, the HFNames and the step's sizes; default: layers.step_function).
    layer_shapes: Callable[[HFHeader, int], dict[Role, tuple[int, ...]]] = field(
        default=lambda h, i: attention_layer_shapes(h, i)
    )
    configure: Callable[[Config, HFHeader], None] | None = None
    step: Callable[..., Any] | None = None


ARCHITECTURES: dict[str, Architecture] = {
    "LlamaForCausalLM": Architecture("llama", LLAMA_TENSORS),
    "Qwen3ForCausalLM": Architecture("qwen3", LLAMA_TENSORS, qk_norm=True),
    "Qwen3MoeForCausalLM": Architecture("qwen3moe", LLAMA_TENSORS, qk_norm=True, moe=True),
    "Qwen3NextForCausalLM": Architecture(
        "qwen3next",
        HF_TENSORS,
        qk_norm=True,
        moe=True,
        layer_types=("full_attention", "linear_attention"),
        partial_rope=True,
        layer_shapes=lambda h, i: next_layer_shapes(h, i),
        configure=lambda c, h: next_configure(c, h),
        step=lambda *a: next_step(*a),
    ),
}
"""config.json's `architectures[0]` -> what is imported."""

TORCH_DTYPES = {"float32": "F32", "bfloat16": "BF16", "float16": "F16"}
"""config.json's dtype -> the safetensors dtype its tensors must have."""


@dataclass
class HFHeader:
    path: str
    arch: Architecture
    d: int
    layers: int
    heads: int
    kv_heads: int
    head_dim: int
    ffn: int  # a dense FFN's width, or one expert's (moe_intermediate_size)
    eps: float
    rope_theta: float
    vocab: int
    context: int
    tied: bool
    dtype: str | None  # config.json's, as a safetensors dtype; None: not stated
    tensors: dict[str, TensorEntry] = field(default_factory=dict)
    experts: int = 0
    experts_used: int = 0
    renormalize: bool = True  # norm_topk_prob
    tokenizer: str | None = None  # tokenizer.json, when the directory has one
    extra: dict[str, Any] = field(default_factory=dict)  # Architecture.configure's values

    def tensor_name(self, role: Role, layer: int | None) -> str:
        name = self.arch.tensors[role][0]
        return name if layer is None else LAYER_PREFIX.format(i=layer) + name


def _load_json(path: Path, what: str) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise HFError(f"cannot read '{path}': {e.strerror}") from None
    try:
        return strict_json(raw, what)
    except ValueError as e:
        raise HFError(f"'{path}': {e}") from None


class Config:
    """config.json's values, each checked as it is read."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.data = _load_json(path, "config.json")
        if not isinstance(self.data, dict):
            raise HFError(f"'{path}' is not a JSON object")

    def fail(self, key: str, want: str, v: object) -> HFError:
        return HFError(f"config.json's '{key}' must be {want}, got {v!r}")

    def positive_int(self, key: str, default: int | None = None) -> int:
        v = self.data.get(key, default)
        if v is None and default is not None:
            v = default
        if v is None:
            raise HFError(f"config.json has no '{key}'")
        if not isinstance(v, int) or isinstance(v, bool) or v <= 0:
            raise self.fail(key, "a positive integer", v)
        return v

    def positive_float(self, key: str, v: object) -> float:
        if not isinstance(v, int | float) or isinstance(v, bool) or not 0 < v < math.inf:
            raise self.fail(key, "a positive finite number", v)
        return float(v)

    def flag(self, key: str, default: bool) -> bool:
        v = self.data.get(key, default)
        if not isinstance(v, bool):
            raise self.fail(key, "true or false", v)
        return v

    def get(self, key: str, default: object = None) -> object:
        return self.data.get(key, default)


SCALINGS = {
    "llama3": "Llama 3.1's frequency-dependent scaling",
    "linear": "positions divided by a factor",
    "dynamic": "NTK scaling past the trained context",
    "yarn": "YaRN's per-frequency interpolation",
    "longrope": "per-frequency factors",
}
"""What a refused rope scaling would compute, for its refusal's line."""


def _rope(c: Config, partial: bool) -> float:
    """The rope base; anything but the unscaled rotary embedding is refused, and a partial one
    unless the architecture's step has one (`partial`)."""
    params = c.get("rope_parameters")
    scaling = c.get("rope_scaling")
    if params is not None and not isinstance(params, dict):
        raise c.fail("rope_parameters", "an object", params)
    if scaling is not None and not isinstance(scaling, dict):
        raise c.fail("rope_scaling", "an object or null", scaling)
    for spec in (params or {}, scaling or {}):
        kind = spec.get("rope_type", spec.get("type", "default"))
        if kind not in ("default", None):
            what = f" ({SCALINGS[kind]})" if isinstance(kind, str) and kind in SCALINGS else ""
            raise HFError(f"rope scaling {kind!r}{what} is not supported: only unscaled rope")
    factor = (params or {}).get("partial_rotary_factor", c.get("partial_rotary_factor", 1.0))
    if partial and (
        not isinstance(factor, int | float) or isinstance(factor, bool) or not 0 < factor <= 1
    ):
        raise c.fail("partial_rotary_factor", "a number in (0, 1]", factor)
    if not partial and factor != 1.0:
        raise HFError(
            f"partial_rotary_factor {factor!r} (partial rotary embedding) is not supported"
        )
    if params and "rope_theta" in params:
        return c.positive_float("rope_parameters.rope_theta", params["rope_theta"])
    return c.positive_float("rope_theta", c.get("rope_theta", 10000.0))


def _refuse_unsupported(c: Config, arch: Architecture) -> None:
    """What a config can ask for that the step does not compute."""
    act = c.get("hidden_act", "silu")
    if act != "silu":
        raise HFError(f"hidden_act {act!r} is not supported: the MLP is SwiGLU (silu)")
    for key in ("attention_bias", "mlp_bias"):
        if c.flag(key, False):
            raise HFError(f"{key} true is not supported: the projections have no bias")
    if c.flag("use_sliding_window", False):
        raise HFError(
            f"sliding window attention (use_sliding_window true, sliding_window "
            f"{c.get('sliding_window')!r}) is not supported: every layer attends to all its past"
        )
    types = c.get("layer_types")
    if types is not None:
        if not isinstance(types, list):
            raise c.fail("layer_types", "a list", types)
        other = sorted({str(t) for t in types if t not in arch.layer_types})
        if other:
            raise HFError(
                f"layer_types {other} are not supported: only {', '.join(arch.layer_types)}"
            )


def _tensors(root: Path) -> dict[str, TensorEntry]:
    """Every tensor of model.safetensors, or of the shards model.safetensors.index.json names."""
    single, index = root / "model.safetensors", root / "model.safetensors.index.json"
    try:
        if single.is_file():
            return read_header(single)
        if not index.is_file():
            raise HFError(
                f"'{root}' has neither model.safetensors nor model.safetensors.index.json"
            )
        data = _load_json(index, "the index")
        weight_map = data.get("weight_map") if isinstance(data, dict) else None
        if not isinstance(weight_map, dict) or not all(
            isinstance(v, str) for v in weight_map.values()
        ):
            raise HFError(f"'{index}' has no weight_map of tensor names to shard files")
        shards: dict[str, dict[str, TensorEntry]] = {}
        out: dict[str, TensorEntry] = {}
        for name, shard in weight_map.items():
            if shard not in shards:
                p = root / shard
                if Path(shard).name != shard or shard in ("", ".", ".."):
                    raise HFError(
                        f"the index names shard '{shard}' (for '{name}'), which is not a file name "
                        "in the checkpoint's directory"
                    )
                if not p.is_file():
                    raise HFError(
                        f"the index names shard '{shard}' (for '{name}'), which is missing"
                    )
                shards[shard] = read_header(p)
            if name not in shards[shard]:
                raise HFError(f"the index puts '{name}' in '{shard}', which has no such tensor")
            out[name] = shards[shard][name]
        return out
    except SafetensorsError as e:
        raise HFError(str(e)) from None


def read_header_dir(path: str | Path) -> HFHeader:
    """The header of the Hugging Face checkpoint directory at `path`, checked."""
    root = Path(path)
    if not (root / "config.json").is_file():
        raise HFError(f"'{root}' has no config.json (not a Hugging Face checkpoint directory)")
    c = Config(root / "config.json")
    names = c.get("architectures")
    if not isinstance(names, list) or len(names) != 1 or not isinstance(names[0], str):
        raise c.fail("architectures", "a list of one class name", names)
    arch = ARCHITECTURES.get(names[0])
    if arch is None:
        raise HFError(
            f"architecture '{names[0]}' is not supported; spatial-import reads "
            f"{', '.join(ARCHITECTURES)}"
        )
    _refuse_unsupported(c, arch)
    heads = c.positive_int("num_attention_heads")
    d = c.positive_int("hidden_size")
    if c.get("head_dim") is None and d % heads:
        raise HFError(f"hidden_size {d} is not a multiple of num_attention_heads {heads}")
    stated = c.get("dtype", c.get("torch_dtype"))
    if stated is not None and (not isinstance(stated, str) or stated not in TORCH_DTYPES):
        raise HFError(
            f"config.json's dtype {stated!r} is not supported ({', '.join(TORCH_DTYPES)})"
        )
    h = HFHeader(
        path=str(root),
        arch=arch,
        d=d,
        layers=c.positive_int("num_hidden_layers"),
        heads=heads,
        kv_heads=c.positive_int("num_key_value_heads", heads),
        head_dim=c.positive_int("head_dim", d // heads),
        ffn=c.positive_int("moe_intermediate_size" if arch.moe else "intermediate_size"),
        eps=c.positive_float("rms_norm_eps", c.get("rms_norm_eps", 1e-6)),
        rope_theta=_rope(c, arch.partial_rope),
        vocab=c.positive_int("vocab_size"),
        context=c.positive_int("max_position_embeddings", 2048),
        tied=c.flag("tie_word_embeddings", False),
        dtype=TORCH_DTYPES.get(stated) if isinstance(stated, str) else None,
        tokenizer="tokenizer.json" if (root / "tokenizer.json").is_file() else None,
    )
    if arch.moe:
        key = "num_local_experts" if "num_local_experts" in c.data else "num_experts"
        h.experts = c.positive_int(key)
        h.experts_used = c.positive_int("num_experts_per_tok")
        h.renormalize = c.flag("norm_topk_prob", False)
        if h.experts_used > h.experts:
            raise HFError(f"num_experts_per_tok {h.experts_used} exceeds {key} {h.experts}")
        dense = c.get("mlp_only_layers", [])
        if dense or c.get("decoder_sparse_step", 1) != 1:
            raise HFError(
                f"dense layers between the MoE layers (mlp_only_layers {dense!r}, "
                f"decoder_sparse_step {c.get('decoder_sparse_step')!r}) are not supported"
            )
    if arch.configure is not None:
        arch.configure(c, h)
    if h.heads % h.kv_heads:
        raise HFError(
            f"num_attention_heads {h.heads} is not a multiple of num_key_value_heads {h.kv_heads}"
        )
    h.tensors = _tensors(root)
    has_head = "lm_head.weight" in h.tensors
    if has_head == h.tied:
        raise HFError(
            f"tie_word_embeddings is {str(h.tied).lower()}, but the checkpoint "
            f"{'has' if has_head else 'has no'} lm_head.weight"
        )
    check_tensors(h)
    return h


def attention_layer_shapes(h: HFHeader, i: int) -> dict[Role, tuple[int, ...]]:
    """The shape as stored of each tensor of layer i of a Llama, Qwen3 or Qwen3-MoE model (an
    expert's: one expert's, for each of them)."""
    d, hd, f = h.d, h.head_dim, h.ffn
    q, kv = h.heads * hd, h.kv_heads * hd
    shapes = {Role.ATTN_NORM: (d,), Role.Q: (q, d), Role.K: (kv, d), Role.V: (kv, d)}
    shapes |= {Role.O: (d, q), Role.FFN_NORM: (d,)}
    if h.arch.qk_norm:
        shapes |= {Role.Q_NORM: (hd,), Role.K_NORM: (hd,)}
    if not h.experts:
        return shapes | {Role.GATE: (f, d), Role.UP: (f, d), Role.DOWN: (d, f)}
    shapes[Role.ROUTER] = (h.experts, d)
    return shapes | {Role.EXPERTS_GATE: (f, d), Role.EXPERTS_UP: (f, d), Role.EXPERTS_DOWN: (d, f)}


def expected_shapes(
    h: HFHeader, layers: int | None = None
) -> Iterator[tuple[str, tuple[int, ...]]]:
    """(name, shape as stored) of every tensor the step reads, lazily: a config's layer or
    expert count is checked against the file tensor by tensor, so a mutated 2**40 fails at
    the first missing tensor instead of building a table of 2**40 entries."""
    yield h.tensor_name(Role.TABLE, None), (h.vocab, h.d)
    for i in range(h.layers if layers is None else layers):
        shapes = {
            h.tensor_name(role, i): shape for role, shape in h.arch.layer_shapes(h, i).items()
        }
        yield from ((n, shape) for n, shape in shapes.items() if "{e}" not in n)
        for e in range(h.experts):  # each expert's own tensors (a pattern's {e})
            yield from ((n.format(e=e), shape) for n, shape in shapes.items() if "{e}" in n)
    yield h.tensor_name(Role.FINAL_NORM, None), (h.d,)
    if not h.tied:
        yield h.tensor_name(Role.LM_HEAD, None), (h.vocab, h.d)


def check_tensors(h: HFHeader, layers: int | None = None) -> None:
    """Every tensor the step reads is there, of the shape config.json implies and of a float
    dtype, config.json's when it states one."""
    rows = h.tensors.get(h.tensor_name(Role.TABLE, None))
    if rows is not None and rows.shape[:1] != (h.vocab,):
        raise HFError(
            f"vocab_size {h.vocab} disagrees with model.embed_tokens.weight's shape {list(rows.shape)}"
        )
    present = {int(m[1]) for n in h.tensors if (m := re.match(r"model\.layers\.(\d+)\.", n))}
    if h.layers > len(present):
        raise HFError(
            f"num_hidden_layers {h.layers} exceeds the {len(present)} layer(s) the checkpoint "
            "holds tensors of"
        )
    for name, shape in expected_shapes(h, layers):
        t = h.tensors.get(name)
        if t is None:
            raise HFError(f"the checkpoint has no tensor '{name}'")
        bias = name.removesuffix(".weight") + ".bias"
        if name.endswith(".weight") and bias in h.tensors:  # the step adds none
            raise HFError(f"the checkpoint has a bias '{bias}', which the step does not add")
        if t.shape != shape:
            raise HFError(
                f"tensor '{name}' is {'x'.join(map(str, t.shape))}; config.json implies "
                f"{'x'.join(map(str, shape))}"
            )
        if t.dtype not in FLOATS:
            raise HFError(f"tensor '{name}' is {t.dtype}; supported: {', '.join(FLOATS)}")
        if h.dtype is not None and t.dtype != h.dtype:
            raise HFError(
                f"tensor '{name}' is {t.dtype}, but config.json's dtype says "
                f"{next(k for k, v in TORCH_DTYPES.items() if v == h.dtype)}"
            )


def weight_types(h: HFHeader, layers: int) -> set[str]:
    """The dtypes of the tensors the step of `layers` layers reads."""
    return {h.tensors[name].dtype for name, _ in expected_shapes(h, layers)}


NEXT_KEYS = (
    "linear_num_key_heads",
    "linear_num_value_heads",
    "linear_key_head_dim",
    "linear_value_head_dim",
    "linear_conv_kernel_dim",
    "shared_expert_intermediate_size",
)
"""Qwen3-Next's own config keys, each a positive integer (checked before hf_config reads them)."""


def next_configure(c: Config, h: HFHeader) -> None:
    """Qwen3-Next's dimensions into h.extra["next"] (next_model.hf_config, whose refusals are
    one HFError line here)."""
    k_heads, v_heads, k_dim, v_dim = (c.positive_int(key) for key in NEXT_KEYS[:4])
    for key in NEXT_KEYS[4:]:
        c.positive_int(key)
    if "layer_types" not in c.data:
        c.positive_int("full_attention_interval", 4)
    # hf_config's own checks name GGUF's keys; the same rules in config.json's words first
    if v_heads % k_heads or (v_heads * v_dim) % k_dim:
        raise HFError(
            f"linear_num_value_heads {v_heads} x linear_value_head_dim {v_dim} must split into "
            f"linear_num_key_heads {k_heads} groups of whole value heads and whole key heads of "
            f"linear_key_head_dim {k_dim}"
        )
    if h.heads % h.kv_heads:
        raise HFError(
            f"num_attention_heads {h.heads} is not a multiple of num_key_value_heads {h.kv_heads}"
        )
    params = c.get("rope_parameters") or {}
    factor = params.get("partial_rotary_factor", c.get("partial_rotary_factor", 0.25))
    rotated = h.head_dim * factor
    if rotated != int(rotated) or int(rotated) % 2:
        raise HFError(
            f"partial_rotary_factor {factor} of head_dim {h.head_dim} rotates {rotated:g} "
            "columns: the rope needs an even whole number"
        )
    try:
        h.extra["next"] = hf_config(c.data)
    except GGUFError as e:
        raise HFError(str(e)) from None


def next_layer_shapes(h: HFHeader, i: int) -> dict[Role, tuple[int, ...]]:
    """Layer i's tensors as transformers stores them: GGUF's (next_model.stored_shapes) but for
    the fused in_proj_qkvz, the conv kernel's channels x 1 x taps and one tensor per expert."""
    c = h.extra["next"]
    shapes = stored_shapes(c, i)
    if not c.full_attention(i):
        fused = (c.conv_dim + c.v_heads * c.v_dim, c.d)
        shapes |= {Role.W_QKV: fused, Role.W_Z: fused}
        shapes[Role.CONV_WEIGHT] = (c.conv_dim, 1, c.conv_kernel)
    for role in (Role.EXPERTS_GATE, Role.EXPERTS_UP, Role.EXPERTS_DOWN):
        shapes[role] = shapes[role][1:]
    return shapes


def next_step(h: HFHeader, names: Any, t: int, cache: int, layers: int, elt: str, name: str):
    """Qwen3-Next's step (the GGUF one), its arguments named after the HF tensors."""
    c = h.extra["next"]
    return next_step_function(c, NextNames(c, names.own, HF_FORMAT), elt, t, cache, layers, name)
