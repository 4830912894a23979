"""The tensor-parallel pass keeps the meaning: for every example step and a seeded sweep of small
llama-like layers, unshard(run(per-chip, shard(inputs))) equals the whole function's reference
(tools/interpreters/mesh_reference.py), over n300 (2 chips), p150x4 (4) and t3k (2x4)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.mesh import AllGatherOp, AllReduceOp
from spatial_dialect.mesh.interface import interface
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.passes.tensor_parallel.layout import REPLICATED, conversion, partial
from spatial_dialect.passes.tensor_parallel.layout import shard as lay_shard
from spatial_dialect.passes.tensor_parallel.norm import NORM_DEFAULT
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.mesh import MESH_PRESETS
from spatial_dialect.tools.frontend.layers import ExampleNames, Model, layer_function, step_function
from spatial_dialect.tools.interpreters.collectives import shard, unshard
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.mesh_reference import run_deployment
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.spatial_run import parse_module

EXAMPLES = Path(__file__).parents[2] / "examples"
MESHES = ("n300", "p150x4", "t3k")


def _fn(module: ModuleOp) -> func.FuncOp:
    return next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))


def check_deployment(
    module: ModuleOp,
    mesh: str,
    f32_rtol: float | None = 1e-5,
    prefer_sharded: bool = False,
    edit=None,
    norm: str = NORM_DEFAULT,
    prefer_experts: bool = False,
) -> func.FuncOp:
    """Runs the pass on ``module`` and compares the deployment with the whole reference on the
    same drawn inputs (``edit`` changes them first; ``norm``: the pass's distributed-norm)."""
    whole = _fn(module)
    inputs = draw_inputs(whole, 0)
    if edit is not None:
        edit(inputs)
    ref = evaluate(whole, inputs)
    TensorParallelPass(
        mesh, prefer_sharded, distributed_norm=norm, prefer_experts=prefer_experts
    ).apply(Context(), module)
    per_chip = _fn(module)
    got = run_deployment(per_chip, inputs)
    for i, (r, g) in enumerate(zip(ref, got, strict=True)):
        assert r.shape == g.shape and r.dtype == g.dtype, (i, r.shape, g.shape)
        if r.dtype.kind in "iu":
            assert np.array_equal(r, g), f"result {i} (integer) differs on {mesh}"
        else:
            # compare.py's relative error (|error| over |value| + the rows' rms) and tolerance;
            # f32 results, whose only change is the order of the row-parallel sums, to 1e-5.
            c = compare(f"result{i}", r, g)
            assert c.ok, c.line()
            if r.dtype == np.float32 and f32_rtol is not None:
                assert c.max_rel <= f32_rtol, c.line()
    return per_chip


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize(
    "example",
    [
        "tiny_decode",
        "tiny_decode_f32",
        "tiny_prefill",
        "tiny_prefill_f32",
        "tiny_moe_decode",
        "tiny_moe_decode_f32",
        "tiny_qwen3_next_decode_f32",
    ],
)
def test_examples_keep_their_meaning(example: str, mesh: str, prefer_sharded: bool):
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    check_deployment(module, mesh, f32_rtol=None, prefer_sharded=prefer_sharded)


def random_model(rng: random.Random, i: int) -> tuple[Model, int, int]:
    head_dim = rng.choice([32, 64])
    heads = rng.choice([1, 2, 4, 8])
    kv = rng.choice([k for k in (1, 2, 4, 8) if heads % k == 0])
    d = rng.choice([64, 128, 192, 256])
    ffn = rng.choice([64, 96, 128, 192, 256])
    q8 = rng.random() < 0.3
    elt = "bf16" if q8 else rng.choice(["f32", "f32", "bf16"])
    # spatial-import keeps norm weights and rope tables f32 beside 16-bit activations
    tables = rng.choice([None, "f32"]) if elt == "bf16" else None
    m = Model(
        f"r{i}",
        d,
        heads,
        kv,
        head_dim,
        ffn,
        1e-6,
        qk_norm=rng.random() < 0.5,
        elt=elt,
        q8_0=q8,
        tables=tables,
    )
    t = rng.choice([1, 3])
    return m, t, rng.choice([32, 64])


SWEEP = [random_model(random.Random(seed), seed) for seed in range(10)]


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize("case", SWEEP, ids=[m.name for m, _, _ in SWEEP])
def test_random_layers_keep_their_meaning(case, mesh: str, prefer_sharded: bool):
    """A layer returns its hidden state too, so the row-parallel sums are checked to ~1e-5 (f32),
    not only through an arg-max."""
    m, t, cache = case
    module = ModuleOp([layer_function(m, t, cache)])
    module.verify()
    check_deployment(module, mesh, prefer_sharded=prefer_sharded)


FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
FULL_SWEEP = [random_model(random.Random(seed), seed) for seed in range(10, 70)]


@pytest.mark.skipif(not FULL, reason="the wide sweep runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", sorted(MESH_PRESETS))
@pytest.mark.parametrize("case", FULL_SWEEP, ids=[m.name for m, _, _ in FULL_SWEEP])
def test_wide_sweep_keeps_its_meaning(case, mesh: str, prefer_sharded: bool):
    """60 more layers over every mesh preset (SPATIAL_MESH_FULL=1)."""
    m, t, cache = case
    module = ModuleOp([layer_function(m, t, cache)])
    module.verify()
    check_deployment(module, mesh, prefer_sharded=prefer_sharded)


# A layer large enough that a product's time outweighs a collective's fixed latency (on the tiny
# model, gathering the attention's 128 columns and replicating WO is cheaper than a row split and
# its all_reduce, and the decision says so), small enough for the reference: about 3 s a mesh.
MEDIUM = Model("medium", 2048, 16, 4, 128, 8192, 1e-6, qk_norm=True, elt="f32")


@pytest.mark.parametrize("mesh", MESHES)
def test_megatron_pairs_emerge(mesh: str):
    """QKV and FF1/FF3 column, WO and FF2 row (WO 2d on t3k), one all_reduce (per mesh axis)
    before each residual add, and the deployment keeps the meaning to 1e-5 (f32)."""
    fn = check_deployment(ModuleOp([layer_function(MEDIUM, 1, 32)]), mesh)
    plan = {
        op.results[0].name_hint: op.attributes["tp.plan"].data
        for op in fn.body.block.ops
        if "tp.plan" in op.attributes
    }
    for name in ("q", "k", "v", "gate", "up"):
        assert plan[name] == "column", name
    assert plan["attn"] == "heads"
    # On t3k WO's K splits over the 4-chip axis with the heads and its N over the 2-chip axis
    # (the 2d plan): its all_reduce runs on a half-wide shard, then one gather over axis 0.
    assert (plan["o"], plan["down"]) == (("2d", "row") if mesh == "t3k" else ("row", "row"))
    reduces = [op for op in fn.body.block.ops if isinstance(op, AllReduceOp)]
    assert all(r.cost is not None and r.cost.ns.data > 0 for r in reduces)
    got = [(r.input.name_hint, r.axis.value.data) for r in reduces]
    if mesh == "t3k":
        # 4 KV heads on 8 chips would repeat over two axes, which a repeat cannot: the heads
        # split over the 4-chip axis (WO's K with them), FF2's K over both axes, one all_reduce
        # per axis it splits.
        assert got == [("o", 1), ("down", 0), ("down", 1)]
    else:
        assert got == [("o", 0), ("down", 0)]


def test_kv_heads_repeat_on_four_chips():
    """2 KV heads on 4 chips: each KV head is held by 2 chips (mesh.repeat = 2)."""
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = check_deployment(module, "p150x4", prefer_sharded=True)  # replicated is cheaper
    ins, outs = interface(fn)
    names = [a.name_hint for a in fn.args]
    assert ins[names.index("l0_k_cache")].repeat == 2
    assert ins[names.index("l0_wq")].repeat == 1
    assert [o.repeat for o in outs] == [1, 2, 2]
    attn = next(op for op in fn.body.block.ops if op.name == "tg.attention")
    assert (attn.heads.value.data, attn.kv_heads.value.data) == (1, 1)


def test_a_missing_collective_is_caught():
    """The proof can fail: a per-chip function that skips one all_reduce (adds its partial sums
    as if whole) differs from the reference."""
    module = ModuleOp([layer_function(MEDIUM, 1, 32)])
    whole = _fn(module)
    inputs = draw_inputs(whole, 0)
    ref = evaluate(whole, inputs)
    TensorParallelPass("n300").apply(Context(), module)
    fn = _fn(module)
    reduce = next(op for op in fn.body.block.ops if isinstance(op, AllReduceOp))
    reduce.results[0].replace_all_uses_with(reduce.input)
    reduce.detach()
    reduce.erase()
    got = run_deployment(fn, inputs)
    assert not compare("out", ref[0], got[0]).ok


def test_the_cheaper_whole_plan_is_taken():
    """tiny_decode on n300: every op replicated (1.6 us, no collective) beats the op-by-op split
    (16.1 us with its gathers), so the deployment replicates and records the split as runner-up;
    prefer-sharded keeps the split. Llama-3-8B's layer on n300 (whole: 0.5 GB) splits: the split
    is cheaper there."""
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = check_deployment(module, "n300")
    line = fn.attributes["mesh.deployment"].data
    assert "every op replicated: 1.594 us per chip, taken" in line
    assert "runner-up: split op by op: 16.067 us per chip with 2 collective(s)" in line
    assert not any(isinstance(op, AllGatherOp | AllReduceOp) for op in fn.body.block.ops)
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = check_deployment(module, "n300", prefer_sharded=True)
    line = fn.attributes["mesh.deployment"].data
    assert (
        "split op by op" in line and "taken (runner-up: every op replicated: prefer-sharded" in line
    )


def test_twice_changes_nothing():
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    TensorParallelPass("t3k").apply(Context(), module)
    once = str(module)
    TensorParallelPass("t3k").apply(Context(), module)
    assert str(module) == once


def test_two_axes_gather_minor_first():
    """t3k shards the FFN over both axes and FF2 reads it split over axis 0 alone: the gather runs
    over the minor axis (a dim split over two axes keeps its major part)."""
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = check_deployment(module, "t3k", prefer_sharded=True)  # replicated is cheaper
    gathers = [
        (op.input.name_hint, op.axis.value.data)
        for op in fn.body.block.ops
        if isinstance(op, AllGatherOp)
    ]
    assert ("l0_act", 1) in gathers and ("l0_act", 0) not in gathers


def _axes(steps):
    return [(s.kind.value, s.axis) for s in steps]


def test_conversions_per_axis():
    """Per mesh axis: partial sums reduced first, then shards gathered minor axis first; a dim
    keeps the major part of its split, never the minor part alone; no slice (R -> S)."""
    rank = 2
    both = lay_shard(1, (0, 1))
    assert _axes(conversion(both, REPLICATED, rank)) == [("all_gather", 1), ("all_gather", 0)]
    assert _axes(conversion(both, lay_shard(1, (0,)), rank)) == [("all_gather", 1)]
    assert conversion(both, lay_shard(1, (1,)), rank) is None
    assert conversion(REPLICATED, lay_shard(1, (0,)), rank) is None
    two_d = partial((1,), also=lay_shard(1, (0,)))  # a 2d product: K over axis 1, N over axis 0
    assert _axes(conversion(two_d, REPLICATED, rank)) == [("all_reduce", 1), ("all_gather", 0)]
    assert _axes(conversion(two_d, lay_shard(1, (0,)), rank)) == [("all_reduce", 1)]
    assert conversion(two_d, lay_shard(1, (1,)), rank) is None
    assert conversion(lay_shard(1, (0,), repeat=2), REPLICATED, rank) is None


def test_a_dim_that_does_not_divide_is_replicated():
    """N = 66 does not split over 4 chips: the product is replicated, and the refusal is
    recorded with its numbers."""
    text = """func.func @f(%x0: tensor<2x64xf32>, %w: tensor<64x66xf32>) -> tensor<2x66xf32> {
  %x = tg.silu %x0 : (tensor<2x64xf32>) -> tensor<2x64xf32>
  %y = tg.matmul %x, %w : (tensor<2x64xf32>, tensor<64x66xf32>) -> tensor<2x66xf32>
  func.return %y : tensor<2x66xf32>
}"""
    module = parse_module(text)
    fn = check_deployment(module, "p150x4")
    op = next(op for op in fn.body.block.ops if op.name == "tg.matmul")
    assert op.attributes["tp.plan"].data == "replicate"
    assert op.attributes["tp.runner_up"].data == (
        "column: N 66 does not split over 4 blocks of 1; "
        "row: %x is replicated: no collective makes it split on dim 1 over axis 0"
    )


@pytest.mark.parametrize(
    ("mesh", "message"),
    [("n301", "unknown mesh 'n301'"), (None, "give mesh=PRESET")],
)
def test_bad_mesh_is_refused(mesh, message):
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    with pytest.raises(SpatialPassError, match=message):
        TensorParallelPass(mesh).apply(Context(), module)


def test_shard_unshard_repeat_by_hand():
    whole = np.arange(8).reshape(1, 8)
    stack = shard(whole, (4,), ["shard(1)"], repeat=2)
    assert stack.tolist() == [[[0, 1, 2, 3]], [[0, 1, 2, 3]], [[4, 5, 6, 7]], [[4, 5, 6, 7]]]
    assert np.array_equal(unshard(stack, ["shard(1)"], repeat=2), whole)
    grid = shard(whole, (2, 4), ["replicate", "shard(1)"], repeat=2)
    assert grid.shape == (2, 4, 1, 4) and grid[1, 3].tolist() == [[4, 5, 6, 7]]
    assert np.array_equal(unshard(grid, ["replicate", "shard(1)"], repeat=2), whole)


def test_q8_0_row_split_falls_on_blocks():
    """A Q8_0 row split falls on whole 32-element blocks of K: K = 96 over 2 chips (48 a chip)
    may not split, K = 128 (64 a chip) may. N = 66 splits into 33 columns a chip; the Q8_0 blocks
    run along K, so a column split needs no block boundary."""
    text = """func.func @f(%x: tensor<1x96xbf16>, %w: tensor<96x65xi8>, %s: tensor<3x65xf16>,
                   %y: tensor<1x128xbf16>, %v: tensor<128x65xi8>, %t: tensor<4x65xf16>)
                   -> (tensor<1x65xbf16>, tensor<1x65xbf16>) {
  %a = tg.matmul_q8_0 %x, %w, %s activation "q8_0" : (tensor<1x96xbf16>, tensor<96x65xi8>, tensor<3x65xf16>) -> tensor<1x65xbf16>
  %b = tg.matmul_q8_0 %y, %v, %t activation "q8_0" : (tensor<1x128xbf16>, tensor<128x65xi8>, tensor<4x65xf16>) -> tensor<1x65xbf16>
  func.return %a, %b : tensor<1x65xbf16>, tensor<1x65xbf16>
}"""
    module = parse_module(text)
    fn = check_deployment(module, "n300", prefer_sharded=True)  # replicated is cheaper
    a, b = (op for op in fn.body.block.ops if op.name == "tg.matmul_q8_0")
    assert a.attributes["tp.plan"].data == "replicate"
    assert a.attributes["tp.runner_up"].data == (
        "column: N 65 does not split over 2 blocks of 1; "
        "row: K 96 does not split over 2 chips in blocks of 32"
    )
    assert b.attributes["tp.plan"].data == "row"
    assert [o.type.get_shape() for o in b.operands] == [(1, 64), (64, 65), (2, 65)]


@pytest.mark.parametrize(
    ("example", "mesh", "heads", "kv_heads", "repeat"),
    [
        ("llama3_8b_decode", "galaxy", 4, 1, 1),  # over the 8-chip axis, with its 8 KV heads
        ("llama3_8b_decode_q8_0", "t3k", 4, 1, 1),
        ("qwen3_30b_a3b_decode", "h200x8", 4, 1, 2),
    ],
)
def test_real_sizes(example, mesh, heads, kv_heads, repeat):
    """The real models' layers: heads and KV heads a chip, the KV repeat, every collective priced,
    the module verifies (the pass verifies it) and prints back to what it parses."""
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    TensorParallelPass(mesh).apply(Context(), module)
    fn = _fn(module)
    attn = next(op for op in fn.body.block.ops if op.name == "tg.attention")
    assert (attn.heads.value.data, attn.kv_heads.value.data) == (heads, kv_heads)
    ins, _ = interface(fn)
    names = [a.name_hint for a in fn.args]
    assert ins[names.index("k_cache")].repeat == repeat
    collectives = [op for op in fn.body.block.ops if op.name.startswith("mesh.")]
    assert collectives and all(op.cost.ns.data > 0 for op in collectives)
    assert str(parse_module(str(module))) == str(module)


def test_prefer_sharded_gives_the_tiny_model_its_megatron_pairs():
    """At d = 128 the prices gather early; prefer-sharded keeps every split that can run: WO and
    FF2 by rows with one all_reduce each, the LM head by vocab, each runner-up priced."""
    module = parse_module((EXAMPLES / "tiny_decode.mlir").read_text())
    fn = check_deployment(module, "n300", prefer_sharded=True)
    plan = {
        op.results[0].name_hint: op.attributes["tp.plan"].data
        for op in fn.body.block.ops
        if "tp.plan" in op.attributes
    }
    assert (plan["l0_o"], plan["l0_down"], plan["logits"]) == ("row", "row", "vocab")
    reduces = [op.input.name_hint for op in fn.body.block.ops if isinstance(op, AllReduceOp)]
    assert reduces == ["l0_o", "l0_down"]
    head = next(
        op for op in fn.body.block.ops if op.results and op.results[0].name_hint == "logits"
    )
    assert head.attributes["tp.runner_up"].data.startswith("replicate: ")
    assert "faster by" in head.attributes["tp.runner_up"].data


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", ["n300", "galaxy"])
def test_three_layer_step(mesh: str, prefer_sharded: bool):
    """A whole step of three layers (each with its own weights and caches): a layer's layouts
    meet the next layer's, and every cache comes back whole."""
    tiny = Model("tiny", 128, 4, 2, 32, 256, 1e-6, qk_norm=True, vocab=512)
    module = ModuleOp([step_function(tiny, ExampleNames(False), 1, 64, 3, "step")])
    module.verify()
    check_deployment(module, mesh, prefer_sharded=prefer_sharded)


def test_transposed_weights_split_on_their_own_dims():
    """b stored N x K (transpose_b, a tied LM head's table): a column split cuts b's rows, a row
    split its columns; the partial result is reduced before it is returned."""
    text = """func.func @f(%x: tensor<2x64xf32>, %w: tensor<128x64xf32>, %v: tensor<64x128xf32>)
                   -> tensor<2x64xf32> {
  %y = tg.matmul %x, %w transpose_b true : (tensor<2x64xf32>, tensor<128x64xf32>) -> tensor<2x128xf32>
  %z = tg.matmul %y, %v transpose_b true : (tensor<2x128xf32>, tensor<64x128xf32>) -> tensor<2x64xf32>
  func.return %z : tensor<2x64xf32>
}"""
    fn = check_deployment(parse_module(text), "p150x4", prefer_sharded=True)
    y, z = (op for op in fn.body.block.ops if op.name == "tg.matmul")
    assert (y.attributes["tp.plan"].data, z.attributes["tp.plan"].data) == ("column", "row")
    assert y.operands[1].type.get_shape() == (32, 64)
    assert z.operands[1].type.get_shape() == (64, 32)
    ins, outs = interface(fn)
    assert [p.placements for p in ins[1:]] == [("shard(0)",), ("shard(1)",)]
    assert outs[0].placements == ("replicate",)


@pytest.mark.skipif(not FULL, reason="the simulated 2d deployment runs with SPATIAL_MESH_FULL=1")
def test_the_2d_plan_runs_on_the_simulator():
    """The medium layer over t3k takes WO's 2d plan by price (a weight split on K over one axis
    and on N over the other, its partial sum all-reduced over one axis, then gathered over the
    other): the linked program under our simulator equals the whole reference (~80 s wall)."""
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.backend.executors import mesh_runner
    from spatial_dialect.tools.interpreters.reference import input_names

    module = ModuleOp([layer_function(MEDIUM, 1, 32)])
    whole = _fn(module)
    inputs = draw_inputs(whole, 0)
    ref = evaluate(whole, inputs)
    TensorParallelPass("t3k").apply(Context(), module)
    per_chip = _fn(module)
    assert [
        op.attributes["tp.plan"].data
        for op in per_chip.body.block.ops
        if "tp.plan" in op.attributes
    ].count("2d") == 1
    got = mesh_runner("sim")(
        compile_module(per_chip, "t3k"), [inputs[n] for n in input_names(whole)]
    )
    for i, (r, g) in enumerate(zip(ref, got, strict=True)):
        c = compare(f"result{i}", r, g)
        assert c.ok, c.line()
