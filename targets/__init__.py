"""Targets and the cost model: the data every decision of the compiler is made from.

``load_target(name_or_path)`` gives a :class:`Target` (a preset of :data:`PRESETS` or a TOML file);
:mod:`spatial_dialect.targets.cost` turns a GEMM shape and block plan into quantities, cycles and
bounds on that target. ``load_mesh`` gives a :class:`Mesh` of chips (a preset of
:data:`MESH_PRESETS` or a TOML file with a ``[mesh]`` table), which
:mod:`spatial_dialect.targets.collectives` prices collectives over.
"""

from .loader import ALIASES, load_mesh, load_target, load_target_file, target_from_mapping
from .mesh import MESH_PRESETS, Axis, Mesh, MeshNotAChip, Topology
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
    "Axis",
    "MESH_PRESETS",
    "Mesh",
    "MeshNotAChip",
    "Topology",
    "load_mesh",
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
