"""spatial-opt's `-t mlir` printer: xDSL's Printer, byte for byte, with its two per-character
costs removed.

Printing the sized IR of the 80-layer Llama-3-70B decode step (2.8 MB, 28k ops) makes about
1.2 M `print_string` calls, each a `print(text, end="", file=stream)`, and xDSL prints every
string literal one byte at a time (`print_bytes_literal`: a `print_string` per character). Here a
string without a newline is written to the stream directly, and a string literal with nothing to
escape (printable ASCII, no `"` or backslash: every symbol and op name we print) is written
whole. Anything else takes xDSL's own path, so the text is identical
(test/opt/test_fast_printer.py compares it with xDSL's Printer).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer
from xdsl.targets.mlir import MLIRTarget

_PLAIN = re.compile(rb"[\x20\x21\x23-\x5b\x5d-\x7e]*")
"""The bytes print_bytes_literal writes as themselves: printable ASCII but `"` and backslash."""


@dataclass(eq=False, repr=False)
class FastPrinter(Printer):
    def print_string(self, text: str, *, indent: int | None = None) -> None:
        if self.stream is None or "\n" in text:
            super().print_string(text, indent=indent)
            return
        self._current_column += len(text)
        self.stream.write(text)

    def print_bytes_literal(self, bytestring: bytes) -> None:
        if _PLAIN.fullmatch(bytestring) is None:
            super().print_bytes_literal(bytestring)
            return
        self.print_string(f'"{bytestring.decode("ascii")}"')


@dataclass(frozen=True)
class FastMLIRTarget(MLIRTarget):
    """xDSL's `mlir` target printing with FastPrinter (syntax highlighting keeps xDSL's)."""

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        if self.syntax_highlight:
            super().emit(ctx, module, output)
            return
        printer = FastPrinter(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)
