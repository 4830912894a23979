"""The target a module is compiled for, and the pipeline options recorded next to it.

The target is chosen once: link records its name on the module (`sp.target`, `choose_target`)
and every later pass reads it back from there (`module_target`), so no two passes can plan for
different chips, and re-linking for another target is refused. The options that change the
target (`grid`, `local_mem`, `dram_mem`) or the numbers (`fidelity`, `accumulate`, `format`) are
recorded beside it (`sp.options`, `record`): `recorded_target` applies the first kind to the
loaded target, and the report prints them all. Option values are text (`parse_grid`,
`parse_bytes` read them), so the module prints and parses back unchanged.

A deployment over a mesh of chips (docs/mesh.md#the-linked-deployment) records the MESH preset
(`sp.target = "n300"`): passes plan for one chip, so `chip_target` gives them the mesh's chip and
`recorded_mesh` the mesh, and nothing else reads the name. Only a per-chip function (one whose
arguments carry `mesh.sharding`, the tensor-parallel pass's output) or its linked deployment may
name a mesh: a whole-tensor function on a mesh is refused (MeshNotBuilt) until the pipeline runs
the tensor-parallel pass before link.
"""

from __future__ import annotations

import re
from functools import lru_cache

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr

from spatial_dialect.mesh import MeshOp, StepOp
from spatial_dialect.mesh.interface import ENTRY_INPUTS, is_per_chip
from spatial_dialect.passes.phases import refuse_unlinked
from spatial_dialect.sp import EntryOp, Phase
from spatial_dialect.sp.errors import InvalidTarget, WrongPhase
from spatial_dialect.targets import MESH_PRESETS, Mesh, Target, TargetError, load_target

TARGET_ATTR = "sp.target"
OPTIONS_ATTR = "sp.options"
DEFAULT_TARGET = "wormhole_n150"


@lru_cache(maxsize=32)
def _load(name: str) -> Target:
    try:
        return load_target(name)
    except TargetError as err:
        raise InvalidTarget(str(err)) from None


def mesh_named(name: str | None) -> Mesh | None:
    """The mesh preset `name` names (None for a chip's target)."""
    return MESH_PRESETS.get(name.lower()) if name is not None else None


def chip_target(name: str) -> Target:
    """The target one chip of a deployment compiles for: the chip of mesh preset `name`, or the
    chip target `name` itself."""
    mesh = mesh_named(name)
    return mesh.chip if mesh is not None else _load(name)


def recorded_mesh(module: ModuleOp) -> Mesh | None:
    """The mesh the module is deployed over (None for one chip)."""
    return mesh_named(recorded_target_name(module))


def is_deployment(module: ModuleOp) -> bool:
    """Whether the module is a deployment over a mesh: it holds a per-chip function, a step, or an
    entry that carries placements."""
    for op in module.walk():
        if isinstance(op, StepOp) or (isinstance(op, EntryOp) and ENTRY_INPUTS in op.attributes):
            return True
        if isinstance(op, func.FuncOp) and is_per_chip(op):
            return True
    return False


def module_mesh_preset(module: ModuleOp) -> str | None:
    """The preset of the `mesh.mesh` a per-chip module holds (the first one), if any."""
    for op in module.body.block.ops:
        if isinstance(op, MeshOp) and op.preset is not None:
            return op.preset.data
    return None


def options(module: ModuleOp) -> dict[str, str]:
    attr = module.attributes.get(OPTIONS_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.data for k, v in attr.data.items() if isinstance(v, StringAttr)}


def record(module: ModuleOp, **values: str) -> None:
    """Record pipeline options on the module (a later value of the same option replaces it)."""
    merged = options(module) | values
    module.attributes[OPTIONS_ATTR] = DictionaryAttr(
        {k: StringAttr(v) for k, v in sorted(merged.items())}
    )


def parse_grid(text: str) -> tuple[int, int]:
    try:
        x, y = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InvalidTarget(f"grid must be XxY (e.g. 4x4), got {text!r}") from None
    return x, y


_UNITS = {
    "": 1,
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "PB": 10**15,
    "KIB": 2**10,
    "MIB": 2**20,
    "GIB": 2**30,
    "TIB": 2**40,
    "PIB": 2**50,
}


def parse_bytes(text: str | int, option: str) -> int:
    """Bytes written as an integer or with a unit: 400GB (10^9), 12GiB (2^30), 1.5TB."""
    if isinstance(text, int) and not isinstance(text, bool):
        value = text
    else:
        s = str(text).strip().replace("_", "")
        # A number, then a unit of letters (not str.rstrip with a set: that reads as a suffix).
        split = re.fullmatch(r"([0-9.eE+-]*?)\s*([A-Za-z]*)", s)
        number, unit = (split.group(1), split.group(2).upper()) if split else (s, "?")
        try:
            value = int(float(number) * _UNITS[unit]) if unit in _UNITS else -1
        except (ValueError, OverflowError):  # not a number; inf (1e999GiB)
            value = -1
        if unit not in _UNITS:
            value = -1
    if value <= 0:
        raise InvalidTarget(
            f"{option} must be a positive number of bytes, optionally with a unit "
            f"(B, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB), got {text!r}"
        )
    return value


def recorded_target_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get(TARGET_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def module_target(module: ModuleOp, pass_name: str) -> Target:
    """The target the module was linked for, for a pass after link: one that still holds tg ops
    is refused at the first of them."""
    refuse_unlinked(module, pass_name)
    return recorded_target(module, pass_name)


def recorded_target(module: ModuleOp, pass_name: str) -> Target:
    """The target recorded on the module, restricted to the recorded sub-grid and budget."""
    name = recorded_target_name(module)
    if name is None:
        raise WrongPhase(
            pass_name, Phase.LINKED.value, "unlinked (no target recorded: run link first)"
        )
    target = chip_target(name)
    recorded = options(module)
    try:
        if "grid" in recorded:
            target = target.with_grid(*parse_grid(recorded["grid"]))
        if "local_mem" in recorded:
            target = target.with_local_mem(int(recorded["local_mem"]))
        if "dram_mem" in recorded:
            target = target.with_dram_bytes(parse_bytes(recorded["dram_mem"], "dram-mem"))
    except (TargetError, ValueError) as err:
        raise InvalidTarget(str(err)) from None
    return target


def choose_target(module: ModuleOp, requested: str | None) -> str:
    """The target link records: the one asked for, the one already recorded, or the default.
    Asking for another target than the module was linked for is refused."""
    recorded = recorded_target_name(module)
    deployed = is_deployment(module)
    preset = module_mesh_preset(module) if deployed else None
    name = requested or recorded or preset or DEFAULT_TARGET
    mesh = mesh_named(name)
    if mesh is None:
        _load(name)  # refuses a mesh TOML file with MeshNotBuilt, as a whole function on a mesh
        if deployed:
            raise InvalidTarget(
                f"the module is a deployment over mesh {preset or '(no preset)'}; target {name} "
                f"is one chip: name the mesh (target={preset or 'MESH'})"
            )
    elif not deployed:
        try:
            load_target(name)
        except TargetError as err:  # a whole function on a mesh: not built until tensor-parallel
            raise InvalidTarget(str(err)) from None
    elif preset is not None and preset != mesh.name:
        raise InvalidTarget(
            f"the module's mesh.mesh is preset {preset}; it cannot be linked for mesh {mesh.name}"
        )
    if recorded is not None and recorded != name:
        raise InvalidTarget(
            f"the module is linked for target {recorded}; it cannot be re-linked for {name}"
        )
    return name
