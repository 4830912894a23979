"""A Hugging Face checkpoint's greedy step as a tg program: what `spatial-import DIR` writes.

The step is the one the examples and GGUF checkpoints get (tools/frontend/layers.py); only the
names differ (`HFNames`): a weight is called after the transformers tensor it holds
(`%model.layers.0.self_attn.q_proj.weight`) and carries `hf.tensor` (that name) and `hf.layout`,
whose values mean what GGUF's do (tools/frontend/weights.py `arrange`: "kn", the transpose of a
torch Linear's out x in; "rows", as stored; "experts", the experts' out x in tensors each
transposed and stacked along K). A Qwen3-MoE checkpoint stores one tensor per expert, so an
experts argument (`%model.layers.0.mlp.experts.gate_proj`) names them with a pattern,
`hf.tensor = "model.layers.0.mlp.experts.{e}.gate_proj.weight"`, e = 0 .. experts - 1.

transformers ropes every architecture here the neox way (rotate_half: pairs (i, i + D/2)),
llama included: its checkpoints are not permuted as llama.cpp's converter permutes q and k.
The rope tables `%cos` / `%sin` carry `hf.rope` and `hf.rope_theta`, and `spatial-run --weights`
fills them as it fills a GGUF step's (the same table, weights.rope_table).
"""

from __future__ import annotations

from xdsl.dialects.builtin import FloatAttr, StringAttr, f64
from xdsl.dialects.func import FuncOp

from spatial_dialect.tools.frontend.gguf_program import OWN_INPUTS, TABLES
from spatial_dialect.tools.frontend.hf_model import HFError, HFHeader
from spatial_dialect.tools.frontend.layers import (
    Argument,
    Batch,
    Layer,
    Model,
    MoeBlock,
    Role,
    step_function,
)


class HFNames:
    """The arguments of a Hugging Face checkpoint's step: named and tagged after its tensors."""

    def __init__(self, h: HFHeader, own: str = "") -> None:
        self.h = h
        self.own = own

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        if role in (Role.K_CACHE, Role.V_CACHE):  # shared by a deployment's steps, by name
            assert layer is not None
            return Argument(layer.prefix + role.value, {})
        if role in OWN_INPUTS:
            attrs = {}
            if role in (Role.COS, Role.SIN):
                theta = float(f"{self.h.rope_theta:.8e}")
                attrs = {"hf.rope": StringAttr(role.value), "hf.rope_theta": FloatAttr(theta, f64)}
            return Argument(self.own + role.value, attrs)
        tensor = self.h.tensor_name(role, layer.index if layer else None)
        layout = self.h.arch.tensors[role][1]
        # a stack of per-expert tensors is named after the pattern without its `{e}.`
        name = tensor.replace("{e}.", "").removesuffix(".weight") if "{e}" in tensor else tensor
        return Argument(name, {"hf.tensor": StringAttr(tensor), "hf.layout": StringAttr(layout)})

    def q8_0(self, role: Role, layer: Layer | None) -> None:
        return None  # safetensors checkpoints hold float weights


def header_model(h: HFHeader, elt: str) -> Model:
    """The layers' dimensions from config.json, computing in `elt`, the norm weights and rope
    tables in TABLES (llama.cpp's precision, as for a GGUF checkpoint)."""
    moe = (
        MoeBlock(h.experts, h.experts_used, h.ffn, renormalize=h.renormalize) if h.experts else None
    )
    return Model(
        h.arch.name,
        h.d,
        h.heads,
        h.kv_heads,
        h.head_dim,
        h.ffn,
        h.eps,
        qk_norm=h.arch.qk_norm,
        vocab=h.vocab,
        elt=elt,
        tables=TABLES,
        moe=moe,
        rope_style="neox",
        tied=h.tied,
    )


def program_dtype(types: set[str]) -> str:
    """The compute type of weights of `types`: theirs when they agree, else f32."""
    return {frozenset({"F16"}): "f16", frozenset({"BF16"}): "bf16"}.get(frozenset(types), "f32")


def checkpoint_step(
    h: HFHeader,
    t: int,
    cache: int,
    layers: int,
    elt: str,
    name: str,
    own: str = "",
    batch: Batch | None = None,
) -> FuncOp:
    """The whole greedy step of `layers` layers for t tokens over a `cache`-row KV cache (`own`:
    the prefix of the step's own inputs in a deployment, `batch` a batched step's users and KV
    layout, as for a GGUF step)."""
    names = HFNames(h, own)
    if h.arch.step is not None:  # an architecture with a program of its own (Qwen3-Next)
        if batch is not None:
            raise HFError(f"{h.arch.name}: --batch has no batched form of its recurrent layers")
        return h.arch.step(h, names, t, cache, layers, elt, name)
    return step_function(header_model(h, elt), names, t, cache, layers, name, batch)
