"""Qwen3-Next's Gated DeltaNet token mixer in TT-Lang (`-t ttlang`): sp.causal_conv and
sp.gated_delta (the map `decay` is in compute.py). docs/backend-ttlang.md#gated-deltanet.

Both walk time in K blocks inside the compute kernel and carry their state in the f32 interm
the IR gives them (the conv's `window`, the rule's `s`): the compute pushes it and pops it again
for the next block (a DFB whose producer and consumer are the compute kernel), and after the
last block pushes it to the new-state FIFO. Every time shift, row selection and triangle is a
product with a constant 0/1 matrix the host allocates (exact in f32: one nonzero term per sum),
read per K block by the movement kernel that loads the stage's first input. Compilable
constructs throughout (no runtime scalar).

- **causal_conv**: out = sum_j (R_j @ weight) * (A_j @ window + B_j @ x): R_j puts tap j's row
  on every row, A_j / B_j bring row t + j of [window; x] to row t (A_j from the window's
  taps - 1 rows, B_j from the block); silu, then the rows past `rows` zeroed. The next window
  is C @ window + D @ x (row i <- row real + i of [window; x], real = the block's rows before
  `rows`).
- **gated_delta**: the chunk step of reference.delta_chunk with C = kw tile rows: the head's g
  and beta columns picked by a column selector and summed (reduce_sum), G = L @ g (L the lower
  triangle with its diagonal), D = exp((G_i - G_j) * L) * L, A = -(beta k k^T) * D below the
  diagonal, T = (I - A)^-1 as the product (I + A)(I + A^2)(I + A^4)... (A is nilpotent:
  A^C = 0; the forward substitution of the reference has no block form), then U, W, v', o and
  the new state as matrix products.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.ttlang.stage import (
    TILE,
    Consts,
    StagePrinter,
    const_buffers,
    const_dfb,
    const_read,
    eq,
    expr,
    input_engine,
    load_into,
    page,
    prints,
    rows_mask,
)
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines


# The host's constants (printed into the program by their source) -----------------------------


def _conv_prev(taps, n):
    """Block j (n x 32, at column 32 j): 1 at (t, t + j) where t + j < taps - 1 (row t + j of
    [window; x] is the window's)."""
    a = np.zeros((n, 32 * taps), np.float32)
    for j in range(taps):
        for t in range(max(0, taps - 1 - j)):
            a[t, 32 * j + t + j] = 1.0
    return a


def _conv_shift(taps, n):
    """Block j (n x n, at column n j): 1 at (t, t + j - (taps - 1)) where that row of x is >= 0."""
    b = np.zeros((n, n * taps), np.float32)
    for j in range(taps):
        for t in range(max(0, taps - 1 - j), n):
            b[t, n * j + t + j - (taps - 1)] = 1.0
    return b


def _conv_tap(taps, n):
    """Block j (n x 32): ones in column j, so block @ weight is tap j's row on every row."""
    r = np.zeros((n, 32 * taps), np.float32)
    for j in range(taps):
        r[:, 32 * j + j] = 1.0
    return r


def _conv_keep(taps, n, reals):
    """Tile row k for a block of reals[k] real rows: [C | D] (32 x 32 | 32 x n), the next
    window's row i <- row reals[k] + i of [window; x], for i < taps - 1 (C: from the window,
    D: from the block)."""
    m = np.zeros((32 * len(reals), 32 + n), np.float32)
    for k, real in enumerate(reals):
        for i in range(taps - 1):
            src = real + i
            col = src if src < taps - 1 else 32 + src - (taps - 1)
            m[32 * k + i, col] = 1.0
    return m


def _col_sel():
    """Tile c (32 x 32, at column 32 c): ones in column c (a head's column of g and beta)."""
    m = np.zeros((32, 32 * 32), np.float32)
    for c in range(32):
        m[:, 32 * c + c] = 1.0
    return m


# Causal convolution ---------------------------------------------------------------------------


ACTIVATIONS = {"silu": "ttl.math.silu(acc)", "none": "acc"}  # of the sums `acc`


@prints(sp.CausalConvOp)
class CausalConvPrinter(StagePrinter):
    host = (_conv_prev, _conv_shift, _conv_tap, _conv_keep)

    def check(self, sec: OperationWriter, s: sp.CausalConvOp) -> None:  # type: ignore[override]
        if s.taps > TILE:
            raise TTLangUnsupported(
                sec.name, f"sp.causal_conv taps {s.taps}: printed for a window of one tile row"
            )
        if s.activation.data not in ACTIVATIONS:
            raise TTLangUnsupported(
                sec.name, f"sp.causal_conv activation {s.activation.data}: no TT-Lang form"
            )

    def _numbers(self, sec: OperationWriter, s: sp.CausalConvOp) -> tuple[int, int, int]:
        """(kw, the rows of a full block, the real rows of the last block)."""
        kw = sec.work.k_block
        n = kw * TILE
        return kw, n, s.rows - (sec.k_tiles // kw - 1) * n

    def _names(self, sec: OperationWriter, s: sp.CausalConvOp) -> dict[str, str]:
        """Each constant's name, in the order the compute pops them."""
        _, n, last = self._numbers(sec, s)
        t = s.taps
        return {
            "keep_c": f"_conv_keep_c_{t}_{n}_{last}",
            "keep_d": f"_conv_keep_d_{t}_{n}_{last}",
            "rows": rows_mask(sec, s.rows, s.x)[0],
            "prev": f"_conv_prev_{t}_{n}",
            "shift": f"_conv_shift_{t}_{n}",
            "tap": f"_conv_tap_{t}_{n}",
        }

    def constants(self, sec: OperationWriter, s: sp.CausalConvOp) -> Consts:  # type: ignore[override]
        _, n, last = self._numbers(sec, s)
        t = s.taps
        names = self._names(sec, s)
        keep = f"_conv_keep({t}, {n}, ({n}, {last}))"
        return {
            names["keep_c"]: ((2 * TILE, TILE), f"{keep}[:, :{TILE}]"),
            names["keep_d"]: ((2 * TILE, n), f"{keep}[:, {TILE}:]"),
            names["rows"]: rows_mask(sec, s.rows, s.x)[1],
            names["prev"]: ((n, TILE * t), f"_conv_prev({t}, {n})"),
            names["shift"]: ((n, n * t), f"_conv_shift({t}, {n})"),
            names["tap"]: ((n, TILE * t), f"_conv_tap({t}, {n})"),
        }

    PAGES = {  # each constant's page (in tiles) under a range's bindings
        "keep_c": lambda b: (1, 1),
        "keep_d": lambda b: (1, b["kw"]),
        "rows": lambda b: (b["kw"], 1),
        "prev": lambda b: (b["kw"], 1),
        "shift": lambda b: (b["kw"], b["kw"]),
        "tap": lambda b: (b["kw"], 1),
    }

    def buffers(self, sec: OperationWriter, s: sp.CausalConvOp, out: Lines) -> None:  # type: ignore[override]
        for k, n in self._names(sec, s).items():
            const_buffers(sec, out, n, self.PAGES[k])

    def engines(self, sec: OperationWriter, s: sp.CausalConvOp) -> list[str]:  # type: ignore[override]
        return [input_engine(sec, s.x)]

    def in_k_loop(self, s: sp.StageOp, key: str) -> bool:
        return key != "compute"

    def emit(  # type: ignore[override]
        self, sec: OperationWriter, out: Lines, s: sp.CausalConvOp, key: str, r: sp.SitesOp, b: dict
    ) -> None:
        kw, w = b["kw"], page(s.x, b)[1]
        names = self._names(sec, s)
        d = {k: const_dfb(sec, n, self.PAGES[k], b) for k, n in names.items()}
        if key != "compute":  # in the K loop, after x's page: in the compute's order
            k0 = expr(load_into(sec.stages, s.x).access.origin.data.results[0])
            out(f"sel = 1 if {k0 + kw} >= {sec.k_tiles} else 0  # the last block's C, D")
            const_read(out, d["keep_c"], f"{names['keep_c']}[sel:sel + 1, 0:1]")
            const_read(out, d["keep_d"], f"{names['keep_d']}[sel:sel + 1, 0:{kw}]")
            const_read(out, d["rows"], f"{names['rows']}[{k0}:{k0 + kw}, 0:1]")
            out(f"for j in range({s.taps}):")
            with out.indent():
                const_read(out, d["prev"], f"{names['prev']}[0:{kw}, j:j + 1]")
                j = ix("j")
                const_read(out, d["shift"], f"{names['shift']}[0:{kw}, {j * kw}:{(j + 1) * kw}]")
                const_read(out, d["tap"], f"{names['tap']}[0:{kw}, j:j + 1]")
            return
        x, wt, st = (sec.dfb(sp.buffer_of(v), r) for v in (s.x, s.weight, s.state))
        o, new = sec.dfb(sp.buffer_of(s.out), r), sec.dfb(sp.buffer_of(s.new_state), r)
        win = sec.dfb(sp.buffer_of(s.window), r)
        full = f"({kw}, {w})"
        act = ACTIVATIONS[s.activation.data]
        out(f"with {wt}.wait() as wt_blk, {st}.wait() as st_blk:")
        with out.indent():
            out(f"with {win}.reserve() as wb:")
            with out.indent():
                out("wb.store(st_blk)")
            out(f"for kb in range({sec.k_tiles // kw}):")
            with out.indent():
                out(
                    f"with {x}.wait() as x_blk, {win}.wait() as win_blk, {d['keep_c']}.wait() "
                    f"as c_blk, {d['keep_d']}.wait() as d_blk, {d['rows']}.wait() as m_blk, "
                    f"{o}.reserve() as o_blk:"
                )
                with out.indent():
                    out(f"acc = ttl.block.fill(0.0, {full})")
                    out(f"for j in range({s.taps}):")
                    with out.indent():
                        out(
                            f"with {d['prev']}.wait() as a_blk, {d['shift']}.wait() as b_blk, "
                            f"{d['tap']}.wait() as r_blk:"
                        )
                        with out.indent():
                            out("acc = acc + (r_blk @ wt_blk) * (a_blk @ win_blk + b_blk @ x_blk)")
                    out(f"o_blk.store({act} * ttl.block.broadcast(m_blk, dims=[-1], shape={full}))")
                    out("keep = c_blk @ win_blk + d_blk @ x_blk")
                out(f"with {win}.reserve() as wb:")
                with out.indent():
                    out("wb.store(keep)")
            out(f"with {win}.wait() as wb, {new}.reserve() as ns:")
            with out.indent():
                out("ns.store(wb)")


# The gated delta rule -------------------------------------------------------------------------


@prints(sp.GatedDeltaOp)
class GatedDeltaPrinter(StagePrinter):
    host = (_col_sel,)

    PAGES = {  # each constant's page (in tiles) under a range's bindings
        "tril": lambda b: (b["kw"], b["kw"]),
        "col": lambda b: (1, 1),
        "rows": lambda b: (b["kw"], 1),
    }

    def check(self, sec: OperationWriter, s: sp.GatedDeltaOp) -> None:  # type: ignore[override]
        for r in sec.ranges:
            b = r.bindings(sec.work.k_block)
            (_, dq), (h, _) = page(s.q, b), page(s.state, b)
            if s.head_dim % TILE or dq * TILE != s.head_dim or h != dq:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.gated_delta head_dim {s.head_dim} over {dq}-tile q pages and {h}-tile "
                    "state pages: printed for a head of whole tiles, one head per item",
                )

    def _names(self, sec: OperationWriter, s: sp.GatedDeltaOp) -> dict[str, str]:
        n = sec.work.k_block * TILE
        return {
            "tril": f"_tril_{n}",
            "col": "_col_sel",
            "rows": rows_mask(sec, s.rows, s.q)[0],
        }

    def constants(self, sec: OperationWriter, s: sp.GatedDeltaOp) -> Consts:  # type: ignore[override]
        n = sec.work.k_block * TILE
        names = self._names(sec, s)
        return {
            names["tril"]: ((n, n), f"np.tril(np.ones(({n}, {n}), np.float32))"),
            names["col"]: ((TILE, TILE * TILE), "_col_sel()"),
            names["rows"]: rows_mask(sec, s.rows, s.q)[1],
        }

    def buffers(self, sec: OperationWriter, s: sp.GatedDeltaOp, out: Lines) -> None:  # type: ignore[override]
        for k, n in self._names(sec, s).items():
            const_buffers(sec, out, n, self.PAGES[k])

    def engines(self, sec: OperationWriter, s: sp.GatedDeltaOp) -> list[str]:  # type: ignore[override]
        return [input_engine(sec, s.q)]

    def in_k_loop(self, s: sp.StageOp, key: str) -> bool:
        return key != "compute"

    def emit(  # type: ignore[override]
        self, sec: OperationWriter, out: Lines, s: sp.GatedDeltaOp, key: str, r: sp.SitesOp, b: dict
    ) -> None:
        kw, w = b["kw"], page(s.v, b)[1]
        dt = s.head_dim // TILE
        names = self._names(sec, s)
        d = {k: const_dfb(sec, n, self.PAGES[k], b) for k, n in names.items()}
        if key != "compute":  # in the K loop, after the chunk's pages: in the compute's order
            k0 = expr(load_into(sec.stages, s.q).access.origin.data.results[0])
            const_read(out, d["tril"], f"{names['tril']}[0:{kw}, 0:{kw}]")
            # the head's column in its tile of g and beta
            out(f"hc = {(ix('r0') // dt) % TILE}")
            const_read(out, d["col"], f"{names['col']}[0:1, hc:hc + 1]")
            const_read(out, d["rows"], f"{names['rows']}[{k0}:{k0 + kw}, 0:1]")
            return
        q, k, v, g, beta, st = (
            sec.dfb(sp.buffer_of(x), r) for x in (s.q, s.k, s.v, s.g, s.beta, s.state)
        )
        o, new = sec.dfb(sp.buffer_of(s.out), r), sec.dfb(sp.buffer_of(s.new_state), r)
        run = sec.dfb(sp.buffer_of(s.running), r)
        cc, col, kd, kv, sw = (
            f"({kw}, {kw})",
            f"({kw}, 1)",
            f"({kw}, {dt})",
            f"({kw}, {w})",
            f"({dt}, {w})",
        )

        def wide(blk: str, shape: str) -> str:  # column 0 to every column
            return f"ttl.block.broadcast({blk}, dims=[-1], shape={shape})"

        out(f"with {st}.wait() as s0:")
        with out.indent():
            out(f"with {run}.reserve() as sb:")
            with out.indent():
                out("sb.store(s0)")
        out(f"for kb in range({sec.k_tiles // kw}):")
        with out.indent():
            out(
                f"with {q}.wait() as q_blk, {k}.wait() as k_blk, {v}.wait() as v_blk, "
                f"{g}.wait() as g_blk, {beta}.wait() as b_blk, {run}.wait() as s_blk, "
                f"{d['tril']}.wait() as l_blk, {d['col']}.wait() as c_row, "
                f"{d['rows']}.wait() as m_blk, {o}.reserve() as o_blk:"
            )
            with out.indent():
                out(f"sel = ttl.block.broadcast(c_row, dims=[0], shape={col})")
                out(f"gc = ttl.math.reduce_sum(g_blk * sel, dims=[-1], shape={col}) * m_blk")
                out(f"bc = ttl.math.reduce_sum(b_blk * sel, dims=[-1], shape={col}) * m_blk")
                out(f"kk = k_blk * {wide('m_blk', kd)}")
                out(f"qq = q_blk * ttl.block.fill({s.scale.value.data!r}, {kd})")
                out("cg = l_blk @ gc")
                out(
                    f"dm = ttl.math.exp(({wide('cg', cc)} - ttl.block.broadcast("
                    f"ttl.block.transpose(cg), dims=[0], shape={cc})) * l_blk) * l_blk"
                )
                out("eye = l_blk * ttl.block.transpose(l_blk)")
                out(f"kb_ = kk * {wide('bc', kd)}")
                out(
                    f"a = (ttl.block.fill(0.0, {cc}) - kb_ @ ttl.block.transpose(kk)) * dm * "
                    "(l_blk - eye)"
                )
                # T = (I - A)^-1 by the reference's forward substitution, a row at a time:
                # T[i] = e_i + A[i] T (A strictly lower: only the rows above, already final),
                # i.e. T <- (I + M_i A) T with M_i the mask of row i: eq(row index + 1, i + 1),
                # the row index + 1 being L's row sums. (T appears once per step: the
                # simulator's record of a temporary's sources doubles with every second use.)
                out(
                    f"ri = ttl.block.broadcast(ttl.math.reduce_sum(l_blk, dims=[-1], "
                    f"shape={col}), dims=[-1], shape={cc})"
                )
                out("tri = eye")
                out(f"for i in range(1, {kw * TILE}):")
                with out.indent():
                    out(f"at_i = {eq('ri', f'ttl.block.fill(i + 1.0, {cc})', cc)}")
                    out("tri = (eye + at_i * a) @ tri")
                out(f"eg = ttl.math.exp({wide('cg', kd)})")
                out(f"vn = tri @ (v_blk * {wide('bc', kv)}) - (tri @ (kb_ * eg)) @ s_blk")
                out("o = (qq * eg) @ s_blk + ((qq @ ttl.block.transpose(kk)) * dm) @ vn")
                out(f"o_blk.store(o * {wide('m_blk', kv)})")
                out("gl = ttl.math.reduce_sum(gc, dims=[0], shape=(1, 1))")
                out(
                    f"tail = kk * ttl.math.exp(ttl.block.broadcast(gl, dims=[0, -1], shape={kd}) "
                    f"- {wide('cg', kd)})"
                )
                out(
                    f"s_new = s_blk * ttl.math.exp(ttl.block.broadcast(gl, dims=[0, -1], "
                    f"shape={sw})) + ttl.block.transpose(tail) @ vn"
                )
            out(f"with {run}.reserve() as sb:")
            with out.indent():
                out("sb.store(s_new)")
        out(f"with {run}.wait() as sb, {new}.reserve() as ns:")
        with out.indent():
            out("ns.store(sb)")
