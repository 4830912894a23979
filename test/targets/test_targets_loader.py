"""load_target: presets by name, TOML files, and every refusal naming the file and the field."""

import dataclasses
import re
from pathlib import Path

import pytest

from spatial_dialect.targets import PRESETS, Multicast, TargetError, load_target

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "targets"
TEMPLATE = (EXAMPLES / "tensix_4x4.toml").read_text()


def write(tmp_path: Path, text: str, name: str = "chip.toml") -> Path:
    p = tmp_path / name
    p.write_text(text)
    return p


def with_line(field: str, value: str | None) -> str:
    """The template with `field = ...` replaced (or removed when value is None)."""
    pattern = re.compile(rf"^{re.escape(field)} = .*$", re.M)
    assert pattern.search(TEMPLATE), field
    return pattern.sub("" if value is None else f"{field} = {value}", TEMPLATE, count=1)


def refused(path: Path) -> str:
    with pytest.raises(TargetError) as e:
        load_target(str(path))
    return str(e.value)


def test_examples_load():
    for f in sorted(EXAMPLES.glob("*.toml")):
        t = load_target(str(f))
        assert t.sites > 0
    t = load_target(str(EXAMPLES / "tensix_4x4.toml"))
    assert (t.name, t.mesh_x, t.mesh_y, t.local_mem_max_bytes) == ("tensix_4x4", 4, 4, 491_520)
    assert t.tile_bytes("bfp8_b") == 1088 and t.matmul_tile_cycles("bf16", "hifi3") == 48


def test_base_overrides_only_what_it_lists():
    t = load_target(str(EXAMPLES / "wormhole_n150_1mib.toml"))
    wh = PRESETS["wormhole_n150"]
    assert t.local_mem_max_bytes == 1 << 20
    assert (t.mesh_x, t.dram_gbps, t.dtype_tile_bytes) == (
        wh.mesh_x,
        wh.dram_gbps,
        wh.dtype_tile_bytes,
    )


def test_plasticine_twins_differ_only_in_dram_bandwidth():
    fast = load_target(str(EXAMPLES / "plasticine_fast_dram.toml"))
    slow = load_target(str(EXAMPLES / "plasticine_slow_dram.toml"))
    differ = {f for f in fast.__dataclass_fields__ if getattr(fast, f) != getattr(slow, f)}
    assert differ == {"name", "dram_gbps"}


def test_aliases_and_case():
    assert load_target("n150") is PRESETS["wormhole_n150"]
    assert load_target("P150") is PRESETS["blackhole_p150"]
    assert load_target("H100") is PRESETS["h100"]


def test_unknown_preset_lists_the_presets():
    with pytest.raises(TargetError) as e:
        load_target("grayskull")
    msg = str(e.value)
    assert "grayskull" in msg
    for name in PRESETS:
        assert name in msg


def test_missing_file(tmp_path):
    p = tmp_path / "nope.toml"
    msg = refused(p)
    assert str(p) in msg and "no such" in msg


def test_not_parseable(tmp_path):
    p = write(tmp_path, "mesh_x = = 4\n")
    msg = refused(p)
    assert str(p) in msg and "not valid TOML" in msg


def test_empty_file(tmp_path):
    p = write(tmp_path, "  \n\n")
    msg = refused(p)
    assert str(p) in msg and "empty" in msg
    p = write(tmp_path, "# only a comment\n", "comments.toml")
    assert str(p) in refused(p)


@pytest.mark.parametrize(
    "field,value",
    [
        ("mesh_x", None),  # missing
        ("clock_ghz", None),
        ("mesh_x", "0"),  # nonsensical
        ("mesh_y", "-2"),
        ("local_mem_bytes", "0"),
        ("local_mem_bytes", "-4096"),
        ("clock_ghz", "0.0"),
        ("clock_ghz", "-1.0"),
        ("dram_gbps", "0"),
        ("mesh_x", '"four"'),  # wrong type
        ("mesh_x", "true"),
        ("mesh_x", "4.5"),
        ("acc_in_registers", "1"),
        ("multicast", '"ring"'),
        ("local_mem_max_bytes", "1024"),  # below the default budget
        ("link_bytes_per_cycle", "[32]"),
        ("tile_rows", "16"),  # only 32 x 32 tiles
    ],
)
def test_bad_field_is_named_with_the_file(tmp_path, field, value):
    p = write(tmp_path, with_line(field, value))
    msg = refused(p)
    assert str(p) in msg
    assert field in msg


def test_multicast_is_parsed_into_the_enum(tmp_path):
    t = load_target(str(EXAMPLES / "tensix_4x4.toml"))
    assert t.multicast is Multicast.RECTANGLE and t.multicasts_rectangles
    t = load_target(str(write(tmp_path, with_line("multicast", '"none"'))))
    assert t.multicast is Multicast.NONE and not t.multicasts_rectangles


@pytest.mark.parametrize("value", ['"ring"', '"Rectangle"', "1", "[]"])
def test_unknown_multicast_lists_the_kinds(tmp_path, value):
    msg = refused(write(tmp_path, with_line("multicast", value)))
    assert "multicast" in msg and "'rectangle' or 'none'" in msg


def test_target_built_in_code_parses_multicast():
    wh = PRESETS["wormhole_n150"]
    assert dataclasses.replace(wh, multicast="none").multicast is Multicast.NONE
    with pytest.raises(TargetError, match="multicast must be one of rectangle, none"):
        dataclasses.replace(wh, multicast="ring")


def test_unknown_field(tmp_path):
    p = write(tmp_path, TEMPLATE.replace("mesh_y = 4", "mesh_y = 4\nmesh_z = 3"))
    msg = refused(p)
    assert str(p) in msg and "mesh_z" in msg


def test_unknown_datatype(tmp_path):
    p = write(tmp_path, TEMPLATE.replace("bfp4_b = 576", "bf17 = 2048"))
    msg = refused(p)
    assert str(p) in msg and "tile_bytes.bf17" in msg


def test_matmul_of_a_datatype_without_tile_bytes(tmp_path):
    p = write(tmp_path, TEMPLATE.replace("f32 = 4096\n", ""))
    msg = refused(p)
    assert str(p) in msg and "matmul.f32" in msg


def test_matmul_missing_fidelity(tmp_path):
    p = write(
        tmp_path,
        TEMPLATE.replace(
            "bf16 = { lofi = 16, hifi2 = 32, hifi3 = 48, hifi4 = 64 }",
            "bf16 = { lofi = 16, hifi2 = 32 }",
        ),
    )
    msg = refused(p)
    assert str(p) in msg and "matmul.bf16.hifi3" in msg


def test_missing_table(tmp_path):
    text = TEMPLATE.split("[acc_tiles]")[0] + "[tile_bytes]\nbf16 = 2048\n[matmul]\nbf16 = 16\n"
    p = write(tmp_path, text)
    msg = refused(p)
    assert str(p) in msg and "acc_tiles" in msg


def test_bad_table_value(tmp_path):
    p = write(tmp_path, TEMPLATE.replace("[acc_tiles]\nbf16 = 8", "[acc_tiles]\nbf16 = 0"))
    msg = refused(p)
    assert str(p) in msg and "acc_tiles.bf16" in msg


def test_unknown_base(tmp_path):
    p = write(tmp_path, 'base = "wormhole_n300"\n')
    msg = refused(p)
    assert str(p) in msg and "base" in msg and "wormhole_n150" in msg


def test_name_defaults_to_file_stem(tmp_path):
    p = write(tmp_path, with_line("name", None), "my_chip.toml")
    assert load_target(str(p)).name == "my_chip"


def test_dram_efficiency_is_a_fraction(tmp_path):
    # Optional (the template leaves it commented out, so the peak), and read as a float.
    assert load_target(str(write(tmp_path, TEMPLATE))).dram_efficiency == 1.0
    text = TEMPLATE.replace("# dram_efficiency = 0.92", "dram_efficiency = 0.92")
    assert load_target(str(write(tmp_path, text))).dram_efficiency == 0.92
    assert load_target(str(write(tmp_path, text.replace("0.92", "1")))).dram_efficiency == 1.0


@pytest.mark.parametrize(
    "value,says",
    [
        ("92", "a fraction in (0, 1]"),  # a percentage
        ("0", "a fraction in (0, 1]"),
        ("-0.5", "a fraction in (0, 1]"),
        ('"0.9"', "a fraction in (0, 1]"),
        ("true", "a fraction in (0, 1]"),
        ("0.01", "outside the range a chip could have [0.05, 1]"),
    ],
)
def test_bad_dram_efficiency_is_refused_by_name(tmp_path, value, says):
    text = TEMPLATE.replace("# dram_efficiency = 0.92", f"dram_efficiency = {value}")
    p = write(tmp_path, text)
    msg = refused(p)
    assert str(p) in msg and "dram_efficiency" in msg and says in msg


def test_activation_dtype_is_read_and_checked(tmp_path):
    """A target may say which float type imported models' activations prefer; without it, bf16
    where the chip has it (the template's Tensix does)."""
    assert load_target(str(write(tmp_path, TEMPLATE))).activations == "bf16"
    text = TEMPLATE.replace("description = ", 'activation_dtype = "f32"\ndescription = ', 1)
    assert load_target(str(write(tmp_path, text))).activations == "f32"
    assert PRESETS["h100"].activations == "f16" and PRESETS["plasticine"].activations == "f32"
    for value in ('"i8"', '"fp8"'):
        text = TEMPLATE.replace("description = ", f"activation_dtype = {value}\ndescription = ", 1)
        p = write(tmp_path, text)
        assert "activation_dtype" in refused(p)


def test_tile_matmul_issue_fields_are_read(tmp_path):
    # The issue-cycle fields of docs/targets.md#tile-matmul-issue: a Blackhole with Wormhole's
    # per-tile release, and a bad flag refused by name.
    p = write(tmp_path, 'base = "blackhole_p150"\nmatmul_release_each_tile = true\n')
    t = load_target(str(p))
    assert t.matmul_release_each_tile and not PRESETS["blackhole_p150"].matmul_release_each_tile
    assert (t.matmul_handover_cycles, t.matmul_phase_reset_cycles, t.matmul_release_cycles) == (
        2,
        1,
        1,
    )
    bad = write(tmp_path, 'base = "blackhole_p150"\nmatmul_release_each_tile = 1\n', "bad.toml")
    assert "matmul_release_each_tile" in refused(bad)
