"""The distributed rms_norm (passes/tensor_parallel/norm.py, docs/tensor-parallel.md#the-distributed-rms_norm):
its deployments mean what the whole function means under the mesh reference, its IR has
tt-metal's shape (reduce_scatter, a split add, rms_stats, an all_reduce of rows x 1 statistics,
rms_apply, an all_gather before the column product), a skipped statistics all_reduce is caught,
and the price decides between it and the replicated norm by default (`priced`: the whole plan
with every norm distributed against the one with none; Llama-3-8B's f32 prefill on p150x4 takes
it, its bf16 prefill on t3k and its decode do not; never dearer than `off`). SPATIAL_MESH_FULL=1
adds 60 layers over every preset.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from test_tensor_parallel import (
    EXAMPLES,
    FULL,
    MEDIUM,
    MESHES,
    SWEEP,
    _fn,
    check_deployment,
    random_model,
)
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType

from spatial_dialect.mesh import AllReduceOp
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.targets.mesh import MESH_PRESETS
from spatial_dialect.tools.frontend.layers import layer_function
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.mesh_reference import run_deployment
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.spatial_run import parse_module


def _names(fn) -> Counter:
    return Counter(op.name for op in fn.body.block.ops)


@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize("example", ["tiny_decode", "tiny_prefill_f32", "tiny_moe_decode_f32"])
def test_examples_keep_their_meaning_with_distributed_norms(example: str, mesh: str):
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    fn = check_deployment(module, mesh, f32_rtol=None, prefer_sharded=True, norm="forced")
    names = _names(fn)
    assert names["tg.rms_apply"] >= 2 and names["tg.rms_stats"] == names["tg.rms_apply"]
    # a whole-row norm left replicated says why (the MoE example's final norm on p150x4 and t3k
    # reads the MoE's replicated output: its 64-wide experts do not split there)
    for op in fn.body.block.ops:
        if op.name == "tg.rms_norm" and op.width is None:
            assert op.attributes["tp.runner_up"].data.startswith("distributed: x is replicated")


@pytest.mark.parametrize("norm", ["forced", "priced"])
@pytest.mark.parametrize("mesh", MESHES)
@pytest.mark.parametrize("case", SWEEP, ids=[m.name for m, _, _ in SWEEP])
def test_random_layers_keep_their_meaning_with_distributed_norms(case, mesh, norm):
    """The sweep of test_tensor_parallel (GQA ratios, q/k norms, Q8_0, f32 tables, 1 and 3 rows)
    with prefer-sharded, every norm forced distributed or the two whole plans priced: f32 to
    1e-5 (the row sums in another order)."""
    m, t, cache = case
    module = ModuleOp([layer_function(m, t, cache)])
    fn = check_deployment(module, mesh, prefer_sharded=True, norm=norm)
    if norm == "forced":
        assert _names(fn)["tg.rms_apply"] == 2


FULL_SWEEP = [random_model(random.Random(seed), seed) for seed in range(10, 70)]


@pytest.mark.skipif(not FULL, reason="the wide sweep runs with SPATIAL_MESH_FULL=1")
@pytest.mark.parametrize("mesh", sorted(MESH_PRESETS))
@pytest.mark.parametrize("case", FULL_SWEEP, ids=[m.name for m, _, _ in FULL_SWEEP])
def test_wide_sweep_keeps_its_meaning_with_distributed_norms(case, mesh):
    m, t, cache = case
    module = ModuleOp([layer_function(m, t, cache)])
    check_deployment(module, mesh, prefer_sharded=True, norm="forced")


def _medium(norm: str, mesh: str = "n300", prefer_sharded: bool = True):
    module = ModuleOp([layer_function(MEDIUM, 1, 32)])
    TensorParallelPass(mesh, prefer_sharded, distributed_norm=norm).apply(Context(), module)
    return _fn(module)


def test_the_medium_layer_has_tt_metals_shape():
    """d = 2048 over n300, forced: FF2's (and WO's) partial sum is reduce_scattered into the
    split residual stream, each norm's statistics (1 x 1 f32 at one row) are all-reduced, not x,
    and x is gathered before the next column product."""
    fn = _medium("forced")
    ops = list(fn.body.block.ops)
    seq = [op.name for op in ops]
    assert Counter(seq)["mesh.reduce_scatter"] == 2
    for op in ops:
        if op.name == "tg.rms_stats":
            reduce = next(iter(op.results[0].uses)).operation
            assert isinstance(reduce, AllReduceOp)
            t = reduce.input.type
            assert isinstance(t, TensorType) and t.get_shape() == (1, 1)
            apply = next(iter(reduce.results[0].uses)).operation
            assert apply.name == "tg.rms_apply" and apply.n.value.data == 2048
            assert apply.attributes["tp.plan"].data == "distributed"
            gather = next(u.operation for u in apply.results[0].uses)
            assert gather.name == "mesh.all_gather"
            assert all(u.operation.name == "tg.matmul" for u in gather.results[0].uses)
        if op.name == "mesh.reduce_scatter":
            add = next(iter(op.results[0].uses)).operation
            # the residual lies split already (the first norm split it): the add's local plan
            assert add.name == "tg.add" and add.attributes["tp.plan"].data == "local"


def test_a_missing_statistics_all_reduce_is_caught():
    """The proof can fail: a chip that normalizes by its own columns' sum of squares alone (the
    statistics' all_reduce skipped) differs from the reference."""
    module = ModuleOp([layer_function(SWEEP[0][0], 3, 32)])
    whole = _fn(module)
    inputs = draw_inputs(whole, 0)
    ref = evaluate(whole, inputs)
    TensorParallelPass("n300", True, distributed_norm="forced").apply(Context(), module)
    fn = _fn(module)
    reduce = next(
        op
        for op in fn.body.block.ops
        if isinstance(op, AllReduceOp) and op.input.owner.name == "tg.rms_stats"
    )
    reduce.results[0].replace_all_uses_with(reduce.input)
    reduce.detach()
    reduce.erase()
    got = run_deployment(fn, inputs)
    assert not compare("out", ref[0], got[0]).ok


def _deployment(example: str, mesh: str, **options) -> str:
    module = parse_module((EXAMPLES / f"{example}.mlir").read_text())
    TensorParallelPass(mesh, distributed_norm="priced", **options).apply(Context(), module)
    return _fn(module).attributes["mesh.deployment"].data


def test_the_price_compares_the_whole_plans_at_prefill_and_decode():
    """Priced: Llama-3-8B's layer at 128 rows over t3k keeps the op-by-op plan since WO and FF2
    take the 2-D split (683.3 us against 714.7 us with distributed norms; before the 2-D plans
    the distributed norms won, 729.0 against 742.8); at one row over n300 the replicated norm
    stays (818.4 us against 847.9 us: four more collectives' latency for a norm of one row)."""
    line = _deployment("llama3_8b_prefill", "t3k")
    assert "split op by op: 683.259 us per chip with 6 collective(s) (against distributed " in line
    assert "norms: 714.676 us per chip with 12 collective(s), slower by 31.417 us), taken" in line
    line = _deployment("llama3_8b_decode", "n300")
    assert "split op by op: 818.398 us per chip with 2 collective(s) (against distributed " in line
    assert "norms: 847.869 us per chip with 6 collective(s), slower by 29.471 us), taken" in line


def test_priced_reports_no_norm_plan_where_there_is_no_norm():
    """A program without a whole-row norm has no distributed-norm plan: priced records the
    op-by-op plan alone, not a comparison with itself."""
    line = _deployment("gemm_2048", "n300")
    assert line.endswith(
        "split op by op: 131.072 us per chip with 0 collective(s), taken "
        "(runner-up: every op replicated: the split has none)"
    )


def test_off_says_why_norms_are_replicated():
    fn = _medium("off", prefer_sharded=False)
    norms = [op for op in fn.body.block.ops if op.name == "tg.rms_norm" and op.width is None]
    assert norms and all(op.attributes["tp.plan"].data == "replicate" for op in norms)
    assert "distributed-norm=priced|forced" in norms[0].attributes["tp.runner_up"].data
    assert "tg.rms_apply" not in _names(fn)


def test_priced_is_the_default_and_takes_the_distributed_norms_where_cheaper():
    """With no distributed-norm given, the two whole plans are priced: Llama-3-8B's f32 prefill
    layer over p150x4 takes the distributed norms (703.074 us a chip against 703.450 us with
    replicated ones)."""
    module = parse_module((EXAMPLES / "llama3_8b_prefill_f32.mlir").read_text())
    TensorParallelPass("p150x4").apply(Context(), module)
    fn = _fn(module)
    line = fn.attributes["mesh.deployment"].data
    assert "distributed norms: 703.074 us per chip with 6 collective(s) (against split op " in line
    assert "by op: 703.450 us per chip with 2 collective(s), slower by 0.376 us), taken" in line
    assert _names(fn)["tg.rms_apply"] == 2 and "tg.rms_norm" not in _names(fn)


def test_priced_is_never_dearer_than_off():
    """The distributed norm is a choice of the whole plan, not of each op: op by op, the tiny
    MoE decode over p150x4 would take the split embedding (`columns`) and split adds that cost
    their gathers later (about 38.5 us a chip with 5 collectives, against 23.3 us with the norms
    replicated). Priced keeps the plan `off` takes, records the distributed one as slower, and
    says so on each replicated norm."""
    line = _deployment("tiny_moe_decode", "p150x4", prefer_experts=True)
    assert "split op by op: 23.383 us per chip with 2 collective(s) (against distributed " in line
    assert "norms: 84.056 us per chip with 8 collective(s), slower by 60.673 us), taken" in line
    module = parse_module((EXAMPLES / "tiny_moe_decode.mlir").read_text())
    TensorParallelPass("p150x4", prefer_experts=True).apply(Context(), module)
    ops = _fn(module).body.block.ops
    norms = [op for op in ops if op.name == "tg.rms_norm" and op.width is None]
    assert norms and all(op.attributes["tp.plan"].data == "replicate" for op in norms)
    assert all("priced as a whole plan" in op.attributes["tp.runner_up"].data for op in norms)
