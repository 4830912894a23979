"""The functional simulator of sized sp programs (program.py says what it executes and how).

This package is where the simulator's dispatch tables are complete: importing it imports every
runner module, and each module registers its code by decorator as it loads (registry.py). The
tables are exported here under the names a test of every consumer imports:

- `STAGE_RUNNERS`: sp stage op class -> its runner; `REFUSED_STAGES`: class -> why not
- `MAP_KINDS`: `MapKindName` -> its math; `REFUSED_MAP_KINDS`: kind -> why not
- `ROW_KINDS`: `RowKindName` -> its `RowKind` (one method per form's step);
  `REFUSED_ROW_FORMS`: (kind, form) -> why not

The simulator's entry point is `tools.simulator.program.simulate`.
"""

from __future__ import annotations

# Imported for their registrations: each fills STAGE_RUNNERS (and MAP_KINDS, ROW_KINDS) as it loads.
from spatial_dialect.tools.simulator import maps, matmul, movement, rows, stages  # noqa: F401
from spatial_dialect.tools.simulator.registry import (
    FORM_STEPS,
    MAP_KINDS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_FORMS,
    REFUSED_STAGES,
    ROW_KINDS,
    STAGE_RUNNERS,
    RowKind,
)

__all__ = [
    "FORM_STEPS",
    "MAP_KINDS",
    "REFUSED_MAP_KINDS",
    "REFUSED_ROW_FORMS",
    "REFUSED_STAGES",
    "ROW_KINDS",
    "STAGE_RUNNERS",
    "RowKind",
]
