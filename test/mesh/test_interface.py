"""The per-chip function's interface (spatial_dialect/mesh/interface.py): placements read from the
argument and result attributes, the whole types they imply, and each refusal with its numbers."""

from __future__ import annotations

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16
from xdsl.parser import Parser

from spatial_dialect.mesh import MeshVerifyError, ShardingAttr
from spatial_dialect.mesh.interface import (
    Placement,
    entry_attributes,
    entry_placements,
    interface,
    is_per_chip,
    whole_type,
)
from spatial_dialect.passes.pipeline import default_context


def _parse(text: str) -> ModuleOp:
    return Parser(default_context(), text).parse_module()


def _func(args: str, results: str, mesh: str = "shape 2x4 topology [line, line] links [1, 1]"):
    m = _parse(
        f"mesh.mesh @m {mesh}\n"
        f"func.func @f({args}) -> ({results}) {{\n  func.return %a : tensor<64x32xbf16>\n}}"
    )
    return next(o for o in m.walk() if isinstance(o, func.FuncOp))


S = "mesh.sharding = #mesh.sharding<@m, [replicate, shard(1)]>"


def test_placements_and_whole_types():
    f = _func(
        f"%a: tensor<64x32xbf16> {{{S}, mesh.repeat = 2 : i64}}",
        f"tensor<64x32xbf16> {{{S}}}",
    )
    assert is_per_chip(f)
    (inp,), (out,) = interface(f)
    assert inp.repeat == 2 and out.repeat == 1
    local = TensorType(bf16, [64, 32])
    # Axis 1 has 4 chips: at repeat 2 its dim is cut into 2 blocks (32 x 2 = 64 columns), held
    # by 2 chips each; at repeat 1 into 4 (128 columns). Axis 0 replicates: rows stay 64.
    assert whole_type(local, inp, (2, 4)).get_shape() == (64, 64)
    assert whole_type(local, out, (2, 4)).get_shape() == (64, 128)


def test_a_whole_function_is_not_per_chip():
    f = _func("%a: tensor<64x32xbf16>", "tensor<64x32xbf16>")
    assert not is_per_chip(f)


@pytest.mark.parametrize(
    ("arg", "message"),
    [
        ("", "@f argument 0 carries no mesh.sharding"),
        (
            f"{{{S}, mesh.repeat = 3 : i64}}",
            "mesh.repeat = 3 does not divide the 4 chips of mesh axis 1",
        ),
        (
            "{mesh.sharding = #mesh.sharding<@m, [shard(0), shard(1)]>, mesh.repeat = 2 : i64}",
            r"mesh.repeat = 2 needs exactly one mesh axis to shard, got \[shard\(0\), shard\(1\)\]",
        ),
        (
            "{mesh.sharding = #mesh.sharding<@m, [shard(2), replicate]>}",
            "mesh axis 0 shards dim 2 of a rank-2 tensor",
        ),
        (
            "{mesh.sharding = #mesh.sharding<@q, [replicate, replicate]>}",
            "mesh @q is not a mesh.mesh in scope",
        ),
        (
            "{mesh.sharding = #mesh.sharding<@m, [replicate]>}",
            "sharding has 1 placements for mesh @m of 2 axes",
        ),
        (f"{{{S}, mesh.repeat = 0 : i64}}", "mesh.repeat must be >= 1, got 0"),
        ("{mesh.repeat = 2 : i64}", "mesh.repeat without mesh.sharding"),
    ],
)
def test_a_bad_interface_is_refused_by_name(arg, message):
    f = _func(f"%a: tensor<64x32xbf16> {arg}", f"tensor<64x32xbf16> {{{S}}}")
    with pytest.raises(MeshVerifyError, match=message):
        interface(f)


def test_entry_attributes_read_back():
    ins = [
        Placement(ShardingAttr("m", ["shard(0)"]), 1),
        Placement(ShardingAttr("m", ["replicate"])),
    ]
    outs = [Placement(ShardingAttr("m", ["shard(1)"]), 2)]
    attrs = entry_attributes(ins, outs)
    assert entry_placements(attrs, 2, 1, "entry") == (ins, outs)
    assert entry_placements({}, 2, 1, "entry") is None
    with pytest.raises(MeshVerifyError, match="mesh.inputs has 2 shardings for 3"):
        entry_placements(attrs, 3, 1, "entry")
