"""The simulator's stream stages besides maps, row reductions and data movement: rope, flash
attention and its combine, arg-max, the Gated DeltaNet's causal convolution and chunked delta
rule, and the MoE router, one runner each, registered by the op class (registry.py).

Each runner executes ONE work item of one stage instance, as the op's docstring in the sp dialect
says, over the FIFOs of its site (machine.py: pages are bytes in the site's local memory, a pop
waits for a full page, a push for a free one). The arithmetic is the reference's
(tools/interpreters/reference.py): the same functions where the op computes the same thing, f32
throughout, one rounding when a page is pushed to a FIFO of the result's element type. What a
stage keeps between K blocks in local memory (an attention's running output and statistics, an
arg-max's running maximum) goes through its `sp.interm` page, so it lives at the offset the
memory map gave it. A runtime index outside its tensor (an attention's position) is
`IndexOutOfRange`, raised before anything is read or written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp import (
    ArgmaxOp,
    AttentionCombineOp,
    AttentionOp,
    CausalConvOp,
    GatedDeltaOp,
    RopeOp,
    RouteOp,
)
from spatial_dialect.targets.gemm import ceil_div
from spatial_dialect.tools.interpreters import numerics as ref
from spatial_dialect.tools.simulator.machine import IndexOutOfRange, Process, SiteRun, give, take
from spatial_dialect.tools.simulator.pages import (
    hold,
    item_label,
    push_sub_blocks,
    release,
    zero_outside,
)
from spatial_dialect.tools.simulator.registry import runs

if TYPE_CHECKING:
    from spatial_dialect.tools.simulator.program import ProgramRun

F32 = np.float32


# ── Rope ──────────────────────────────────────────────────────────────────────────────────────


@runs(RopeOp)
def run_rope(sec: ProgramRun, op: RopeOp, run: SiteRun, item: int, k0: int | None) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = item_label(run, op, item)
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


@runs(AttentionOp)
def run_attention(
    sec: ProgramRun, op: AttentionOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    h, w, kw = b["h"], b["w"], b["kw"]
    th, tw = sec.tile
    who = item_label(run, op, item)
    d, dv = op.head_dim, op.v_head_dim
    group = w * tw // dv  # the query heads this item serves
    queries, keys = op.queries, op.keys
    q_f, k_f, v_f = (run.buffers[sp.buffer_of(x)] for x in (op.q, op.k, op.v))
    o_f, ml_f = run.buffers[sp.buffer_of(op.state)], run.buffers[sp.buffer_of(op.stats)]
    q_tiles = (h, group * d // tw)
    q = ref.widen((yield from hold(q_f, q_tiles, who)))
    p = keys - queries
    rect = sec.space.rect(item)
    rows = rect.r0 * th + np.arange(h * th)
    users = None
    if op.users is not None:
        pos_f = run.buffers[sp.buffer_of(op.pos)]
        pt = ceil_div(op.users, tw)
        users = batch_positions(op, (yield from hold(pos_f, (1, pt), who))[0], rows, who)
        release(pos_f, (1, pt), who)
    elif op.pos is not None:
        pos_f = run.buffers[sp.buffer_of(op.pos)]
        p = int((yield from hold(pos_f, (1, 1), who))[0, 0])
        release(pos_f, (1, 1), who)
    if users is None and not 0 <= p <= keys - queries:
        raise IndexOutOfRange(
            f"{who}: position {p} outside [0, {keys - queries}] ({queries} queries in a "
            f"{keys}-key cache)"
        )
    # a split serves the keys of its share of the key tiles (sp.attention splits)
    first_key = 0
    if op.splits is not None:
        first_key = rect.c0 // (op.heads * dv // tw) * sec.k_tiles * th
    ranged = op.user_key_tiles(th)
    if ranged is not None:  # a batch's query tile row walks its own users' caches
        first_key = rect.r0 * ranged * th
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
        if users is not None:
            user, last = users
            masked = masked | (key[None, :] // op.capacity != user[:, None])
            masked = masked | (key[None, :] % op.capacity > last[:, None])
        elif op.is_causal:
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
    if op.splits is not None and op.by_users is None:
        result = split_partials(o, ml, dv, tw, queries if users is not None else 1)
    else:
        sums = np.repeat(ml[:, 1::tw], dv, axis=1)  # each head's sum under its columns
        with np.errstate(divide="ignore", invalid="ignore"):
            # by users, a row of a user outside the split saw no key: zero (sp.attention)
            result = o / sums if op.by_users is None else np.where(sums > 0, o / sums, F32(0))
        zero_outside(result, (rect.r0 * th, 0), (queries, w * tw))
        if users is not None:
            result[users[1] < 0] = 0  # an idle user's rows
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)
    release(q_f, q_tiles, who)


def batch_positions(
    op: AttentionOp, pos: np.ndarray, rows: np.ndarray, who: str
) -> tuple[np.ndarray, np.ndarray]:
    """A batched attention's rows (sp.attention `users`): each row's user and the last
    position it sees (-1 for an idle user's rows and rows past the queries), every live
    position checked first."""
    u, s = op.users, op.capacity
    assert u is not None and s is not None
    t = op.queries // u
    pos = pos[:u].astype(np.int64)
    for b, p in enumerate(pos.tolist()):
        if p != -1 and not 0 <= p <= s - t:
            raise IndexOutOfRange(
                f"{who}: position {p} of user {b} outside [0, {s - t}] ({t} queries of a user "
                f"who holds {s} positions; -1 marks an idle user)"
            )
    live = rows < op.queries
    user = np.where(live, rows // t, -1)
    first = np.where(live, pos[np.minimum(rows // t, u - 1)], -1)
    last = np.where(first >= 0, first + rows % t, -1)
    return user, last


def split_partials(o: np.ndarray, ml: np.ndarray, dv: int, tw: int, q: int = 1) -> np.ndarray:
    """A split's page of partials (sp.attention splits): rows 0 .. q - 1 the running outputs
    of the q query rows (one, or a batch's), row q + r in columns 0 and 1 of every tile the m
    and l of row r's head that the tile belongs to."""
    page = np.zeros_like(o)
    page[:q] = o[:q]
    heads_of_tiles = np.arange(o.shape[1] // tw) * tw // dv
    page[q : 2 * q, 0::tw] = ml[:q, heads_of_tiles * tw]
    page[q : 2 * q, 1::tw] = ml[:q, heads_of_tiles * tw + 1]
    return page


def merge_partials(a: np.ndarray, b: np.ndarray, tw: int, q: int = 1) -> np.ndarray:
    """The log-sum-exp merge of two pages of q query rows' partials, tile by tile
    (sp.attention_combine): the larger maximum, each side's output and sum scaled by exp(its
    maximum - that); a side whose maximum is -inf (every key masked) adds nothing."""
    stats = slice(q, 2 * q)
    m_a, m_b = a[stats, 0::tw], b[stats, 0::tw]
    m = np.maximum(m_a, m_b)
    shift = np.where(np.isfinite(m), m, F32(0))
    with np.errstate(over="ignore", under="ignore", invalid="ignore"):
        ka, kb = np.exp(m_a - shift), np.exp(m_b - shift)
    out = np.zeros_like(a)
    out[:q] = a[:q] * np.repeat(ka, tw, axis=1) + b[:q] * np.repeat(kb, tw, axis=1)
    out[stats, 0::tw] = m
    out[stats, 1::tw] = a[stats, 1::tw] * ka + b[stats, 1::tw] * kb
    return out


@runs(AttentionCombineOp)
def run_attention_combine(
    sec: ProgramRun, op: AttentionCombineOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    w = b["w"]
    th, tw = sec.tile
    who = item_label(run, op, item)
    parts_f, state_f = run.buffers[sp.buffer_of(op.parts)], run.buffers[sp.buffer_of(op.state)]
    q = op.query_rows
    if op.sum is not None:  # splits by users: each row's result is whole in one split
        total = np.zeros((th, w * tw), F32)
        for _ in range(sec.k_tiles):
            total += ref.widen((yield from take(parts_f, (1, w), who)))
        yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], total, b, who)
        return
    start = np.zeros((th, w * tw), F32)
    start[q : 2 * q, 0::tw] = -np.inf
    yield from give((state_f,), start, who)
    for _ in range(sec.k_tiles):
        part = yield from take(parts_f, (1, w), who)
        state = yield from take(state_f, (1, w), who)
        yield from give((state_f,), merge_partials(state, part, tw, q), who)
    state = yield from take(state_f, (1, w), who)
    result = np.zeros((th, w * tw), F32)
    sums = np.repeat(state[q : 2 * q, 1::tw], tw, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):  # a sum of 0: an idle user's row
        result[:q] = np.where(sums > 0, state[:q] / sums, F32(0))
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)


# ── Arg-max ───────────────────────────────────────────────────────────────────────────────────


@runs(ArgmaxOp)
def run_argmax(sec: ProgramRun, op: ArgmaxOp, run: SiteRun, item: int, k0: int | None) -> Process:
    kw = run.bindings["kw"]
    th, tw = sec.tile
    who = item_label(run, op, item)
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


@runs(CausalConvOp)
def run_causal_conv(
    sec: ProgramRun, op: CausalConvOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    w, kw = b["w"], b["kw"]
    th, tw = sec.tile
    who = item_label(run, op, item)
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


@runs(GatedDeltaOp)
def run_gated_delta(
    sec: ProgramRun, op: GatedDeltaOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    h, w, kw = b["h"], b["w"], b["kw"]
    th, tw = sec.tile
    who = item_label(run, op, item)
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


@runs(RouteOp)
def run_route(sec: ProgramRun, op: RouteOp, run: SiteRun, item: int, k0: int | None) -> Process:
    b = run.bindings
    h, kw = b["h"], b["kw"]
    th, tw = sec.tile
    who = item_label(run, op, item)
    x = yield from take(run.buffers[sp.buffer_of(op.x)], (h, kw), who)
    rows = max(0, min(h * th, op.rows - sec.space.rect(item).r0 * th))
    ids, weights = ref.moe_route(
        ref.widen(x)[:rows, : op.cols], op.top_k, op.scores.data, op.renormalized()
    )
    pick, at = op.pick.data, op.at
    if op.first is not None:  # a chip's held experts: ids from its first, the others weigh 0
        first_f = run.buffers[sp.buffer_of(op.first)]
        first = int((yield from take(first_f, (1, 1), who))[0, 0])
        ids = ids - first
        weights = np.where((ids >= 0) & (ids < op.held), weights, F32(0))
        ids = np.where((ids >= 0) & (ids < op.held), ids, 0)
    out = run.buffers[sp.buffer_of(op.out)]
    page = np.zeros((h * th, tw), np.int64 if pick == "id" else F32)
    if pick == "id":
        page[:rows, 0] = ids[:, at]
    elif pick == "weight":
        page[:rows, 0] = weights[:, at]
    else:
        page[:rows, 0] = np.where(ids == at, weights, F32(0)).sum(axis=1)
    yield from give((out,), page, who)
