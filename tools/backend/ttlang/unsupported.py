"""The refusal every TT-Lang printer module raises: a section (or construct) TT-Lang cannot
express, named with what is missing. A typed diagnostic, so spatial-opt and spatial-run report it
in one line rather than a traceback."""

from __future__ import annotations

from xdsl.utils.exceptions import DiagnosticException


class TTLangUnsupported(DiagnosticException):
    """A section (or construct) TT-Lang cannot express, named with what is missing."""

    def __init__(self, section: str, what: str):
        self.section, self.what = section, what
        super().__init__(f"-t ttlang: section @{section}: {what}")
