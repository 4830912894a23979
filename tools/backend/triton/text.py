"""The Triton printer's text builder: lines kept within 100 characters, masks and offsets written
as a person writes them.

A kernel line is built from the IR's numbers, so its length is not known until it is printed: a
masked `tl.load` of a long tensor name runs past any fixed width. Rather than hand-wrap every
template, `wrap` breaks a long line the way a formatter does: inside the bracket pair holding
the most text, one argument per line (a trailing comma after each), or, with no commas there, one
operand of its `&` / `|` / `+` chain per line. Brackets inside string literals do not count.
Comments are re-flowed as text. A line that cannot be broken is left as it is; the emitted
programs' test (test/backend/triton/test_triton_emitted.py) fails on it.

`conj` and `offset` keep the masks and offsets free of terms that say nothing: a mask term that
always holds is dropped, and a zero origin is not added.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from spatial_dialect.tools.backend.index import Ix

WIDTH = 100
INDENT = "    "

_OPEN, _CLOSE = "([{", ")]}"
# Python's binary operators a chain of which may be broken before each (the ones printed here)
_CHAIN = (" & ", " | ", " + ", " - ")


def _scan(text: str):
    """(position, character, depth before it) of every bracket and comma outside strings."""
    depth, quote, i = 0, "", 0
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "'\"":
            quote = c
        elif c in _OPEN:
            yield i, c, depth
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            yield i, c, depth
        elif c == ",":
            yield i, c, depth
        i += 1


def _top_level_split(body: str, separators: Sequence[str]) -> list[str]:
    """`body` cut at each separator that stands outside brackets and strings (kept on the right
    piece for an operator, dropped for a comma)."""
    depth_at = [0] * (len(body) + 1)
    inside = [False] * len(body)
    depth, quote = 0, ""
    for i, c in enumerate(body):
        if quote:
            inside[i] = True
            if c == quote and body[i - 1] != "\\":
                quote = ""
        elif c in "'\"":
            quote, inside[i] = c, True
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
        depth_at[i + 1] = depth
    pieces, start, i = [], 0, 0
    while i < len(body):
        for sep in separators:
            if (
                body.startswith(sep, i)
                and depth_at[i] == 0
                and not inside[i]
                and (sep != " - " or i > 0)
            ):
                cut = i + 1 if sep == ", " else i
                pieces.append(body[start:cut].rstrip(",").strip())
                start = i + len(sep) if sep == ", " else i + 1
                i += len(sep)
                break
        else:
            i += 1
    pieces.append(body[start:].strip())
    return [p for p in pieces if p]


def wrap(line: str, width: int = WIDTH) -> list[str]:
    """`line` as lines of at most `width` characters where it can be broken."""
    if len(line) <= width:
        return [line]
    indent = line[: len(line) - len(line.lstrip())]
    stripped = line.strip()
    if stripped.startswith("#"):
        return textwrap.wrap(
            stripped[1:].strip(),
            width,
            initial_indent=f"{indent}# ",
            subsequent_indent=f"{indent}#   ",
            break_on_hyphens=False,
        )
    pairs, stack = [], []
    for i, c, depth in _scan(line):
        if c in _OPEN:
            stack.append((i, depth))
        elif c in _CLOSE and stack:
            pairs.append((stack.pop()[0], i))
    if not pairs:
        return [line]
    # the pair holding the most text that can be broken: by its commas, else by its operators
    for start, end in sorted(pairs, key=lambda p: p[0] - p[1]):
        head, body, tail = line[: start + 1], line[start + 1 : end], line[end:]
        inner = indent + INDENT
        pieces = _top_level_split(body, (", ",))
        if len(pieces) > 1:
            lines = [inner + a + "," for a in pieces]
        else:
            pieces = _top_level_split(body, _CHAIN)
            if len(pieces) < 2:
                continue
            lines = [inner + t for t in pieces]
        out = [head]
        for piece in lines:
            out.extend(wrap(piece, width))
        out.append(indent + tail.lstrip())
        return out
    return [line]


def wrap_table(name: str, rows: Sequence[tuple[int, ...]], width: int = WIDTH) -> list[str]:
    """`name = [rows]` with as many rows on a line as fit."""
    one = f"{name} = {list(rows)!r}"
    if len(one) <= width:
        return [one]
    out, line = [f"{name} = ["], INDENT
    for row in rows:
        item = f"{row!r}, "
        if len(line) + len(item.rstrip()) > width:
            out.append(line.rstrip())
            line = INDENT
        line += item
    out.append(line.rstrip())
    out.append("]")
    return out


# ── Masks and offsets ─────────────────────────────────────────────────────────────────────────


def conj(*terms: str | None) -> str:
    """The `&` of tensor mask terms; None terms (conditions that always hold) are left out. A
    comparison binds looser than `&` in Python, so each one is parenthesized."""
    kept = [t for t in terms if t]
    assert kept, "a mask with no terms"
    if len(kept) == 1:
        return kept[0]
    return " & ".join(f"({t})" if _is_comparison(t) else t for t in kept)


def _is_comparison(term: str) -> bool:
    """Whether `term` is a comparison or an `&` / `|` chain outside brackets."""
    ops = (" < ", " <= ", " > ", " >= ", " == ", " != ", " & ", " | ")
    return len(_top_level_split(term, ops)) > 1


def par(expr: str) -> str:
    """`expr` parenthesized where an operand of `*`, `//` or an index would split it: a sum, a
    comparison or an `&` / `|` chain outside brackets."""
    return f"({expr})" if _is_comparison(expr) or len(_top_level_split(expr, _CHAIN)) > 1 else expr


def below(values: str, extent: Ix | int, block: int) -> str | None:
    """`values < extent`, or None where `extent` is a constant at least `block` (the length of
    `values`, an `tl.arange(0, block)`): then every value is below it."""
    bound = extent if isinstance(extent, Ix) else None
    if bound is None:
        return None if extent >= block else f"{values} < {extent}"
    if bound.constant is not None and bound.constant >= block:
        return None
    return f"{values} < {bound}"


def offset(origin: Ix, rest: str) -> str:
    """`origin + rest`, or `rest` alone at a zero origin."""
    return rest if origin.constant == 0 else f"{origin} + {rest}"
