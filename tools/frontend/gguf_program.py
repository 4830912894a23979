"""A GGUF checkpoint's greedy step as a tg program: what `spatial-import` writes.

The step is the one tools/frontend/layers.py builds for the examples; a checkpoint only names
its arguments differently (`GGUFNames`): a weight is called after the GGUF tensor it holds
(`%blk.0.attn_q.weight`) and carries `gguf.tensor` (that name) and `gguf.layout` ("kn": the
transpose of ggml's out x in, the right operand of tg.matmul; "rows": as stored; "experts": a
qwen3moe expert stack, GGUF's E x out x in with each expert transposed and stacked along K), which
`spatial-run --weights` reads to fill it. The KV caches are the examples' `%l0_k_cache`; the step's
own inputs (ids, pos, the rope tables) take a prefix in a deployment (`%prefill.ids`), where one
name is one tensor and the two steps' differ in shape. The rope tables carry
`gguf.rope_freq_base` (and `gguf.rope_freqs` when the file has rope_freqs.weight).

Q8_0 weights stay Q8_0 when asked (`q8_0`): `%NAME` (i8 values, `gguf.q8_0 = "values"`) and
`%NAME.scales` (f16, `gguf.q8_0 = "scales"`), blocked along ggml's ne0 as stored.

Precision, llama.cpp's: the weights stay in their stored format (Q8_0 as Q8_0; F16, BF16 and F32
as they are), the activations compute in one float type (`program_dtype`: the weights' own
16-bit type, which a product's two operands must share, or, over Q8_0 weights alone, the type the
target prefers, `Target.activations`), and the norm weights and the rope tables stay f32 beside
them (`TABLES`), as llama.cpp keeps them (GGUF stores norms F32; ggml computes rope's angles and
rms_norm in f32), since tg.rms_norm and tg.rope widen either to f32 and round once. Attention's
scores and softmax statistics are f32 whatever the activations (tg.attention's contract).
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, StringAttr, f64
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute

from spatial_dialect.tools.frontend.gguf_model import ModelHeader
from spatial_dialect.tools.frontend.layers import (
    Argument,
    Batch,
    Layer,
    Model,
    MoeBlock,
    Role,
    step_function,
)

TENSORS: dict[Role, tuple[str, str]] = {
    Role.TABLE: ("token_embd.weight", "rows"),
    Role.FINAL_NORM: ("output_norm.weight", "rows"),
    Role.LM_HEAD: ("output.weight", "kn"),
    Role.ATTN_NORM: ("attn_norm.weight", "rows"),
    Role.Q: ("attn_q.weight", "kn"),
    Role.K: ("attn_k.weight", "kn"),
    Role.V: ("attn_v.weight", "kn"),
    Role.O: ("attn_output.weight", "kn"),
    Role.Q_NORM: ("attn_q_norm.weight", "rows"),
    Role.K_NORM: ("attn_k_norm.weight", "rows"),
    Role.FFN_NORM: ("ffn_norm.weight", "rows"),
    Role.GATE: ("ffn_gate.weight", "kn"),
    Role.UP: ("ffn_up.weight", "kn"),
    Role.DOWN: ("ffn_down.weight", "kn"),
    Role.ROUTER: ("ffn_gate_inp.weight", "kn"),
    Role.EXPERTS_GATE: ("ffn_gate_exps.weight", "experts"),
    Role.EXPERTS_UP: ("ffn_up_exps.weight", "experts"),
    Role.EXPERTS_DOWN: ("ffn_down_exps.weight", "experts"),
}
"""The GGUF tensor of each weight (its name after the layer's `blk.N.`) and its layout."""

OWN_INPUTS = (Role.IDS, Role.POS, Role.COS, Role.SIN, Role.BLOCK_TABLE)
"""The step's own inputs: a deployment prefixes them with the step."""

Q8_0_ROLES = frozenset(
    {Role.TABLE, Role.LM_HEAD, Role.Q, Role.K, Role.V, Role.O, Role.GATE, Role.UP, Role.DOWN}
)
"""The weights a Q8_0 file keeps Q8_0: the matmuls' and the table's (tg.moe has no Q8_0 form, so
an expert is declared in the program's float type and dequantized exactly by --weights)."""


class GGUFNames:
    """The arguments of a checkpoint's step: named and tagged after its GGUF tensors."""

    def __init__(self, h: ModelHeader, q8_0: bool, own: str = "") -> None:
        self.h = h
        self.quantized = q8_0
        self.own = own

    def tensor_name(self, role: Role, layer: Layer | None) -> str:
        name, _ = TENSORS[role]
        return f"blk.{layer.index}.{name}" if layer else name

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        if role in (Role.K_CACHE, Role.V_CACHE):  # shared by a deployment's steps, by name
            assert layer is not None
            return Argument(layer.prefix + role.value, {})
        if role in OWN_INPUTS:
            attrs = self.rope_attributes(role) if role in (Role.COS, Role.SIN) else {}
            return Argument(self.own + role.value, attrs)
        name, layout = self.tensor_name(role, layer), TENSORS[role][1]
        return Argument(name, {"gguf.tensor": StringAttr(name), "gguf.layout": StringAttr(layout)})

    def rope_attributes(self, role: Role) -> dict[str, Attribute]:
        """cos and sin of (pos + i) * base^(-2j/D) (/ freq factor j), as --weights fills them."""
        base = float(f"{self.h.rope_base:.8e}")
        attrs: dict[str, Attribute] = {
            "gguf.rope": StringAttr(role.value),
            "gguf.rope_freq_base": FloatAttr(base, f64),
        }
        if "rope_freqs.weight" in self.h.tensors:
            attrs["gguf.rope_freqs"] = StringAttr("rope_freqs.weight")
        return attrs

    def q8_0(self, role: Role, layer: Layer | None) -> tuple[Argument, Argument] | None:
        if not self.quantized or role not in Q8_0_ROLES:
            return None
        values = self.argument(role, layer)
        if self.h.tensors[values.name].type != "Q8_0":
            return None
        tagged = {**values.attributes}
        return (
            Argument(values.name, {**tagged, "gguf.q8_0": StringAttr("values")}),
            Argument(f"{values.name}.scales", {**tagged, "gguf.q8_0": StringAttr("scales")}),
        )


TABLES = "f32"
"""The element type of an imported step's norm weights and rope tables."""


def header_model(h: ModelHeader, elt: str) -> Model:
    """The layers' dimensions from a checkpoint's header, computing in `elt`, the norm weights and
    rope tables in TABLES."""
    moe = MoeBlock(h.experts, h.experts_used, h.ffn) if h.experts else None
    return Model(
        h.arch,
        h.d,
        h.heads,
        h.kv_heads,
        h.head_dim,
        h.ffn,
        h.eps,
        qk_norm=h.qk_norm,
        vocab=h.vocab,
        elt=elt,
        tables=TABLES,
        moe=moe,
        rope_style=h.rope_style,
        tied=h.tied,
    )


def weight_types(h: ModelHeader, layers: int) -> set[str]:
    """The GGML types of the 2-D weights the step reads."""
    names = [n for n in h.tensors if n.startswith("blk.") and int(n.split(".")[1]) < layers]
    names += ["token_embd.weight", "output.weight"]
    return {h.tensors[n].type for n in names if n in h.tensors and len(h.tensors[n].shape) == 2}


def program_dtype(types: set[str], preferred: str = "bf16") -> str:
    """The activations' type: the float weights' own 16-bit type (F16: f16, BF16: bf16; a product
    reads both operands in one type, and llama.cpp's CPU backend converts the activation of an
    F16 product to F16 too), f32 over F32 or mixed float weights, and `preferred` (the target's,
    bf16 by default) where every weight is Q8_0 (Q8_0 weights stay Q8_0)."""
    floats = types - {"Q8_0"}
    if not floats:
        return preferred
    if floats == {"F16"}:
        return "f16"
    if floats == {"BF16"}:
        return "bf16"
    return "f32"


def program_dtype_dequantized(types: set[str]) -> str:
    """With --dequantize a Q8_0 weight is f32 (exact), so the program is."""
    return "f32" if "Q8_0" in types else program_dtype(types)


def checkpoint_step(
    h: ModelHeader,
    t: int,
    cache: int,
    layers: int,
    elt: str,
    name: str,
    q8_0: bool = False,
    own: str = "",
    batch: Batch | None = None,
) -> FuncOp:
    """The whole greedy step of `layers` layers for t tokens over a `cache`-row KV cache; `q8_0`:
    Q8_0 weights stay Q8_0 (else they are declared `elt`); `own`: the prefix of the step's own
    inputs (its tokens, their position and rope tables), which in a deployment are no other
    step's, while the weights and the caches keep their names and are shared; `batch`: a batched
    step's users and KV layout)."""
    names = GGUFNames(h, q8_0, own)
    return step_function(header_model(h, elt), names, t, cache, layers, name, batch)
