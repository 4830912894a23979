"""The Triton backend: `spatial-opt -t triton` prints a sized sp program as a Python module of
Triton kernels (printer.py), and `spatial-run --backend triton-interpret | triton` runs it
(runner.py); docs/backend-triton.md.

What it prints is decided in one table per consumer, each keyed by the IR's enumeration, not by
a string: the section kinds (`SECTION_PRINTERS`), the map kinds (`MAP_PRINTERS`) and the row
reductions (`ROW_PRINTERS`). What it cannot print is refused by name, with why, in the matching
`REFUSED_*` table. They are exported here so a test can check that every kind is one or the
other (test/backend/triton/test_triton_coverage.py).
"""

from spatial_dialect.tools.backend.triton.bodies import kernel_of
from spatial_dialect.tools.backend.triton.kernel import (
    REFUSED_SECTION_KINDS,
    SECTION_PRINTERS,
    TritonNotEmitted,
)
from spatial_dialect.tools.backend.triton.maps import MAP_PRINTERS, REFUSED_MAP_KINDS
from spatial_dialect.tools.backend.triton.rows import REFUSED_ROW_KINDS, ROW_PRINTERS

__all__ = [
    "MAP_PRINTERS",
    "REFUSED_MAP_KINDS",
    "REFUSED_ROW_KINDS",
    "REFUSED_SECTION_KINDS",
    "ROW_PRINTERS",
    "SECTION_PRINTERS",
    "TritonNotEmitted",
    "kernel_of",
]
