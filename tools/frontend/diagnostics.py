"""Diagnostics at the source, for spatial-opt and spatial-run (docs/architecture.md#diagnostics).

- `LocatingParser` records where each op was written: an op the parser reads gets a
  `loc("file":line:col)` (unless the text gave it one), so a verifier or pass diagnostic about a tg
  op, or about a section link made from one (link copies the location), points at the line.
- `check_nesting` refuses input nested deeper than MAX_NESTING brackets as a parse error with
  its position, before xDSL's recursive-descent parser would run out of Python stack; and a
  string literal xDSL's lexer would take exponential time on (unclosed on its line, or with an
  unknown escape).
- `capture_diagnostic_ops` makes every xDSL diagnostic (`op.emit_error`, the rewrite walker,
  the verifier) remember the ops it is about, and attach the whole module in generic form only
  when asked (`--print-ir-on-diagnostic`), instead of always.
- `format_diagnostic` prints `file:line:col: error: MESSAGE`, the op's source line and a caret.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

from xdsl.dialects.builtin import FileLineColLoc, IntAttr, StringAttr
from xdsl.ir import IRNode, Operation
from xdsl.parser import Parser
from xdsl.utils.diagnostic import Diagnostic
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input, Span

MAX_NESTING = 64
"""The deepest bracket nesting ((, [, {, <) a program may have. xDSL parses recursively, about
ten Python frames a level; a real tg program nests a handful of levels."""

_OPEN = {"(": ")", "[": "]", "{": "}", "<": ">"}
_CLOSE = {")", "]", "}", ">"}


def check_nesting(text: str, name: str, line_offset: int = 0) -> None:
    """Raise a ParseError at the bracket that opens level MAX_NESTING + 1, or at a string
    literal that does not close on its line or holds an unknown escape. `//` comments are
    skipped; a `>` after `-` (an arrow) closes nothing."""
    depth, i, n = 0, 0, len(text)

    def refuse(at: int, message: str) -> NoReturn:
        raise ParseError(Span(at, at + 1, Input(text, name), line_offset), message)

    while i < n:
        c = text[i]
        if c == '"':
            # Checked here because xDSL's string regex backtracks exponentially on a string that
            # does not close on its line or holds an unknown escape (a hang, not an error).
            start = i
            i += 1
            while i < n and text[i] != '"':
                if text[i] in "\n\v\f":
                    refuse(start, "string literal not closed on its line")
                if text[i] == "\\":
                    nxt = text[i + 1 : i + 3]
                    if nxt[:1] in ('"', "n", "t", "\\") and nxt[:1]:
                        i += 2
                        continue
                    if len(nxt) == 2 and all(ch in "0123456789abcdefABCDEF" for ch in nxt):
                        i += 3
                        continue
                    refuse(
                        i,
                        'unknown escape in a string literal (use \\n, \\t, \\\\, \\" or two hex digits)',
                    )
                i += 1
            if i >= n:
                refuse(start, "string literal not closed before the end of the input")
        elif c == "/" and text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c in _OPEN:
            depth += 1
            if depth > MAX_NESTING:
                span = Span(i, i + 1, Input(text, name), line_offset)
                raise ParseError(
                    span,
                    f"brackets nested deeper than {MAX_NESTING} levels; "
                    "no program of tg ops needs that",
                )
        elif c in _CLOSE and not (c == ">" and i > 0 and text[i - 1] == "-"):
            depth = max(depth - 1, 0)
        i += 1


class LocatingParser(Parser):
    """A Parser that gives each op it reads the location where it was written."""

    def __init__(self, ctx, text: str, name: str = "<unknown>", line_offset: int = 0):
        super().__init__(ctx, text, name)
        self._line_offset = line_offset

    def parse_operation(self) -> Operation:
        span = self._current_token.span
        try:
            op = super().parse_operation()
        except (OverflowError, ZeroDivisionError) as err:  # a literal the attribute cannot hold
            self.raise_error(f"a value out of range in this op: {err}", at_position=span)
        if not isinstance(op.location, FileLineColLoc):
            at = span.get_location()
            op.location = FileLineColLoc(
                StringAttr(at.file), IntAttr(at.line + self._line_offset), IntAttr(at.col)
            )
        return op


def parse_source(ctx, text: str, name: str, line_offset: int = 0, implicit_module: bool = True):
    """Parse `text` with locations, refusing absurd nesting first."""
    check_nesting(text, name, line_offset)
    try:
        return LocatingParser(ctx, text, name, line_offset).parse_module(implicit_module)
    except RecursionError:
        span = Span(0, 0, Input(text, name), line_offset)
        raise ParseError(span, "input nested too deeply to parse") from None


# Capturing the op of a diagnostic --------------------------------------------------------------

PRINT_IR = {"on": False}
"""Whether a diagnostic also carries the whole module (xDSL's note), as --print-ir-on-diagnostic
asks."""

_original_raise = Diagnostic.raise_exception


def _raise_exception(self: Diagnostic, ir: IRNode, underlying_error: Exception) -> NoReturn:
    ops = getattr(underlying_error, "spatial_ops", None) or []
    underlying_error.spatial_ops = [*ops, *self.op_messages]
    if PRINT_IR["on"]:
        _original_raise(self, ir, underlying_error)
    raise underlying_error


@contextmanager
def capture_diagnostic_ops(print_ir: bool = False) -> Iterator[None]:
    """Within the block, xDSL diagnostics record their ops on the exception (`spatial_ops`) and
    print the module only when `print_ir`."""
    saved, PRINT_IR["on"] = PRINT_IR["on"], print_ir
    Diagnostic.raise_exception = _raise_exception  # type: ignore[method-assign]
    try:
        yield
    finally:
        Diagnostic.raise_exception = _original_raise  # type: ignore[method-assign]
        PRINT_IR["on"] = saved


def op_location(op: Operation | None) -> FileLineColLoc | None:
    """The op's location, or that of the nearest enclosing op that has one (a stage of a
    section reports at the section, which link placed at its tg op)."""
    while op is not None:
        if isinstance(op.location, FileLineColLoc):
            return op.location
        op = op.parent_op()
    return None


def diagnostic_location(err: BaseException) -> FileLineColLoc | None:
    for op in getattr(err, "spatial_ops", []):
        if (loc := op_location(op)) is not None:
            return loc
    return None


def diagnostic_message(err: BaseException) -> str:
    text = str(err).strip()
    # xDSL's verifier wraps an op's message: keep the message, drop the wrapper.
    for prefix in ("Operation does not verify: ",):
        if text.startswith(prefix):
            text = text[len(prefix) :]
    return text


def format_diagnostic(
    err: BaseException, sources: dict[str, str], fallback_name: str, severity: str = "error"
) -> str:
    """`file:line:col: error: MESSAGE`, the source line and a caret; without a location,
    `file: error: MESSAGE` and the name of the op it is about."""
    message = diagnostic_message(err)
    loc = diagnostic_location(err)
    lines = [f"{fallback_name}: {severity}: {message}"]
    if loc is not None:
        file, line, col = loc.filename.data, loc.line.data, loc.column.data
        lines = [f"{file}:{line}:{col}: {severity}: {message}"]
        text = sources.get(file)
        if text is not None:
            source_lines = text.split("\n")
            if 0 < line <= len(source_lines):
                lines.append(source_lines[line - 1].rstrip())
                lines.append(" " * (col - 1) + "^")
    else:
        ops = getattr(err, "spatial_ops", [])
        if ops:
            lines.append(f"note: in {ops[0].name}")
    lines.extend(getattr(err, "__notes__", []))
    return "\n".join(lines)


def format_parse_error(err: ParseError) -> str:
    """`file:line:col: error: MESSAGE` with the line and carets below (xDSL's rendering puts the
    message under the carets and the location alone on the first line)."""
    at = err.span.get_location()
    context = err.span.print_with_context().rstrip("\n").split("\n")[1:]
    return "\n".join([f"{at.file}:{at.line}:{at.col}: error: {err.msg}", *context])


def parse_error_line(err: ParseError) -> int:
    return err.span.get_location().line
