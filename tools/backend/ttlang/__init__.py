"""`-t ttlang` and `--backend tt-lang-sim`: sized sp programs printed as TT-Lang programs
(printer.py) and run under tt-lang-sim (runner.py). The printer's tables are exported here for
the cross-consumer coverage tests: SECTION_PRINTERS (sp op class -> stage printer), MAP_PRINTERS
and ROW_PRINTERS (kind enum -> printer) and REFUSED_MAP_KINDS / REFUSED_ROW_KINDS (kind enum ->
why TT-Lang cannot print it)."""

from spatial_dialect.tools.backend.ttlang.registry import (
    MAP_PRINTERS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_KINDS,
    ROW_PRINTERS,
    SECTION_PRINTERS,
)

__all__ = [
    "MAP_PRINTERS",
    "REFUSED_MAP_KINDS",
    "REFUSED_ROW_KINDS",
    "ROW_PRINTERS",
    "SECTION_PRINTERS",
]
