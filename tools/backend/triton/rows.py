"""Row reductions (`sp.row_reduce`) as Triton kernel bodies: one printer per reduction kind,
registered by its `RowKindName`, and the three forms that share them.

Every kind reduces each row to two statistics, and every form is the same loop around them:
`whole` reads the row and applies the reduction; `partial` reads a block of columns and writes its
two statistics into columns 0 and 1 of a tile; `combine` folds the partials of a row, in column
order, into the statistics the apply map reads. So a kind is its four pieces of arithmetic
(`RowPrinter`), and the forms are written once below. A kind is printed or refused here by name:
`ROW_PRINTERS` and `REFUSED_ROW_KINDS` together hold every `RowKindName`
(test/backend/triton/test_triton_coverage.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from spatial_dialect import sp
from spatial_dialect.sp.enums import SectionKind
from spatial_dialect.sp.kinds import RowForm, RowKindName
from spatial_dialect.tools.backend.triton.kernel import (
    Kernel,
    access,
    is_origin,
    pow2,
    section_printer,
)
from spatial_dialect.tools.backend.triton.text import offset


class RowPrinter:
    """The arithmetic of one row reduction, as Triton text over the names the forms bind: `x`
    (the row block, 0 outside `live`), `n` (its real columns), `g0`, `g1` (row operands, the
    weight and bias); in `combine`, `pa`, `ps`, `cnt` (one partial) folded into `s1`, `s2`, `n`."""

    start = "0.0"
    """The running first statistic's value before any partial (combine)."""
    pairs = True
    """Whether the second statistic carries anything (an rms sum has none: it is written 0)."""
    residual = False
    """Whether the whole form with three inputs adds the second to the first (x + residual)."""

    def partial(self) -> str:
        """`a`, `b`: the block's two statistics per row."""
        raise NotImplementedError

    def merge(self) -> str:
        """Folds one partial into the running `s1` (and `s2`), before `n += cnt`."""
        raise NotImplementedError

    def finish(self, eps: str) -> str:
        """`a0`, `a1`: what the apply map reads, from the running sums."""
        raise NotImplementedError

    def whole(self, eps: str) -> str:
        """`y`: the reduced row."""
        raise NotImplementedError


ROW_PRINTERS: dict[RowKindName, RowPrinter] = {}
"""Every row reduction Triton prints, by kind."""

REFUSED_ROW_KINDS: dict[RowKindName, str] = {}
"""Row reductions with no Triton form, and why (none today)."""


def row_printer(kind: RowKindName) -> Callable[[type[RowPrinter]], type[RowPrinter]]:
    def register(cls: type[RowPrinter]) -> type[RowPrinter]:
        assert kind not in ROW_PRINTERS and kind not in REFUSED_ROW_KINDS, kind
        ROW_PRINTERS[kind] = cls()
        return cls

    return register


class _Squares(RowPrinter):
    """The statistic of rms_norm, l2_norm and sum_squares: each row's sum of squares."""

    pairs = False

    def partial(self) -> str:
        return "a = tl.sum(x * x, axis=1)\nb = tl.zeros_like(a)"

    def merge(self) -> str:
        return "s1 += pa"


@row_printer(RowKindName.RMS_NORM)
class _RmsNorm(_Squares):
    residual = True

    def finish(self, eps: str) -> str:
        return f"a0 = 1.0 / tl.sqrt(s1 / n + {eps})\na1 = tl.zeros_like(a0)"

    def whole(self, eps: str) -> str:
        return f"y = x / tl.sqrt(tl.sum(x * x, axis=1) / n + {eps})[:, None] * g0"


@row_printer(RowKindName.L2_NORM)
class _L2Norm(_Squares):
    def finish(self, eps: str) -> str:
        return f"a0 = 1.0 / tl.sqrt(s1 + {eps})\na1 = tl.zeros_like(a0)"

    def whole(self, eps: str) -> str:
        return f"y = x / tl.sqrt(tl.sum(x * x, axis=1) + {eps})[:, None]"


@row_printer(RowKindName.SUM_SQUARES)
class _SumSquares(_Squares):
    """tg.rms_stats' share of a row's sum of squares: blocked forms only (the dialect has no
    whole sum_squares), the combine's finish the partials' sum."""

    def finish(self, eps: str) -> str:
        return "a0 = s1\na1 = tl.zeros_like(a0)"


@row_printer(RowKindName.LAYER_NORM)
class _LayerNorm(RowPrinter):
    """Means and squared deviations, merged by Chan et al.'s update."""

    def partial(self) -> str:
        return (
            "a = tl.sum(x, axis=1)\n"
            "d = tl.where(live, x - (a / n)[:, None], 0.0)\n"
            "b = tl.sum(d * d, axis=1)"
        )

    def merge(self) -> str:
        return (
            "tot = n + cnt\n"
            "dl = pa / cnt - tl.where(n > 0, s1 / tl.maximum(n, 1.0), 0.0)\n"
            "s2 += ps + dl * dl * n * cnt / tot\n"
            "s1 += pa"
        )

    def finish(self, eps: str) -> str:
        return f"a0 = 1.0 / tl.sqrt(s2 / n + {eps})\na1 = s1 / n"

    def whole(self, eps: str) -> str:
        return (
            "d = tl.where(live, x - (tl.sum(x, axis=1) / n)[:, None], 0.0)\n"
            f"y = d / tl.sqrt(tl.sum(d * d, axis=1) / n + {eps})[:, None] * g0 + g1"
        )


@row_printer(RowKindName.SOFTMAX)
class _Softmax(RowPrinter):
    """The row's maximum and the sum of exp(x - maximum), rescaled as maxima merge."""

    start = "float('-inf')"

    def partial(self) -> str:
        return (
            "xm = tl.where(live, x, float('-inf'))\n"
            "a = tl.max(xm, axis=1)\n"
            "b = tl.sum(tl.where(live, tl.exp(xm - a[:, None]), 0.0), axis=1)"
        )

    def merge(self) -> str:
        return "pk = tl.maximum(s1, pa)\ns2 = s2 * tl.exp(s1 - pk) + ps * tl.exp(pa - pk)\ns1 = pk"

    def finish(self, eps: str) -> str:
        return "a0 = s1\na1 = 1.0 / s2"

    def whole(self, eps: str) -> str:
        return (
            "xm = tl.where(live, x, float('-inf'))\n"
            "e = tl.where(live, tl.exp(xm - tl.max(xm, axis=1)[:, None]), 0.0)\n"
            "y = e / tl.sum(e, axis=1)[:, None]"
        )


def _uses(text: str, name: str) -> bool:
    return re.search(rf"\b{name}\b", text) is not None


@section_printer(SectionKind.ROW_REDUCE)
def row_reduce(s: Kernel) -> None:
    op = s.program.ops_of(sp.RowReduceOp)[0]
    kind, form = op.kind.data, op.form.data
    printer = ROW_PRINTERS.get(kind)
    if printer is None:
        raise s.refuse(f"sp.row_reduce {kind}: {REFUSED_ROW_KINDS[kind]}")
    eps = repr(float(op.eps.value.data) if op.eps is not None else 0.0)
    if form == RowForm.COMBINE:
        _combine(s, op, printer, eps)
        return
    tw = s.tile[1]
    width, cols = op.width, op.cols
    ins = list(op.ins)
    residual = printer.residual and len(ins) == 3
    streamed = len(ins) if form == RowForm.PARTIAL else (2 if residual else 1)
    pn = pow2(max(b["w"] for b in s.ranges) * tw)
    s.emit(f"real = tl.minimum(tl.minimum(w * {tw}, {cols} - c0 * {tw}), {width})")
    s.emit(f"live = (tl.arange(0, {pn}) < real)[None, :]")
    terms = []
    for i, v in enumerate(ins[:streamed]):
        load = s.load_of(sp.buffer_of(v))
        s.block_load(f"x{i}", load.tensor.root_reference.data, access(load.access, s.ranges))
        terms.append(f"x{i}")
    s.emit(f"x = tl.where(live, {' + '.join(terms)}, 0.0)")
    if form == RowForm.PARTIAL:
        body = printer.partial()
        result = "y = tl.where(cc == 0, a[:, None], tl.where(cc == 1, b[:, None], 0.0))"
        stored = "y"
        body += f"\ncc = tl.arange(0, {pow2(tw)})[None, :]\n{result}"
    else:
        for i, v in enumerate(ins[streamed:]):
            load = s.load_of(sp.buffer_of(v))
            s.block_load(f"g{i}", load.tensor.root_reference.data, access(load.access, s.ranges))
            s.emit(
                f"g{i} = tl.sum(tl.where(tl.arange(0, g{i}.shape[0])[:, None] == 0, g{i}, 0.0), axis=0)[None, :]"
            )
        body = printer.whole(eps)
        stored = "tl.where(live, y, 0.0)"
    if _uses(body, "n"):
        s.emit("n = real.to(tl.float32)")
    s.emit(body)
    s.block_store(stored, s.store_of(sp.buffer_of(op.out)))


def _combine(s: Kernel, op: sp.RowReduceOp, printer: RowPrinter, eps: str) -> None:
    width, cols, block = op.width, op.cols, op.block
    th, tw = s.tile
    load = s.load_of(sp.buffer_of(op.ins[0]))
    t = load.tensor.root_reference.data
    R, C = s.shape(t)
    a = access(load.access, s.ranges)
    if not is_origin(a, a.row, "k0"):
        raise s.refuse(
            f"row_reduce combine reading {load.access.text()}: expected a K loop over columns"
        )
    pr = pow2(a.max_rows * th)
    # a row of groups of `width` columns: item column c0 is group c0; one group: the whole row
    first = f"c0 * {width}" if width != cols else "0"
    span = width if width != cols else cols
    init = "" if printer.start == "0.0" else f" + {printer.start}"
    # the running count only where the kind's arithmetic reads it (a mean, Chan's update)
    counted = _uses(printer.merge(), "n") or _uses(printer.finish(eps), "n")
    s.emit(f"""
rr = {offset(a.row * th, f"tl.arange(0, {pr})")}
rmask = (tl.arange(0, {pr}) < h * {th}) & (rr < {R})
gs = {first}
ge = tl.minimum({cols}, gs + {span})
""")
    if counted:
        s.emit(f"n = tl.zeros(({pr},), dtype=tl.float32)")
    s.emit(f"s1 = tl.zeros(({pr},), dtype=tl.float32){init}")
    if printer.pairs:
        s.emit(f"s2 = tl.zeros(({pr},), dtype=tl.float32)")
    s.emit(f"""
for j in range(0, {s.k_tiles}):
    lo = gs + j * {block}
    cnt = tl.maximum(0, tl.minimum(lo + {block}, ge) - lo).to(tl.float32)
    pa = tl.load({s.arg(t)} + rr * {C} + j * {tw}, mask=rmask, other=0).to(tl.float32)
""")
    if printer.pairs:
        s.emit(
            f"ps = tl.load({s.arg(t)} + rr * {C} + j * {tw} + 1, mask=rmask, other=0).to(tl.float32)",
            3,
        )
    s.emit("if cnt > 0:", 3)
    s.emit(printer.merge(), 4)
    if counted:
        s.emit("n += cnt", 4)
    s.emit(printer.finish(eps))
    s.emit(
        f"cc = tl.arange(0, {pow2(tw)})[None, :]\n"
        "y = tl.where(cc == 0, a0[:, None], tl.where(cc == 1, a1[:, None], 0.0))"
    )
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))
