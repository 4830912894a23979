"""The simulator's `sp.row_reduce`: one runner for the stage's three forms and one RowKind class
per kind (rms_norm, layer_norm, softmax, l2_norm, sum_squares) with its math, registered by its
`RowKindName` (registry.ROW_KINDS).

The forms are the dialect's (sp.RowReduceOp): `whole` normalizes blocks of whole groups;
`partial` pushes two statistics per row of a block too wide for one site; `combine` merges a
group's partials block by block and pushes what the kind's apply map (maps.py) reads. The runner
does what every kind shares (the pages it pops and pushes, the real columns, zeroing padding);
the kind says only the math. Statistics are f32.

Adding a row reduction to the simulator is one RowKind subclass here under
`@row_kind(RowKindName.X)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp import RowReduceOp
from spatial_dialect.sp.kinds import RowForm, RowKindName
from spatial_dialect.tools.interpreters import numerics as ref
from spatial_dialect.tools.simulator.machine import Process, SiteRun, give, take
from spatial_dialect.tools.simulator.pages import (
    hold,
    item_label,
    push_sub_blocks,
    release,
    zero_outside,
)
from spatial_dialect.tools.simulator.registry import RowKind, row_kind, row_kind_of, runs

if TYPE_CHECKING:
    from spatial_dialect.tools.simulator.program import ProgramRun

F32 = np.float32


def _eps(op: RowReduceOp) -> np.float32:
    return F32(op.eps.value.data) if op.eps is not None else F32(0)


@runs(RowReduceOp)
def run_row_reduce(
    sec: ProgramRun, op: RowReduceOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = item_label(run, op, item)
    form = op.form.data
    math = row_kind_of(op.kind.data, form, who)
    rect = sec.space.rect(item)
    width, cols, rows = op.width, op.cols, op.rows
    out = run.buffers[sp.buffer_of(op.out)]
    if form == RowForm.COMBINE:
        yield from _combine(sec, op, math, run, item, who)
        return
    fifos = [run.buffers[sp.buffer_of(v)] for v in op.ins]
    # whole: the blocks before the kind's row operands are streamed and summed (x [+ residual]);
    # partial reads no row operands
    streamed = len(fifos) if form == RowForm.PARTIAL else len(fifos) - math.row_operands
    held = []
    for i, fifo in enumerate(fifos):
        tiles = (h, w) if i < streamed else (1, w)
        held.append((fifo, tiles, (yield from hold(fifo, tiles, who))))
    x = sum(ref.widen(block) for _, _, block in held[:streamed])
    start = rect.c0 * tw
    real = max(0, min(w * tw, cols - start, width if width != cols else cols))
    x = x[:, :real]
    if form == RowForm.WHOLE:
        row_operands = [ref.widen(block[0:1, :real]) for _, _, block in held[streamed:]]
        result = np.zeros((h * th, w * tw), F32)
        with np.errstate(over="ignore", under="ignore"):
            result[:, :real] = math.whole(x, row_operands, _eps(op))
        zero_outside(result, (rect.r0 * th, start), (rows, cols))
        yield from push_sub_blocks(out, result, b, who)
    else:
        stats = np.zeros((h * th, tw), F32)
        with np.errstate(over="ignore", under="ignore"):
            stats[:, 0], stats[:, 1] = math.partial(x)
        zero_outside(stats, (rect.r0 * th, 0), (rows, tw))
        yield from give((out,), stats, who)
    for fifo, tiles, _ in held:
        release(fifo, tiles, who)


def _combine(
    sec: ProgramRun, op: RowReduceOp, math: RowKind, run: SiteRun, item: int, who: str
) -> Process:
    """Merges a group's partials block by block (K loop), then pushes the group's statistics."""
    b = run.bindings
    h, kw = b["h"], b["kw"]
    th, tw = sec.tile
    width, cols, rows, block = op.width, op.cols, op.rows, op.block  # type: ignore[union-attr]
    rect = sec.space.rect(item)
    group_start = rect.c0 * (width if width != cols else 0)
    group_end = min(cols, group_start + (width if width != cols else cols))
    fifo = run.buffers[sp.buffer_of(op.ins[0])]
    n = np.zeros(h * th, F32)
    first, second = np.zeros(h * th, F32), np.zeros(h * th, F32)
    first[:] = math.first_start
    j = 0
    for _ in range(0, sec.k_tiles, kw):
        page = yield from take(fifo, (h, kw), who)
        for t in range(kw):
            lo = group_start + j * block
            count = F32(max(0, min(lo + block, group_end) - lo))
            a, s = page[:, t * tw], page[:, t * tw + 1]
            j += 1
            if count == 0:
                continue
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                first, second = math.merge(first, second, a, s, n, count)
            n += count
    stats = np.zeros((h * th, tw), F32)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        math.finish(first, second, n, _eps(op), stats)
    zero_outside(stats, (rect.r0 * th, 0), (rows, tw))
    yield from give((run.buffers[sp.buffer_of(op.out)],), stats, who)


# ── The kinds ─────────────────────────────────────────────────────────────────────────────────
# Each method keeps the order of operations the simulator has always used (whole: the
# reference's, tools/interpreters/reference.py): reordering f32 arithmetic changes the last bits,
# and the simulator's results are pinned bit for bit by bench/results/snapshot.json.


class SumOfSquares(RowKind):
    """The statistic of rms_norm and l2_norm: each row's sum of squares (the second statistic
    unused, zero)."""

    def partial(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return np.sum(x * x, axis=-1), np.zeros(x.shape[0], F32)

    def merge(self, first, second, a, s, n, count):
        first += a
        return first, second


@row_kind(RowKindName.RMS_NORM)
class RmsNorm(SumOfSquares):
    """x * 1/sqrt(mean(x^2) + eps) * weight (x the sum of the streamed x [and residual])."""

    row_operands = 1  # weight

    def whole(self, x, rows, eps):
        inv = F32(1) / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
        return x * inv * rows[0]

    def finish(self, first, second, n, eps, stats):
        stats[:, 0] = F32(1) / np.sqrt(first / n + eps)


@row_kind(RowKindName.L2_NORM)
class L2Norm(SumOfSquares):
    """x / sqrt(sum(x^2) + eps)."""

    def whole(self, x, rows, eps):
        return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)

    def finish(self, first, second, n, eps, stats):
        stats[:, 0] = F32(1) / np.sqrt(first + eps)


@row_kind(RowKindName.SUM_SQUARES)
class SumSquares(SumOfSquares):
    """tg.rms_stats' share of each row's sum of squares: the partials summed, nothing more (the
    distributed rms_norm's all_reduce and rms_apply finish it). Blocked forms only."""

    def finish(self, first, second, n, eps, stats):
        stats[:, 0] = first


@row_kind(RowKindName.LAYER_NORM)
class LayerNorm(RowKind):
    """(x - mean) / sqrt(var + eps) * weight + bias. Blocked: each block's (sum, sum of squared
    deviations from its mean), merged as Chan et al. merge (count, sum, M2): the running mean
    and M2 corrected by the difference of the means, so no sum of squares cancels."""

    row_operands = 2  # weight, bias

    def whole(self, x, rows, eps):
        centered = x - x.mean(axis=-1, keepdims=True)
        var = np.mean(centered * centered, axis=-1, keepdims=True)
        return centered / np.sqrt(var + eps) * rows[0] + rows[1]

    def partial(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        total = np.sum(x, axis=-1)
        centered = x - (total / F32(x.shape[1]))[:, None]
        return total, np.sum(centered * centered, axis=-1)

    def merge(self, first, second, a, s, n, count):
        total = n + count
        delta = a / count - np.where(n > 0, first / np.maximum(n, 1), 0)
        second += s + delta * delta * n * count / total
        first += a
        return first, second

    def finish(self, first, second, n, eps, stats):
        stats[:, 0] = F32(1) / np.sqrt(second / n + eps)
        stats[:, 1] = first / n


@row_kind(RowKindName.SOFTMAX)
class Softmax(RowKind):
    """exp(x - max) / sum(exp(x - max)). Blocked: each block's (maximum, sum of exp(x - its
    maximum)), merged as a running maximum and a sum rescaled to it."""

    first_start = -np.inf  # the running maximum of no columns

    def whole(self, x, rows, eps):
        return ref.softmax_rows(x)

    def partial(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        peak = np.max(x, axis=-1)
        return peak, np.sum(np.exp(x - peak[:, None]), axis=-1)

    def merge(self, first, second, a, s, n, count):
        peak = np.maximum(first, a)
        second = second * np.exp(first - peak) + s * np.exp(a - peak)
        return peak, second

    def finish(self, first, second, n, eps, stats):
        stats[:, 0], stats[:, 1] = first, F32(1) / second
