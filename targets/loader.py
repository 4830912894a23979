"""``load_target``: a preset by name, or a chip described in a TOML file.

A TOML target has the fields of :class:`~.spec.Target`, flat, plus three tables::

    name = "my_chip"
    mesh_x = 4
    ...
    [acc_tiles]          # accumulator tiles per accumulation precision
    bf16 = 8
    [tile_bytes]         # the datatypes the chip has, with bytes per tile
    bf16 = 2048
    [matmul]             # cycles per 32x32x32 tile-matmul: one number, or one per fidelity
    bf16 = { lofi = 16, hifi2 = 32, hifi3 = 48, hifi4 = 64 }

``base = "<preset>"`` starts from a preset and overrides only the fields given. Every refusal is a
:class:`TargetError` naming the file and the field, never a KeyError or TypeError from deep inside.
"""

from __future__ import annotations

import dataclasses
import tomllib
from pathlib import Path
from typing import Any

from .mesh import MESH_PRESETS, Mesh, mesh_from_table
from .presets import PRESETS
from .spec import (
    FIDELITIES,
    KNOWN_DTYPES,
    MULTICAST_KINDS,
    Multicast,
    Target,
    TargetError,
    fidelity_table,
    make_target,
    normalize_dtype,
)

# Other names users type for the presets.
ALIASES: dict[str, str] = {
    "n150": "wormhole_n150",
    "wormhole": "wormhole_n150",
    "wh": "wormhole_n150",
    "p150": "blackhole_p150",
    "blackhole": "blackhole_p150",
    "bh": "blackhole_p150",
    "rdu": "plasticine",
    "3060": "rtx3060",
    "rtx_3060": "rtx3060",
    "h100_sxm": "h100",
    "h200_sxm": "h200",
}

# field -> (kind, required). Kinds: "pos_int" (> 0), "nonneg_int" (>= 0), "pos_num" (> 0),
# "bool", "str", "multicast", "opt_pos_int" (> 0 or absent), "fraction" (0 < v <= 1).
_SCALARS: dict[str, tuple[str, bool]] = {
    "name": ("str", False),
    "description": ("str", False),
    "mesh_x": ("pos_int", True),
    "mesh_y": ("pos_int", True),
    "local_mem_bytes": ("pos_int", True),
    "local_mem_max_bytes": ("pos_int", False),
    "local_mem_base": ("nonneg_int", False),
    "movement_engines": ("nonneg_int", True),
    "acc_in_registers": ("bool", True),
    "acc_lanes": ("pos_int", False),
    "fetch_tile_cycles": ("opt_pos_int", False),
    "credit_return_cycles": ("opt_nonneg_int", False),
    "service_page_cycles": ("opt_pos_int", False),
    "multicast": ("multicast", True),
    "receiver_noc": ("nonneg_int", False),
    "writer_noc": ("nonneg_int", False),
    "link_bytes_per_cycle": ("pos_int", True),
    "hop_cycles": ("nonneg_int", True),
    "tile_rows": ("pos_int", False),
    "tile_cols": ("pos_int", False),
    "clock_ghz": ("pos_num", True),
    "dram_gbps": ("pos_num", True),
    "dram_channels": ("pos_int", True),
    "fabric_word_bytes": ("opt_pos_int", False),
    "unpack_bytes_per_cycle": ("opt_pos_int", False),
    "unpack_joint_bytes_per_cycle": ("opt_pos_int", False),
    "dram_latency_cycles": ("opt_nonneg_int", False),
    "noc_issue_cycles": ("opt_nonneg_int", False),
    "noc_burst_bytes": ("opt_pos_int", False),
    "l2_bytes": ("opt_pos_int", False),
    "matmul_row_pass": ("pos_int", False),
    "matmul_handover_cycles": ("nonneg_int", False),
    "matmul_phase_reset_cycles": ("nonneg_int", False),
    "matmul_release_cycles": ("nonneg_int", False),
    "matmul_release_each_tile": ("bool", False),
    "vector_lanes": ("pos_int", False),
    "dram_bytes": ("opt_pos_int", False),
    "dram_efficiency": ("fraction", False),
    "activation_dtype": ("str", False),
    "kernel_reads_by_id": ("bool", False),
    "batched_kv_splits": ("bool", False),
    "kernel_launch_cycles": ("opt_pos_int", False),
}

KiB, MiB, GiB, TiB = 2**10, 2**20, 2**30, 2**40
RANGES: dict[str, tuple[float, float]] = {
    # field: (least, most) a real chip could have (docs/targets.md#validation). Wide on purpose: a
    # what-if chip ten times any shipping one is fine; a mesh of 10^8 columns or a local memory of a
    # terabyte is a typo, and would make the compiler or the simulator run for hours.
    "mesh_x": (1, 1024),
    "mesh_y": (1, 1024),
    "local_mem_bytes": (1 * KiB, 256 * MiB),
    "local_mem_max_bytes": (1 * KiB, 256 * MiB),
    "local_mem_base": (0, 256 * MiB),
    "movement_engines": (0, 16),
    "acc_lanes": (1, 1024),
    "fetch_tile_cycles": (1, 1_000_000),
    "credit_return_cycles": (0, 1_000_000),
    "service_page_cycles": (1, 1_000_000),
    "receiver_noc": (0, 1),
    "writer_noc": (0, 1),
    "link_bytes_per_cycle": (1, 4096),
    "hop_cycles": (0, 10_000),
    "clock_ghz": (0.01, 10.0),
    "dram_gbps": (0.1, 100_000.0),
    "dram_channels": (1, 1024),
    "fabric_word_bytes": (1, 4096),
    "unpack_bytes_per_cycle": (1, 65536),
    "unpack_joint_bytes_per_cycle": (1, 65536),
    "dram_latency_cycles": (0, 1_000_000),
    "kernel_launch_cycles": (1, 100_000_000),
    "noc_issue_cycles": (0, 1_000_000),
    "noc_burst_bytes": (32, 16 * MiB),
    "l2_bytes": (1, 16 * GiB),
    "matmul_row_pass": (1, 1024),
    "matmul_handover_cycles": (0, 1_000_000),
    "matmul_phase_reset_cycles": (0, 1_000_000),
    "matmul_release_cycles": (0, 1_000_000),
    "vector_lanes": (1, 65536),
    "dram_bytes": (1 * MiB, 1024 * TiB),
    # A chip whose streaming reads reach under 5% of its DRAM's peak is a typo for a percentage.
    "dram_efficiency": (0.05, 1.0),
}
MAX_SITES = 1 << 20
"""The most sites a mesh may have (a wafer-scale chip has under a million cores)."""
MAX_TABLE_VALUE = {"acc_tiles": 4096, "matmul": 10_000_000}
TILE_ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4, "u32": 4, "i8": 1, "u8": 1}
"""Bytes per element of the plain datatypes: a 32 x 32 tile of them is 1024 times that. The
block-float formats carry shared exponents: bfp8_b 1088, bfp4_b 576 bytes per tile [TILE]."""
BLOCK_FLOAT_TILE_BYTES = {"bfp8_b": 1088, "bfp4_b": 576}


def validate_ranges(t: Target, where: str) -> Target:
    """Refuse a field outside RANGES, a mesh of more than MAX_SITES sites, a NoC index beyond the
    chip's, tile bytes that disagree with the tile shape and datatype: by the target and field."""
    for field, (lo, hi) in RANGES.items():
        v = getattr(t, field)
        if v is None:
            continue
        if not lo <= v <= hi:
            raise TargetError(
                f"{where}: field {field!r}: {v!r} is outside the range a chip could have "
                f"[{lo:g}, {hi:g}] (docs/targets.md#validation)"
            )
    if t.mesh_x * t.mesh_y > MAX_SITES:
        raise TargetError(
            f"{where}: fields 'mesh_x' x 'mesh_y': {t.mesh_x * t.mesh_y} sites, more than {MAX_SITES}"
        )
    if t.local_mem_max_bytes < t.local_mem_bytes:
        raise TargetError(
            f"{where}: field 'local_mem_max_bytes': {t.local_mem_max_bytes} is below local_mem_bytes "
            f"{t.local_mem_bytes}"
        )
    elems = t.tile_rows * t.tile_cols
    for dtype, nbytes in t.dtype_tile_bytes:
        want = BLOCK_FLOAT_TILE_BYTES.get(dtype)
        if want is None and dtype in TILE_ELEMENT_BYTES:
            want = elems * TILE_ELEMENT_BYTES[dtype]
        if want is not None and nbytes != want:
            raise TargetError(
                f"{where}: field 'tile_bytes.{dtype}': a {t.tile_rows}x{t.tile_cols} tile of {dtype} "
                f"is {want} bytes, got {nbytes}"
            )
    for precision, tiles in t.acc_tiles_by_precision:
        if tiles > MAX_TABLE_VALUE["acc_tiles"]:
            raise TargetError(
                f"{where}: field 'acc_tiles.{precision}': {tiles} is more than "
                f"{MAX_TABLE_VALUE['acc_tiles']} tiles"
            )
    for dtype, table in t.matmul_cycles:
        for fidelity, cycles in table:
            if cycles > MAX_TABLE_VALUE["matmul"]:
                raise TargetError(
                    f"{where}: field 'matmul.{dtype}.{fidelity}': {cycles} cycles is more than "
                    f"{MAX_TABLE_VALUE['matmul']}"
                )
    return t


_TABLES = ("acc_tiles", "tile_bytes", "matmul")
_DEFAULTS: dict[str, Any] = {
    "description": "",
    "local_mem_base": 0,
    "acc_lanes": 1,
    "fetch_tile_cycles": None,
    "credit_return_cycles": None,
    "service_page_cycles": None,
    "receiver_noc": 0,
    "writer_noc": 0,
    "tile_rows": 32,
    "tile_cols": 32,
    "fabric_word_bytes": None,
    "unpack_bytes_per_cycle": None,
    "unpack_joint_bytes_per_cycle": None,
    "dram_latency_cycles": None,
    "noc_issue_cycles": None,
    "noc_burst_bytes": None,
    "l2_bytes": None,
    "matmul_row_pass": 8,
    "matmul_handover_cycles": 0,
    "matmul_phase_reset_cycles": 0,
    "matmul_release_cycles": 0,
    "matmul_release_each_tile": False,
    "vector_lanes": 32,
    "dram_bytes": None,
    "dram_efficiency": 1.0,
    "activation_dtype": None,
    "kernel_reads_by_id": False,
    "batched_kv_splits": False,
    "kernel_launch_cycles": None,
}


def preset_names() -> str:
    return ", ".join(sorted(PRESETS))


def load_target(name_or_path: str | Path) -> Target:
    """The target called ``name_or_path``: a preset name (or alias such as ``n150``), or the path of
    a TOML file describing a chip. An unknown name is refused with the list of presets."""
    if isinstance(name_or_path, Target):
        return name_or_path
    text = str(name_or_path).strip()
    key = text.lower()
    if key in PRESETS:
        return PRESETS[key]
    if key in ALIASES:
        return PRESETS[ALIASES[key]]
    if key in MESH_PRESETS:
        # A mesh where one chip is needed: refused by name, never compiled for one of its chips
        # silently (docs/targets.md#meshes-of-chips); spatial-pipeline compiles a deployment.
        raise MESH_PRESETS[key].not_a_chip(text)
    path = Path(text)
    if _is_path(text):
        return load_target_file(path)
    raise TargetError(
        f"unknown target {text!r}: use a preset ({preset_names()}) or the path of a .toml file"
    )


def _is_path(text: str) -> bool:
    return text.endswith(".toml") or Path(text).exists() or "/" in text or "\\" in text


def load_target_file(path: str | Path) -> Target:
    """Parse and validate a TOML target file. A file with a [mesh] table is validated whole, then
    refused as a mesh (MeshNotAChip)."""
    where = str(path)
    data = _read_toml(Path(path))
    if "mesh" in data:
        raise _mesh_of(data, where, Path(path).stem).not_a_chip(where)
    return target_from_mapping(data, where=where, default_name=Path(path).stem)


def load_mesh(name_or_path: str | Path) -> Mesh:
    """The mesh called ``name_or_path``: a mesh preset (:data:`MESH_PRESETS`) or a TOML target file
    with a ``[mesh]`` table, whose other fields describe each chip."""
    if isinstance(name_or_path, Mesh):
        return name_or_path
    text = str(name_or_path).strip()
    if text.lower() in MESH_PRESETS:
        return MESH_PRESETS[text.lower()]
    if not _is_path(text):
        raise TargetError(
            f"unknown mesh {text!r}: use a mesh preset ({', '.join(sorted(MESH_PRESETS))}) or the "
            f"path of a .toml file with a [mesh] table"
        )
    data = _read_toml(Path(text))
    if "mesh" not in data:
        raise TargetError(f"{text}: a single chip (no [mesh] table), not a mesh")
    return _mesh_of(data, text, Path(text).stem)


def _mesh_of(data: dict, where: str, stem: str) -> Mesh:
    """The Mesh a TOML file's [mesh] table describes, each chip being the file's other fields."""
    data = dict(data)
    table = data.pop("mesh")
    # `name` and `description` name the mesh; the chip keeps its base preset's name (or the stem).
    name = _check_scalar(where, "name", "str", data.pop("name", stem))
    description = _check_scalar(where, "description", "str", data.pop("description", ""))
    chip = target_from_mapping(data, where=where, default_name=stem)
    return mesh_from_table(table, chip=chip, where=where, name=name, description=description)


def _read_toml(path: Path) -> dict:
    """The fields of a TOML target file; an unreadable or empty file is refused by its path."""
    where = str(path)
    if not path.exists():
        raise TargetError(f"{where}: no such target file")
    if not path.is_file():
        raise TargetError(f"{where}: not a file")
    try:
        raw = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise TargetError(f"{where}: cannot read the file: {e}") from None
    if not raw.strip():
        raise TargetError(
            f"{where}: the file is empty; a target needs at least mesh_x, mesh_y, ... (see examples/targets/)"
        )
    try:
        data = tomllib.loads(raw)
    except tomllib.TOMLDecodeError as e:
        raise TargetError(f"{where}: not valid TOML: {e}") from None
    except RecursionError:
        raise TargetError(f"{where}: not valid TOML: tables nested too deeply") from None
    if not data:
        raise TargetError(f"{where}: the file defines no fields (only comments?)")
    return data


def target_from_mapping(data: dict, *, where: str, default_name: str = "custom") -> Target:
    """Validate a mapping of TOML fields into a Target; ``where`` prefixes every message."""
    data = dict(data)
    base_fields = _base_fields(where, data.pop("base")) if "base" in data else {}
    unknown = sorted(set(data) - set(_SCALARS) - set(_TABLES))
    if unknown:
        raise TargetError(
            f"{where}: field {unknown[0]!r} is not a target field (known: {', '.join(sorted(set(_SCALARS) | set(_TABLES)))})"
        )
    fields = _scalar_fields(where, data, base_fields, default_name)
    tables = _table_fields(where, data, base_fields)
    return validate_ranges(make_target(**tables, **fields), where)


def _base_fields(where: str, base: Any) -> dict[str, Any]:
    """The fields of the preset ``base = ...`` names, which the file's fields override."""
    if not isinstance(base, str) or base.lower() not in PRESETS:
        raise TargetError(
            f"{where}: field 'base': expected a preset name ({preset_names()}), got {base!r}"
        )
    return _fields_of(PRESETS[base.lower()])


def _scalar_fields(
    where: str, data: dict, base_fields: dict[str, Any], default_name: str
) -> dict[str, Any]:
    """Every scalar field: the file's (checked), else the base preset's, else its default."""
    fields: dict[str, Any] = {}
    for field, (kind, required) in _SCALARS.items():
        if field in data:
            fields[field] = _check_scalar(where, field, kind, data[field])
        elif field in base_fields:
            fields[field] = base_fields[field]
        elif required:
            raise TargetError(f"{where}: missing field {field!r}")
        elif field == "name":
            fields[field] = default_name
        elif field == "local_mem_max_bytes":
            fields[field] = None  # filled from local_mem_bytes below
        else:
            fields[field] = _DEFAULTS[field]
    for field in ("tile_rows", "tile_cols"):
        if fields[field] != 32:
            raise TargetError(
                f"{where}: field {field!r}: only 32 x 32 tiles are supported (GemmShape and the cost model "
                f"count 32 x 32 tiles), got {fields[field]}"
            )
    if fields["local_mem_max_bytes"] is None:
        fields["local_mem_max_bytes"] = fields["local_mem_bytes"]
    if fields["local_mem_max_bytes"] < fields["local_mem_bytes"]:
        raise TargetError(
            f"{where}: field 'local_mem_max_bytes': {fields['local_mem_max_bytes']} is below local_mem_bytes "
            f"{fields['local_mem_bytes']} (the maximum cannot be less than the default)"
        )
    return fields


def _table_fields(where: str, data: dict, base_fields: dict[str, Any]) -> dict[str, Any]:
    """The three datatype tables: the file's (checked), else the base preset's; every datatype the
    chip computes must have its tile bytes."""
    for table in _TABLES:
        if table not in data and table not in base_fields:
            raise TargetError(f"{where}: missing table [{table}]")
    tile_bytes = (
        _dtype_table(where, "tile_bytes", data["tile_bytes"])
        if "tile_bytes" in data
        else base_fields["tile_bytes"]
    )
    acc = (
        _dtype_table(where, "acc_tiles", data["acc_tiles"])
        if "acc_tiles" in data
        else base_fields["acc_tiles"]
    )
    matmul = _matmul_table(where, data["matmul"]) if "matmul" in data else base_fields["matmul"]
    for dtype in matmul:
        if dtype not in tile_bytes:
            raise TargetError(
                f"{where}: field 'matmul.{dtype}': the chip computes {dtype} but [tile_bytes] does not list it"
            )
    return {"acc_tiles": acc, "tile_bytes": tile_bytes, "matmul": matmul}


def _fields_of(t: Target) -> dict[str, Any]:
    """A preset's fields in the loader's vocabulary (tables as dicts), for ``base = ...``."""
    out = {f.name: getattr(t, f.name) for f in dataclasses.fields(t)}
    out["acc_tiles"] = dict(out.pop("acc_tiles_by_precision"))
    out["tile_bytes"] = dict(out.pop("dtype_tile_bytes"))
    out["matmul"] = {d: tuple(tab) for d, tab in out.pop("matmul_cycles")}
    return out


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _check_scalar(where: str, field: str, kind: str, v: Any) -> Any:
    def bad(expected: str) -> TargetError:
        return TargetError(f"{where}: field {field!r}: expected {expected}, got {v!r}")

    if kind == "str":
        if not isinstance(v, str) or (field == "name" and not v.strip()):
            raise bad("a non-empty string" if field == "name" else "a string")
        return v
    if kind == "bool":
        if not isinstance(v, bool):
            raise bad("true or false")
        return v
    if kind == "multicast":
        if not isinstance(v, str) or v not in MULTICAST_KINDS:
            raise bad(" or ".join(repr(k) for k in MULTICAST_KINDS))
        return Multicast(v)
    if kind == "pos_num":
        if not (_is_int(v) or isinstance(v, float)) or not v > 0 or v != v or v == float("inf"):
            raise bad("a positive number")
        return float(v)
    if kind == "fraction":
        if not (_is_int(v) or isinstance(v, float)) or not 0 < v <= 1:
            raise bad("a fraction in (0, 1] (e.g. 0.92 for 92% of the peak)")
        return float(v)
    if kind in ("pos_int", "opt_pos_int"):
        if not _is_int(v) or v <= 0:
            raise bad("a positive integer")
        return v
    if kind in ("nonneg_int", "opt_nonneg_int"):
        if not _is_int(v) or v < 0:
            raise bad("a non-negative integer")
        return v
    raise AssertionError(kind)  # pragma: no cover - the schema above is closed


def _dtype_name(where: str, field: str, key: str) -> str:
    d = normalize_dtype(key)
    if d not in KNOWN_DTYPES:
        raise TargetError(
            f"{where}: field '{field}.{key}': unknown datatype {key!r} (known: {', '.join(KNOWN_DTYPES)})"
        )
    return d


def _table_items(where: str, field: str, table: Any, expected: str):
    """(key as written, datatype name, value) for each entry of a datatype table, after checking it is
    a non-empty table of known datatypes."""
    if not isinstance(table, dict):
        raise TargetError(
            f"{where}: field {field!r}: expected a table of {expected}, got {table!r}"
        )
    if not table:
        raise TargetError(f"{where}: field {field!r}: the table is empty")
    return [(key, _dtype_name(where, field, key), v) for key, v in table.items()]


def _positive_int(where: str, path: str, v: Any) -> int:
    if not _is_int(v) or v <= 0:
        raise TargetError(f"{where}: field '{path}': expected a positive integer, got {v!r}")
    return v


def _dtype_table(where: str, field: str, table: Any) -> dict[str, int]:
    return {
        d: _positive_int(where, f"{field}.{key}", v)
        for key, d, v in _table_items(where, field, table, "datatype = integer")
    }


def _matmul_table(where: str, table: Any) -> dict[str, tuple]:
    out: dict[str, tuple] = {}
    for key, d, v in _table_items(where, "matmul", table, "datatype = cycles"):
        if not isinstance(v, dict):
            if not _is_int(v):
                raise TargetError(
                    f"{where}: field 'matmul.{key}': expected cycles (an integer) or a table of "
                    f"{', '.join(FIDELITIES)}, got {v!r}"
                )
            out[d] = fidelity_table(_positive_int(where, f"matmul.{key}", v))
            continue
        extra = sorted(set(v) - set(FIDELITIES))
        if extra:
            raise TargetError(
                f"{where}: field 'matmul.{key}.{extra[0]}': unknown fidelity (use {', '.join(FIDELITIES)})"
            )
        missing = [fid for fid in FIDELITIES if fid not in v]
        if missing:
            raise TargetError(f"{where}: missing field 'matmul.{key}.{missing[0]}'")
        c = {fid: _positive_int(where, f"matmul.{key}.{fid}", v[fid]) for fid in FIDELITIES}
        out[d] = fidelity_table(c["lofi"], c["hifi2"], c["hifi3"], c["hifi4"])
    return out
