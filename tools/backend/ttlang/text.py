"""The text builder of a printed TT-Lang program: indented lines, kept within 100 characters.

The printers write one logical line at a time (`out("with a.wait() as x, b.wait() as y:")`) at
the current depth, as a person dictates code; this module decides how a line too long for the
page is broken, once for every printer, so no printer formats by hand. The rules are the ones
ruff's formatter applies (the printed programs are read next to this repository's code):

- a comment is re-flowed as text, its continuation lines keeping the comment's own indentation;
- `with a as x, b as y:` becomes Python 3.10's parenthesized form, one item per line;
- an assignment of a sum or product takes its value into parentheses;
- otherwise the outermost bracket pair is opened: its content on one line of its own where that
  fits, else one item per line (with a trailing comma) where the items are comma separated, or
  one operand per line with the operator leading where the bracket holds a single expression;
  each piece is broken again if it is still too long.

Strings are atoms (the tokenizer keeps an f-string whole), so a line is never broken inside one.
"""

from __future__ import annotations

import io
import textwrap
import tokenize
from collections.abc import Iterator
from contextlib import contextmanager

from spatial_dialect import sp

WIDTH = 100
INDENT = "    "

_OPEN, _CLOSE = "([{", ")]}"
# the binary operators a single bracketed expression is broken before, loosest first
_BREAK_OPERATORS = (("+", "-"), ("*", "/", "@", "//", "%"))


class Lines:
    """A program's text: `out(line)` appends a line at the current depth, `out()` a blank line,
    `with out.indent():` one level deeper. Each logical line is kept with its depth (`entries`,
    so a printer can still drop or move whole statements) and broken past WIDTH, as the module
    says, only when the text is read (`lines`, `text`)."""

    def __init__(self) -> None:
        self.entries: list[tuple[int, str]] = []
        self.depth = 0

    def __call__(self, text: str = "") -> None:
        self.entries.append((self.depth, text))

    def extend(self, other: Lines) -> None:
        """`other`'s lines, at their depths below this builder's current one."""
        self.entries += [(self.depth + depth, text) for depth, text in other.entries]

    @property
    def lines(self) -> list[str]:
        return [
            piece
            for depth, text in self.entries
            for piece in (wrap(INDENT * depth + text) if text else [""])
        ]

    @contextmanager
    def indent(self) -> Iterator[None]:
        self.depth += 1
        try:
            yield
        finally:
            self.depth -= 1

    def branch(self, cond: str, then: list[str], otherwise: list[str]) -> None:
        """`if cond:` the lines `then`, `else:` the lines `otherwise` (a kernel's first K block
        against the later ones, most often)."""
        for head, body in ((f"if {cond}:", then), ("else:", otherwise)):
            self(head)
            with self.indent():
                for line in body:
                    self(line)

    def text(self) -> str:
        return "\n".join(self.lines) + "\n"

    def statement_text(self) -> str:
        """The logical lines unbroken, one a line (for finding the names a program uses)."""
        return "\n".join(text for _, text in self.entries)


def wrap(line: str, width: int = WIDTH) -> list[str]:
    """`line` as lines of at most `width` characters where it can be broken (see the module
    docstring); a line with nothing to break at is returned as it is."""
    if len(line) <= width:
        return [line]
    lead = line[: len(line) - len(line.lstrip())]
    body = line.strip()
    if body.startswith("#"):
        return _wrap_comment(lead, body, width)
    tokens = _tokens(body)
    if tokens is None:
        return [line]
    if body.startswith("with ") and body.endswith(":") and not body.startswith("with ("):
        items = _split(body, tokens, 5, len(body) - 1, 0, (",",))
        if len(items) > 1:
            inner = [piece for item in items for piece in wrap(f"{lead}{INDENT}{item},", width)]
            return [f"{lead}with (", *inner, f"{lead}):"]
    target, _, value = body.partition(" = ")
    if value and _top_level_operator(tokens, len(target) + 3):
        # an assignment of a sum or product: its value in parentheses, broken inside them
        return wrap(f"{lead}{target} = ({value})", width)
    group = _outermost_group(tokens)
    if group is None:
        return [line]
    start, end = group
    head, tail = f"{lead}{body[: start + 1]}", f"{lead}{body[end:]}"
    content = body[start + 1 : end].strip()
    if len(lead) + len(INDENT) + len(content) <= width:  # the bracket's content on one line
        return [head, f"{lead}{INDENT}{content}", tail]
    pieces = _split(body, tokens, start + 1, end, 1, (",",))
    trailing = ","
    if len(pieces) == 1:
        trailing = ""
        for operators in _BREAK_OPERATORS:
            pieces = _split(body, tokens, start + 1, end, 1, operators, keep=True)
            if len(pieces) > 1:
                break
        # else: one call or atom: it goes on a line of its own, broken there in turn
    inner = [
        piece
        for i, item in enumerate(pieces)
        for piece in wrap(f"{lead}{INDENT}{item}{trailing}", width)
    ]
    return [head, *inner, tail]


def _top_level_operator(tokens: list[tuple[str, int, int]], start: int) -> bool:
    ops = {op for group in _BREAK_OPERATORS for op in group}
    return any(depth == 0 and col >= start and text in ops for text, col, depth in tokens)


def _wrap_comment(lead: str, body: str, width: int) -> list[str]:
    text = body.lstrip("#")
    marker = body[: len(body) - len(text)]
    hang = " " * (len(text) - len(text.lstrip()))
    return textwrap.wrap(
        text.strip(),
        width=width,
        initial_indent=f"{lead}{marker}{hang}",
        subsequent_indent=f"{lead}{marker}{hang}  ",
        break_long_words=False,
        break_on_hyphens=False,
    )


def _tokens(body: str) -> list[tuple[str, int, int]] | None:
    """The operator tokens of one logical line: (text, start column, bracket depth before it);
    None where the line does not tokenize (then it is left as it is)."""
    out: list[tuple[str, int, int]] = []
    depth = 0
    try:
        for tok in tokenize.generate_tokens(io.StringIO(body).readline):
            if tok.type != tokenize.OP:
                continue
            if tok.string in _CLOSE:
                depth -= 1
            out.append((tok.string, tok.start[1], depth))
            if tok.string in _OPEN:
                depth += 1
    except (tokenize.TokenError, IndentationError):
        return None
    return out


def _outermost_group(tokens: list[tuple[str, int, int]]) -> tuple[int, int] | None:
    """(column of the open bracket, column of its close) of the depth-0 bracket pair that
    encloses the most text: breaking it shortens the line most."""
    best: tuple[int, int] | None = None
    opened: int | None = None
    for text, col, depth in tokens:
        if depth == 0 and text in _OPEN:
            opened = col
        elif depth == 0 and text in _CLOSE and opened is not None:
            if best is None or col - opened > best[1] - best[0]:
                best = (opened, col)
            opened = None
    return best


def _split(
    body: str,
    tokens: list[tuple[str, int, int]],
    start: int,
    end: int,
    level: int,
    separators: tuple[str, ...],
    keep: bool = False,
) -> list[str]:
    """body[start:end] cut at the separators at bracket depth `level` (commas, or with `keep`
    the binary operators, which then lead the piece after them)."""
    cuts = [
        col
        for text, col, depth in tokens
        if start <= col < end and depth == level and text in separators
    ]
    if keep:  # a unary minus (after an operator, a comma or a bracket) is no place to break
        cuts = [c for c in cuts if not _after_operator(body[start:c])]
    pieces, at = [], start
    for cut in cuts:
        pieces.append(body[at:cut].strip())
        at = cut if keep else cut + 1
    pieces.append(body[at:end].strip().rstrip(","))
    return [p for p in pieces if p]


def _after_operator(before: str) -> bool:
    before = before.rstrip()
    return not before or before[-1] in "+-*/@%,([{=<>"


def plan_lines(plan: sp.PlanOp) -> Iterator[str]:
    """A section's plan as comment lines: the op's text without its attributes, then its why."""
    text = str(plan)
    head = text.split(" attributes ")[0].strip()
    yield head
    why = plan.attributes.get("why")
    if why is not None:
        yield f"why: {why.data}"  # type: ignore[attr-defined]
