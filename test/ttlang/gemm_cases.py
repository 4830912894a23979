"""GEMM programs for the tt-lang-sim tests: a tg.matmul of M x K x N in a dtype."""

from spatial_dialect.tools.compare import compare
from spatial_dialect.tools.inputs import draw_inputs
from spatial_dialect.tools.reference import (
    evaluate_values,
    input_names,
    output_names,
    returned_values,
)
from spatial_dialect.tools.spatial_run import compile_function, entry_function, parse_module


def gemm_text(m: int, k: int, n: int, dt: str) -> str:
    return (
        f"func.func @gemm(%a: tensor<{m}x{k}x{dt}>, %b: tensor<{k}x{n}x{dt}>) -> tensor<{m}x{n}x{dt}> {{\n"
        f"  %c = tg.matmul %a, %b : (tensor<{m}x{k}x{dt}>, tensor<{k}x{n}x{dt}>) -> tensor<{m}x{n}x{dt}>\n"
        f"  func.return %c : tensor<{m}x{n}x{dt}>\n}}\n"
    )


def check(text: str, target: str, runner, seed: int = 0):
    """(comparisons, module) of `text` compiled for `target` and run by `runner`."""
    fn = entry_function(parse_module(text))
    module = compile_function(fn, target, split_k=1)
    inputs = draw_inputs(fn, seed)
    values = evaluate_values(fn, inputs)
    outs = runner(module, [inputs[n] for n in input_names(fn)])
    refs = [values[v] for v in returned_values(fn)]
    return [compare(n, r, o) for n, r, o in zip(output_names(fn), refs, outs, strict=True)], module
