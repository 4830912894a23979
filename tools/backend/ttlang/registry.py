"""The tables of the TT-Lang printer, whole: which sp op, map kind and row-reduction kind each
printer prints, and which it refuses by name.

Each table is filled next to the code that prints: `@prints(op)` on a stage printer class
(stage.py's SECTION_PRINTERS, for the stages in modules of their own: moe.py, delta.py,
flash.py),
`@map_kind(...)` and `@row_kind(...)` on the kinds' printers (compute.py). A decorator fills its
table when its module is imported, so this module imports every one of them: whoever reads a
table through here (the printer, the coverage test) reads it complete.
"""

from __future__ import annotations

from spatial_dialect.tools.backend.ttlang import delta, flash, moe  # noqa: F401  (they register)
from spatial_dialect.tools.backend.ttlang.compute import (
    MAP_PRINTERS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_KINDS,
    ROW_PRINTERS,
)
from spatial_dialect.tools.backend.ttlang.stage import SECTION_PRINTERS, printer_of

__all__ = [
    "MAP_PRINTERS",
    "REFUSED_MAP_KINDS",
    "REFUSED_ROW_KINDS",
    "ROW_PRINTERS",
    "SECTION_PRINTERS",
    "printer_of",
]
