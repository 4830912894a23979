"""GEMM programs for the tt-lang-sim tests (a tg.matmul of M x K x N in a dtype), and the check
that compiles a program, runs it and compares every output as spatial-run does."""

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import input_names, output_names
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
)


def gemm_text(m: int, k: int, n: int, dt: str) -> str:
    return (
        f"func.func @gemm(%a: tensor<{m}x{k}x{dt}>, %b: tensor<{k}x{n}x{dt}>) -> tensor<{m}x{n}x{dt}> {{\n"
        f"  %c = tg.matmul %a, %b : (tensor<{m}x{k}x{dt}>, tensor<{k}x{n}x{dt}>) -> tensor<{m}x{n}x{dt}>\n"
        f"  func.return %c : tensor<{m}x{n}x{dt}>\n}}\n"
    )


def check(text: str, target: str, runner, seed: int = 0, **options: str):
    """(comparisons, module) of `text` compiled for `target` as spatial-run compiles for
    tt-lang-sim (the pipeline options given, e.g. grid="1x1", and no others) and run by
    `runner`; an arg-max is compared with its near ties."""
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target, **options)
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    outs = runner(module, [inputs[n] for n in input_names(fn)])
    simulated = dict(zip(output_names(fn), outs, strict=True))
    # the tolerance of the accumulation it was compiled with
    acc = {"accumulate": options["accumulate"]} if "accumulate" in options else {}
    return compare_outputs(fn, reference, values, simulated, **acc), module
