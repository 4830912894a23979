"""The target a module is compiled for, and the pipeline options recorded next to it.

The target is chosen once: link records its name on the module (`sp.target`, `choose_target`)
and every later pass reads it back from there (`module_target`), so no two passes can plan for
different chips, and re-linking for another target is refused. The options that change the
target (`grid`, `local_mem`, `dram_mem`) or the numbers (`fidelity`, `accumulate`, `format`) are
recorded beside it (`sp.options`, `record`): `recorded_target` applies the first kind to the
loaded target, and the report prints them all. Option values are text (`parse_grid`,
`parse_bytes` read them), so the module prints and parses back unchanged.
"""

from __future__ import annotations

import re
from functools import lru_cache

from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr

from spatial_dialect.passes.phases import refuse_unlinked
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import InvalidTarget, WrongPhase
from spatial_dialect.targets import Target, TargetError, load_target

TARGET_ATTR = "sp.target"
OPTIONS_ATTR = "sp.options"
DEFAULT_TARGET = "wormhole_n150"


@lru_cache(maxsize=32)
def _load(name: str) -> Target:
    try:
        return load_target(name)
    except TargetError as err:
        raise InvalidTarget(str(err)) from None


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
    target = _load(name)
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
    name = requested or recorded or DEFAULT_TARGET
    _load(name)
    if recorded is not None and recorded != name:
        raise InvalidTarget(
            f"the module is linked for target {recorded}; it cannot be re-linked for {name}"
        )
    return name
