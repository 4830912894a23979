"""The block origin a datamovement kernel computes in place (tools/backend/ttlang/coord.py) is
the item space's (`ItemSpace.coord`, the one definition) for every item of many item spaces:
row-major and dealt, even and uneven, one block row or column, more sites than blocks. The
printed statements run as Python here, and pyflakes finds no unused name in them."""

from __future__ import annotations

import io
import itertools

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter

from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.ttlang.api_check import kernel_violations
from spatial_dialect.tools.backend.ttlang.coord import origin_lines


def _kernel(space: ItemSpace, need: set[str]) -> str:
    """A kernel-shaped function of the site's first item that returns the origins it reads."""
    site, item = origin_lines(space, ix("first"), need)
    body = ["def dm(first, count):", "    out = []"]
    body += [f"    {line}" for line in site]
    body += ["    for t in range(count):"]
    body += [f"        {line}" for line in item]
    body += [f"        out.append(({'r0' if 'r0' in need else 0}, {'c0' if 'c0' in need else 0}))"]
    body += ["    return out"]
    return "\n".join(body) + "\n"


SPACES = [
    (m, n, over, bm, bn)
    for m, n in ((1, 1), (3, 5), (7, 4), (4, 7), (9, 9), (2, 13), (13, 2))
    for over in (None, (1, 1), (2, 2), (3, 2), (2, 3), (4, 4), (5, 1), (1, 5), (9, 9))
    for bm, bn in ((1, 1), (2, 3))
    if over is None or (over[0] <= n and over[1] <= m)
]


@pytest.mark.parametrize("m, n, over, bm, bn", SPACES)
def test_the_printed_origin_is_the_item_spaces(m, n, over, bm, bn):
    space = ItemSpace(tiles_m=m * bm, tiles_n=n * bn, block_m=bm, block_n=bn, over=over)
    for need in ({"r0", "c0"}, {"r0"}, {"c0"}):
        text = _kernel(space, need)
        warnings = io.StringIO()
        check(text, "coord.py", Reporter(warnings, io.StringIO()))
        assert not warnings.getvalue(), text + warnings.getvalue()
        scope: dict = {}
        exec(text, scope)  # noqa: S102 - the statements under test
        gx, gy = over or (1, 1)
        sites = [(x, y) for y in range(gy) for x in range(gx)] if over else [(0, 0)]
        for x, y in sites:
            first = space.site_first(x, y) if over else 0
            count = (lambda r: r[0] * r[1])(space.site_rounds(x, y)) if over else space.blocks
            got = scope["dm"](first, count)
            for t, (r0, c0) in enumerate(got):
                r, c = space.coord(first + t)
                assert ("r0" not in need or r0 == r * bm) and ("c0" not in need or c0 == c * bn), (
                    text,
                    x,
                    y,
                    t,
                )


def test_the_printed_origin_is_ttlang_in_a_kernel():
    space = ItemSpace(tiles_m=7, tiles_n=5, block_m=1, block_n=1, over=(2, 3))
    site, item = origin_lines(space, ix("x") + ix("y"), {"r0", "c0"})
    lines = [*site, "for t in range(3):", *(f"    {line}" for line in item)]
    lines += ["    print(r0, c0)"]
    program = "import ttl\n\n\ndef op():\n    @ttl.datamovement()\n    def dm0():\n"
    program += "".join(f"        {line}\n" for line in lines)
    assert kernel_violations(program) == []
    assert list(itertools.islice(lines, 1))  # the dealt space prints its site's lines
