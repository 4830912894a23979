"""The model programs are built in one place (tools/frontend/layers.py): an imported checkpoint's
step and the examples' step are the same ops on the same types, differing only in argument names;
what the builder prints parses back to the same text, dotted GGUF names and Q8_0 pairs included;
and a name is one tensor, printed as given."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

gguf = pytest.importorskip("gguf")

sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import Tiny, write_gguf  # noqa: E402

from spatial_dialect import tg  # noqa: E402
from spatial_dialect.tools.frontend.gguf_model import read_header  # noqa: E402
from spatial_dialect.tools.frontend.gguf_program import checkpoint_step, header_model  # noqa: E402
from spatial_dialect.tools.frontend.layers import (  # noqa: E402
    ExampleNames,
    gemm_function,
    step_function,
)
from spatial_dialect.tools.frontend.tg_builder import (  # noqa: E402
    FunctionBuilder,
    print_functions,
    tensor,
)
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402


def _header(tmp_path: Path, **tiny):
    return read_header(write_gguf(tmp_path / "m.gguf", Tiny(**tiny)))[1]


def _shape(function) -> tuple[list[str], list[tuple[str, ...]], list[str]]:
    """What a program computes, without its names: ops, their result types, argument types."""
    ops = [op.name for op in function.body.block.ops]
    results = [tuple(str(r.type) for r in op.results) for op in function.body.block.ops]
    return ops, results, [str(a.type) for a in function.body.block.args]


@pytest.mark.parametrize("arch", ["llama", "qwen3", "qwen3moe"])
def test_a_checkpoint_step_is_the_example_step_under_other_names(tmp_path, arch):
    h = _header(tmp_path, arch=arch)
    imported = checkpoint_step(h, 4, 32, 2, "f16", "step")
    example = step_function(header_model(h, "f16"), ExampleNames(), 4, 32, 2, "step")
    assert _shape(imported) == _shape(example)
    names = [a.name_hint for a in imported.body.block.args]
    assert "blk.1.attn_q.weight" in names and "l1_k_cache" in names
    assert ("tg.moe" in _shape(imported)[0]) == (arch == "qwen3moe")
    # the rope style is the checkpoint's (llama.cpp's llama ropes adjacent pairs)
    styles = {op.style.data for op in imported.body.block.ops if op.name == "tg.rope"}
    assert styles == {"interleaved" if arch == "llama" else "neox"}


def test_the_printed_program_parses_back_to_the_same_text(tmp_path):
    """Dotted GGUF names, Q8_0 values and scales, argument attributes and two functions."""
    h = _header(tmp_path, arch="qwen3", wtype="Q8_0", tied=True)
    text = print_functions(
        checkpoint_step(h, t, 32, 1, "bf16", f"qwen3_{s}", q8_0=True, own=f"{s}.")
        for s, t in (("prefill", 4), ("decode", 1))
    )
    assert "%token_embd.weight.scales: tensor<256x4xf16>" in text
    module = parse_module(text)
    module.verify()
    assert print_functions(module.body.ops) == text


def test_a_signature_that_fits_is_one_line_and_one_that_does_not_is_one_argument_a_line():
    gemm = print_functions([gemm_function("gemm", 96, 200, 160, "f32")])
    assert gemm.splitlines()[0] == (
        "func.func @gemm(%a: tensor<96x200xf32>, %b: tensor<200x160xf32>) -> tensor<96x160xf32> {"
    )
    f = FunctionBuilder()
    args = [f.argument(f"w{i}", tensor(64, 64)) for i in range(3)]
    text = print_functions([f.function("three", args)])
    assert text.splitlines()[:4] == [
        "func.func @three(",
        "    %w0: tensor<64x64xbf16>,",
        "    %w1: tensor<64x64xbf16>,",
        "    %w2: tensor<64x64xbf16>) -> (tensor<64x64xbf16>, tensor<64x64xbf16>, "
        "tensor<64x64xbf16>) {",
    ]


def test_a_name_is_one_tensor():
    f = FunctionBuilder()
    pos = f.shared_argument("pos", tensor(1, elt="i32"))
    assert f.shared_argument("pos", tensor(1, elt="i32")) is pos
    f.argument("wq", tensor(8, 8))
    with pytest.raises(ValueError, match="%wq names two values"):
        f.argument("wq", tensor(8, 8))
    # xDSL reads a `_N` suffix as its own numbering and would print another name
    with pytest.raises(ValueError, match="%expert_3: xDSL would print it as %expert_N"):
        f.argument("expert_3", tensor(8, 8))


def test_an_f32_constant_is_written_in_seven_digits_when_they_are_exact():
    """As the programs have always been written (a refusal quotes the op's line); an f32 that
    7 digits do not pin down keeps xDSL's 9."""
    f = FunctionBuilder()
    x = f.argument("x", tensor(4, 64, elt="f32"))
    exact = f.op("exact", tg.ScaleOp(x, 0.1767767))
    nine = f.op("nine", tg.ScaleOp(exact, 0.1 + 2**-27))
    text = print_functions([f.function("scales", [nine])])
    assert "tg.scale %x factor 1.767767e-01" in text
    assert "tg.scale %exact factor 0.100000009" in text
    assert print_functions(parse_module(text).body.ops) == text
