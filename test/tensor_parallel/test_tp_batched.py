"""The batched decode step over a mesh (issues 23 and 24): tg.batch_set_rows and
tg.batch_attention split by heads as tg.set_rows and tg.attention do (the caches by KV-head
columns, repeated where there are fewer KV heads than chips; the per-user positions and the block
table replicated), and the deployment keeps the meaning: the mesh reference against the whole
step's reference for B = 3 and 8 users, contiguous and paged caches, an idle user, one user's
admission (a 5-token prefill into its slot), a tiny GGUF imported with --batch; spatial-run over
n300 and p150x4 under our simulator and Triton's interpreter. SPATIAL_MESH_FULL=1 runs every case
under both backends (about 95 s on this machine)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect.mesh.interface import interface
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.tg import BatchAttentionOp, BatchSetRowsOp
from spatial_dialect.tools.frontend.layers import Batch, ExampleNames, Model, step_function
from spatial_dialect.tools.spatial_run import main as run_main
from spatial_dialect.tools.spatial_run import parse_module

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_tensor_parallel import check_deployment  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
# examples/generate.py's TINY: 4 heads, 2 KV heads of 32, so p150x4 repeats each KV head twice
TINY = Model("tiny", 128, 4, 2, 32, 256, 1e-6, qk_norm=True, vocab=512)
CACHE, BLOCK = 32, 8
CASES = [(3, None), (3, BLOCK), (8, None), (8, BLOCK)]
IDS = [f"b{u}_{'paged' if b else 'contiguous'}" for u, b in CASES]


def _step(users: int, block: int | None, m: Model = TINY, cache: int = CACHE) -> ModuleOp:
    batch = Batch.decode(users, cache, block)
    fn = step_function(m, ExampleNames(m.q8_0), 1, cache, 1, f"{m.name}_b{users}", batch)
    module = ModuleOp([fn])
    module.verify()
    return module


def _fn(module: ModuleOp) -> func.FuncOp:
    return next(o for o in module.body.block.ops if isinstance(o, func.FuncOp))


def _check(module: ModuleOp, mesh: str, prefer_sharded: bool, edit=None) -> func.FuncOp:
    """The per-chip function of ``module`` on ``mesh``, its deployment compared with the whole
    step's reference on the same inputs (``edit`` changes the drawn inputs first)."""
    return check_deployment(module, mesh, None, prefer_sharded, edit)


def _placements(fn: func.FuncOp) -> dict[str, tuple[str, int]]:
    ins, _ = interface(fn)
    return {a.name_hint: (str(p.sharding), p.repeat) for a, p in zip(fn.args, ins, strict=True)}


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", ["n300", "p150x4", "t3k"])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_batched_steps_keep_their_meaning(case, mesh: str, prefer_sharded: bool):
    users, block = case
    fn = _check(_step(users, block), mesh, prefer_sharded)
    batched = [op for op in fn.body.block.ops if isinstance(op, BatchSetRowsOp | BatchAttentionOp)]
    assert len(batched) == 3
    for op in batched:
        assert op.attributes["tp.us"].value.data > 0 and "tp.runner_up" in op.attributes
        if prefer_sharded:
            assert op.attributes["tp.plan"].data == "heads", op
    if not prefer_sharded:
        return
    place = _placements(fn)
    # positions and the block table address rows: every chip holds them whole
    for name in ("pos", "block_table") if block else ("pos",):
        assert "shard(" not in place[name][0] and place[name][1] == 1, (name, place[name])
    attn = next(op for op in batched if isinstance(op, BatchAttentionOp))
    cache = fn.args[[a.name_hint for a in fn.args].index("l0_k_cache")]
    rows = users * CACHE
    if mesh == "n300":  # 2 KV heads on 2 chips: one each, with two of the four q heads
        assert (attn.heads.value.data, attn.kv_heads.value.data) == (2, 1)
        assert place["l0_k_cache"][1] == 1 and cache.type.get_shape() == (rows, 32)
    elif mesh == "p150x4":  # 2 KV heads on 4 chips: each held by 2 chips
        assert (attn.heads.value.data, attn.kv_heads.value.data) == (1, 1)
        assert place["l0_k_cache"][1] == 2 and cache.type.get_shape() == (rows, 32)
    if block:
        assert attn.block_size.value.data == BLOCK


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", ["n300", "p150x4", "t3k"])
@pytest.mark.parametrize("block", [None, BLOCK], ids=["contiguous", "paged"])
def test_an_admission_keeps_its_meaning(block, mesh: str, prefer_sharded: bool):
    """One user's prefill of 5 tokens into its slot of the 3-user cache (Batch.admission: the
    serving loop's other step, one deployment with the decode)."""
    fn = step_function(
        TINY, ExampleNames(False), 5, CACHE, 1, "admit", Batch.admission(3, CACHE, 5, block)
    )
    module = ModuleOp([fn])
    module.verify()
    per_chip = _check(module, mesh, prefer_sharded)
    if prefer_sharded:
        attn = next(op for op in per_chip.body.block.ops if isinstance(op, BatchAttentionOp))
        assert attn.attributes["tp.plan"].data == "heads"


def test_an_idle_user_stays_idle_over_the_mesh():
    """A position -1 (a free slot): its cache rows unwritten and its attention row zero on every
    chip, as the whole step has them."""

    def idle(inputs):
        inputs["pos"][1] = -1

    _check(_step(3, BLOCK), "p150x4", True, idle)


def test_heads_are_priced_cheaper_on_a_larger_batch():
    """The decision, not only --prefer-sharded, splits the batched cache writes and attention by
    heads when the caches are large (16 heads, 4 KV heads of 128, 8 users of 256 rows): the
    replicated runner-up gathers every user's cache."""
    medium = Model("medium", 2048, 16, 4, 128, 8192, 1e-6, qk_norm=True, elt="f32", vocab=512)
    module = _step(8, 16, medium, 256)
    TensorParallelPass("n300").apply(Context(), module)
    for op in _fn(module).body.block.ops:
        if isinstance(op, BatchSetRowsOp | BatchAttentionOp):
            assert op.attributes["tp.plan"].data == "heads", op
            assert op.attributes["tp.runner_up"].data.startswith("replicate: ")


def test_an_imported_batch_keeps_its_meaning(tmp_path):
    """spatial-import --batch 3 --paged 8 of a tiny GGUF (qwen3, F16, 2 layers) over p150x4."""
    pytest.importorskip("gguf")
    sys.path.insert(0, str(ROOT / "test" / "frontend"))
    from tiny_gguf import write_tiny

    from spatial_dialect.tools.spatial_import import main as import_main

    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    out = tmp_path / "b.mlir"
    argv = [str(model), "-o", str(out), "--step", "decode", "--batch", "3", "--paged", "8"]
    assert import_main(argv) == 0
    fn = _check(parse_module(out.read_text()), "p150x4", True)
    plans = [
        op.attributes["tp.plan"].data
        for op in fn.body.block.ops
        if isinstance(op, BatchSetRowsOp | BatchAttentionOp)
    ]
    assert plans == ["heads"] * 6


RUNS = [("n300", 8, None, "sim"), ("p150x4", 3, BLOCK, "sim"), ("p150x4", 3, BLOCK, "triton")]
FULL_RUNS = [
    (mesh, users, block, backend)
    for mesh in ("n300", "p150x4")
    for users, block in CASES
    for backend in ("sim", "triton")
    if (mesh, users, block, backend) not in RUNS
]


def _spatial_run(capsys, tmp_path, mesh, users, block, backend):
    if backend == "triton":
        pytest.importorskip("triton")
        pytest.importorskip("torch")
    path = tmp_path / "step.mlir"
    path.write_text(str(_step(users, block)))
    flag = "sim" if backend == "sim" else "triton-interpret"
    rc = run_main([str(path), "--target", mesh, "--prefer-sharded", "--backend", flag])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert [line.split()[0] for line in out.splitlines()[1:4]] == ["token", "l0_kc", "l0_vc"]
    assert out.splitlines()[-1].startswith("PASS: 3 output(s) within tolerance"), out


@pytest.mark.parametrize("run", RUNS, ids=["-".join(map(str, r)) for r in RUNS])
def test_spatial_run_passes_a_batched_step(capsys, tmp_path, run):
    _spatial_run(capsys, tmp_path, *run)


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1: every batched case, both backends")
@pytest.mark.parametrize("run", FULL_RUNS, ids=["-".join(map(str, r)) for r in FULL_RUNS])
def test_spatial_run_passes_every_batched_step(capsys, tmp_path, run):
    _spatial_run(capsys, tmp_path, *run)
