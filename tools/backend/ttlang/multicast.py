"""A GEMM operand's multicast load (`sp.load ... multicast @group`) in its movement kernel:
the group's sender reads DRAM and sends into the family's PipeNet, the members receive; a site
of the range outside the group reads its own block. And what the kernels share for it: the
pipe kinds, the if / elif chain, `guarded_by`, and `copies` (several copies issued, then waited: a
GEMM operand's sub-block parts, matmul.py). A mixin of OperationWriter (section.py)."""

from __future__ import annotations

from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.index import FALSE, TRUE, Cond, all_of, between, eq, ix, lt
from spatial_dialect.tools.backend.names import ident
from spatial_dialect.tools.backend.ttlang.text import Lines

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


class PipeKind(Enum):
    """How a group family's blocks travel (emit_pipes): one rectangle multicast per group, one
    unicast pipe per member, or no pipe (every group is its sender alone)."""

    MULTICAST = "multicast"
    UNICAST = "unicast"
    NONE = "none"


def _chain(
    out: Lines, branches: list[tuple[Cond, Callable[[], None]]], rest: Callable[[], None]
) -> None:
    """if / elif / else over `branches` (then `rest`), as a person writes it: a branch whose
    condition is False is left out, one that is True ends the chain as its `else`, and a chain
    of one branch is its lines alone."""
    live: list[tuple[Cond, Callable[[], None]]] = []
    for cond, emit in [*branches, (TRUE, rest)]:
        if cond == FALSE:
            continue
        live.append((cond, emit))
        if cond == TRUE:
            break
    if len(live) == 1:
        live[0][1]()
        return
    for i, (cond, emit) in enumerate(live):
        head = "if" if i == 0 else "elif"
        out(f"{head} {cond}:" if cond != TRUE else "else:")
        with out.indent():
            emit()


def in_rect(rect: tuple[int, int, int, int]) -> Cond:
    """(x, y) in the rectangle x0..x1, y0..y1 of sites, folded where a bound pins it."""
    x0, x1, y0, y1 = rect
    return all_of(between(x0, "x", x1), between(y0, "y", y1))


class MulticastLoads:
    """`emit_multicast`: a load through its group's pipes."""

    def emit_multicast(
        self: OperationWriter,
        out: Lines,
        s: sp.LoadOp,
        views: list[str],
        blks: list[str],
        r: sp.SitesOp,
    ) -> None:
        gname = s.group.root_reference.data  # type: ignore[union-attr]
        g = self.groups[gname]
        net = f"{ident(gname)}_net"
        x0, x1, y0, y1 = g.rect.bounds
        # the kernel already runs only on the range's sites: inside a group that covers the
        # range, no test of the group's rectangle is printed
        rx0, rx1, ry0, ry1 = r.rect.bounds
        covers = x0 <= rx0 and rx1 <= x1 and y0 <= ry0 and ry1 <= y1
        inside = TRUE if covers else in_rect(g.rect.bounds)
        axis = g.axis.data
        if axis in (sp.GroupAxis.ROWS, sp.GroupAxis.COLUMNS):
            is_sender, is_member = run_sender(g, r), TRUE
        else:
            pos = (ix("y") - y0) * (x1 - x0 + 1) + ix("x") - x0
            is_sender, is_member = eq(pos, g.sender), lt(pos, g.line_sites)
        kind = self.pipe_kind[gname]

        def send() -> None:
            copies(out, "tx", list(zip(views, blks, strict=True)))
            if kind is not PipeKind.NONE:
                out("def send(pipe):")
                with (
                    out.indent(),
                    guarded_by(out, "_count(pipe.dst[0], pipe.dst[1]) > t", kind is PipeKind.UNICAST),
                ):
                    copies(out, "txp", [(k, "pipe") for k in blks])
                out(f"{net}.if_src(send)")

        def receive() -> None:
            out("def recv(pipe):")
            with out.indent():
                copies(out, "txr", [("pipe", k) for k in blks])
            out(f"{net}.if_dst(recv)")

        def load_alone() -> None:  # a site of the range outside the group reads its own block
            copies(out, "tx", list(zip(views, blks, strict=True)))

        _chain(
            out,
            [(all_of(inside, is_sender), send), (all_of(inside, is_member), receive)],
            load_alone,
        )


class guarded_by:  # noqa: N801  (a context manager read as a clause: `with guarded_by(out, cond):`)
    """`if cond:` and one level deeper for the body; nothing where the condition always holds
    (a range that covers the whole grid, a multicast without a count to test)."""

    def __init__(self, out: Lines, cond: Cond | str, needed: bool = True):
        self.out = out
        self.opens = needed and cond != TRUE and str(cond) != "True"
        if self.opens:
            out(f"if {cond}:")

    def __enter__(self) -> None:
        self.out.depth += self.opens

    def __exit__(self, *exc: object) -> None:
        self.out.depth -= self.opens


def run_sender(g: sp.GroupOp, r: sp.SitesOp) -> Cond:
    """Whether a site of range `r` sends its row (column) group's blocks: the site `sender` of
    the row (column) or, with `every N` (split-K's slices), the site as far into its run of N
    sites as `sender` into the first; folded to one coordinate where the range lies in one run."""
    gx0, _, gy0, _ = g.rect.bounds
    rx0, rx1, ry0, ry1 = r.rect.bounds
    v, lo, a, b = ("x", gx0, rx0, rx1) if g.axis.data == sp.GroupAxis.ROWS else ("y", gy0, ry0, ry1)
    n = g.every
    if n is None:  # one run: the whole row (column)
        return eq(v, g.sender)
    if (a - lo) // n == (b - lo) // n:
        return eq(v, lo + (a - lo) // n * n + g.sender - lo)
    return eq((ix(v) - lo) % n, g.sender - lo)


def copies(out: Lines, tx: str, pairs: list[tuple[str, str]]) -> None:
    """`tx = ttl.copy(src, dst)` and its wait; several copies all issued, then all waited (one
    round trip for all: a GEMM operand's sub-block parts, matmul.py)."""
    names = [tx] if len(pairs) == 1 else [f"{tx}{i}" for i in range(len(pairs))]
    for name, (src, dst) in zip(names, pairs, strict=True):
        out(f"{name} = ttl.copy({src}, {dst})")
    for name in names:
        out(f"{name}.wait()")
