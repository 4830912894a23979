"""The simulator of a deployment over a mesh (tools/simulator/mesh.py) and the plumbing every
executor shares (tools/interpreters/deployment.py), on hand-written per-chip functions over 2
chips (n300), 4 (p150x4) and a 2x4 mesh (t3k).

Two independent checks: the per-chip function's mesh reference (lockstep over the chips) equals
the WHOLE function's single-device reference (written separately here, in whole shapes), so the
sharding, the repeat and the collectives mean what the whole program does; and the compiled
deployment, simulated chip by chip with the steps between, equals the mesh reference."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.parser import Parser

from spatial_dialect.mesh import Collective, ShardingAttr
from spatial_dialect.mesh.interface import Placement
from spatial_dialect.passes.pipeline import compile_module, default_context
from spatial_dialect.tools.backend import executors
from spatial_dialect.tools.emit.report import report
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.deployment import (
    STEP_FUNCTIONS,
    deployment_of,
    mesh_reference,
    shard_one,
    unshard_one,
    whole_shapes,
)
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import evaluate, input_names
from spatial_dialect.tools.simulator.mesh import simulate_mesh
from spatial_dialect.tools.spatial_run import main as run_main


def _fn(text: str, name: str) -> func.FuncOp:
    module = Parser(default_context(), text).parse_module()
    return next(o for o in module.walk() if isinstance(o, func.FuncOp) and o.sym_name.data == name)


def _mlp(preset: str, shape: str, col: str, row: str, reduces: str, f: int) -> str:
    """A SwiGLU MLP with w1/w3 column-parallel and w2 row-parallel: local hidden size `f`."""
    rep = ", ".join(["replicate"] * len(shape.split("x")))
    return f"""
mesh.mesh @{preset} shape {shape} topology [{", ".join(["line"] * len(shape.split("x")))}] links [{", ".join(["1"] * len(shape.split("x")))}] preset "{preset}"
func.func @mlp(%x: tensor<32x64xbf16> {{mesh.sharding = #mesh.sharding<@{preset}, [{rep}]>}},
               %w1: tensor<64x{f}xbf16> {{mesh.sharding = #mesh.sharding<@{preset}, [{col}]>}},
               %w3: tensor<64x{f}xbf16> {{mesh.sharding = #mesh.sharding<@{preset}, [{col}]>}},
               %w2: tensor<{f}x64xbf16> {{mesh.sharding = #mesh.sharding<@{preset}, [{row}]>}})
    -> (tensor<32x64xbf16> {{mesh.sharding = #mesh.sharding<@{preset}, [{rep}]>}}) {{
  %g = tg.matmul %x, %w1 : (tensor<32x64xbf16>, tensor<64x{f}xbf16>) -> tensor<32x{f}xbf16>
  %u = tg.matmul %x, %w3 : (tensor<32x64xbf16>, tensor<64x{f}xbf16>) -> tensor<32x{f}xbf16>
  %h = tg.swiglu %g, %u : (tensor<32x{f}xbf16>, tensor<32x{f}xbf16>) -> tensor<32x{f}xbf16>
  %p = tg.matmul %h, %w2 : (tensor<32x{f}xbf16>, tensor<{f}x64xbf16>) -> tensor<32x64xbf16>
{reduces}
  %y = tg.add %x, %o : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}}
"""


WHOLE_MLP = """
func.func @mlp(%x: tensor<32x64xbf16>, %w1: tensor<64x256xbf16>, %w3: tensor<64x256xbf16>,
               %w2: tensor<256x64xbf16>) -> tensor<32x64xbf16> {
  %g = tg.matmul %x, %w1 : (tensor<32x64xbf16>, tensor<64x256xbf16>) -> tensor<32x256xbf16>
  %u = tg.matmul %x, %w3 : (tensor<32x64xbf16>, tensor<64x256xbf16>) -> tensor<32x256xbf16>
  %h = tg.swiglu %g, %u : (tensor<32x256xbf16>, tensor<32x256xbf16>) -> tensor<32x256xbf16>
  %p = tg.matmul %h, %w2 : (tensor<32x256xbf16>, tensor<256x64xbf16>) -> tensor<32x64xbf16>
  %y = tg.add %x, %p : (tensor<32x64xbf16>, tensor<32x64xbf16>) -> tensor<32x64xbf16>
  func.return %y : tensor<32x64xbf16>
}
"""


N300 = _mlp(
    "n300",
    "2",
    "shard(1)",
    "shard(0)",
    "  %o = mesh.all_reduce %p axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> : tensor<32x64xbf16> -> tensor<32x64xbf16>",
    128,
)
P150X4 = _mlp(
    "p150x4",
    "4",
    "shard(1)",
    "shard(0)",
    "  %o = mesh.all_reduce %p axis 0 from #mesh.sharding<@p150x4, [partial(sum)]> to #mesh.sharding<@p150x4, [replicate]> : tensor<32x64xbf16> -> tensor<32x64xbf16>",
    64,
)
# 8-way: both axes split the hidden dim (major to minor); the partial sums are reduced over the
# minor axis first, then the major one.
T3K = _mlp(
    "t3k",
    "2x4",
    "shard(1), shard(1)",
    "shard(0), shard(0)",
    "  %o1 = mesh.all_reduce %p axis 1 from #mesh.sharding<@t3k, [partial(sum), partial(sum)]> to #mesh.sharding<@t3k, [partial(sum), replicate]> : tensor<32x64xbf16> -> tensor<32x64xbf16>\n"
    "  %o = mesh.all_reduce %o1 axis 0 from #mesh.sharding<@t3k, [partial(sum), replicate]> to #mesh.sharding<@t3k, [replicate, replicate]> : tensor<32x64xbf16> -> tensor<32x64xbf16>",
    32,
)
MESHES = {"n300": N300, "p150x4": P150X4, "t3k": T3K}


def _inputs(fn: func.FuncOp) -> dict[str, np.ndarray]:
    return draw_inputs(fn, 0, whole_shapes(fn))


@pytest.mark.parametrize("preset", sorted(MESHES))
def test_the_mesh_reference_is_the_whole_functions(preset):
    fn = _fn(MESHES[preset], "mlp")
    whole = _inputs(fn)
    assert whole["w1"].shape == (64, 256) and whole["w2"].shape == (256, 64)
    (mesh,) = mesh_reference(fn, [whole[n] for n in input_names(fn)])
    (ref,) = evaluate(_fn(WHOLE_MLP, "mlp"), whole)
    # The partial sums are added in another order than the whole product's K loop: bf16's
    # tolerance, not bit equality.
    assert compare("y", ref, mesh).ok


@pytest.mark.parametrize("preset", sorted(MESHES))
def test_the_simulated_deployment_is_the_mesh_reference(preset):
    fn = _fn(MESHES[preset], "mlp")
    whole = _inputs(fn)
    args = [whole[n] for n in input_names(fn)]
    module = compile_module(fn, preset)
    dep = deployment_of(module)
    assert dep is not None and dep.chips == {"n300": 2, "p150x4": 4, "t3k": 8}[preset]
    (sim,) = simulate_mesh(module, args)
    (mesh,) = mesh_reference(fn, args)
    assert compare("y", mesh, sim).ok


MIX = """
mesh.mesh @t3k shape 2x4 topology [line, line] links [1, 1] preset "t3k"
func.func @mix(%x: tensor<8x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
               %a: tensor<32x16xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>},
               %w: tensor<16x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
               %k: tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>},
               %v: tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64})
    -> (tensor<32x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, replicate]>},
        tensor<8x64xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
        tensor<16x32xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(0)]>},
        tensor<64x8xbf16> {mesh.sharding = #mesh.sharding<@t3k, [replicate, shard(1)]>, mesh.repeat = 2 : i64}) {
  %xa = mesh.all_gather %x axis 1 from #mesh.sharding<@t3k, [replicate, shard(0)]> to #mesh.sharding<@t3k, [replicate, replicate]> : tensor<8x64xbf16> -> tensor<32x64xbf16>
  %xs = tg.silu %xa : (tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %p = tg.matmul %a, %w : (tensor<32x16xbf16>, tensor<16x64xbf16>) -> tensor<32x64xbf16>
  %r = mesh.reduce_scatter %p axis 1 from #mesh.sharding<@t3k, [replicate, partial(sum)]> to #mesh.sharding<@t3k, [replicate, shard(0)]> : tensor<32x64xbf16> -> tensor<8x64xbf16>
  %kt = tg.silu %k : (tensor<64x8xbf16>) -> tensor<64x8xbf16>
  %kk = mesh.all_to_all %kt axis 1 from #mesh.sharding<@t3k, [replicate, shard(1)]> to #mesh.sharding<@t3k, [replicate, shard(0)]> : tensor<64x8xbf16> -> tensor<16x32xbf16>
  %vs = tg.silu %v : (tensor<64x8xbf16>) -> tensor<64x8xbf16>
  func.return %xs, %r, %kk, %vs : tensor<32x64xbf16>, tensor<8x64xbf16>, tensor<16x32xbf16>, tensor<64x8xbf16>
}
"""

WHOLE_MIX = """
func.func @mix(%x: tensor<32x64xbf16>, %a: tensor<32x64xbf16>, %w: tensor<64x64xbf16>,
               %k: tensor<64x32xbf16>, %v: tensor<64x16xbf16>)
    -> (tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64x32xbf16>, tensor<64x16xbf16>) {
  %xs = tg.silu %x : (tensor<32x64xbf16>) -> tensor<32x64xbf16>
  %r = tg.matmul %a, %w : (tensor<32x64xbf16>, tensor<64x64xbf16>) -> tensor<32x64xbf16>
  %kk = tg.silu %k : (tensor<64x32xbf16>) -> tensor<64x32xbf16>
  %vs = tg.silu %v : (tensor<64x16xbf16>) -> tensor<64x16xbf16>
  func.return %xs, %r, %kk, %vs : tensor<32x64xbf16>, tensor<32x64xbf16>, tensor<64x32xbf16>, tensor<64x16xbf16>
}
"""


def test_gather_scatter_all_to_all_and_a_repeat_on_a_2x4_mesh():
    fn = _fn(MIX, "mix")
    whole = _inputs(fn)
    # v: 8 columns a chip, 4 chips in 2 groups of 2: 16 columns whole.
    assert whole["v"].shape == (64, 16) and whole["k"].shape == (64, 32)
    args = [whole[n] for n in input_names(fn)]
    mesh = mesh_reference(fn, args)
    ref = evaluate(_fn(WHOLE_MIX, "mix"), whole)
    for name, r, m in zip(("xs", "r", "kk", "vs"), ref, mesh, strict=True):
        assert r.shape == m.shape and compare(name, r, m).ok, name
    sim = simulate_mesh(compile_module(fn, "t3k"), args)
    for name, m, s in zip(("xs", "r", "kk", "vs"), mesh, sim, strict=True):
        assert compare(name, m, s).ok, name


def test_a_repeat_shards_each_block_onto_consecutive_chips():
    whole = np.arange(4 * 6, dtype=np.float32).reshape(4, 6)
    p = Placement(ShardingAttr("m", ["shard(1)"]), 2)
    stacked = shard_one(whole, (4,), p, None)
    # 2 blocks of 3 columns over 4 chips: chips 0, 1 hold block 0; chips 2, 3 block 1.
    assert np.array_equal(stacked[0], whole[:, :3]) and np.array_equal(stacked[1], whole[:, :3])
    assert np.array_equal(stacked[2], whole[:, 3:]) and np.array_equal(stacked[3], whole[:, 3:])
    assert np.array_equal(unshard_one(stacked, (4,), p), whole)


def test_every_collective_has_a_step_function():
    assert set(STEP_FUNCTIONS) == set(Collective)


def test_spatial_run_simulates_a_per_chip_function_on_its_mesh(tmp_path, capsys):
    path = tmp_path / "mlp.mlir"
    path.write_text(N300)
    assert run_main([str(path), "--target", "n300", "--backend", "sim"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "inputs of @mlp: drawn whole with seed 0"
    assert out[1].startswith("y ") and "32x64 bf16" in out[1]
    assert out[-1] == "PASS: 1 output(s) within tolerance on n300"


def test_spatial_run_refuses_what_it_cannot_run_on_a_mesh_in_one_line(
    tmp_path, capsys, monkeypatch
):
    path = tmp_path / "mlp.mlir"
    path.write_text(N300)
    # A backend without a mesh runner is unavailable, not a FAIL (triton-interpret has one: here
    # it is taken away, so that the refusal stays tested once every backend has one).
    monkeypatch.setattr(executors, "MESH_BACKENDS", {"sim": executors.MESH_BACKENDS["sim"]})
    assert run_main([str(path), "--target", "n300", "--backend", "triton-interpret"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (
        "spatial-run: backend unavailable: backend triton-interpret does not run deployments "
        "over a mesh yet (those that do: sim)"
    )
    # A per-chip function on one chip's target is refused by link, by name.
    assert run_main([str(path), "--target", "wormhole_n150"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0] == (
        "spatial-run: compile refused: InvalidTarget: the module is a deployment over mesh n300; target "
        "wormhole_n150 is one chip: name the mesh (target=n300)"
    )


def test_the_report_adds_the_collectives_time_to_one_chips_sections():
    module = compile_module(_fn(N300, "mlp"), "n300")
    r = report(module)
    (step,) = r["collectives"]
    # all_reduce of 32x64 bf16 = 4096 bytes over n300's one link: two phases, each a 4.8 us call
    # and one hop of 711 + 2 x 950 ns barrier, then 2 (n-1)/n x 4096 bytes at 12 bytes/ns.
    ns = 2 * (4800 + 711 + 2 * 950) + 4096 / 12
    assert step == {
        "kind": "all_reduce",
        "tensor": "o",
        "source": "p",
        "axis": 0,
        "bytes": 4096,
        "links": 1,
        "hops": 1,
        "us": round(ns) / 1000,
    }
    sections = sum(s["predicted_us"] for s in r["sections"])
    assert r["total"]["predicted_us"] == pytest.approx(sections + round(ns) / 1000)
