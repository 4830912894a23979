"""Building mesh IR from Python, as the tensor-parallel decision will: the constructors verify what
the parser verifies, and a priced collective prints as docs/mesh.md shows."""

from __future__ import annotations

import pytest
from xdsl.dialects import test as xdsl_test
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.mesh import AllGatherOp, AllReduceOp, MeshVerifyError, ShardingAttr, ShardOp
from spatial_dialect.passes.mesh_prices import cost_of, mesh_of, mesh_op_of


@pytest.mark.parametrize(
    ("placements", "message"),
    [
        ([], "a sharding needs one placement per mesh axis, got none"),
        (["partial(max)"], r"mesh axis 0: partial\(max\) is not supported \(reductions: sum\)"),
        (["replicate", "shard(-2)"], "mesh axis 1: shard dim must be >= 0, got -2"),
        (["split(0)"], "mesh axis 0: 'split\\(0\\)' is not a placement"),
    ],
)
def test_a_bad_sharding_is_refused_when_built(placements, message):
    with pytest.raises(MeshVerifyError, match=message):
        ShardingAttr("m", placements)


def test_a_priced_all_reduce_built_from_python():
    mesh_op = mesh_op_of("n300")
    local = TensorType(bf16, [32, 1024])
    x = xdsl_test.TestOp(result_types=[local])
    partial = ShardingAttr("n300", ["partial(sum)"])
    whole = ShardingAttr("n300", ["replicate"])
    reduce = AllReduceOp(x.res[0], local, 0, partial, whole, reason="wo is row-parallel")
    module = ModuleOp([mesh_op, x, reduce])
    reduce.properties["cost"] = cost_of(reduce, mesh_of(mesh_op))
    module.verify()
    # 32x1024 bf16 = 65536 bytes over n300's one link: two phases of a 4.8 us call and one hop of
    # 711 + 2 x 950 ns, then 2 (n-1)/n x 65536 bytes at 12 bytes/ns.
    assert reduce.cost is not None and reduce.cost.bytes.data == 32 * 1024 * 2
    assert reduce.cost.ns.data == round(2 * (4.8e3 + 711 + 2 * 950) + 65536 / 12.0) == 20283
    text = str(reduce)
    assert (
        'axis 0 from #mesh.sharding<@n300, [partial(sum)]> to #mesh.sharding<@n300, [replicate]> reason "wo is row-parallel" cost #mesh.cost<bytes = 65536, links = 1, hops = 1, ns = '
        in text
    )


def test_a_wrong_result_shape_built_from_python_is_refused():
    mesh_op = mesh_op_of("t3k")
    x = xdsl_test.TestOp(result_types=[TensorType(bf16, [32, 128])])
    src = ShardingAttr("t3k", ["replicate", "shard(1)"])
    dst = ShardingAttr("t3k", ["replicate", "replicate"])
    gather = AllGatherOp(x.res[0], TensorType(bf16, [32, 256]), 1, src, dst)
    with pytest.raises(VerifyException, match="result shape 32x256 should be 32x512"):
        ModuleOp([mesh_op, x, gather]).verify()


def test_a_shard_annotation_built_from_python():
    """t3k's 2x4: dim 0 of 32 splits over 2 chips, dim 1 of 128 over 4."""
    x = xdsl_test.TestOp(result_types=[TensorType(bf16, [32, 128])])
    shard = ShardOp(x.res[0], ShardingAttr("t3k", ["shard(0)", "shard(1)"]))
    ModuleOp([mesh_op_of("t3k"), x, shard]).verify()
    assert shard.result.type == x.res[0].type
    y = xdsl_test.TestOp(result_types=[TensorType(bf16, [32, 6])])
    bad = ShardOp(y.res[0], ShardingAttr("t3k", ["shard(0)", "shard(1)"]))
    with pytest.raises(VerifyException, match="dim 1 of size 6 does not split evenly over 4 chips"):
        ModuleOp([mesh_op_of("t3k"), y, bad]).verify()
