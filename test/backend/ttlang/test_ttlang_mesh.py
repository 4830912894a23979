"""Deployments over several chips under tt-lang-sim (issue 23): every chip's sections launched on
its own shard, the collectives between them on the host (tools/backend/ttlang/host.py).

The deployments here are per-chip functions written by hand and linked by spatial-pipeline: the
per-chip MLP of tt-metal's N300/T3K layout (w1 column-parallel, w2 row-parallel, an all_reduce
after it; docs/mesh.md), and on 4 chips the same MLP ending in a reduce_scatter, an all_gather and
an all_to_all. Each is checked against the reference of the WHOLE function on the whole inputs:
the inputs are sharded per the entry's placements (tools/interpreters/collectives.py `shard`),
every output read back per its placement (`unshard`) and compared at the usual tolerance.

Default run: the 2-chip MLP (a few seconds) and the printing checks. SPATIAL_MESH_FULL=1 adds the
4-chip case with every collective and the tensor-parallel pass's tiny decode steps on n300,
p150x4 and t3k (about 3 minutes on 2 loaded cores).
"""

from __future__ import annotations

import importlib.util
import io
import os
import re
import sys
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.parser import Parser
from xdsl.printer import Printer

from spatial_dialect.mesh import StepOp
from spatial_dialect.passes.mesh_prices import mesh_op_of
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported, print_ttlang
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.deployment import (
    deployment_of,
    shard_inputs,
    unshard_outputs,
)
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import evaluate, input_names, output_names
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
)

sys.path.insert(0, str(Path(__file__).parent))
from test_ttlang_emitted import assert_reads_as_written  # noqa: E402

HAVE_SIM = importlib.util.find_spec("ttl") is not None
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="tt-lang-sim not installed")
full = pytest.mark.skipif(
    os.environ.get("SPATIAL_MESH_FULL") != "1", reason="SPATIAL_MESH_FULL=1 runs it"
)
BF16 = ml_dtypes.bfloat16
ROOT = Path(__file__).resolve().parents[3]

WHOLE = """func.func @mlp(%x: tensor<32x64xbf16>, %w1: tensor<64x{f}xbf16>,
                 %w2: tensor<{f}x{d}xbf16>) -> tensor<32x{d}xbf16> {{
  %h = tg.matmul %x, %w1 : (tensor<32x64xbf16>, tensor<64x{f}xbf16>) -> tensor<32x{f}xbf16>
  %a = tg.silu %h : (tensor<32x{f}xbf16>) -> tensor<32x{f}xbf16>
  %y = tg.matmul %a, %w2 : (tensor<32x{f}xbf16>, tensor<{f}x{d}xbf16>) -> tensor<32x{d}xbf16>
  func.return %y : tensor<32x{d}xbf16>
}}
"""
"""The whole MLP, f hidden and d output features; a chip's is the same with f / chips."""


def sharding(mesh: str, entry: str) -> str:
    return f"#mesh.sharding<@{mesh}, [{entry}]>"


def arg(name: str, shape: str, mesh: str, entry: str) -> str:
    return f"%{name}: tensor<{shape}xbf16> {{mesh.sharding = {sharding(mesh, entry)}}}"


def collective(mesh: str, dst: str, kind: str, src: str, before: str, after: str, tin, tout):
    t = "tensor<{}x{}xbf16>"
    return (
        f"  %{dst} = mesh.{kind} %{src} axis 0 from {sharding(mesh, before)} "
        f"to {sharding(mesh, after)} : {t.format(*tin)} -> {t.format(*tout)}\n"
    )


def per_chip_mlp(preset: str, f: int, d: int, collectives: str, outputs: list[tuple[str, str]]):
    """The per-chip MLP (f / chips hidden features, w1 column- and w2 row-parallel), its
    partial y followed by `collectives`, as text; `outputs`: (name, placement)."""
    mesh = mesh_op_of(preset)
    k = f // mesh.sizes[0]
    text = io.StringIO()
    Printer(text).print_op(mesh)
    args = ", ".join(
        [
            arg("x", "32x64", preset, "replicate"),
            arg("w1", f"64x{k}", preset, "shard(1)"),
            arg("w2", f"{k}x{d}", preset, "shard(0)"),
        ]
    )
    types = {o: t for o, t in re.findall(r"%(\w+) = mesh\.\S+ .* -> (tensor<\w+>)", collectives)}
    results = ", ".join(f"{types[o]} {{mesh.sharding = {sharding(preset, e)}}}" for o, e in outputs)
    per_chip = (
        f"{text.getvalue()}\nfunc.func @mlp({args}) -> ({results}) {{\n"
        f"  %h = tg.matmul %x, %w1 : (tensor<32x64xbf16>, tensor<64x{k}xbf16>) -> tensor<32x{k}xbf16>\n"
        f"  %a = tg.silu %h : (tensor<32x{k}xbf16>) -> tensor<32x{k}xbf16>\n"
        f"  %y = tg.matmul %a, %w2 : (tensor<32x{k}xbf16>, tensor<{k}x{d}xbf16>) -> tensor<32x{d}xbf16>\n"
        f"{collectives}"
        f"  func.return {', '.join('%' + o for o, _ in outputs)} : {', '.join(types[o] for o, _ in outputs)}\n"
        "}\n"
    )
    return per_chip, [e for _, e in outputs]


def deployment(preset: str, f: int, d: int, collectives: str, outputs: list[tuple[str, str]]):
    """`per_chip_mlp` linked for `preset` as spatial-pipeline links any per-chip function
    (docs/mesh.md#the-linked-deployment), and its outputs' placements."""
    text, placements = per_chip_mlp(preset, f, d, collectives, outputs)
    return compile_module(text, preset), placements


N300_SUM = collective(
    "n300", "y_sum", "all_reduce", "y", "partial(sum)", "replicate", (32, 64), (32, 64)
)


def mlp_n300():
    return deployment("n300", 128, 64, N300_SUM, [("y_sum", "replicate")])


def mlp_p150x4():
    """w2's partial sums reduce-scattered, then gathered (tt-metal's FF2) and moved to row
    blocks (all_to_all)."""
    m = "p150x4"
    c = (
        collective(
            m, "y_rs", "reduce_scatter", "y", "partial(sum)", "shard(1)", (32, 128), (32, 32)
        )
        + collective(m, "y_all", "all_gather", "y_rs", "shard(1)", "replicate", (32, 32), (32, 128))
        + collective(m, "y_rows", "all_to_all", "y_rs", "shard(1)", "shard(0)", (32, 32), (8, 128))
    )
    return deployment(m, 256, 128, c, [("y_all", "replicate"), ("y_rows", "shard(0)")])


def check_against_whole(module, outputs: list[str], f: int, d: int) -> None:
    from spatial_dialect.tools.backend.ttlang.runner import run_tt_lang_sim_chips

    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 64)).astype(BF16)
    w1 = (rng.standard_normal((64, f)) * 0.125).astype(BF16)
    w2 = (rng.standard_normal((f, d)) * 0.125).astype(BF16)
    (ref,) = evaluate(entry_function(parse_module(WHOLE.format(f=f, d=d))), dict(x=x, w1=w1, w2=w2))
    dep = deployment_of(module)
    got = run_tt_lang_sim_chips(module, shard_inputs(dep, [x, w1, w2]))
    for stacked, entry in zip(got, outputs, strict=True):
        assert stacked.shape[:1] == dep.mesh_shape
        if entry == "replicate":  # every chip holds the whole tensor, bit-equal
            for c in range(1, dep.chips):
                np.testing.assert_array_equal(stacked[c], stacked[0])
    for whole in unshard_outputs(dep, got):
        result = compare("y", ref, whole)
        assert result.ok, result.line()


@needs_sim
def test_column_then_row_parallel_mlp_on_n300():
    """Each chip's partial y is its own (a launch per chip), and ttnn's all_reduce sums them."""
    module, outputs = mlp_n300()
    check_against_whole(module, outputs, 128, 64)


@needs_sim
def test_spatial_run_runs_a_per_chip_function_under_tt_lang_sim(tmp_path, capsys):
    """The CLI's path: whole inputs drawn, the deployment run by MESH_BACKENDS' tt-lang-sim
    runner, compared with the mesh reference."""
    from spatial_dialect.tools.spatial_run import main

    text, _ = per_chip_mlp("n300", 128, 64, N300_SUM, [("y_sum", "replicate")])
    path = tmp_path / "mlp_n300.mlir"
    path.write_text(text)
    code = main([str(path), "--target", "n300", "--backend", "tt-lang-sim"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "PASS: 1 output(s) within tolerance on n300" in out


@needs_sim
@full
def test_every_collective_on_p150x4():
    module, outputs = mlp_p150x4()
    check_against_whole(module, outputs, 256, 128)


def emitted(module) -> str:
    out = io.StringIO()
    print_ttlang(module, out)
    return out.getvalue()


def test_the_printed_host_launches_per_chip_and_calls_the_collectives_in_order():
    module, _ = mlp_p150x4()
    program = emitted(module)
    assert_reads_as_written(program, "mesh.py")
    body = program[program.index("def deployment(") :].split("\n\n\n")[0].splitlines()
    calls = [line.strip() for line in body[2:]]
    assert calls[-3:] == [
        "_reduce_scatter(mesh, devices, drams, 'y', 'y_rs', 1, 1)",
        "_all_gather(mesh, devices, drams, 'y_rs', 'y_all', 1, 1)",
        "_all_to_all(mesh, devices, drams, 'y_rs', 'y_rows', 1, 1, 0)",
    ]
    assert calls.count("for dram in drams:") == 1
    assert "MESH = (1, 4)" in program
    # one device per chip, ttnn's collectives where the ttnn in use has them
    for needed in ("ttnn.open_mesh_device(", "ttnn.all_gather(", "ttnn.reduce_scatter("):
        assert needed in program
    # the single-chip host is not printed beside it
    assert "SECTIONS = [" not in program and "\ndef run(" not in program


def test_a_single_chip_program_prints_no_mesh():
    module = compile_module(entry_function(parse_module(WHOLE.format(f=64, d=32))), "wormhole_n150")
    program = emitted(module)
    assert "SECTIONS = [" in program and "MESH" not in program and "drams" not in program
    assert_reads_as_written(program, "one.py")


def test_a_sharded_middle_dim_is_refused_by_name():
    from spatial_dialect.mesh import Collective
    from spatial_dialect.tools.backend.ttlang.deploy import Step, collective_call

    s = Step(Collective.ALL_GATHER, "k", "k_all", 0, 1, None, (2, 4, 32), (2, 8, 32), "bf16")
    with pytest.raises(TTLangUnsupported) as refused:
        collective_call(s, (2,))
    assert "all_gather of @k over dim 1 of its [2, 4, 32] local tensor" in str(refused.value)


def tensor_parallel(example: str, preset: str, prefer_sharded: bool = False):
    """The example's whole function, and its deployment: the tensor-parallel pass's per-chip
    function linked for `preset` (`prefer_sharded`: every split that can run, so that the tiny
    programs carry the row splits and collectives of a large model)."""
    from spatial_dialect.passes.pipeline import default_context
    from spatial_dialect.passes.tensor_parallel import TensorParallelPass

    text = (ROOT / "examples" / f"{example}.mlir").read_text()
    ctx = default_context()
    per_chip = Parser(ctx, text).parse_module()
    TensorParallelPass(mesh=preset, prefer_sharded=prefer_sharded).apply(ctx, per_chip)
    printed = io.StringIO()
    Printer(printed).print_op(per_chip)
    return entry_function(parse_module(text)), compile_module(printed.getvalue(), preset)


@needs_sim
@full
@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize(
    "example,preset",
    [
        ("tiny_decode", "n300"),
        ("tiny_decode", "p150x4"),
        ("tiny_decode", "t3k"),  # 2x4: collectives over each axis of a 2-D mesh
        ("tiny_moe_decode", "n300"),
        ("tiny_moe_decode", "p150x4"),
    ],
)
def test_tensor_parallel_decode(example: str, preset: str, prefer_sharded: bool):
    """The tensor-parallel pass's deployment of a tiny decode step, every output against the
    whole function's reference on the whole inputs."""
    from spatial_dialect.tools.backend.ttlang.runner import run_tt_lang_sim_mesh

    fn, module = tensor_parallel(example, preset, prefer_sharded)
    whole = draw_inputs(fn, 0)
    reference, values = reference_outputs(fn, whole)
    got = run_tt_lang_sim_mesh(module, [whole[n] for n in input_names(fn)])
    simulated = dict(zip(output_names(fn), got, strict=True))
    results = compare_outputs(fn, reference, values, simulated)
    assert all(r.ok for r in results), "\n".join(r.line() for r in results)


@pytest.mark.parametrize("preset", ["n300", "p150x4"])
@pytest.mark.parametrize("example", ["tiny_decode", "tiny_moe_decode"])
def test_a_tensor_parallel_deployment_reads_as_written(example: str, preset: str):
    """pyflakes-clean, only the spec's API in kernels, lines within 100 characters, and every
    step of the module one call of `deployment`, in the module's order."""
    _, module = tensor_parallel(example, preset, prefer_sharded=True)
    program = emitted(module)
    assert_reads_as_written(program, f"{example}_{preset}.py")
    steps = [op.tensor.data for op in module.ops if isinstance(op, StepOp)]
    assert steps
    body = program[program.index("def deployment(") :].split("\n\n\n")[0]
    called = re.findall(r"\n    _\w+\(mesh, devices, drams, '\w+', '(\w+)'", body)
    assert called == steps


def test_every_collective_has_one_host_call_that_the_program_can_print():
    from spatial_dialect.mesh import Collective
    from spatial_dialect.tools.backend.ttlang import host
    from spatial_dialect.tools.backend.ttlang.deploy import HOST_CALL

    assert set(HOST_CALL) == set(Collective)
    assert len(set(HOST_CALL.values())) == len(Collective)
    assert set(HOST_CALL.values()) == set(host.COLLECTIVES) <= set(host.CHIPS_HOST)
