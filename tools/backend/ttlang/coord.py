"""An item's block origin (r0, c0) as integer statements inside a datamovement kernel.

The TT-Lang compiler translates a kernel's syntax: a call of a Python function (a host helper
such as the `_coord` the programs once printed) has no form on a chip, while integer arithmetic,
`if` and comparisons do (api_check.py). So the item space's numbering (sp/item_space.py,
`ItemSpace.coord`, its one definition) is printed in place, specialised to the section's
constants: row-major items are `item // items_n`, `item % items_n`; items dealt over a GX x GY
grid of sites find their grid site once per range (`site_lines`, before the item loop: every
item of a range's site is on that site) and their rounds per item (`item_lines`). Branches the
constants decide (no long rows, no long columns) are left out. test_coord.py runs the printed
statements against `ItemSpace.coord` for every item of many spaces.
"""

from __future__ import annotations

import ast

from spatial_dialect.sp.item_space import ItemSpace
from spatial_dialect.tools.backend.index import Ix, ix


def _dealt(space: ItemSpace) -> tuple[int, int, int, int, int, int]:
    """(GX, GY, rm, em, rn, en) as ItemSpace._even: every site runs rm >= 1 block rows and
    rn >= 1 block columns (an item space leaves no site without work), em rows and en columns
    of sites one more."""
    gx, gy = space.over  # type: ignore[misc]
    m, n = space.items_m, space.items_n
    return gx, gy, m // gy, m % gy, n // gx, n % gx


def site_lines(space: ItemSpace, first: Ix) -> list[str]:
    """The statements, before a range's item loop, that find its site: `sy`, `sx` (its grid
    site), `rmy`, `rnx` (the block rows and columns it runs, where they vary and are read) and
    `t0` (the rank of the range's first item among the site's). Empty for row-major items."""
    if space.over is None:
        return []
    gx, gy, rm, em, rn, en = _dealt(space)
    n = space.items_n
    it, rest, sy, sx = ix("it"), ix("rest"), ix("sy"), ix("sx")
    out = [f"it = {first}"]
    # the grid row: the em long rows (rm + 1 block rows each) first
    if em == 0:
        out += [f"sy = {it // (rm * n)}", f"rest = {it - sy * (rm * n)}"]
        rmy: Ix = ix(rm)
    else:
        long_rows = em * (rm + 1) * n
        out += [
            f"if it < {long_rows}:",
            f"    sy = {it // ((rm + 1) * n)}",
            f"    rest = {it - sy * ((rm + 1) * n)}",
            f"    rmy = {rm + 1}",
            "else:",
            f"    sy = {(it - long_rows) // (rm * n) + em}",
            f"    rest = {it - (sy * rm + em) * n}",
            f"    rmy = {rm}",
        ]
        rmy = ix("rmy")
    # the grid column within the row: the en long columns (rn + 1 block columns) first
    if en == 0:
        out += [f"sx = {rest // (rmy * rn)}", f"t0 = {rest - sx * (rmy * rn)}"]
    else:
        long_cols = rmy * (en * (rn + 1))
        rnx = em > 0  # read by item_lines only where a row of sites runs an extra row round
        out += [
            f"if rest < {long_cols}:",
            f"    sx = {rest // (rmy * (rn + 1))}",
            f"    t0 = {rest - sx * (rmy * (rn + 1))}",
            *([f"    rnx = {rn + 1}"] if rnx else []),
            "else:",
            f"    sx = {(rest - long_cols) // (rmy * rn) + en}",
            f"    t0 = {rest - (sx * rn + en) * rmy}",
            *([f"    rnx = {rn}"] if rnx else []),
        ]
    return out


def item_lines(space: ItemSpace, first: Ix, need: set[str]) -> list[str]:
    """The statements, inside the item loop (`t`), that set the names of `need` ("r0", "c0"):
    the item's block origin in tiles."""
    bm, bn = space.block_m, space.block_n
    if space.over is None:
        item = first + ix("t")
        at = {"r0": item // space.items_n * bm, "c0": item % space.items_n * bn}
        return [f"{v} = {at[v]}" for v in ("r0", "c0") if v in need]
    gx, gy, rm, em, rn, en = _dealt(space)
    tt = ix("tt")
    out = ["tt = t0 + t"]
    want_i, want_j = "r0" in need, "c0" in need

    def rounds(i: Ix, j: Ix) -> list[str]:
        return ([f"ri = {i}"] if want_i else []) + ([f"rj = {j}"] if want_j else [])

    # (condition, body) per case of ItemSpace._round, the impossible ones left out; the last
    # case is what is left when the others fail, so it is the `else`
    cases: list[tuple[str, list[str]]] = [(f"tt < {rm * rn}", rounds(tt // rn, tt % rn))]
    rest = tt - rm * rn
    if en:  # the long columns' extra column round, by i
        cases.append((f"rnx > {rn} and {rest} < {rm}", rounds(rest, ix(rn))))
        rest = rest - (ix("rnx") - rn) * rm
    if em:  # the long rows' extra row round, by j
        cases.append((f"rmy > {rm} and {rest} < {rn}", rounds(ix(rm), rest)))
    if em and en:  # the corner
        cases.append(("", rounds(ix(rm), ix(rn))))
    if len(cases) == 1:
        out += cases[0][1]
    else:
        for k, (cond, body) in enumerate(cases):
            head = "else:" if k == len(cases) - 1 else f"{'if' if k == 0 else 'elif'} {cond}:"
            out += [head, *(f"    {line}" for line in body)]
    if want_i:
        out.append(f"r0 = {(ix('sy') + ix('ri') * gy) * bm}")
    if want_j:
        out.append(f"c0 = {(ix('sx') + ix('rj') * gx) * bn}")
    return out


def origin_lines(space: ItemSpace, first: Ix, need: set[str]) -> tuple[list[str], list[str]]:
    """(site_lines, item_lines) without an assignment nothing reads: where the constants fold a
    round to 0 or a site to the item (a 1 x 1 grid, a site with one block), the names that fed
    it go too, and a branch left without a statement goes with them."""
    site, item = site_lines(space, first), item_lines(space, first, need)
    tree = ast.parse("\n".join([*site, "for t in range(1):", *(f"    {s}" for s in item)]))
    while _drop_unread(tree.body, need, tree):
        pass
    *site_stmts, loop = tree.body
    assert isinstance(loop, ast.For)
    return (
        [line for s in site_stmts for line in ast.unparse(s).splitlines()],
        [line for s in loop.body for line in ast.unparse(s).splitlines()],
    )


def _drop_unread(body: list[ast.stmt], need: set[str], tree: ast.AST) -> bool:
    read = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    for k, s in enumerate(body):
        if isinstance(s, ast.Assign) and all(
            isinstance(t, ast.Name) and t.id not in read and t.id not in need for t in s.targets
        ):
            del body[k]
            return True
        if isinstance(s, ast.If | ast.For):
            if _drop_unread(s.body, need, tree) or _drop_unread(s.orelse, need, tree):
                if isinstance(s, ast.If) and not s.body and not s.orelse:
                    del body[k]
                elif isinstance(s, ast.If) and not s.body:
                    s.body = [ast.Pass()]
                return True
    return False
