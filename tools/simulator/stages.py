"""The simulator's execution of the stream-section stages of sp: maps, row reductions, rope, flash
attention, arg-max, the Gated DeltaNet's causal convolution and chunked delta rule, gather and
scatter.

Each function here runs ONE work item of one stage instance, as the op's docstring in the sp dialect
says, over the FIFOs of its site (tools/simulator/program.py: pages are bytes in the site's local memory,
a pop waits for a full page, a push for a free one). The arithmetic is the reference's
(tools/interpreters/reference.py): the same functions where the op computes the same thing, f32 throughout,
one rounding when a page is pushed to a FIFO of the result's element type. What a stage keeps
between K blocks in local memory (an attention's running output and statistics, an arg-max's
running maximum) goes through its `sp.interm` page, so it lives at the offset the memory map
gave it. A runtime index outside its tensor (a gather's id, a scatter's or an attention's
position) is `IndexOutOfRange`, raised before anything is read or written.

`RUNNERS` maps each stage class to its function: the simulator's dispatch table for these stages
(`simulator.STAGE_RUNNERS`).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Generator, Iterator
from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp import (
    ArgmaxOp,
    AttentionCombineOp,
    AttentionOp,
    CausalConvOp,
    GatedDeltaOp,
    GatherOp,
    IndexedStage,
    MapOp,
    Mode,
    RopeOp,
    RouteOp,
    RowReduceOp,
    ScatterOp,
)
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.targets.gemm import ceil_div
from spatial_dialect.tools.interpreters import reference as ref
from spatial_dialect.tools.simulator.machine import (
    AccessOutsideTensor,
    DramTensor,
    Fifo,
    NotSimulated,
    Process,
    Q8Block,
    SimulationError,
    SiteRun,
    UnwrittenRead,
    Wait,
    give,
    take,
)

if TYPE_CHECKING:
    # The simulator's ProgramRun runs these functions (simulator.py imports this module).
    from spatial_dialect.tools.simulator.program import ProgramRun

F32 = np.float32


class IndexOutOfRange(SimulationError):
    """A runtime index (an id of a gather, a position of a scatter or an attention) outside the
    tensor it indexes: reported, never read or written."""


# ── Pages ─────────────────────────────────────────────────────────────────────────────────────


def hold(fifo: Fifo, tiles: tuple[int, int], who: str) -> Generator[Wait, None, np.ndarray]:
    """Waits until a block of `tiles` is in the FIFO and returns it without releasing it."""
    pages = math.prod(fifo.pages_of(tiles, who))
    wait = Wait((fifo,), False, pages, who)
    if wait.blocked():
        yield wait
    return fifo.front(tiles, who)


def release(fifo: Fifo, tiles: tuple[int, int], who: str) -> None:
    fifo.pop(math.prod(fifo.pages_of(tiles, who)))


def push_sub_blocks(out: Fifo, block: np.ndarray, b: dict[str, int], who: str) -> Process:
    """The item's result, one [sh, sw] page per sub-block in row-major order."""
    th, tw = out.tile
    sh, sw = b["sh"], b["sw"]
    for ti in range(0, b["h"], sh):
        for tj in range(0, b["w"], sw):
            part = block[ti * th : (ti + sh) * th, tj * tw : (tj + sw) * tw]
            yield from give((out,), part, who)


def zero_outside(block: np.ndarray, origin: tuple[int, int], valid: tuple[int, int]) -> None:
    """Zeroes the elements of a block at element `origin` outside the first `valid` rows and
    columns of the tensor (padding never leaks)."""
    r0, c0 = origin
    rows, cols = valid
    block[max(0, rows - r0) :, :] = 0
    block[:, max(0, cols - c0) :] = 0


def _where(sec: ProgramRun, run: SiteRun, op: sp.StageOp, item: int) -> str:
    return f"{run.where(op.stage_name())} (item {item})"


# ── Maps ──────────────────────────────────────────────────────────────────────────────────────


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Callable:
    return lambda op, x: fn(x)


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable:
    return lambda op, a, b: fn(ref.widen(a), ref.widen(b))


def _scalar(op: MapOp) -> np.float32:
    assert op.scalar is not None
    return F32(op.scalar.value.data)


def _rms_apply(op: MapOp, x, *rest):
    *residual, stats, weight = rest
    h = ref.widen(x) + ref.widen(residual[0]) if residual else ref.widen(x)
    return h * stats[:, 0:1] * ref.widen(weight)


def _layer_apply(op: MapOp, x, stats, weight, bias):
    centered = ref.widen(x) - stats[:, 1:2]
    return centered * stats[:, 0:1] * ref.widen(weight) + ref.widen(bias)


def _softmax_apply(op: MapOp, x, stats):
    return np.exp(ref.widen(x) - stats[:, 0:1]) * stats[:, 1:2]


MAP_FUNCTIONS: dict[str, Callable[..., np.ndarray]] = {
    "copy": lambda op, x: x,
    "tilize": lambda op, x: x,
    "untilize": lambda op, x: x,
    "transpose": lambda op, x: x,
    "silu": _unary(ref.silu),
    "relu": _unary(ref.relu),
    "sigmoid": _unary(ref.sigmoid),
    "gelu": _unary(lambda x: ref.gelu(x, "none")),
    "gelu_tanh": _unary(lambda x: ref.gelu(x, "tanh")),
    "scale": lambda op, x: ref.widen(x) * _scalar(op),
    "softcap": lambda op, x: _scalar(op) * np.tanh(ref.widen(x) / _scalar(op)),
    "add": _binary(np.add),
    "sub": _binary(np.subtract),
    "mul": _binary(np.multiply),
    "add_row": _binary(np.add),
    "sub_row": _binary(np.subtract),
    "mul_row": _binary(np.multiply),
    "swiglu": lambda op, gate, up: ref.silu(gate) * ref.widen(up),
    "rms_apply": _rms_apply,
    "layer_apply": _layer_apply,
    "softmax_apply": _softmax_apply,
    "requant": lambda op, x: ref.int_requant(x, op.scalar.value.data, op.offset),
    "clamp": lambda op, x: np.clip(ref.widen(x), op.lo, op.hi),
    # Pushing to the Q8_0 output FIFO is what quantizes (Q8_0 is that FIFO's rounding).
    "quantize_q8_0": lambda op, x: ref.widen(x),
    "dequantize_q8_0": lambda op, x: x.dequantized(),
    "decay": lambda op, a, a_log, dt_bias: ref.decay(a, a_log, dt_bias),
    "l2_apply": lambda op, x, stats: ref.widen(x) * stats[:, 0:1],
    "moe_combine": lambda op, x, weight, *acc: (
        (ref.widen(acc[0]) if acc else F32(0)) + ref.widen(x) * weight[:, 0:1]
    ),
}
"""The math of each map kind (sp.MAP_KINDS), on the item's operand blocks."""


def run_map(sec: ProgramRun, op: MapOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    pages = {Mode.FULL: (h, w), Mode.ROWS: (1, w), Mode.COLS: (h, 1), Mode.TRANSPOSED: (w, h)}
    held = []
    for value, mode in op.inputs():
        fifo = run.buffers[sp.buffer_of(value)]
        block = yield from hold(fifo, pages[mode], who)
        held.append((fifo, mode, block))
    shape = (h * th, w * tw)
    operands = []
    for _, mode, block in held:
        if mode == Mode.ROWS:
            block = np.broadcast_to(block[0:1, :], shape)
        elif mode == Mode.TRANSPOSED:
            block = block.T
        operands.append(block)
    with np.errstate(over="ignore", under="ignore"):
        result = np.array(MAP_FUNCTIONS[op.kind.data](op, *operands))
    rect = sec.space.rect(item)
    zero_outside(result, (rect.r0 * th, rect.c0 * tw), op.valid)
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)
    for fifo, mode, _ in held:
        release(fifo, pages[mode], who)


# ── Row reductions ────────────────────────────────────────────────────────────────────────────


def _whole(kind: str, op: RowReduceOp, x: np.ndarray, rows: list[np.ndarray]) -> np.ndarray:
    """One group of every row (its real columns), as the reference normalizes it."""
    eps = F32(op.eps.value.data) if op.eps is not None else F32(0)
    if kind == "rms_norm":
        inv = F32(1) / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
        return x * inv * rows[0]
    if kind == "layer_norm":
        centered = x - x.mean(axis=-1, keepdims=True)
        var = np.mean(centered * centered, axis=-1, keepdims=True)
        return centered / np.sqrt(var + eps) * rows[0] + rows[1]
    if kind == "l2_norm":
        return x / np.sqrt(np.sum(x * x, axis=-1, keepdims=True) + eps)
    return ref.softmax_rows(x)


def _partial(kind: str, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The two statistics of a block of real columns, per row (module docstring of sp/compute.py)."""
    if kind in ("rms_norm", "l2_norm"):
        return np.sum(x * x, axis=-1), np.zeros(x.shape[0], F32)
    if kind == "layer_norm":
        total = np.sum(x, axis=-1)
        centered = x - (total / F32(x.shape[1]))[:, None]
        return total, np.sum(centered * centered, axis=-1)
    peak = np.max(x, axis=-1)
    return peak, np.sum(np.exp(x - peak[:, None]), axis=-1)


def run_row_reduce(sec: ProgramRun, op: RowReduceOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    kind, form = op.kind.data, op.form.data
    rect = sec.space.rect(item)
    width, cols, rows = op.width, op.cols, op.rows
    out = run.buffers[sp.buffer_of(op.out)]
    if form == "combine":
        yield from _combine(sec, op, run, item, who)
        return
    fifos = [run.buffers[sp.buffer_of(v)] for v in op.ins]
    streamed = 2 if kind == "rms_norm" and len(fifos) == 3 else 1
    if form == "partial":
        streamed = len(fifos)
    held = []
    for i, fifo in enumerate(fifos):
        tiles = (h, w) if i < streamed else (1, w)
        held.append((fifo, tiles, (yield from hold(fifo, tiles, who))))
    x = sum(ref.widen(block) for _, _, block in held[:streamed])
    start = rect.c0 * tw
    real = max(0, min(w * tw, cols - start, width if width != cols else cols))
    x = x[:, :real]
    if form == "whole":
        row_operands = [ref.widen(block[0:1, :real]) for _, _, block in held[streamed:]]
        result = np.zeros((h * th, w * tw), F32)
        with np.errstate(over="ignore", under="ignore"):
            result[:, :real] = _whole(kind, op, x, row_operands)
        zero_outside(result, (rect.r0 * th, start), (rows, cols))
        yield from push_sub_blocks(out, result, b, who)
    else:
        stats = np.zeros((h * th, tw), F32)
        with np.errstate(over="ignore", under="ignore"):
            stats[:, 0], stats[:, 1] = _partial(kind, x)
        zero_outside(stats, (rect.r0 * th, 0), (rows, tw))
        yield from give((out,), stats, who)
    for fifo, tiles, _ in held:
        release(fifo, tiles, who)


def _combine(sec: ProgramRun, op: RowReduceOp, run: SiteRun, item: int, who: str) -> Process:
    """Merges a group's partials block by block (K loop), then pushes the group's statistics."""
    b = run.bindings
    h, kw = b["h"], b["kw"]
    th, tw = sec.tile
    kind = op.kind.data
    width, cols, rows, block = op.width, op.cols, op.rows, op.block  # type: ignore[union-attr]
    rect = sec.space.rect(item)
    group_start = rect.c0 * (width if width != cols else 0)
    group_end = min(cols, group_start + (width if width != cols else cols))
    fifo = run.buffers[sp.buffer_of(op.ins[0])]
    n = np.zeros(h * th, F32)
    first, second = np.zeros(h * th, F32), np.zeros(h * th, F32)
    if kind == "softmax":
        first[:] = -np.inf
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
                if kind in ("rms_norm", "l2_norm"):
                    first += a
                elif kind == "layer_norm":  # Chan et al.: merge (count, sum, M2)
                    total = n + count
                    delta = a / count - np.where(n > 0, first / np.maximum(n, 1), 0)
                    second += s + delta * delta * n * count / total
                    first += a
                else:  # softmax: running maximum and rescaled sum
                    peak = np.maximum(first, a)
                    second = second * np.exp(first - peak) + s * np.exp(a - peak)
                    first = peak
            n += count
    eps = F32(op.eps.value.data) if op.eps is not None else F32(0)
    stats = np.zeros((h * th, tw), F32)
    with np.errstate(over="ignore", under="ignore", divide="ignore", invalid="ignore"):
        if kind == "rms_norm":
            stats[:, 0] = F32(1) / np.sqrt(first / n + eps)
        elif kind == "l2_norm":
            stats[:, 0] = F32(1) / np.sqrt(first + eps)
        elif kind == "layer_norm":
            stats[:, 0] = F32(1) / np.sqrt(second / n + eps)
            stats[:, 1] = first / n
        else:
            stats[:, 0], stats[:, 1] = first, F32(1) / second
    zero_outside(stats, (rect.r0 * th, 0), (rows, tw))
    yield from give((run.buffers[sp.buffer_of(op.out)],), stats, who)


# ── Rope ──────────────────────────────────────────────────────────────────────────────────────


def run_rope(sec: ProgramRun, op: RopeOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    d = op.head_dim
    half = ceil_div(d // 2, tw)
    x_f, cos_f, sin_f = (run.buffers[sp.buffer_of(v)] for v in op.ins)
    x = yield from hold(x_f, (h, w), who)
    cos = yield from hold(cos_f, (h, half), who)
    sin = yield from hold(sin_f, (h, half), who)
    with np.errstate(over="ignore", under="ignore"):
        result = ref.rope(x, cos[:, : d // 2], sin[:, : d // 2], d, op.kind.data)
    rect = sec.space.rect(item)
    zero_outside(result, (rect.r0 * th, rect.c0 * tw), op.valid)
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)
    release(x_f, (h, w), who)
    release(cos_f, (h, half), who)
    release(sin_f, (h, half), who)


# ── Flash attention ───────────────────────────────────────────────────────────────────────────


def run_attention(sec: ProgramRun, op: AttentionOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, w, kw = b["h"], b["w"], b["kw"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    d, dv = op.head_dim, op.v_head_dim
    group = w * tw // dv  # the query heads this item serves
    queries, keys = op.queries, op.keys
    q_f, k_f, v_f = (run.buffers[sp.buffer_of(x)] for x in (op.q, op.k, op.v))
    o_f, ml_f = run.buffers[sp.buffer_of(op.state)], run.buffers[sp.buffer_of(op.stats)]
    q_tiles = (h, group * d // tw)
    q = ref.widen((yield from hold(q_f, q_tiles, who)))
    p = keys - queries
    if op.pos is not None:
        pos_f = run.buffers[sp.buffer_of(op.pos)]
        p = int((yield from hold(pos_f, (1, 1), who))[0, 0])
        release(pos_f, (1, 1), who)
    if not 0 <= p <= keys - queries:
        raise IndexOutOfRange(
            f"{who}: position {p} outside [0, {keys - queries}] ({queries} queries in a "
            f"{keys}-key cache)"
        )
    rect = sec.space.rect(item)
    rows = rect.r0 * th + np.arange(h * th)
    # a split serves the keys of its share of the key tiles (sp.attention splits)
    first_key = 0
    if op.splits is not None:
        first_key = rect.c0 // (op.heads * dv // tw) * sec.k_tiles * th
    scale = F32(op.scale.value.data)
    # the running output and each head's (maximum, sum) start in local memory
    yield from give((o_f,), np.zeros((h * th, w * tw), F32), who)
    start = np.zeros((h * th, group * tw), F32)
    start[:, 0::tw] = -np.inf
    yield from give((ml_f,), start, who)
    for k0 in range(0, sec.k_tiles, kw):
        k = ref.widen((yield from take(k_f, (kw, d // tw), who)))
        v = ref.widen((yield from take(v_f, (kw, dv // tw), who)))
        o = yield from take(o_f, (h, w), who)
        ml = yield from take(ml_f, (h, group), who)
        key = first_key + k0 * th + np.arange(kw * th)
        masked = np.broadcast_to(key[None, :] >= keys, (h * th, kw * th))
        if op.is_causal:
            masked = masked | (key[None, :] > (p + rows)[:, None])
        for j in range(group):
            qs, os_, mc = slice(j * d, (j + 1) * d), slice(j * dv, (j + 1) * dv), j * tw
            with np.errstate(over="ignore", under="ignore", invalid="ignore"):
                scores = np.where(masked, F32(-np.inf), (q[:, qs] @ k.T) * scale)
                m_old, l_old = ml[:, mc], ml[:, mc + 1]
                m_new = np.maximum(m_old, scores.max(axis=1))
                live = np.isfinite(m_new)
                shift = np.where(live, m_new, F32(0))
                probs = np.where(masked, F32(0), np.exp(scores - shift[:, None]))
                keep = np.where(live, np.exp(m_old - shift), F32(1))
                ml[:, mc] = m_new
                ml[:, mc + 1] = l_old * keep + probs.sum(axis=1)
                o[:, os_] = o[:, os_] * keep[:, None] + probs @ v
        yield from give((o_f,), o, who)
        yield from give((ml_f,), ml, who)
    o = yield from take(o_f, (h, w), who)
    ml = yield from take(ml_f, (h, group), who)
    if op.splits is not None:
        result = split_partials(o, ml, dv, tw)
    else:
        sums = np.repeat(ml[:, 1::tw], dv, axis=1)  # each head's sum under its columns
        with np.errstate(divide="ignore", invalid="ignore"):
            result = o / sums
        zero_outside(result, (rect.r0 * th, 0), (queries, w * tw))
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)
    release(q_f, q_tiles, who)


def split_partials(o: np.ndarray, ml: np.ndarray, dv: int, tw: int) -> np.ndarray:
    """A split's page of partials (sp.attention splits): row 0 the running output of the one
    query row, row 1 in columns 0 and 1 of every tile the m and l of the head it belongs to."""
    page = np.zeros_like(o)
    page[0] = o[0]
    heads_of_tiles = np.arange(o.shape[1] // tw) * tw // dv
    page[1, 0::tw] = ml[0, heads_of_tiles * tw]
    page[1, 1::tw] = ml[0, heads_of_tiles * tw + 1]
    return page


def merge_partials(a: np.ndarray, b: np.ndarray, tw: int) -> np.ndarray:
    """The log-sum-exp merge of two pages of partials, tile by tile (sp.attention_combine): the
    larger maximum, each side's output and sum scaled by exp(its maximum - that); a side whose
    maximum is -inf (every key masked) adds nothing."""
    m_a, m_b = a[1, 0::tw], b[1, 0::tw]
    m = np.maximum(m_a, m_b)
    shift = np.where(np.isfinite(m), m, F32(0))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ka, kb = np.exp(m_a - shift), np.exp(m_b - shift)
    out = np.zeros_like(a)
    out[0] = a[0] * np.repeat(ka, tw) + b[0] * np.repeat(kb, tw)
    out[1, 0::tw] = m
    out[1, 1::tw] = a[1, 1::tw] * ka + b[1, 1::tw] * kb
    return out


def run_attention_combine(
    sec: ProgramRun, op: AttentionCombineOp, run: SiteRun, item: int
) -> Process:
    b = run.bindings
    w = b["w"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    parts_f, state_f = run.buffers[sp.buffer_of(op.parts)], run.buffers[sp.buffer_of(op.state)]
    start = np.zeros((th, w * tw), F32)
    start[1, 0::tw] = -np.inf
    yield from give((state_f,), start, who)
    for _ in range(sec.k_tiles):
        part = yield from take(parts_f, (1, w), who)
        state = yield from take(state_f, (1, w), who)
        yield from give((state_f,), merge_partials(state, part, tw), who)
    state = yield from take(state_f, (1, w), who)
    result = np.zeros((th, w * tw), F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        result[0] = state[0] / np.repeat(state[1, 1::tw], tw)
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)


# ── Arg-max ───────────────────────────────────────────────────────────────────────────────────


def run_argmax(sec: ProgramRun, op: ArgmaxOp, run: SiteRun, item: int) -> Process:
    kw = run.bindings["kw"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    x_f, best_f = run.buffers[sp.buffer_of(op.x)], run.buffers[sp.buffer_of(op.best)]
    cols = op.cols
    state = np.zeros((th, 2 * tw), F32)
    state[:, 0] = -np.inf
    yield from give((best_f,), state, who)
    for k0 in range(0, sec.k_tiles, kw):
        block = ref.widen((yield from take(x_f, (1, kw), who)))
        col = k0 * tw + np.arange(kw * tw)
        block = np.where(col[None, :] < cols, block, F32(-np.inf))
        state = yield from take(best_f, (1, 2), who)
        top = block.max(axis=1)
        better = top > state[:, 0]  # strictly: an earlier block keeps a tie (the first maximum)
        state[:, tw] = np.where(better, F32(k0 * tw) + np.argmax(block, axis=1), state[:, tw])
        state[:, 0] = np.where(better, top, state[:, 0])
        yield from give((best_f,), state, who)
    state = yield from take(best_f, (1, 2), who)
    result = np.zeros((th, tw), np.int64)
    rect = sec.space.rect(item)
    first = rect.c0 * tw
    valid = max(0, min(tw, op.rows - first))
    result[0, :valid] = state[:valid, tw].astype(np.int64)
    yield from give((run.buffers[sp.buffer_of(op.out)],), result, who)


# ── The Gated DeltaNet ────────────────────────────────────────────────────────────────────────


def run_causal_conv(sec: ProgramRun, op: CausalConvOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    w, kw = b["w"], b["kw"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    taps, rows = op.taps, op.rows
    x_f, w_f, s_f = (run.buffers[sp.buffer_of(v)] for v in (op.x, op.weight, op.state))
    out_f, new_f = run.buffers[sp.buffer_of(op.out)], run.buffers[sp.buffer_of(op.new_state)]
    win_f = run.buffers[sp.buffer_of(op.window)]
    weight = ref.widen((yield from hold(w_f, (1, w), who)))[:taps]
    start = ref.widen((yield from take(s_f, (1, w), who)))
    yield from give((win_f,), start, who)
    rect = sec.space.rect(item)
    for k0 in range(0, sec.k_tiles, kw):
        x = ref.widen((yield from take(x_f, (kw, w), who)))
        real = max(0, min(kw * th, rows - k0 * th))  # the block's rows of time before `rows`
        window = yield from take(win_f, (1, w), who)
        xx = np.concatenate([window[: taps - 1], x[:real]], axis=0)
        out = np.zeros((kw * th, w * tw), F32)
        for j in range(taps):
            out[:real] += weight[j][None, :] * xx[j : j + real]
        with np.errstate(over="ignore", under="ignore"):
            if op.activation.data == "silu":
                out = ref.silu(out)
        zero_outside(out, (k0 * th, rect.c0 * tw), (rows, op.cols))
        yield from give((out_f,), out, who)
        window = window.copy()
        window[: taps - 1] = xx[real:]  # the last taps - 1 rows, the real ones
        yield from give((win_f,), window, who)
    final = yield from take(win_f, (1, w), who)
    final[taps - 1 :] = 0
    zero_outside(final, (0, rect.c0 * tw), (taps - 1, op.cols))
    yield from give((new_f,), final, who)
    release(w_f, (1, w), who)


def run_gated_delta(sec: ProgramRun, op: GatedDeltaOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, w, kw = b["h"], b["w"], b["kw"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    rows, dt = op.rows, op.head_dim // tw
    rect = sec.space.rect(item)
    column = (rect.r0 // dt) % tw  # the head's column in its tile of g and beta
    q_f, k_f, v_f, g_f, beta_f, s_f = (
        run.buffers[sp.buffer_of(x)] for x in (op.q, op.k, op.v, op.g, op.beta, op.state)
    )
    out_f, new_f = run.buffers[sp.buffer_of(op.out)], run.buffers[sp.buffer_of(op.new_state)]
    running = run.buffers[sp.buffer_of(op.running)]
    yield from give((running,), ref.widen((yield from take(s_f, (h, w), who))), who)
    scale = F32(op.scale.value.data)
    for k0 in range(0, sec.k_tiles, kw):
        q = ref.widen((yield from take(q_f, (kw, dt), who))) * scale
        k = ref.widen((yield from take(k_f, (kw, dt), who)))
        v = ref.widen((yield from take(v_f, (kw, w), who)))
        g = ref.widen((yield from take(g_f, (kw, 1), who)))[:, column]
        beta = ref.widen((yield from take(beta_f, (kw, 1), who)))[:, column]
        past = np.arange(kw * th) + k0 * th >= rows  # rows past the data change nothing
        for x in (k, v):
            x[past] = 0
        g, beta = np.where(past, F32(0), g), np.where(past, F32(0), beta)
        state = yield from take(running, (h, w), who)
        with np.errstate(over="ignore", under="ignore", invalid="ignore"):
            out, state = ref.delta_chunk(q, k, v, g, beta, state)
        out[past] = 0
        yield from give((out_f,), out, who)
        yield from give((running,), state, who)
    yield from give((new_f,), (yield from take(running, (h, w), who)), who)


# ── A mixture of experts' router ───────────────────────────────────────────────────────────────


def run_route(sec: ProgramRun, op: RouteOp, run: SiteRun, item: int) -> Process:
    b = run.bindings
    h, kw = b["h"], b["kw"]
    th, tw = sec.tile
    who = _where(sec, run, op, item)
    x = yield from take(run.buffers[sp.buffer_of(op.x)], (h, kw), who)
    rows = max(0, min(h * th, op.rows - sec.space.rect(item).r0 * th))
    ids, weights = ref.moe_route(
        ref.widen(x)[:rows, : op.cols], op.top_k, op.scores.data, op.renormalized()
    )
    pick, at = op.pick.data, op.at
    out = run.buffers[sp.buffer_of(op.out)]
    page = np.zeros((h * th, tw), np.int64 if pick == "id" else F32)
    if pick == "id":
        page[:rows, 0] = ids[:, at]
    elif pick == "weight":
        page[:rows, 0] = weights[:, at]
    else:
        page[:rows, 0] = np.where(ids == at, weights, F32(0)).sum(axis=1)
    yield from give((out,), page, who)


# ── Gather and scatter ────────────────────────────────────────────────────────────────────────


def _index(sec: ProgramRun, stage: IndexedStage, who: str) -> np.ndarray:
    """The index vector a gather or scatter reads from DRAM (every element it holds written)."""
    t = sec.dram[stage.index.root_reference.data]
    if not t.written.all():
        raise UnwrittenRead(who, t.name, (0, 0), int(np.count_nonzero(~t.written)))
    return t.data[0, : t.cols].astype(np.int64)


def _blocks(
    sec: ProgramRun, op: IndexedStage, run: SiteRun, item: int
) -> Iterator[tuple[str, DramTensor, int, int, int, int]]:
    """Each iteration of a gather's or scatter's access pattern for one item: who it is, the
    tensor it indexes, the block's origin tile (r, c) and extent (er, ec); a block whose columns
    leave the tensor is AccessOutsideTensor."""
    tensor = sec.dram[op.tensor.root_reference.data]
    pattern = sec.pattern(op, run)  # type: ignore[arg-type]
    rect = sec.space.rect(item)
    for env in pattern.iterations(rect.r0, rect.c0, None):
        who = f"{run.where(op.stage_name())} (item {item})"
        (r, c), (er, ec) = pattern.tile(env), pattern.extent
        if c < 0 or c + ec > tensor.tiles[1]:
            raise AccessOutsideTensor(who, tensor.name, (0, c), (1, ec), tensor.tiles)
        yield who, tensor, r, c, er, ec


def run_gather(sec: ProgramRun, op: GatherOp, run: SiteRun, item: int) -> Process:
    th, tw = sec.tile
    out = run.buffers[sp.buffer_of(op.dst)]
    count = op.count
    for who, table, r, c, er, ec in _blocks(sec, op, run, item):
        ids = _index(sec, op, who)
        page = np.zeros((er * th, ec * tw), table.dtype)
        # A Q8_0 table blocked along its rows: each row's scales come with its values.
        if table.scales is not None and table.q8_axis != 1:
            raise NotSimulated(f"{who}: rows of a Q8_0 table blocked down its columns")
        blocks = slice(c * tw // Q8_0_BLOCK, (c + ec) * tw // Q8_0_BLOCK)
        scales = None
        if table.scales is not None:
            scales = np.zeros((er * th, blocks.stop - blocks.start), np.float16)
        for i in range(min(er * th, count - r * th)):
            row = r * th + i
            tid = int(ids[row])
            if not 0 <= tid < table.rows:
                raise IndexOutOfRange(
                    f"{who}: id {tid} at ids[{row}] outside [0, {table.rows}) of @{table.name}"
                )
            if not table.written[tid // th, c : c + ec].all():
                raise UnwrittenRead(who, table.name, (tid, c * tw), 1)
            page[i] = table.data[tid, c * tw : (c + ec) * tw]
            if scales is not None:
                scales[i] = table.scales[tid, blocks]  # type: ignore[index]
        yield from give((out,), page if scales is None else Q8Block(page, scales, 1), who)


def run_scatter(sec: ProgramRun, op: ScatterOp, run: SiteRun, item: int) -> Process:
    th, tw = sec.tile
    src = run.buffers[sp.buffer_of(op.src)]
    count = op.count
    for who, cache, r, c, er, ec in _blocks(sec, op, run, item):
        page = yield from take(src, (er, ec), who)
        p = int(_index(sec, op, who)[0])
        if not 0 <= p <= cache.rows - count:
            raise IndexOutOfRange(
                f"{who}: position {p} outside [0, {cache.rows - count}] ({count} rows into "
                f"@{cache.name}, which has {cache.rows})"
            )
        width = min(ec * tw, cache.cols - c * tw)
        for i in range(min(er * th, count - r * th)):
            row = p + r * th + i
            cache.data[row, c * tw : c * tw + width] = page[i, :width]
            cache.written[row // th, c : c + ec] = True


RUNNERS: dict[type, Callable[..., Process]] = {
    MapOp: run_map,
    RowReduceOp: run_row_reduce,
    RopeOp: run_rope,
    AttentionOp: run_attention,
    AttentionCombineOp: run_attention_combine,
    ArgmaxOp: run_argmax,
    RouteOp: run_route,
    CausalConvOp: run_causal_conv,
    GatedDeltaOp: run_gated_delta,
    GatherOp: run_gather,
    ScatterOp: run_scatter,
}
"""How the simulator runs one item of each stream-section stage of sp."""
