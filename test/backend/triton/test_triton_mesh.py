"""A deployment over a mesh of chips under the Triton backend (docs/backend-triton.md#several-chips):
the printed SPMD module, one rank per chip under torchrun (gloo, TRITON_INTERPRET=1), agrees with
an independent numpy reference of the whole function.

The deployment is a hand-linked per-chip MLP (column-parallel w1, row-parallel w2) compiled for the
mesh's chip, with one step of every collective after its sections: all_reduce and reduce_scatter
of the partial product, all_gather of the column-parallel activation, all_to_all of the scattered
rows. The default run launches one 2-rank case; SPATIAL_MESH_FULL=1 adds 4 ranks (p150x4) and a
rank that fails.
"""

from __future__ import annotations

import os
import subprocess
import sys

import ml_dtypes
import numpy as np
import pytest

pytest.importorskip("triton")
torch = pytest.importorskip("torch")

from spatial_dialect.mesh import Collective  # noqa: E402
from spatial_dialect.passes.mesh_prices import mesh_op_of  # noqa: E402
from spatial_dialect.passes.pipeline import compile_module  # noqa: E402
from spatial_dialect.tools.backend.executors import (  # noqa: E402
    BackendFailed,
    BackendUnavailable,
)
from spatial_dialect.tools.backend.triton.mesh_host import COLLECTIVES  # noqa: E402
from spatial_dialect.tools.backend.triton.mesh_runner import (  # noqa: E402
    run_interpreted_chips,
    run_native_chips,
)
from spatial_dialect.tools.backend.triton.printer import emit_module  # noqa: E402
from spatial_dialect.tools.interpreters.collectives import shard, unshard  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
BF16 = ml_dtypes.bfloat16
ROWS, DIM, HIDDEN = 32, 64, 128
"""The whole MLP: x is ROWS x DIM, w1 DIM x HIDDEN, w2 HIDDEN x DIM."""

CHIP = """
func.func @mlp(%x: tensor<{r}x{d}xbf16>, %w1: tensor<{d}x{h}xbf16>, %w2: tensor<{h}x{d}xbf16>)
    -> tensor<{r}x{d}xbf16> {{
  %h = tg.matmul %x, %w1 : (tensor<{r}x{d}xbf16>, tensor<{d}x{h}xbf16>) -> tensor<{r}x{h}xbf16>
  %g = tg.silu %h : (tensor<{r}x{h}xbf16>) -> tensor<{r}x{h}xbf16>
  %p = tg.matmul %g, %w2 : (tensor<{r}x{h}xbf16>, tensor<{h}x{d}xbf16>) -> tensor<{r}x{d}xbf16>
  func.return %p : tensor<{r}x{d}xbf16>
}}
"""
"""One chip's MLP: its column block of w1 and row block of w2; @p is its partial sum."""

OUTPUTS = {"y": "replicate", "gw": "replicate", "ys": "shard(0)", "yt": "shard(1)"}
"""The deployment's outputs and their shardings (the steps below write them)."""


def deployment(preset: str, chip: str, n: int, kinds=tuple(Collective)) -> tuple[str, list[str]]:
    """The linked deployment's text and its outputs: the chip's sized program, the mesh, the steps
    of `kinds` in Collective's order (the all_to_all reads the reduce_scatter's result)."""
    h = HIDDEN // n
    module = compile_module(CHIP.format(r=ROWS, d=DIM, h=h), chip)
    text = str(module)
    sh = lambda p: f"#mesh.sharding<@{preset}, [{p}]>"  # noqa: E731
    steps = {
        Collective.ALL_REDUCE: (
            f"mesh.step @y all_reduce @p axis 0 from {sh('partial(sum)')} to {sh('replicate')} "
            f'reason "w2 is row-parallel" : tensor<{ROWS}x{DIM}xbf16> -> tensor<{ROWS}x{DIM}xbf16>'
        ),
        Collective.ALL_GATHER: (
            f"mesh.step @gw all_gather @g axis 0 from {sh('shard(1)')} to {sh('replicate')} "
            f": tensor<{ROWS}x{h}xbf16> -> tensor<{ROWS}x{HIDDEN}xbf16>"
        ),
        Collective.REDUCE_SCATTER: (
            f"mesh.step @ys reduce_scatter @p axis 0 from {sh('partial(sum)')} to {sh('shard(0)')}"
            f" : tensor<{ROWS}x{DIM}xbf16> -> tensor<{ROWS // n}x{DIM}xbf16>"
        ),
        Collective.ALL_TO_ALL: (
            f"mesh.step @yt all_to_all @ys axis 0 from {sh('shard(0)')} to {sh('shard(1)')} "
            f": tensor<{ROWS // n}x{DIM}xbf16> -> tensor<{ROWS}x{DIM // n}xbf16>"
        ),
    }
    names = {
        Collective.ALL_REDUCE: "y",
        Collective.ALL_GATHER: "gw",
        Collective.REDUCE_SCATTER: "ys",
        Collective.ALL_TO_ALL: "yt",
    }
    kinds = [k for k in Collective if k in kinds]
    outputs = [names[k] for k in kinds]
    placements = ", ".join(sh(OUTPUTS[o]) for o in outputs)
    entry = (
        f"mesh.mesh @{preset} shape {n} topology [{mesh_op_of(preset).topology.data[0].data}] "
        f'links [{mesh_op_of(preset).links.data[0].data}] preset "{preset}"\n'
        f"  sp.entry @mlp(@x, @w1, @w2) -> ({', '.join('@' + o for o in outputs)}) attributes "
        f"{{mesh.inputs = [{sh('replicate')}, {sh('shard(1)')}, {sh('shard(0)')}], "
        f"mesh.outputs = [{placements}]}}"
    )
    text = text.replace("sp.entry @mlp(@x, @w1, @w2) -> (@p)", entry, 1)
    text = text.replace(f'sp.target = "{chip}"', f'sp.target = "{preset}"', 1)
    body = "\n".join(f"  {steps[k]}" for k in kinds)
    return text[: text.rindex("}")] + body + "\n}\n", outputs


def reference(x, w1, w2):
    """The whole MLP in float64, each op's result rounded once to bf16 as the chips store it."""
    r = lambda a: a.astype(BF16).astype(np.float64)  # noqa: E731
    h = r(x.astype(np.float64) @ w1.astype(np.float64))
    g = r(h / (1 + np.exp(-h)))
    return g, g @ w2.astype(np.float64)


def check(preset: str, chip: str, n: int) -> None:
    text, outputs = deployment(preset, chip, n)
    module = parse_module(text)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((ROWS, DIM)).astype(BF16)
    w1 = (rng.standard_normal((DIM, HIDDEN)) / 8).astype(BF16)
    w2 = (rng.standard_normal((HIDDEN, DIM)) / 8).astype(BF16)
    stacks = [shard(x, (n,), ["replicate"]), shard(w1, (n,), ["shard(1)"])]
    stacks.append(shard(w2, (n,), ["shard(0)"]))
    got = dict(zip(outputs, run_interpreted_chips(module, stacks), strict=True))
    g, y = reference(x, w1, w2)
    for name in ("y", "gw"):  # replicated: every chip holds the same
        assert all(np.array_equal(got[name][0], got[name][c]) for c in range(n)), name
    np.testing.assert_array_equal(unshard(got["gw"], ["replicate"]).astype(np.float64), g)
    # Each chip's partial is rounded to bf16 before the sum: a few ulps of the largest value.
    atol = 4 * 2.0**-8 * np.abs(y).max()
    for name in ("y", "ys", "yt"):
        whole = unshard(got[name], [OUTPUTS[name]]).astype(np.float64)
        np.testing.assert_allclose(whole, y, rtol=0, atol=atol, err_msg=name)


def test_a_two_chip_mlp_passes_under_torchrun() -> None:
    check("h100x2", "h100", 2)


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: four ranks")
def test_a_four_chip_mlp_passes_under_torchrun() -> None:
    check("p150x4", "blackhole_p150", 4)


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: a failing rank")
def test_a_failing_rank_is_one_line_naming_it() -> None:
    module = parse_module(deployment("h100x2", "h100", 2, (Collective.ALL_REDUCE,))[0])
    x = np.zeros((2, ROWS + 1, DIM), BF16)  # one row too many: the rank's reshape refuses it
    w1 = np.zeros((2, DIM, HIDDEN // 2), BF16)
    w2 = np.zeros((2, HIDDEN // 2, DIM), BF16)
    with pytest.raises(BackendFailed, match=r"^rank 0: .*RuntimeError: shape") as e:
        run_interpreted_chips(module, [x, w1, w2])
    assert "\n" not in str(e.value)


def test_the_printed_module_holds_the_steps_in_order_and_only_their_helpers() -> None:
    source = emit_module(parse_module(deployment("h100x2", "h100", 2, (Collective.ALL_REDUCE,))[0]))
    assert source.source.index("p_kernel[") < source.source.index(
        "_all_reduce(t['p'], t['y'], GROUPS[0])"
    )
    assert "def _all_reduce(" in source.source
    for helper in ("_all_gather", "_reduce_scatter", "_all_to_all"):
        assert helper not in source.source
    assert "torchrun --nproc_per_node=2" in source.source
    assert "MESH = (2,)" in source.source


def test_the_printed_deployment_is_pyflakes_clean_within_100_columns(tmp_path) -> None:
    path = tmp_path / "program.py"
    path.write_text(emit_module(parse_module(deployment("h100x2", "h100", 2)[0])).source)
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
    module = parse_module(deployment("h100x2", "h100", 2, (Collective.ALL_REDUCE,))[0])
    with pytest.raises(BackendUnavailable, match=r"runs on 2 CUDA GPUs, one per chip; \d here"):
        run_native_chips(module, [])
