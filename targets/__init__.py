"""Targets and the cost model: the data every decision of the compiler is made from.

``load_target(name_or_path)`` gives a :class:`Target` (a preset of :data:`PRESETS` or a TOML file);
:mod:`spatial_dialect.targets.cost` turns a GEMM shape and block plan into quantities, cycles and
bounds on that target.
"""

from .loader import ALIASES, load_target, load_target_file, target_from_mapping
from .presets import PRESETS
from .spec import (
    DEFAULT_FIDELITY,
    FIDELITIES,
    KNOWN_DTYPES,
    Multicast,
    Target,
    TargetError,
    normalize_dtype,
    normalize_fidelity,
)

__all__ = [
    "ALIASES",
    "DEFAULT_FIDELITY",
    "FIDELITIES",
    "KNOWN_DTYPES",
    "Multicast",
    "PRESETS",
    "Target",
    "TargetError",
    "load_target",
    "load_target_file",
    "normalize_dtype",
    "normalize_fidelity",
    "target_from_mapping",
]
