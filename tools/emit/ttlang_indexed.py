"""The stages that use a value read at run time or produce an index (`-t ttlang`): sp.gather,
sp.scatter, sp.attention, sp.argmax (docs/backend-ttlang.md#indexed).

TT-Lang copies are tile granular and its blocks are whole units, so a row moved to or from a
runtime row is a tile read plus block math with one-hot tiles:

- **gather**: per real row i of the page, the movement kernel reads id = ids[row] (a scalar read
  of the index tensor: SIMULATOR-ONLY, TT-Lang has no scalar read in a datamovement kernel),
  copies the table's tile row holding id ([1, w] tiles) and the one-hot tile E(i, id % 32) of
  the constant `_onehot`; compute sums E @ T over the rows and pushes the page.
- **scatter**: p = pos[0] read the same way (SIMULATOR-ONLY); per real row i, a read-modify-write
  of the cache tile row holding p + r: new = old - E(j, j) @ old + E(j, i) @ src, j = (p + r) % 32.
- **attention**: block math only (no runtime scalar in a kernel): the position page the IR loads
  is broadcast from element (0, 0); a constant mask tensor `_attn_d_*` (j - i for real query i,
  key j, else 1e9) read per K block gives the causal mask as gt(d, pos); online softmax in
  temporaries (the dest registers). Compilable constructs throughout.
- **argmax**: block math only: per K block the row maximum, eq against it, the least column
  index of a hit (constant `_argmax_idx_*`) as -reduce_max(-candidates); the running pair is
  combined with gt; the indices (column 0) are transposed into row 0 of the i32 page.

The DFBs and DRAM reads these add (the one-hot and mask tiles, a cache tile row per scattered
row) are not in the sized IR; the docs list them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.sp.attrs import format_expr

from .ttlang_prelude import TTLangUnsupported

if TYPE_CHECKING:
    from .ttlang import OperationWriter
    from .ttlang_prelude import Lines

TILE = 32
BIG = 1e30
ONEHOT = "_onehot"

INDEXED = (sp.GatherOp, sp.ScatterOp, sp.AttentionOp, sp.ArgmaxOp)


def _tname(name: str) -> str:
    return "t_" + "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def _expr(e: object) -> str:
    text = format_expr(e, tuple(sp.LOOP_VARS))  # type: ignore[arg-type]
    return text.replace(" floordiv ", " // ").replace(" mod ", " % ")


def _pad(n: int) -> int:
    return -(-n // TILE) * TILE


def _page(v, b: dict) -> tuple[int, int]:  # noqa: ANN001
    return sp.buffer_of(v).page.resolve(b)


FLASH_DECODING_REFUSAL = (
    "flash decoding (sp.attention splits, sp.attention_combine) is not printed: compile with "
    "kv-splits=1, as spatial-run --backend tt-lang-sim does"
)


def check_indexed(sec: OperationWriter, s: sp.StageOp) -> None:
    """Refusals of the indexed stages, by name."""
    for r in sec.ranges:
        b = r.bindings(sec.work.k_block)
        if isinstance(s, sp.GatherOp | sp.ScatterOp):
            eh, _ = s.access.extent.resolve(b)
            if eh != 1:
                raise TTLangUnsupported(
                    sec.name, f"{s.name} over {eh} tile rows per page (printed: one tile row)"
                )
        elif isinstance(s, sp.AttentionOp):
            h, w = _page(s.q, b)
            if s.splits is not None:
                raise TTLangUnsupported(sec.name, FLASH_DECODING_REFUSAL)
            if s.head_dim % TILE or s.v_head_dim != s.head_dim:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.attention head_dim {s.head_dim} / v_head_dim {s.v_head_dim}: printed "
                    "for equal head dims of whole tiles",
                )
            if w * TILE != s.head_dim:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.attention: a {w}-tile query page holds {w * TILE // s.head_dim} heads; "
                    "TT-Lang blocks are whole units (no per-head view of a block), so one head "
                    "per item is printed",
                )
        elif isinstance(s, sp.ArgmaxOp):
            h, _ = _page(s.x, b)
            if h != 1:
                raise TTLangUnsupported(sec.name, f"sp.argmax over {h}-tile-row pages")


def indexed_constants(sec: OperationWriter) -> dict[str, tuple[tuple[int, int], str]]:
    out: dict[str, tuple[tuple[int, int], str]] = {}
    for s in sec.stages:
        if isinstance(s, sp.GatherOp | sp.ScatterOp):
            out[ONEHOT] = ((TILE, TILE * TILE * TILE), "_onehot()")
        elif isinstance(s, sp.AttentionOp):
            q = sec.tensors[_load_of(sec, s.q).tensor.root_reference.data]
            k = sec.tensors[_load_of(sec, s.k).tensor.root_reference.data]
            qp, kp = _pad(q.type.get_shape()[0]), _pad(k.type.get_shape()[0])
            causal = s.causal is not None
            name = f"_attn_d_{s.queries}_{s.keys}_{qp}_{kp}_{int(causal)}"
            out[name] = ((qp, kp), f"_attn_d({s.queries}, {s.keys}, {qp}, {kp}, {causal})")
        elif isinstance(s, sp.ArgmaxOp):
            cp = _pad(s.cols)
            out[f"_argmax_idx_{s.cols}_{cp}"] = ((TILE, cp), f"_argmax_idx({s.cols}, {cp})")
            out[f"_argmax_neg_{s.cols}_{cp}"] = ((TILE, cp), f"_argmax_neg({s.cols}, {cp})")
    return out


def _load_of(sec: OperationWriter, v) -> sp.LoadOp:  # noqa: ANN001
    buf = sp.buffer_of(v)
    return next(
        st for st in sec.stages if isinstance(st, sp.LoadOp) and sp.buffer_of(st.dst) is buf
    )


def _engine_key(s: sp.StageOp) -> str:
    text = s.engine.text()
    return "compute" if text.startswith("compute") else " ".join(text.split()[:2])


def extra_engines(sec: OperationWriter, s: sp.StageOp) -> list[str]:
    """The kernels an indexed stage is printed in besides its own engine's."""
    if isinstance(s, sp.GatherOp | sp.ScatterOp):
        return ["compute"]
    if isinstance(s, sp.AttentionOp):
        return [_engine_key(_load_of(sec, s.k))]
    if isinstance(s, sp.ArgmaxOp):
        return [_engine_key(_load_of(sec, s.x))]
    return []


def in_k_loop(s: sp.StageOp, key: str) -> bool:
    """Whether the stage's part in kernel `key` runs inside the K loop of the loads."""
    return isinstance(s, sp.AttentionOp | sp.ArgmaxOp) and key != "compute"


def _pages(sec: OperationWriter, f) -> list[tuple[int, int]]:  # noqa: ANN001
    pages = []
    for r in sec.ranges:
        p = f(r.bindings(sec.work.k_block))
        if p not in pages:
            pages.append(p)
    return pages


def _dfb(base: str, page: tuple[int, int], pages: list) -> str:  # noqa: ANN001
    return f"{base}_dfb" if len(pages) == 1 else f"{base}_dfb_{page[0]}x{page[1]}"


def emit_indexed_buffers(sec: OperationWriter, out: Lines) -> None:
    """The DFBs the indexed stages add (not in the sized IR)."""
    for s in sec.stages:
        if isinstance(s, sp.GatherOp | sp.ScatterOp):
            table = _tname(s.tensor.root_reference.data)
            pages = _pages(sec, lambda b, s=s: (1, s.access.extent.resolve(b)[1]))
            names = ("g_tab", "g_sel") if isinstance(s, sp.GatherOp) else ("s_old", "s_sel")
            for p in pages:
                out(
                    f"{_dfb(names[0], p, pages)} = ttl.make_dataflow_buffer_like({table}, "
                    f"shape={p}, block_count=2)"
                )
                if isinstance(s, sp.ScatterOp):
                    out(
                        f"{_dfb('s_new', p, pages)} = ttl.make_dataflow_buffer_like({table}, "
                        f"shape={p}, block_count=2)"
                    )
            out(
                f"{names[1]}_dfb = ttl.make_dataflow_buffer_like({ONEHOT}, shape=(1, 1), "
                "block_count=2)"
            )
            if isinstance(s, sp.ScatterOp):
                out(
                    f"s_drop_dfb = ttl.make_dataflow_buffer_like({ONEHOT}, shape=(1, 1), "
                    "block_count=2)"
                )
        elif isinstance(s, sp.AttentionOp | sp.ArgmaxOp):
            consts = [n for n in sec.consts if n.startswith(("_attn_d", "_argmax"))]
            src = s.q if isinstance(s, sp.AttentionOp) else s.x
            pages = _pages(
                sec,
                lambda b, s=s, src=src: (
                    _page(src, b)[0],
                    _page(s.k, b)[0] if isinstance(s, sp.AttentionOp) else _page(s.x, b)[1],
                ),
            )
            for n in consts:
                for p in pages:
                    out(
                        f"{_dfb(n.lstrip('_'), p, pages)} = ttl.make_dataflow_buffer_like({n}, "
                        f"shape={p}, block_count=2)"
                    )


def emit_indexed(
    sec: OperationWriter, out: Lines, s: sp.StageOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    if isinstance(s, sp.GatherOp):
        _gather(sec, out, s, key, r, b)
    elif isinstance(s, sp.ScatterOp):
        _scatter(sec, out, s, key, r, b)
    elif isinstance(s, sp.AttentionOp):
        _attention(sec, out, s, key, r, b)
    else:
        assert isinstance(s, sp.ArgmaxOp)
        _argmax(sec, out, s, key, r, b)


def _rows_line(out: Lines, s: sp.GatherOp | sp.ScatterOp) -> tuple[str, str]:
    row, col = (_expr(e) for e in s.access.origin.data.results)
    out(f"n_rows = max(0, min({TILE}, {s.count} - ({row}) * {TILE}))")
    return row, col


def _gather(
    sec: OperationWriter, out: Lines, s: sp.GatherOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    _, w = s.access.extent.resolve(b)
    pages = _pages(sec, lambda bb: (1, s.access.extent.resolve(bb)[1]))
    tab, sel = _dfb("g_tab", (1, w), pages), "g_sel_dfb"
    table = _tname(s.tensor.root_reference.data)
    ids = _tname(s.index.root_reference.data)
    n_table = sec.tensors[s.tensor.root_reference.data].type.get_shape()[0]
    row, col = _rows_line(out, s)
    if key == "compute":
        o = sec.dfb(sp.buffer_of(s.dst), r)
        out("acc = None")
        out("for i in range(n_rows):")
        with out.indent():
            out(f"with {sel}.wait() as e_blk, {tab}.wait() as t_blk:")
            with out.indent():
                out("part = e_blk @ t_blk")
                out("acc = part if acc is None else acc + part")
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out(f"o_blk.store(acc if acc is not None else ttl.block.fill(0.0, (1, {w})))")
        return
    out("for i in range(n_rows):")
    with out.indent():
        out(f"rid = _index({ids}, ({row}) * {TILE} + i)  # simulator-only: a scalar read")
        out(f"if not 0 <= rid < {n_table}:")
        with out.indent():
            out(f"raise RuntimeError(f'gather: id {{rid}} outside [0, {n_table})')")
        out(f"with {tab}.reserve() as blk:")
        with out.indent():
            out(f"tx = ttl.copy({table}[rid // {TILE}:rid // {TILE} + 1, {col}:{col} + {w}], blk)")
            out("tx.wait()")
        out(f"with {sel}.reserve() as blk:")
        with out.indent():
            out(f"e = i * {TILE} + rid % {TILE}")
            out(f"tx = ttl.copy({ONEHOT}[0:1, e:e + 1], blk)")
            out("tx.wait()")


def _scatter(
    sec: OperationWriter, out: Lines, s: sp.ScatterOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    _, w = s.access.extent.resolve(b)
    pages = _pages(sec, lambda bb: (1, s.access.extent.resolve(bb)[1]))
    old, new = _dfb("s_old", (1, w), pages), _dfb("s_new", (1, w), pages)
    cache = _tname(s.tensor.root_reference.data)
    pos = _tname(s.index.root_reference.data)
    n_cache = sec.tensors[s.tensor.root_reference.data].type.get_shape()[0]
    row, col = _rows_line(out, s)
    if key == "compute":
        src = sec.dfb(sp.buffer_of(s.src), r)
        out(f"with {src}.wait() as src_blk:")
        with out.indent():
            out("for i in range(n_rows):")
            with out.indent():
                out(
                    f"with {old}.wait() as old_blk, s_sel_dfb.wait() as e_blk, "
                    f"s_drop_dfb.wait() as d_blk, {new}.reserve() as o_blk:"
                )
                with out.indent():
                    out("o_blk.store(old_blk - d_blk @ old_blk + e_blk @ src_blk)")
        return
    out(f"p = _index({pos}, 0)  # simulator-only: a scalar read")
    out(f"if p < 0 or p + {s.count} > {n_cache}:")
    with out.indent():
        out(f"raise RuntimeError(f'scatter: rows {{p}}..{{p + {s.count}}} outside [0, {n_cache})')")
    out("for i in range(n_rows):")
    with out.indent():
        out(f"dst = p + ({row}) * {TILE} + i")
        out(f"j = dst % {TILE}")
        view = f"{cache}[dst // {TILE}:dst // {TILE} + 1, {col}:{col} + {w}]"
        out(f"with {old}.reserve() as blk:")
        with out.indent():
            out(f"tx = ttl.copy({view}, blk)")
            out("tx.wait()")
        for dfb, tile in (("s_sel_dfb", f"j * {TILE} + i"), ("s_drop_dfb", f"j * {TILE} + j")):
            out(f"with {dfb}.reserve() as blk:")
            with out.indent():
                out(f"e = {tile}")
                out(f"tx = ttl.copy({ONEHOT}[0:1, e:e + 1], blk)")
                out("tx.wait()")
        out(f"with {new}.wait() as blk:")
        with out.indent():
            out(f"tx = ttl.copy(blk, {view})")
            out("tx.wait()")


def _const_name(sec: OperationWriter, prefix: str) -> str:
    return next(n for n in sec.consts if n.startswith(prefix))


def _attention(
    sec: OperationWriter, out: Lines, s: sp.AttentionOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    h, w = _page(s.q, b)
    kw = _page(s.k, b)[0]
    dname = _const_name(sec, "_attn_d")
    pages = _pages(sec, lambda bb: (_page(s.q, bb)[0], _page(s.k, bb)[0]))
    ddfb = _dfb(dname.lstrip("_"), (h, kw), pages)
    if key != "compute":  # inside the K loop of the K/V loads
        qrow = _expr(_load_of(sec, s.q).access.origin.data.results[0])
        krow = _expr(_load_of(sec, s.k).access.origin.data.results[0])
        out(f"with {ddfb}.reserve() as blk:")
        with out.indent():
            out(f"tx = ttl.copy({dname}[{qrow}:{qrow} + {h}, {krow}:{krow} + {kw}], blk)")
            out("tx.wait()")
        return
    q = sec.dfb(sp.buffer_of(s.q), r)
    k = sec.dfb(sp.buffer_of(s.k), r)
    v = sec.dfb(sp.buffer_of(s.v), r)
    o = sec.dfb(sp.buffer_of(s.out), r)
    k_blocks = sec.k_tiles // b["kw"]
    sk, so, col = f"({h}, {kw})", f"({h}, {w})", f"({h}, 1)"
    causal = s.causal is not None
    withs = [f"{q}.wait() as q_blk"]
    if s.pos is not None and causal:
        withs.append(f"{sec.dfb(sp.buffer_of(s.pos), r)}.wait() as pos_blk")
    elif s.pos is not None:
        withs.append(f"{sec.dfb(sp.buffer_of(s.pos), r)}.wait() as pos_blk")
    out("with " + ", ".join(withs) + ":")
    with out.indent():
        if causal and s.pos is not None:
            out(f"thr = ttl.block.broadcast(pos_blk, dims=[0, -1], shape={sk})")
        elif causal:
            out(f"thr = ttl.block.fill({float(s.keys - s.queries)!r}, {sk})")
        else:
            out(f"thr = ttl.block.fill(0.5, {sk})")
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {k}.wait() as k_blk, {v}.wait() as v_blk, {ddfb}.wait() as d_blk:")
            with out.indent():
                out(
                    f"sc = (q_blk @ ttl.block.transpose(k_blk)) * ttl.block.fill({s.scale.value.data!r}, {sk})"
                )
                out("off = ttl.math.gt(d_blk, thr)")
                out(f"sc = sc - off * ttl.block.fill({BIG!r}, {sk})")
                out(f"mx = ttl.math.reduce_max(sc, dims=[-1], shape={col})")
                out("if kb == 0:")
                with out.indent():
                    out("m = mx")
                out("else:")
                with out.indent():
                    out("m_new = ttl.math.max(m, mx)")
                    out("alpha = ttl.math.exp(m - m_new)")
                    out("m = m_new")
                out(
                    f"pr = ttl.math.exp(sc - ttl.block.broadcast(m, dims=[-1], shape={sk})) * "
                    f"(ttl.block.fill(1.0, {sk}) - off)"
                )
                out(f"ls = ttl.math.reduce_sum(pr, dims=[-1], shape={col})")
                out("pv = pr @ v_blk")
                out("if kb == 0:")
                with out.indent():
                    out("l_run, o_run = ls, pv")
                out("else:")
                with out.indent():
                    out("l_run = l_run * alpha + ls")
                    out(f"o_run = o_run * ttl.block.broadcast(alpha, dims=[-1], shape={so}) + pv")
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out(
                f"o_blk.store(o_run / ttl.block.broadcast(l_run + ttl.block.fill(1e-30, {col}), "
                f"dims=[-1], shape={so}))"
            )


def _argmax(
    sec: OperationWriter, out: Lines, s: sp.ArgmaxOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    h, kw = _page(s.x, b)
    iname, nname = _const_name(sec, "_argmax_idx"), _const_name(sec, "_argmax_neg")
    pages = _pages(sec, lambda bb: _page(s.x, bb))
    idfb = _dfb(iname.lstrip("_"), (h, kw), pages)
    ndfb = _dfb(nname.lstrip("_"), (h, kw), pages)
    if key != "compute":
        ccol = _expr(_load_of(sec, s.x).access.origin.data.results[1])
        for n, d in ((iname, idfb), (nname, ndfb)):
            out(f"with {d}.reserve() as blk:")
            with out.indent():
                out(f"tx = ttl.copy({n}[0:{h}, {ccol}:{ccol} + {kw}], blk)")
                out("tx.wait()")
        return
    x = sec.dfb(sp.buffer_of(s.x), r)
    o = sec.dfb(sp.buffer_of(s.out), r)
    k_blocks = sec.k_tiles // b["kw"]
    full, col = f"({h}, {kw})", f"({h}, 1)"
    out(f"for kb in range({k_blocks}):")
    with out.indent():
        out(f"with {x}.wait() as x_blk, {idfb}.wait() as i_blk, {ndfb}.wait() as n_blk:")
        with out.indent():
            out("xm = x_blk + n_blk")
            out(f"bm = ttl.math.reduce_max(xm, dims=[-1], shape={col})")
            out(f"hit = ttl.math.eq(xm, ttl.block.broadcast(bm, dims=[-1], shape={full}))")
            out(
                f"cand = hit * i_blk + (ttl.block.fill(1.0, {full}) - hit) * "
                f"ttl.block.fill(1e9, {full})"
            )
            out(
                f"bi = ttl.block.fill(0.0, {col}) - ttl.math.reduce_max("
                f"ttl.block.fill(0.0, {full}) - cand, dims=[-1], shape={col})"
            )
            out("if kb == 0:")
            with out.indent():
                out("best_m, best_i = bm, bi")
            out("else:")
            with out.indent():
                out("take = ttl.math.gt(bm, best_m)")
                out(f"best_i = take * bi + (ttl.block.fill(1.0, {col}) - take) * best_i")
                out("best_m = ttl.math.max(best_m, bm)")
    out(f"with {o}.reserve() as o_blk:")
    with out.indent():
        out("o_blk.store(ttl.block.transpose(best_i))")
