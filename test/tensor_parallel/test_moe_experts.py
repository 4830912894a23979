"""tg.moe's ``experts`` plan (issue 23, Build 3: "MoE experts by chip"): each chip holds E / chips
whole experts (``experts_held``), routes every token over all E with the replicated router and sums
the chosen experts it holds, a partial sum all-reduced. The deployment keeps the whole function's
meaning under the mesh reference (each chip's held range from its row-major index); the price is
the routed experts' bytes under uniform routing (passes/tensor_parallel/price.moe_reads), checked
here against numbers worked by hand."""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.mesh import AllReduceOp
from spatial_dialect.mesh.interface import interface
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.passes.tensor_parallel.price import moe_reads
from spatial_dialect.tg import MoeOp
from spatial_dialect.tools.frontend.layers import Model, MoeBlock, layer_function
from spatial_dialect.tools.interpreters.collectives import shard
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.mesh_reference import run_stacks
from spatial_dialect.tools.interpreters.reference import evaluate, input_names
from spatial_dialect.tools.spatial_run import parse_module

sys.path.insert(0, str(Path(__file__).parent))
from test_tensor_parallel import check_deployment  # noqa: E402

EXAMPLES = Path(__file__).parents[2] / "examples"
FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"


def _fn(module: ModuleOp) -> func.FuncOp:
    return next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))


def _moe_of(fn: func.FuncOp) -> MoeOp:
    return next(o for o in fn.body.block.ops if isinstance(o, MoeOp))


def _layer(elt: str, t: int, shared: bool) -> ModuleOp:
    """A decoder layer whose FFN is 8 experts of 64 columns (top 2; a gated shared expert of 256
    with ``shared``): 64 is not whole tiles over 4 chips, so only ``experts`` splits it there."""
    block = MoeBlock(8, 2, 64, shared_ffn=256 if shared else 0, shared_gate=shared)
    m = Model("moe", 128, 4, 2, 32, 0, 1e-6, qk_norm=False, elt=elt, moe=block)
    return ModuleOp([layer_function(m, t, 32)])


@pytest.mark.parametrize("mesh,held", [("n300", 4), ("p150x4", 2), ("t3k", 1)])
@pytest.mark.parametrize("example", ["tiny_moe_decode", "tiny_moe_prefill_f32"])
def test_the_tiny_moe_examples_keep_their_meaning_by_experts(example, mesh, held):
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    fn = check_deployment(module, mesh, f32_rtol=None, prefer_experts=True)
    moe = _moe_of(fn)
    assert moe.attributes["tp.plan"].data == "experts" and moe.held() == held
    # the stacked matrices are split by rows (whole experts), the router stays whole
    ins, _ = interface(fn)
    lay = {a: p for a, p in zip(fn.args, ins, strict=True)}
    rank = len(lay[moe.w_gate].placements)
    for v in (moe.w_gate, moe.w_up, moe.w_down):
        assert lay[v].placements == ("shard(0)",) * rank and lay[v].blocks == 1
    assert lay[moe.router].placements == ("replicate",) * rank
    assert isinstance(next(iter(moe.res.uses)).operation, AllReduceOp)


@pytest.mark.parametrize("mesh", ["n300", "p150x4"])
@pytest.mark.parametrize("elt,t,shared", [("f32", 1, True), ("bf16", 3, True), ("f32", 5, False)])
def test_a_moe_layer_by_experts(mesh, elt, t, shared):
    """A gated shared expert splits by its width beside the experts by chip; f32 results to 1e-5
    (only the order of the sums changed)."""
    fn = check_deployment(_layer(elt, t, shared), mesh, prefer_experts=True)
    assert _moe_of(fn).attributes["tp.plan"].data == "experts"


def test_every_chip_must_take_its_own_experts():
    """The held range follows the chip: a mesh reference in which every chip took chip 0's
    experts (its index ignored) would differ from the whole reference, so the check can fail."""
    module = _layer("f32", 1, False)
    whole = _fn(module)
    inputs = draw_inputs(whole, 0)
    ref = evaluate(whole, inputs)[0]
    TensorParallelPass("n300", prefer_experts=True).apply(Context(), module)
    fn = _fn(module)
    ins, _ = interface(fn)
    rng = np.random.default_rng(0)
    stacks = [
        shard(inputs[n], (2,), p.placements, rng, p.repeat, p.blocks)
        for n, p in zip(input_names(whole), ins, strict=True)
    ]
    good = run_stacks(fn, stacks, (2,))[0][0][0]
    assert np.allclose(good, ref, rtol=1e-4, atol=1e-5)
    # chip 1 given chip 0's expert blocks: its held range no longer matches what it holds
    moe = _moe_of(fn)
    for i, a in enumerate(fn.args):
        if a in (moe.w_gate, moe.w_up, moe.w_down):
            stacks[i] = np.stack([stacks[i][0], stacks[i][0]])
    bad = run_stacks(fn, stacks, (2,))[0][0][0]
    assert not np.allclose(bad, ref, rtol=1e-3, atol=1e-3)


def test_the_30b_moe_takes_ffn_by_price_in_decode():
    """At Qwen3-30B-A3B's decode on p150x4 the ffn plan reads 8 experts at a quarter width; the
    experts plan's busiest chip would touch 3.49 of its 32 (uniform routing), but linked, each
    of the 8 slots reads a whole held block on every chip (price.linked_reads), so it loses."""
    module = parse_module((EXAMPLES / "qwen3_30b_a3b_decode.mlir").read_text())
    TensorParallelPass("p150x4").apply(Context(), module)
    moe = _moe_of(_fn(module))
    runner = moe.attributes["tp.runner_up"].data
    assert moe.attributes["tp.plan"].data == "ffn"
    assert "one holding 32 reads 2.00 on average and 3.49 on the busiest of 4 chips" in runner
    assert runner.endswith("linked, a decode step reads a block per slot (8) on every chip")


def test_the_30b_prefill_takes_experts_by_price_on_a_galaxy():
    """On a galaxy ffn splits over the 8-chip axis alone (768 / 32 is not whole tiles), and the
    experts plan (4 whole experts a chip) is cheaper: it is taken, ffn recorded as the runner-up."""
    module = parse_module((EXAMPLES / "qwen3_30b_a3b_prefill.mlir").read_text())
    TensorParallelPass("galaxy").apply(Context(), module)
    moe = _moe_of(_fn(module))
    assert moe.attributes["tp.plan"].data == "experts" and moe.held() == 4
    assert moe.attributes["tp.runner_up"].data.startswith("ffn over axis 0: 594.883 us (slower")


def test_experts_that_do_not_divide_are_refused_by_name():
    module = parse_module((EXAMPLES / "tiny_moe_decode.mlir").read_text())
    TensorParallelPass("galaxy", prefer_experts=True).apply(Context(), module)
    runner = _moe_of(_fn(module)).attributes["tp.runner_up"].data
    assert "experts: E 8 experts do not split over 32 chips" in runner


def _moe(e: int, k: int, t: int) -> MoeOp:
    text = (
        f"func.func @f(%x: tensor<{t}x32xf32>, %r: tensor<32x{e}xf32>, "
        f"%g: tensor<{32 * e}x32xf32>, %u: tensor<{32 * e}x32xf32>, %d: tensor<{32 * e}x32xf32>)"
        f" -> tensor<{t}x32xf32> {{\n  %y = tg.moe %x, %r, %g, %u, %d top_k {k} scores "
        f'"softmax" : (tensor<{t}x32xf32>, tensor<32x{e}xf32>, tensor<{32 * e}x32xf32>, '
        f"tensor<{32 * e}x32xf32>, tensor<{32 * e}x32xf32>) -> tensor<{t}x32xf32>\n"
        f"  func.return %y : tensor<{t}x32xf32>\n}}"
    )
    return _moe_of(_fn(parse_module(text)))


def test_routed_reads_by_hand():
    # one token, 2 of 8 experts over 4 chips of 2: the pair lies on one chip in 4 of C(8,2) = 28
    # ways, so the busiest chip holds 1 + 4/28 of them on average; the mean chip 2 x 2/8
    mean, worst = moe_reads(_moe(8, 2, 1), 2)
    assert mean == pytest.approx(0.5) and worst == pytest.approx(1 + 4 / 28)
    # every expert on one chip: exactly k at T = 1
    assert moe_reads(_moe(8, 2, 1), 8) == pytest.approx((2.0, 2.0))
    # two tokens of 2 picks of 4 experts: each expert touched with p = 1 - (1/2)^2 = 3/4; two
    # chips of 2, each Binomial(2, 3/4): P(max <= 0) = (1/16)^2, P(max <= 1) = (7/16)^2
    mean, worst = moe_reads(_moe(4, 2, 2), 2)
    assert mean == pytest.approx(1.5)
    assert worst == pytest.approx((1 - 1 / 256) + (1 - 49 / 256))


@pytest.mark.parametrize("mesh", ["n300"])
def test_an_imported_qwen3moe_checkpoint_by_experts(tmp_path, mesh):
    """spatial-import's qwen3moe GGUF (8 experts of 256, F16; nothing downloaded), its MoE layers
    forced to experts: its token and hidden state keep their meaning."""
    pytest.importorskip("gguf")
    sys.path.insert(0, str(Path(__file__).parents[1] / "frontend"))
    from tiny_gguf import write_tiny

    from spatial_dialect.tools.spatial_import import main as import_main

    model = write_tiny(tmp_path / "moe.gguf", "qwen3moe", "F16", False, ffn=256)
    out = tmp_path / "step.mlir"
    assert import_main([str(model), "--step", "decode", "--hidden", "-o", str(out)]) == 0
    fn = check_deployment(parse_module(out.read_text()), mesh, f32_rtol=None, prefer_experts=True)
    plans = {o.attributes["tp.plan"].data for o in fn.body.block.ops if isinstance(o, MoeOp)}
    assert plans == {"experts"}


def _random_moe(seed: int) -> tuple[ModuleOp, str]:
    rng = random.Random(seed)
    e = rng.choice([8, 16, 32])
    shared = rng.random() < 0.4
    block = MoeBlock(
        e,
        rng.choice([1, 2, 4]),
        rng.choice([32, 64, 96]),
        shared_ffn=256 if shared else 0,
        shared_gate=shared and rng.random() < 0.5,
        scores=rng.choice(["softmax", "sigmoid"]),
        renormalize=rng.random() < 0.7,
    )
    elt = rng.choice(["f32", "bf16"])
    m = Model(f"m{seed}", 128, 4, 2, 32, 0, 1e-6, qk_norm=False, elt=elt, moe=block)
    return ModuleOp([layer_function(m, rng.choice([1, 3, 8]), 32)]), elt


@pytest.mark.skipif(not FULL, reason="the experts sweep runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("mesh", ["n300", "p150x4", "t3k"])
@pytest.mark.parametrize("seed", range(12))
def test_random_moe_layers_by_experts(seed, mesh):
    """Experts 8 to 32 (1 to 16 a chip), top 1 to 4, softmax or sigmoid scores, with or without
    a (gated) shared expert, 1 to 8 tokens."""
    module, elt = _random_moe(seed)
    fn = check_deployment(
        module, mesh, f32_rtol=1e-5 if elt == "f32" else None, prefer_experts=True
    )
    assert _moe_of(fn).attributes["tp.plan"].data == "experts"
