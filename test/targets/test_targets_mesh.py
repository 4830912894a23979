"""Meshes of chips: the presets carry their published numbers, a [mesh] table is validated field
by field, and a mesh given where one chip is needed is refused in one line by every CLI."""

from __future__ import annotations

from pathlib import Path

import pytest

from spatial_dialect.targets import (
    MESH_PRESETS,
    PRESETS,
    MeshNotAChip,
    TargetError,
    Topology,
    load_mesh,
    load_target,
)
from spatial_dialect.tools import spatial_opt, spatial_run

ROOT = Path(__file__).resolve().parents[2]
RING8 = ROOT / "examples" / "targets" / "meshes" / "wormhole_ring8.toml"
TINY = ROOT / "examples" / "gemm_small.mlir"


def test_the_presets_and_their_published_numbers():
    assert sorted(MESH_PRESETS) == ["galaxy", "h100x2", "h100x8", "h200x8", "n300", "p150x4", "t3k"]
    shapes = {name: (m.shape, m.chip.name) for name, m in MESH_PRESETS.items()}
    assert shapes == {
        "n300": ((2,), "wormhole_n150"),
        "t3k": ((2, 4), "wormhole_n150"),
        "galaxy": ((8, 4), "wormhole_n150"),
        "p150x4": ((4,), "blackhole_p150"),
        "h100x2": ((2,), "h100"),
        "h100x8": ((8,), "h100"),
        "h200x8": ((8,), "h200"),
    }
    assert MESH_PRESETS["p150x4"].axes[0].topology is Topology.RING
    # all_gather's links in llms.md 3.3.1: N300 and T3000 1; TG 4 along cluster_axis 0, 3 along 1.
    assert [[a.links for a in MESH_PRESETS[m].axes] for m in ("n300", "t3k", "galaxy")] == [
        [1],
        [1, 1],
        [4, 3],
    ]
    for name in ("n300", "t3k", "galaxy"):  # Wormhole ethernet: 100 Gb/s, 711 ns a hop (CCL report)
        m = MESH_PRESETS[name]
        assert (m.link_gbps, m.hop_ns, m.link_efficiency) == (12.5, 711, 0.96)
    bh = MESH_PRESETS["p150x4"]
    assert (bh.link_gbps, bh.hop_ns) == (25.0, 515)  # 50 GB/s rated, run at 25 today
    for name in ("h100x2", "h100x8", "h200x8"):  # NVLink 4: 18 x 25 GB/s = 450 GB/s each way
        m = MESH_PRESETS[name]
        assert m.axes[0].links * m.link_gbps == 450 and m.axes[0].topology is Topology.SWITCH
    assert [m.chips for m in MESH_PRESETS.values()] == [2, 8, 32, 4, 2, 8, 8]


def test_every_preset_is_documented():
    text = (ROOT / "docs" / "targets.md").read_text()
    for name in MESH_PRESETS:
        assert f"`{name}`" in text, name


@pytest.mark.parametrize("name", sorted(MESH_PRESETS))
def test_a_mesh_where_one_chip_is_needed_is_refused_by_name(name):
    with pytest.raises(MeshNotAChip) as e:
        load_target(name)
    msg = str(e.value)
    assert f"target {name!r} is a mesh of {MESH_PRESETS[name].chips} " in msg
    assert f"spatial-pipeline{{target={name}}}" in msg and MESH_PRESETS[name].chip.name in msg


def test_a_mesh_file_loads_as_a_mesh_and_is_refused_as_a_target():
    m = load_mesh(RING8)
    assert (m.name, m.shape, m.axes[0].topology, m.chip) == (
        "wormhole_ring8",
        (8,),
        Topology.RING,
        PRESETS["wormhole_n150"],
    )
    assert m.call_us == pytest.approx(4.8) and m.sync_hop_ns == 950
    with pytest.raises(MeshNotAChip, match="is a mesh of 8 wormhole_n150 chips, 8 in a ring"):
        load_target(str(RING8))
    with pytest.raises(TargetError, match="a single chip \\(no \\[mesh\\] table\\), not a mesh"):
        load_mesh(ROOT / "examples" / "targets" / "tensix_4x4.toml")
    with pytest.raises(TargetError, match="unknown mesh 'n301'"):
        load_mesh("n301")


GOOD = """base = "wormhole_n150"
[mesh]
shape = [2, 4]
topology = ["line", "ring"]
links = [1, 2]
link_gbps = 12.5
hop_ns = 711
"""

BAD_MESH = {
    "not a table": (
        'base = "wormhole_n150"\nmesh = 3\n',
        "field 'mesh': expected a table [mesh], got 3",
    ),
    "unknown field": (GOOD + "speed = 1\n", "field 'mesh.speed' is not a mesh field"),
    "missing shape": (GOOD.replace("shape = [2, 4]\n", ""), "missing field 'mesh.shape'"),
    "shape not a list": (GOOD.replace("[2, 4]", "8"), "field 'mesh.shape': expected a list"),
    "zero chips": (
        GOOD.replace("[2, 4]", "[0, 4]"),
        "field 'mesh.shape[0]': expected an integer in [1, 4096], got 0",
    ),
    "a float size": (GOOD.replace("[2, 4]", "[2.5, 4]"), "field 'mesh.shape[0]'"),
    "too many chips": (
        GOOD.replace("[2, 4]", "[4096, 4096]"),
        "field 'mesh.shape': 16777216 chips, more than 65536",
    ),
    "unknown topology": (
        GOOD.replace('"ring"', '"torus"'),
        "field 'mesh.topology[1]': expected one of line, ring, switch, got 'torus'",
    ),
    "topology per axis": (
        GOOD.replace('["line", "ring"]', '["line"]'),
        "field 'mesh.topology': 1 entries for a mesh of 2 axes",
    ),
    "links per axis": (
        GOOD.replace("[1, 2]", "[1, 2, 3]"),
        "field 'mesh.links': 3 entries for a mesh of 2 axes",
    ),
    "links zero": (
        GOOD.replace("[1, 2]", "[1, 0]"),
        "field 'mesh.links[1]': expected an integer in [1, 64], got 0",
    ),
    "bandwidth a string": (
        GOOD.replace("12.5", '"12.5"'),
        "field 'mesh.link_gbps': expected a number",
    ),
    "bandwidth zero": (
        GOOD.replace("12.5", "0"),
        "field 'mesh.link_gbps': expected a number in [0.01, 100000], got 0",
    ),
    "efficiency a percentage": (
        GOOD + "link_efficiency = 96\n",
        "field 'mesh.link_efficiency': expected a number in [0.05, 1], got 96",
    ),
    "negative latency": (GOOD.replace("711", "-1"), "field 'mesh.hop_ns'"),
    "nan call": (
        GOOD + "call_us = nan\n",
        "field 'mesh.call_us': expected a number in [0, 1e+06], got nan",
    ),
    "bool": (GOOD + "sync_hop_ns = true\n", "field 'mesh.sync_hop_ns': expected a number"),
    "too many axes": (
        GOOD.replace("[2, 4]", "[2, 2, 2, 2, 2]"),
        "field 'mesh.shape': 5 axes, more than 4",
    ),
    "a bad chip": (
        GOOD.replace('base = "wormhole_n150"', 'base = "wormhole_n151"'),
        "field 'base': expected a preset name",
    ),
}


@pytest.mark.parametrize("case", sorted(BAD_MESH))
def test_a_bad_mesh_field_is_one_clear_line(case, tmp_path: Path):
    text, expected = BAD_MESH[case]
    path = tmp_path / "m.toml"
    path.write_text(text)
    for load in (load_mesh, load_target):
        with pytest.raises(TargetError) as e:
            load(str(path))
        assert not isinstance(e.value, MeshNotAChip), case
        assert expected in str(e.value) and str(path) in str(e.value)
        assert "\n" not in str(e.value)


def test_the_good_file_and_its_defaults(tmp_path: Path):
    path = tmp_path / "m.toml"
    path.write_text(GOOD)
    m = load_mesh(str(path))
    assert (m.name, m.shape, [a.links for a in m.axes]) == ("m", (2, 4), [1, 2])
    assert (m.link_efficiency, m.sync_hop_ns, m.call_us) == (1.0, 0.0, 0.0)
    assert m.chip.name == "wormhole_n150"  # `name` names the mesh; the chip keeps its base's


def test_spatial_opt_refuses_a_mesh_file_and_link_alone_in_one_line(capsys):
    # A mesh file is no preset: nothing deploys over it (it prices collectives).
    assert spatial_opt.main([str(TINY), "-p", f'spatial-pipeline{{target="{RING8}"}}']) == 1
    err = capsys.readouterr().err
    assert "is a mesh of 8 wormhole_n150 chips, 8 in a ring of 1 link, not one chip" in err
    assert "Traceback" not in err and err.count("\n") == 1
    # link alone on a whole function: the per-chip function is the tensor-parallel pass's.
    assert spatial_opt.main([str(TINY), "-p", "link{target=n300}"]) == 1
    err = capsys.readouterr().err
    assert "target n300 is a mesh of 2 wormhole_n150 chips" in err
    assert "tensor-parallel{mesh=n300}" in err and "spatial-pipeline{target=n300}" in err
    assert "Traceback" not in err and err.count("\n") == 1


def test_spatial_run_refuses_a_mesh_file_in_one_line(capsys):
    assert spatial_run.main([str(TINY), "--target", str(RING8)]) == 1
    err = capsys.readouterr().err
    assert "is a mesh of 8 wormhole_n150 chips" in err and "not one chip" in err
    assert "Traceback" not in err and err.count("\n") == 1
