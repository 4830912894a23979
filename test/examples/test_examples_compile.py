"""The shipped real-shape layers (Llama-3-8B, Qwen3-8B and Qwen3-30B-A3B, prefill of 128 tokens
and decode of one over a 4096-row cache; Qwen3-Next-80B-A3B's Gated DeltaNet layer, prefill of
128 and decode of one) compile through spatial-pipeline on every preset target, or are refused
with a typed diagnostic that names why (Plasticine computes no bf16; the shipped f32 twin of the
layer compiles there). Qwen3-30B-A3B's decode reads its 8 chosen experts of 128 by indexed loads;
its prefill reads each of the 128 experts once."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from xdsl.utils.exceptions import DiagnosticException

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp import Phase
from spatial_dialect.targets import PRESETS

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
LAYERS = ["llama3_8b_decode", "llama3_8b_prefill", "qwen3_8b_decode", "qwen3_8b_prefill"]
MOE_LAYERS = ["qwen3_30b_a3b_decode", "qwen3_30b_a3b_prefill"]


def sections(text: str, target: str) -> list[sp.ProgramOp]:
    module = compile_module(text, target=target)
    return [op for op in module.walk() if isinstance(op, sp.ProgramOp)]


def compiled_layer(layer: str, target: str) -> list[sp.ProgramOp]:
    """The layer's sections on `target`: the bf16 layer, or where the chip has no bf16 its
    refusal by name and then the shipped f32 twin."""
    text = (EXAMPLES / f"{layer}.mlir").read_text()
    if not PRESETS[target].has_dtype("bf16"):
        with pytest.raises(
            DiagnosticException,
            match="UnsupportedDatatype: tg.rms_norm: target plasticine has no datatype 'bf16'",
        ):
            compile_module(text, target=target)
        text = (EXAMPLES / f"{layer}_f32.mlir").read_text()  # the same layer, shipped in f32
    programs = sections(text, target)
    assert all(p.phase_value == Phase.SIZED for p in programs)
    return programs


LAYER_OPS = {"tg.matmul", "tg.rms_norm", "tg.rope", "tg.set_rows", "tg.attention", "tg.add"}


@pytest.mark.parametrize("target", sorted(PRESETS))
@pytest.mark.parametrize("layer", LAYERS)
def test_real_layers_compile_or_are_refused_by_name(layer, target):
    ops = {p.source_op.data for p in compiled_layer(layer, target)}
    assert LAYER_OPS | {"tg.swiglu"} <= ops


@pytest.mark.parametrize("target", sorted(PRESETS))
@pytest.mark.parametrize("layer", MOE_LAYERS)
def test_moe_layers_compile_and_read_what_they_route_to(layer, target):
    """Decode: 8 expert instances whose gate, up and down GEMMs load by the routed id (24 indexed
    loads); prefill: 128 instances at fixed offsets, none indexed."""
    programs = compiled_layer(layer, target)
    assert LAYER_OPS | {"tg.moe"} <= {p.source_op.data for p in programs}
    indexed = [ld for p in programs for ld in p.ops_of(sp.LoadOp) if ld.index is not None]
    gemms = [p for p in programs if "moe" in p.attributes]
    if layer.endswith("decode"):
        assert len(indexed) == 3 * 8 and len(gemms) == 3 * 8
        assert "reads its 8 of 128 experts" in gemms[0].attributes["moe"].data
    else:
        assert not indexed and len(gemms) == 3 * 128


# The Qwen3-Next prefill routes 128 rows through all 512 experts (1,500-odd GEMM sections):
# about 90 s a target on a loaded machine, so CI compiles it on one target and
# SPATIAL_EXAMPLES=all on every preset (measured on all six for the change that added it).
NEXT_PREFILL_TARGETS = (
    sorted(PRESETS) if os.environ.get("SPATIAL_EXAMPLES") == "all" else ["wormhole_n150"]
)


@pytest.mark.parametrize(
    "layer, target",
    [("qwen3_next_80b_a3b_decode", t) for t in sorted(PRESETS)]
    + [("qwen3_next_80b_a3b_prefill", t) for t in NEXT_PREFILL_TARGETS],
)
def test_qwen3_next_layers_compile(layer, target):
    """The Gated DeltaNet layer with its MoE block; decode reads 10 of the 512 experts (30
    indexed GEMMs) and the chunked delta rule takes chunks of 32 rows."""
    programs = compiled_layer(layer, target)
    ops = {p.source_op.data for p in programs}
    delta_ops = {"tg.causal_conv", "tg.l2_norm", "tg.decay", "tg.gated_delta", "tg.head_slice"}
    assert delta_ops | {"tg.moe"} <= ops
    delta = next(p for p in programs if p.source_op.data == "tg.gated_delta")
    plan = delta.one(sp.PlanOp)
    assert plan is not None and plan.attributes["chunk"].data.startswith("chunk 32 rows")
    if layer.endswith("decode"):
        gemms = [p for p in programs if "moe" in p.attributes]
        assert len(gemms) == 3 * 10
        assert "reads its 10 of 512 experts" in gemms[0].attributes["moe"].data
