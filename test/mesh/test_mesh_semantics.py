"""The collectives' reference semantics (tools/interpreters/collectives.py) against numpy: small
cases computed by hand, then properties over random meshes, shardings and tensors; and the
collective ops run through xDSL's interpreter, and priced (passes/mesh_prices.py)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions
from xdsl.parser import Parser

from spatial_dialect.mesh import COLLECTIVES, AllReduceOp, Collective, MeshOp, MeshVerifyError
from spatial_dialect.passes.mesh_prices import cost_of, mesh_of, mesh_op_of
from spatial_dialect.passes.pipeline import default_context
from spatial_dialect.tools.interpreters.collectives import (
    MeshFunctions,
    all_gather,
    all_reduce,
    all_to_all,
    reduce_scatter,
    replicas_agree,
    shard,
    unshard,
)
from spatial_dialect.tools.interpreters.tg_functions import implemented_ops

# --- by hand: a line of two chips, each holding a 2x2 shard -------------------------------------

A = np.array([[1.0, 2.0], [3.0, 4.0]])
B = np.array([[10.0, 20.0], [30.0, 40.0]])
STACK = np.stack([A, B])  # chip 0 holds A, chip 1 holds B


def test_all_gather_by_hand():
    rows = all_gather(STACK, 1, 0, 0)
    want_rows = np.array([[1, 2], [3, 4], [10, 20], [30, 40]], dtype=float)
    assert rows.shape == (2, 4, 2)
    assert np.array_equal(rows[0], want_rows) and np.array_equal(rows[1], want_rows)
    cols = all_gather(STACK, 1, 0, 1)
    assert np.array_equal(cols[1], np.array([[1, 2, 10, 20], [3, 4, 30, 40]], dtype=float))


def test_reduce_scatter_and_all_reduce_by_hand():
    rs = reduce_scatter(STACK, 1, 0, 0)
    assert np.array_equal(rs[0], np.array([[11.0, 22.0]]))
    assert np.array_equal(rs[1], np.array([[33.0, 44.0]]))
    ar = all_reduce(STACK, 1, 0)
    assert np.array_equal(ar[0], [[11.0, 22.0], [33.0, 44.0]])
    assert np.array_equal(ar[1], ar[0])


def test_all_to_all_by_hand():
    # Rows were split (chip 0 rows 0-1, chip 1 rows 2-3 of a 4x2 tensor); after, columns are:
    # chip 0 holds column 0 of all four rows, chip 1 column 1.
    out = all_to_all(STACK, 1, 0, 0, 1)
    assert out.shape == (2, 4, 1)
    assert np.array_equal(out[0][:, 0], [1.0, 3.0, 10.0, 30.0])
    assert np.array_equal(out[1][:, 0], [2.0, 4.0, 20.0, 40.0])


def test_two_axes_split_a_dim_major_to_minor():
    whole = np.arange(8.0).reshape(8, 1)
    stack = shard(whole, (2, 2), ("shard(0)", "shard(0)"))
    # chip (c0, c1) holds block 2 c0 + c1 of four.
    assert [stack[c0, c1, 0, 0] for c0 in (0, 1) for c1 in (0, 1)] == [0.0, 2.0, 4.0, 6.0]
    assert np.array_equal(unshard(stack, ("shard(0)", "shard(0)")), whole)


# --- properties --------------------------------------------------------------------------------


@st.composite
def deployments(draw):
    """A mesh of 1 or 2 axes, a rank-2 tensor whose dims split evenly, a sharding."""
    rank = draw(st.integers(1, 2))
    mesh = tuple(draw(st.sampled_from([1, 2, 3, 4])) for _ in range(rank))
    chips = int(np.prod(mesh))
    shape = tuple(chips * draw(st.integers(1, 3)) for _ in range(2))
    placements = tuple(
        draw(st.sampled_from(["replicate", "partial(sum)", "shard(0)", "shard(1)"]))
        for _ in range(rank)
    )
    seed = draw(st.integers(0, 2**31 - 1))
    return mesh, shape, placements, np.random.default_rng(seed)


def _last_splitter(placements, axis, dim) -> bool:
    return all(p != f"shard({dim})" for p in placements[axis + 1 :])


PROPERTY = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(deployments(), st.data())
def test_every_collective_keeps_the_whole_tensor(deployment, data):
    """unshard(collective(stack), after) == unshard(stack, before): what a sharding change is."""
    mesh, shape, placements, rng = deployment
    whole = rng.standard_normal(shape)
    stack = shard(whole, mesh, placements, rng)
    assert np.allclose(unshard(stack, placements), whole)
    rank = len(mesh)
    axis = data.draw(st.integers(0, rank - 1))
    before = placements[axis]
    after = list(placements)
    if before.startswith("shard("):
        d = int(before[6])
        if not _last_splitter(placements, axis, d):
            return
        after[axis] = "replicate"
        out = all_gather(stack, rank, axis, d)
        other = 1 - d
        if _last_splitter(placements, axis, other):
            moved = list(placements)
            moved[axis] = f"shard({other})"
            a2a = all_to_all(stack, rank, axis, d, other)
            assert np.allclose(unshard(a2a, moved), whole)
    elif before == "partial(sum)":
        d = data.draw(st.integers(0, 1))
        if not _last_splitter(placements, axis, d):
            return
        scattered = list(placements)
        scattered[axis] = f"shard({d})"
        rs = reduce_scatter(stack, rank, axis, d)
        assert np.allclose(unshard(rs, scattered), whole)
        after[axis] = "replicate"
        out = all_reduce(stack, rank, axis)
    else:
        return
    assert np.allclose(unshard(out, after), whole)
    assert replicas_agree(out, after)


@PROPERTY
@given(
    st.sampled_from([2, 3, 4, 8]),
    st.integers(1, 3),
    st.integers(0, 1),
    st.integers(0, 2**31 - 1),
)
def test_all_reduce_is_reduce_scatter_then_all_gather(n, rows, dim, seed):
    stack = np.random.default_rng(seed).standard_normal((n, n * rows, 2 * n))
    two_phase = all_gather(reduce_scatter(stack, 1, 0, dim), 1, 0, dim)
    assert np.allclose(all_reduce(stack, 1, 0), two_phase)


@PROPERTY
@given(st.sampled_from([1, 2, 4, 8]), st.integers(0, 1), st.integers(0, 2**31 - 1))
def test_all_gather_of_shards_is_the_whole_tensor(n, dim, seed):
    whole = np.random.default_rng(seed).standard_normal((2 * n, 3 * n))
    gathered = all_gather(shard(whole, (n,), (f"shard({dim})",)), 1, 0, dim)
    for chip in range(n):
        assert np.array_equal(gathered[chip], whole)


# --- the ops through xDSL's interpreter, and their prices -----------------------------------------

PROGRAM = """
mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @tp(%x: tensor<4x2xf64>) -> (tensor<4x2xf64>, tensor<2x2xf64>, tensor<4x2xf64>, tensor<2x4xf64>, tensor<4x4xf64>) {
  %r = mesh.all_reduce %x axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> : tensor<4x2xf64> -> tensor<4x2xf64>
  %s = mesh.reduce_scatter %r axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<4x2xf64> -> tensor<2x2xf64>
  %g = mesh.all_gather %s axis 0 from #mesh.sharding<@n300, [shard(0)]> to #mesh.sharding<@n300, [replicate]> : tensor<2x2xf64> -> tensor<4x2xf64>
  %t = mesh.all_to_all %g axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [shard(0)]> : tensor<4x2xf64> -> tensor<2x4xf64>
  %w = mesh.all_gather %t axis 0 from #mesh.sharding<@n300, [shard(0)]> to #mesh.sharding<@n300, [replicate]> : tensor<2x4xf64> -> tensor<4x4xf64>
  func.return %r, %s, %g, %t, %w : tensor<4x2xf64>, tensor<2x2xf64>, tensor<4x2xf64>, tensor<2x4xf64>, tensor<4x4xf64>
}
"""


def _module() -> ModuleOp:
    module = Parser(default_context(), PROGRAM).parse_module()
    module.verify()
    return module


def test_the_ops_run_through_the_interpreter():
    module = _module()
    interp = Interpreter(module)
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(MeshFunctions())
    stack = np.concatenate([STACK, STACK], axis=1)  # chip 0 holds [A; A], chip 1 [B; B]
    results = interp.call_op("tp", (stack,))
    # all_reduce: both chips hold [A + B; A + B]; reduce_scatter sums the two equal copies and
    # gives chip i row block i.
    summed = np.vstack([A + B, A + B])
    assert np.array_equal(results[0][0], summed) and np.array_equal(results[0][1], summed)
    assert np.array_equal(results[1][0], 2 * (A + B)) and np.array_equal(results[1][1], 2 * (A + B))
    assert np.array_equal(results[2][1], np.vstack([2 * (A + B), 2 * (A + B)]))
    # all_to_all from shard(1) to shard(0): chip j gets row block j of both chips' 4x2, side by side.
    g = results[2][0]
    assert np.array_equal(results[3][1], np.hstack([g[2:], g[2:]]))
    assert np.array_equal(results[4][0], np.hstack([g, g]))


def test_prices_come_from_the_preset():
    module = _module()
    mesh_op = next(op for op in module.walk() if isinstance(op, MeshOp))
    mesh = mesh_of(mesh_op)
    ar = next(op for op in module.walk() if isinstance(op, AllReduceOp))
    cost = cost_of(ar, mesh)
    # 4x2 f64 = 64 bytes; n300: one link, one hop. Two phases, each a 4.8 us call (1.2 + 0.8 +
    # 1.0 + 0.4 + 0.7 + 0.7) and one hop of 711 + 2 x 950 ns; then 2 (n-1)/n x 64 = 64 bytes over
    # one link at 12.5 GB/s x 0.96 = 12 bytes/ns.
    assert (cost.bytes.data, cost.links.data, cost.hops.data) == (64, 1, 1)
    assert cost.ns.data == round(2 * (4.8e3 + 711 + 2 * 950) + 64 / 12.0)
    ar.properties["cost"] = cost
    module.verify()


def test_a_mesh_that_disagrees_with_its_preset_is_refused():
    mesh_op = mesh_op_of("t3k", "m")
    assert mesh_of(mesh_op).name == "t3k"
    wrong = MeshOp("m", (2, 4), ("line", "ring"), (1, 1), "t3k")
    with pytest.raises(MeshVerifyError, match=r"preset t3k is shape 2x4 topology \[line, line\]"):
        mesh_of(wrong)
    with pytest.raises(MeshVerifyError, match="names no preset"):
        mesh_of(MeshOp("m", (3,), ("ring",), (2,)))


def test_each_collective_kind_has_one_op_and_one_meaning():
    assert sorted(op.KIND for op in COLLECTIVES) == sorted(Collective)
    assert set(implemented_ops(MeshFunctions)) == set(COLLECTIVES)
