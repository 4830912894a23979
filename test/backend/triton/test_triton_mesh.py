"""A deployment over a mesh of chips under the Triton backend (docs/backend-triton.md#several-chips):
the printed SPMD module, one rank per chip under torchrun (gloo, TRITON_INTERPRET=1), agrees with
the reference.

The default run launches one 2-rank case through spatial-run: a per-chip MLP (column-parallel w1,
row-parallel w2) with a step of every collective, linked by spatial-pipeline. SPATIAL_MESH_FULL=1
adds the MLP on 4 ranks (p150x4), the tensor-parallel pass's tiny_decode on 2 and 4 ranks against
the WHOLE function's reference, and a rank that fails.
"""

from __future__ import annotations

import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

pytest.importorskip("triton")
torch = pytest.importorskip("torch")

from spatial_dialect.mesh import Collective  # noqa: E402
from spatial_dialect.passes.mesh_prices import mesh_op_of  # noqa: E402
from spatial_dialect.passes.pipeline import compile_module  # noqa: E402
from spatial_dialect.passes.tensor_parallel import TensorParallelPass  # noqa: E402
from spatial_dialect.tools.backend.executors import (  # noqa: E402
    BackendFailed,
    BackendUnavailable,
)
from spatial_dialect.tools.backend.triton.mesh_host import COLLECTIVES  # noqa: E402
from spatial_dialect.tools.backend.triton.mesh_runner import (  # noqa: E402
    run_interpreted_chips,
    run_interpreted_mesh,
    run_native_chips,
)
from spatial_dialect.tools.backend.triton.printer import emit_module  # noqa: E402
from spatial_dialect.tools.interpreters.compare import compare  # noqa: E402
from spatial_dialect.tools.interpreters.inputs import draw_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate, input_names  # noqa: E402
from spatial_dialect.tools.spatial_run import main as spatial_run  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
ROWS, DIM, HIDDEN = 32, 64, 128
"""The whole MLP: x is ROWS x DIM, w1 DIM x HIDDEN, w2 HIDDEN x DIM."""

KINDS = {
    Collective.ALL_REDUCE: "y",
    Collective.ALL_GATHER: "gw",
    Collective.REDUCE_SCATTER: "ys",
    Collective.ALL_TO_ALL: "yt",
    Collective.ARGMAX_GATHER: "am",
}
"""The MLP's step of each kind and the tensor it writes (`per_chip_mlp`)."""


def per_chip_mlp(preset: str, kinds=tuple(Collective)) -> str:
    """A per-chip MLP (column-parallel w1, row-parallel w2) on `preset`'s 1-D mesh, and a step of
    each of `kinds` after it: all_reduce and reduce_scatter of the partial product, all_gather of
    the column-parallel activation, all_to_all of the scattered rows (after the reduce_scatter),
    argmax_gather of the column-parallel activation (each row's first maximum over the chips)."""
    mesh = mesh_op_of(preset)
    n = mesh.sizes[0]
    text = StringIO()
    Printer(text).print_op(mesh)
    h, r, d = HIDDEN // n, ROWS, DIM
    sh = lambda p: f"{{mesh.sharding = #mesh.sharding<@{preset}, [{p}]>}}"  # noqa: E731
    at = lambda p: f"#mesh.sharding<@{preset}, [{p}]>"  # noqa: E731
    steps = {
        Collective.ALL_REDUCE: (
            f"mesh.all_reduce %p axis 0 from {at('partial(sum)')} to {at('replicate')} "
            f'reason "w2 is row-parallel" : tensor<{r}x{d}xbf16> -> tensor<{r}x{d}xbf16>',
            f"tensor<{r}x{d}xbf16>",
            "replicate",
        ),
        Collective.ALL_GATHER: (
            f"mesh.all_gather %g axis 0 from {at('shard(1)')} to {at('replicate')} "
            f": tensor<{r}x{h}xbf16> -> tensor<{r}x{HIDDEN}xbf16>",
            f"tensor<{r}x{HIDDEN}xbf16>",
            "replicate",
        ),
        Collective.REDUCE_SCATTER: (
            f"mesh.reduce_scatter %p axis 0 from {at('partial(sum)')} to {at('shard(0)')} "
            f": tensor<{r}x{d}xbf16> -> tensor<{r // n}x{d}xbf16>",
            f"tensor<{r // n}x{d}xbf16>",
            "shard(0)",
        ),
        Collective.ALL_TO_ALL: (
            f"mesh.all_to_all %ys axis 0 from {at('shard(0)')} to {at('shard(1)')} "
            f": tensor<{r // n}x{d}xbf16> -> tensor<{r}x{d // n}xbf16>",
            f"tensor<{r}x{d // n}xbf16>",
            "shard(1)",
        ),
        Collective.ARGMAX_GATHER: (
            f"mesh.argmax_gather %g axis 0 from {at('shard(1)')} to {at('replicate')} "
            f": tensor<{r}x{h}xbf16> -> tensor<{r}xi32>",
            f"tensor<{r}xi32>",
            "replicate",
        ),
    }
    if Collective.ALL_TO_ALL in kinds:
        kinds = {*kinds, Collective.REDUCE_SCATTER}
    kinds = [k for k in Collective if k in kinds]
    # The all_to_all's input is scattered rows no one returns: only the last step is returned.
    returned = [k for k in kinds if not (k is Collective.REDUCE_SCATTER and len(kinds) > 1)]
    results = ", ".join(f"{steps[k][1]} {sh(steps[k][2])}" for k in returned)
    body = "\n".join(f"  %{KINDS[k]} = {steps[k][0]}" for k in kinds)
    return f"""{text.getvalue()}
func.func @mlp(%x: tensor<{r}x{d}xbf16> {sh("replicate")},
               %w1: tensor<{d}x{h}xbf16> {sh("shard(1)")},
               %w2: tensor<{h}x{d}xbf16> {sh("shard(0)")}) -> ({results}) {{
  %h = tg.matmul %x, %w1 : (tensor<{r}x{d}xbf16>, tensor<{d}x{h}xbf16>) -> tensor<{r}x{h}xbf16>
  %g = tg.silu %h : (tensor<{r}x{h}xbf16>) -> tensor<{r}x{h}xbf16>
  %p = tg.matmul %g, %w2 : (tensor<{r}x{h}xbf16>, tensor<{h}x{d}xbf16>) -> tensor<{r}x{d}xbf16>
{body}
  func.return {", ".join("%" + KINDS[k] for k in returned)} : {", ".join(steps[k][1] for k in returned)}
}}
"""


def linked(preset: str, kinds=tuple(Collective)) -> ModuleOp:
    """The per-chip MLP through spatial-pipeline (the mesh names the target)."""
    return compile_module(per_chip_mlp(preset, kinds))


def spatial_run_passes(path: Path, preset: str, capsys) -> str:
    code = spatial_run([str(path), "--target", preset, "--backend", "triton-interpret"])
    out = capsys.readouterr()
    text = out.out + out.err
    assert code == 0, text
    assert text.strip().splitlines()[-1].startswith("PASS"), text
    return text


def test_a_two_chip_mlp_passes_under_torchrun(tmp_path, capsys) -> None:
    """spatial-run: the per-chip MLP's deployment, every collective, 2 ranks, against its mesh
    reference (tools/interpreters/deployment.py)."""
    path = tmp_path / "mlp.mlir"
    path.write_text(per_chip_mlp("n300"))
    text = spatial_run_passes(path, "n300", capsys)
    assert [line.split()[0] for line in text.splitlines()[1:-1]] == ["gw", "y", "yt", "am"]


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: four ranks")
def test_a_four_chip_mlp_passes_under_torchrun(tmp_path, capsys) -> None:
    path = tmp_path / "mlp.mlir"
    path.write_text(per_chip_mlp("p150x4"))
    spatial_run_passes(path, "p150x4", capsys)


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: tiny_decode on 2, 4 and 2x4 ranks")
@pytest.mark.parametrize("preset", ["n300", "p150x4", "t3k"])
def test_tiny_decode_passes_against_the_whole_reference(preset: str) -> None:
    """The tensor-parallel pass's per-chip tiny_decode, linked and printed, on every rank, agrees
    with the WHOLE function's reference (not only the mesh's)."""
    whole = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = next(o for o in whole.body.block.ops if isinstance(o, func.FuncOp))
    inputs = draw_inputs(fn, 0)
    reference = evaluate(fn, inputs)
    got = run_interpreted_mesh(
        tensor_parallel("tiny_decode", preset), [inputs[n] for n in input_names(fn)]
    )
    for i, (r, g) in enumerate(zip(reference, got, strict=True)):
        if r.dtype.kind in "iu":
            assert np.array_equal(r, g), f"result {i} (the token) differs on {preset}"
        else:
            c = compare(f"result{i}", r, g)
            assert c.ok, c.line()


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: a failing rank")
def test_a_failing_rank_is_one_line_naming_it() -> None:
    module = linked("n300", (Collective.ALL_REDUCE,))
    x = np.zeros((2, ROWS + 1, DIM), np.float32)  # a row too many: the rank's reshape refuses it
    w1 = np.zeros((2, DIM, HIDDEN // 2), np.float32)
    w2 = np.zeros((2, HIDDEN // 2, DIM), np.float32)
    with pytest.raises(BackendFailed, match=r"^rank 0: .*RuntimeError: shape") as e:
        run_interpreted_chips(module, [x, w1, w2])
    assert "\n" not in str(e.value)


def test_the_printed_module_holds_the_steps_in_order_and_only_their_helpers() -> None:
    source = emit_module(linked("h100x2", (Collective.ALL_REDUCE,)))
    assert source.source.index("p_kernel[") < source.source.index(
        "_all_reduce(t['p'], t['y'], GROUPS[0])"
    )
    assert "def _all_reduce(" in source.source
    for helper in ("_all_gather", "_reduce_scatter", "_all_to_all"):
        assert helper not in source.source
    assert "torchrun --nproc_per_node=2" in source.source
    assert "MESH = (2,)" in source.source


def tensor_parallel(example: str, preset: str) -> ModuleOp:
    """`example` through tensor-parallel{mesh=preset}, then spatial-pipeline."""
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    TensorParallelPass(preset).apply(Context(), module)
    return compile_module(str(module))


@pytest.mark.parametrize("case", ["mlp h100x2", "tiny_decode t3k"])
def test_the_printed_deployment_is_pyflakes_clean_within_100_columns(case: str, tmp_path) -> None:
    """Every collective (the MLP), and a 2-D mesh whose steps run over either axis's groups."""
    example, preset = case.split()
    module = linked(preset) if example == "mlp" else tensor_parallel(example, preset)
    path = tmp_path / "program.py"
    path.write_text(emit_module(module).source)
    proc = subprocess.run(
        [sys.executable, "-m", "pyflakes", str(path)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    long = [line for line in path.read_text().splitlines() if len(line) > 100]
    assert not long, long


def test_every_collective_has_a_helper() -> None:
    assert set(COLLECTIVES) == set(Collective)


@pytest.mark.skipif(torch.cuda.device_count() >= 2, reason="two GPUs here: the refusal is moot")
def test_the_native_runner_refuses_without_a_gpu_per_chip() -> None:
    module = linked("h100x2", (Collective.ALL_REDUCE,))
    with pytest.raises(BackendUnavailable, match=r"runs on 2 CUDA GPUs, one per chip; \d here"):
        run_native_chips(module, [])
