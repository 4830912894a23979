"""The stages that use a value read at run time or produce an index (`-t ttlang`): sp.gather,
sp.scatter, sp.attention, sp.argmax (docs/backend-ttlang.md#indexed).

No kernel addresses DRAM by a value it reads: the TT-Lang specification has no scalar read of
a tensor or a block in a kernel and no runtime argument (an operation takes TT-NN tensors), and
tt-metal moves rows at run-time addresses with ttnn ops between its operations. So:

- **gather** and **scatter**, each a section of its own with its store or load, print as a
  host step (`HostStep`): a function that calls host.py's `_embedding` (on a chip
  `ttnn.embedding`) or `_update_cache` (`ttnn.experimental.paged_update_cache`, the position
  a device tensor). The report prices the plan's rows; ttnn moves the same rows its own way.
- **attention**: block math only (no runtime scalar in a kernel): the position page the IR loads
  is broadcast from element (0, 0); a constant mask tensor `_attn_d_*` (j - i for real query i,
  key j, else 1e9) read per K block gives the causal mask as gt(d, pos) (stage.py: built from
  sign and relu, the spec having no comparison); online softmax in
  temporaries (the dest registers). An item holding g > 1 query heads (of one kv head) selects
  head j's queries as q @ C_j, C_j a one-hot column selector of the identity streamed through
  one DFB, and pushes each head's output as its sub-block where the IR's sub-blocks are the
  heads, else puts it back as o_j @ transpose(C_j). Compilable constructs throughout.
- **argmax**: block math only: per K block the row maximum, eq against it, the least column
  index of a hit within the block as -reduce_max(-candidates), plus the block's offset (a
  running sum of the block width); the running pair is combined with gt; the indices (column 0)
  are transposed into row 0 of the i32 page. The last block's padding columns are masked to
  -1e30 by comparing the column indices with the count of its real ones. Its constants
  (`_argmax_cols_*`: the indices of one K block, the width, the count less 0.5; f32, as fill
  blocks are bf16) are read once per item and held: kw + 2 tiles of L1 whatever the row's
  length, not two pages a K block (1 MiB beside the 776 KiB of Llama-3-8B's `@token` DFBs).

The DFBs and DRAM reads these add (the head selector and mask tiles, argmax's index tiles) are
not in the sized IR; the docs list them.
"""

from __future__ import annotations

from contextlib import nullcontext
from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.names import ident
from spatial_dialect.tools.backend.ttlang import flash
from spatial_dialect.tools.backend.ttlang.stage import const_read, engine_key, eq, gt, load_into
from spatial_dialect.tools.backend.ttlang.stage import dfb_name as _dfb
from spatial_dialect.tools.backend.ttlang.stage import expr as _expr
from spatial_dialect.tools.backend.ttlang.stage import pad as _pad
from spatial_dialect.tools.backend.ttlang.stage import page as _page
from spatial_dialect.tools.backend.ttlang.stage import pages as _pages
from spatial_dialect.tools.backend.ttlang.stage import tname as _tname
from spatial_dialect.tools.backend.ttlang.text import Lines, plan_lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter

BIG = 1e30

INDEXED = (sp.GatherOp, sp.ScatterOp, sp.AttentionOp, sp.ArgmaxOp)


def check_indexed(sec: OperationWriter, s: sp.StageOp) -> None:
    """Refusals of the indexed stages, by name."""
    for r in sec.ranges:
        b = r.bindings(sec.work.k_block)
        if isinstance(s, sp.GatherOp | sp.ScatterOp):  # host_step takes them when alone
            raise TTLangUnsupported(
                sec.name,
                f"{s.name} beside {len(sec.stages) - 1} other stages: printed only as a section "
                "of its own (a ttnn op between the operations)",
            )
        if isinstance(s, sp.AttentionOp):
            h, w = _page(s.q, b)
            if s.users is not None:
                _check_users(sec, s, h)
            if s.head_dim % TILE or s.v_head_dim % TILE:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.attention head_dim {s.head_dim} / v_head_dim {s.v_head_dim}: printed "
                    "for head dims of whole tiles",
                )
            if (w * TILE) % s.head_dim:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.attention: a {w}-tile query page is not whole heads of "
                    f"{s.head_dim // TILE} tiles",
                )
        elif isinstance(s, sp.ArgmaxOp):
            h, _ = _page(s.x, b)
            if h != 1:
                raise TTLangUnsupported(sec.name, f"sp.argmax over {h}-tile-row pages")


def _check_users(sec: OperationWriter, s: sp.AttentionOp, h: int) -> None:
    """The batched attention is printed for one query row per user, all in one tile row: the
    position page's column (pos transposed) is then every query row's own threshold."""
    users = s.users
    assert users is not None
    if s.splits is not None and s.by_users is None:  # flash.py's partials: one row's m and l
        raise TTLangUnsupported(
            sec.name,
            f"sp.attention users {users} splits {s.splits}: flash decoding is printed for one "
            "query row (its m and l spread over rows 2 and 3 of a partials tile); link does not "
            "choose this split on a target without batched_kv_splits",
        )
    if s.queries != users:
        raise TTLangUnsupported(
            sec.name,
            f"sp.attention users {users} with {s.queries // users} query rows each: printed "
            "for one per user",
        )
    if h != 1 or users > TILE:
        raise TTLangUnsupported(
            sec.name,
            f"sp.attention users {users} on a {h}-tile-row query page: printed for the users "
            f"in one tile row (at most {TILE})",
        )


def indexed_constants(sec: OperationWriter) -> dict[str, tuple[tuple[int, int], str]]:
    out: dict[str, tuple[tuple[int, int], str]] = {}
    for s in sec.stages:
        if isinstance(s, sp.AttentionOp):
            q = sec.tensors[load_into(sec.stages, s.q).tensor.root_reference.data]
            k = sec.tensors[load_into(sec.stages, s.k).tensor.root_reference.data]
            qp, kp = _pad(q.type.get_shape()[0]), _pad(k.type.get_shape()[0])
            causal = s.causal is not None
            if s.users is not None:
                name = f"_attn_d_users_{s.users}_{s.capacity}_{qp}_{kp}"
                out[name] = ((qp, kp), f"_attn_users_d({s.users}, {s.capacity}, {qp}, {kp})")
            else:
                name = f"_attn_d_{s.queries}_{s.keys}_{qp}_{kp}_{int(causal)}"
                out[name] = ((qp, kp), f"_attn_d({s.queries}, {s.keys}, {qp}, {kp}, {causal})")
            if s.splits is not None and s.by_users is None:
                out.update(flash.split_constants(s))
        elif isinstance(s, sp.ArgmaxOp):
            for kw, last in dict.fromkeys(_argmax_blocks(sec, s, r) for r in sec.ranges):
                out[_argmax_const(kw, last)] = (
                    (TILE, TILE * kw + 2 * TILE),
                    f"_argmax_cols({kw}, {last})",
                )
    return out


def _argmax_blocks(sec: OperationWriter, s: sp.ArgmaxOp, r: sp.SitesOp) -> tuple[int, int]:
    """(kw, last): a range's K block in tiles and the real columns of its last K block."""
    kw = _page(s.x, r.bindings(sec.work.k_block))[1]
    return kw, s.cols - (sec.k_tiles // kw - 1) * TILE * kw


def _argmax_const(kw: int, last: int) -> str:
    return f"_argmax_cols_{kw}_{last}"


def heads_per_item(s: sp.AttentionOp, b: dict) -> int:
    """g: the query heads side by side in an item's query page (all of one kv head's group:
    the IR's item space, sp.AttentionOp), read off the page width."""
    return _page(s.q, b)[1] * TILE // s.head_dim


def _attention_of(sec: OperationWriter) -> sp.AttentionOp | None:
    return next((s for s in sec.stages if isinstance(s, sp.AttentionOp)), None)


def head_selector_pages(sec: OperationWriter) -> list[tuple[int, int]]:
    """The pages of an attention's head selectors, per range whose items hold g > 1 query heads:
    C_j is the [w, D] tiles of an identity from column j * D (w = g * D, D = head_dim in tiles),
    so q_j = q @ C_j; head j's output goes back as o_j @ transpose(C'_j), C'_j the same with
    D = v_head_dim (one selector serves both when the head dims agree)."""
    s = _attention_of(sec)
    if s is None:
        return []
    pages = []
    for r in sec.ranges:
        b = r.bindings(sec.work.k_block)
        g = heads_per_item(s, b)
        if g == 1:
            continue
        for d in dict.fromkeys((s.head_dim, s.v_head_dim)):
            page = (g * d // TILE, d // TILE)
            if page not in pages:
                pages.append(page)
    return pages


def head_sub_blocks(sec: OperationWriter, b: dict) -> bool:
    """Whether an attention's output sub-blocks are its heads (sh = h, sw = one head's tiles):
    each head's output is then pushed as it is, with no selector and no reassembly."""
    s = _attention_of(sec)
    return s is not None and b["sh"] == b["h"] and b["sw"] * TILE == s.v_head_dim


def extra_engines(sec: OperationWriter, s: sp.StageOp) -> list[str]:
    """The kernels an indexed stage is printed in besides its own engine's."""
    if isinstance(s, sp.AttentionOp):
        return [engine_key(load_into(sec.stages, s.k))]
    if isinstance(s, sp.ArgmaxOp):
        return [engine_key(load_into(sec.stages, s.x))]
    return []


def in_k_loop(s: sp.StageOp, key: str) -> bool:
    """Whether the stage's part in kernel `key` runs inside the K loop of the loads."""
    return isinstance(s, sp.AttentionOp | sp.ArgmaxOp) and key != "compute"


def emit_indexed_buffers(sec: OperationWriter, out: Lines) -> None:
    """The DFBs the indexed stages add (not in the sized IR)."""
    for s in sec.stages:
        if isinstance(s, sp.ArgmaxOp):
            _argmax_buffers(sec, s, out)
        if not isinstance(s, sp.AttentionOp):
            continue
        heads = head_selector_pages(sec)
        for p in heads:  # streamed one at a time: g selectors per item, not held
            out(
                f"{_dfb('heads', p, heads)} = ttl.make_dataflow_buffer_like({sec.eye}, "
                f"shape={p}, block_count=1)"
            )
        if s.splits is not None and s.by_users is None:
            flash.split_buffers(sec, s, out)
        consts = [n for n in sec.consts if n.startswith("_attn_d")]
        pages = _pages(sec, lambda b, s=s: (_page(s.q, b)[0], _page(s.k, b)[0]))
        for n in consts:
            for p in pages:
                out(
                    f"{_dfb(n.lstrip('_'), p, pages)} = ttl.make_dataflow_buffer_like({n}, "
                    f"shape={p}, block_count=2)"
                )


def emit_indexed(
    sec: OperationWriter, out: Lines, s: sp.StageOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    if isinstance(s, sp.AttentionOp):
        _attention(sec, out, s, key, r, b)
    else:
        assert isinstance(s, sp.ArgmaxOp)
        _argmax(sec, out, s, key, r, b)


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
    g, dt, dvt = heads_per_item(s, b), s.head_dim // TILE, s.v_head_dim // TILE
    sel_pages = head_selector_pages(sec)
    heads = _dfb("heads", (w, dt), sel_pages) if g > 1 else None
    heads_v = _dfb("heads", (g * dvt, dvt), sel_pages) if g > 1 else None
    reassemble = g > 1 and not head_sub_blocks(sec, b)
    if key != "compute":  # inside the K loop of the K/V loads
        qrow = _expr(load_into(sec.stages, s.q).access.origin.data.results[0])
        krow = _expr(load_into(sec.stages, s.k).access.origin.data.results[0])
        if heads:  # the queries' selectors, popped by compute before its first K block
            _head_selector_reads(out, sec, heads, "k0 == 0", g, w, dt)
        out(f"with {ddfb}.reserve() as blk:")
        with out.indent():
            out(f"tx = ttl.copy({dname}[{qrow}:{qrow + h}, {krow}:{krow + kw}], blk)")
            out("tx.wait()")
        if s.splits is not None and s.by_users is None:  # the partials' masks, after the last
            flash.split_mask_reads(sec, s, out, b)
        if heads_v and reassemble:  # the output's, popped after the last K block
            last = sec.k_tiles - b["kw"]
            _head_selector_reads(out, sec, heads_v, f"k0 == {last}", g, g * dvt, dvt)
        return
    q = sec.dfb(sp.buffer_of(s.q), r)
    k = sec.dfb(sp.buffer_of(s.k), r)
    v = sec.dfb(sp.buffer_of(s.v), r)
    o = sec.dfb(sp.buffer_of(s.out), r)
    k_blocks = sec.k_tiles // b["kw"]
    sk, so, col = f"({h}, {kw})", f"({h}, {dvt})", f"({h}, 1)"
    causal = s.causal is not None
    withs = [f"{q}.wait() as q_blk"]
    if s.pos is not None:
        withs.append(f"{sec.dfb(sp.buffer_of(s.pos), r)}.wait() as pos_blk")
    out("with " + ", ".join(withs) + ":")
    with out.indent():
        if s.users is not None:  # query row u is user u: its threshold is pos[u]
            out(f"thr = ttl.block.broadcast(ttl.block.transpose(pos_blk), dims=[-1], shape={sk})")
        elif causal and s.pos is not None:
            out(f"thr = ttl.block.broadcast(pos_blk, dims=[0, -1], shape={sk})")
        elif causal:
            out(f"thr = ttl.block.fill({float(s.keys - s.queries)!r}, {sk})")
        else:
            out(f"thr = ttl.block.fill(0.5, {sk})")
        if heads:
            out(f"# {g} heads of one kv head: head j's queries are q @ C_j")
            for j in range(g):
                out(f"with {heads}.wait() as c_blk:")
                with out.indent():
                    out(f"q_{j} = q_blk @ c_blk")
        queries = [f"q_{j}" if g > 1 else "q_blk" for j in range(g)]
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {k}.wait() as k_blk, {v}.wait() as v_blk, {ddfb}.wait() as d_blk:")
            with out.indent():
                out("kt = ttl.block.transpose(k_blk)")
                out(f"off = {gt('d_blk', 'thr')}")
                out(f"keep = ttl.block.fill(1.0, {sk}) - off")
                for j, qj in enumerate(queries):
                    _online_softmax(out, j, qj, s, sk, so, col)
        if s.splits is not None and s.by_users is None:  # undivided, with m and l (flash.py)
            flash.partial_page(sec, s, out, g, b)
            heads_out = [f"part_{j}" for j in range(g)]
        else:
            heads_out = [
                f"o_{j} / ttl.block.broadcast(l_{j} + ttl.block.fill(1e-30, {col}), "
                f"dims=[-1], shape={so})"
                for j in range(g)
            ]
        if g > 1 and not reassemble:  # the IR's sub-blocks are the heads, in order
            for part in heads_out:
                out(f"with {o}.reserve() as o_blk:")
                with out.indent():
                    out(f"o_blk.store({part})")
            return
        if heads_v:  # each head's columns back in place: sum_j o_j @ transpose(C'_j)
            for j, part in enumerate(heads_out):
                out(f"with {heads_v}.wait() as c_blk:")
                with out.indent():
                    term = f"({part}) @ ttl.block.transpose(c_blk)"
                    out(f"full = {term}" if j == 0 else f"full = full + {term}")
            result = "full"
        else:
            result = heads_out[0]
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out(f"o_blk.store({result})")


def _head_selector_reads(
    out: Lines, sec: OperationWriter, dfb: str, when: str, g: int, w: int, dt: int
) -> None:
    """The g head selectors C_j (columns j * dt.. of the identity), one at a time through a
    DFB of one block: the compute pops each as it is read."""
    out(f"if {when}:")
    with out.indent():
        out(f"for j in range({g}):")
        with out.indent():
            out(f"with {dfb}.reserve() as blk:")
            with out.indent():
                out(f"tx = ttl.copy({sec.eye}[0:{w}, {ix('j') * dt}:{ix('j') * dt + dt}], blk)")
                out("tx.wait()")


def _online_softmax(
    out: Lines, j: int, qj: str, s: sp.AttentionOp, sk: str, so: str, col: str
) -> None:
    """Head j's step of the online softmax over one K block: its running maximum m_j, sum l_j
    and output o_j are temporaries (the dest registers) carried between K blocks."""
    out(f"sc = ({qj} @ kt) * ttl.block.fill({s.scale.value.data!r}, {sk})")
    out(f"sc = sc - off * ttl.block.fill({BIG!r}, {sk})")
    out(f"mx = ttl.math.reduce_max(sc, dims=[-1], shape={col})")
    out.branch(
        "kb == 0",
        [f"m_{j} = mx"],
        [
            f"m_new = ttl.math.max(m_{j}, mx)",
            f"alpha = ttl.math.exp(m_{j} - m_new)",
            f"m_{j} = m_new",
        ],
    )
    out(f"pr = ttl.math.exp(sc - ttl.block.broadcast(m_{j}, dims=[-1], shape={sk})) * keep")
    out(f"ls = ttl.math.reduce_sum(pr, dims=[-1], shape={col})")
    out("pv = pr @ v_blk")
    out.branch(
        "kb == 0",
        [f"l_{j}, o_{j} = ls, pv"],
        [
            f"l_{j} = l_{j} * alpha + ls",
            f"o_{j} = o_{j} * ttl.block.broadcast(alpha, dims=[-1], shape={so}) + pv",
        ],
    )


def _argmax_roles(sec: OperationWriter, s: sp.ArgmaxOp, r: sp.SitesOp) -> list[str]:
    """The parts of `_argmax_cols_*` a range reads: the indices always, the width where it has
    more than one K block, the count where its last block has padding."""
    kw, last = _argmax_blocks(sec, s, r)
    return ["idx"] + (["step"] if sec.k_tiles > kw else []) + (["last"] if last < TILE * kw else [])


def _argmax_dfb(sec: OperationWriter, s: sp.ArgmaxOp, role: str, b: dict) -> str:
    pages = _pages(sec, lambda bb: _page(s.x, bb))
    return _dfb("argmax_idx", _page(s.x, b), pages) if role == "idx" else f"argmax_{role}_dfb"


def _argmax_buffers(sec: OperationWriter, s: sp.ArgmaxOp, out: Lines) -> None:
    """Read once per item and held over its K loop (block_count 1): one K block's indices (a
    DFB per page) and, where a range uses them, a tile of the width and one of the count."""
    made: set[str] = set()
    for r in sec.ranges:
        b = r.bindings(sec.work.k_block)
        name = _argmax_const(*_argmax_blocks(sec, s, r))
        for role in _argmax_roles(sec, s, r):
            d = _argmax_dfb(sec, s, role, b)
            if d not in made:
                made.add(d)
                shape = _page(s.x, b) if role == "idx" else (1, 1)
                out(f"{d} = ttl.make_dataflow_buffer_like({name}, shape={shape}, block_count=1)")


def _argmax(
    sec: OperationWriter, out: Lines, s: sp.ArgmaxOp, key: str, r: sp.SitesOp, b: dict
) -> None:
    h, kw = _page(s.x, b)
    _, last = _argmax_blocks(sec, s, r)
    roles = _argmax_roles(sec, s, r)
    d = {role: _argmax_dfb(sec, s, role, b) for role in roles}
    if key != "compute":  # with the first K block's page: the compute holds them over the loop
        name = _argmax_const(kw, last)
        cols = {"idx": (0, kw), "step": (kw, kw + 1), "last": (kw + 1, kw + 2)}
        if sec.k_tiles > kw:
            out("if k0 == 0:")
        with out.indent() if sec.k_tiles > kw else nullcontext():
            for role in roles:
                c0, c1 = cols[role]
                const_read(out, d[role], f"{name}[0:{h}, {c0}:{c1}]")
        return
    x = sec.dfb(sp.buffer_of(s.x), r)
    o = sec.dfb(sp.buffer_of(s.out), r)
    k_blocks = sec.k_tiles // kw
    full, col = f"({h}, {kw})", f"({h}, 1)"
    names = {"idx": "i_blk", "step": "step", "last": "last"}
    out("with " + ", ".join(f"{d[role]}.wait() as {names[role]}" for role in roles) + ":")
    with out.indent():
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {x}.wait() as x_blk:")
            with out.indent():
                xm = "x_blk"
                if "last" in roles:  # the last block's columns past `last` never win
                    pad = gt("i_blk", f"ttl.block.broadcast(last, dims=[-1], shape={full})")
                    masked = f"xm = x_blk - {pad} * ttl.block.fill(1e30, {full})"
                    if k_blocks == 1:
                        out(masked)
                    else:
                        out.branch(f"kb == {k_blocks - 1}", [masked], ["xm = x_blk"])
                    xm = "xm"
                out(f"bm = ttl.math.reduce_max({xm}, dims=[-1], shape={col})")
                bcast = f"ttl.block.broadcast(bm, dims=[-1], shape={full})"
                out(f"hit = {eq(xm, bcast, full)}")
                out(
                    f"cand = hit * i_blk + (ttl.block.fill(1.0, {full}) - hit) * "
                    f"ttl.block.fill(1e9, {full})"
                )
                out(
                    f"bi = ttl.block.fill(0.0, {col}) - ttl.math.reduce_max("
                    f"ttl.block.fill(0.0, {full}) - cand, dims=[-1], shape={col})"
                )
                if k_blocks == 1:
                    out("best_i = bi")
                else:  # off: this block's first column index (f32, from the width's tile)
                    out.branch(
                        "kb == 0",
                        ["best_m, best_i, off = bm, bi, step"],
                        [
                            f"take = {gt('bm', 'best_m')}",
                            f"best_i = take * (bi + off) + (ttl.block.fill(1.0, {col}) - take) "
                            "* best_i",
                            "best_m = ttl.math.max(best_m, bm)",
                            "off = off + step",
                        ],
                    )
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out("o_blk.store(ttl.block.transpose(best_i))")


class HostStep:
    """A section that is one sp.gather or sp.scatter with its load or store: a host function
    that calls the ttnn op a chip runs for it (host.py's `_embedding`, `_update_cache`), in
    place of a `@ttl.operation`. A kernel cannot address DRAM by a value it reads (the TT-Lang
    specification has no scalar read and no runtime argument), and tt-metal runs these steps as
    ttnn ops between its operations. The report prices the section's plan (the sized IR's rows);
    ttnn moves the same rows on its own cores (docs/backend-ttlang.md#indexed)."""

    def __init__(self, program: sp.ProgramOp, index: int, stage: sp.GatherOp | sp.ScatterOp):
        self.p, self.stage = program, stage
        self.name = program.sym_name.data
        self.fn = f"section_{index}_{ident(self.name, prefix='')}"
        self.tensors = {t.sym_name.data: t for t in program.ops_of(sp.TensorOp)}
        self.consts: dict[str, tuple[tuple[int, int], str]] = {}
        moved = next(
            s.tensor.root_reference.data
            for s in program.stages()
            if isinstance(s, sp.LoadOp | sp.StoreOp)
        )
        indexed = stage.tensor.root_reference.data
        rows = self.tensors[indexed].type.get_shape()[0]
        widths = {n: self.tensors[n].type.get_shape()[-1] for n in (moved, indexed)}
        if len(set(widths.values())) != 1:
            raise TTLangUnsupported(
                self.name, f"{stage.name} between widths {widths}: printed for whole rows"
            )
        args = [_tname(stage.index.root_reference.data), _tname(indexed), _tname(moved)]
        if isinstance(stage, sp.GatherOp) and stage.table is not None:  # pos, pool, out, table
            self.call = _paged_gather_call(stage, args, rows)
        elif isinstance(stage, sp.GatherOp):  # ids, table, out
            self.call = f"_embedding({', '.join(args)}, rows={stage.count}, table_rows={rows})"
        elif stage.tokens is not None:  # cache, src, pos[, table]: one row per user
            self.call = _batch_call(stage, args, self.tensors, rows)
        else:  # cache, src, pos
            self.call = (
                f"_update_cache({args[1]}, {args[2]}, {args[0]}, rows={stage.count}, "
                f"cache_rows={rows})"
            )

    def tensor_args(self) -> list[str]:
        return [_tname(n) for n in self.tensors]

    def section_args(self) -> list[str | tuple[str, str]]:
        return list(self.tensors)

    def emit(self, out: Lines) -> None:
        out(f"# section @{self.name}: {self.p.source_op.data}")
        plan = self.p.one(sp.PlanOp)
        if plan is not None:
            for line in plan_lines(plan):
                out(f"#   {line}")
        out("#   a ttnn op between the operations: no kernel addresses DRAM by a value it reads")
        out(f"def {self.fn}({', '.join(self.tensor_args())}):")
        with out.indent():
            out(self.call)
        out()
        out()


def _batch_call(stage: sp.ScatterOp, args: list[str], tensors: dict, rows: int) -> str:
    """The shim call of a batched write (T = tokens rows a user, on a chip T calls of one row
    per user): contiguous, user b's rows b * S onward; paged, a pool of rows / N blocks of N
    rows named by the table's `blocks` ids a user."""
    tokens, (index, cache, src) = stage.tokens, args
    assert tokens is not None
    users = stage.count // tokens
    if stage.table is None:
        return (
            f"_batch_update_cache({cache}, {src}, {index}, users={users}, "
            f"capacity={rows // users}, tokens={tokens})"
        )
    table = stage.table.root_reference.data
    blocks, n = tensors[table].type.get_shape()[-1], stage.block_size
    assert n is not None  # the verifier pairs table and block_size
    return (
        f"_paged_update_cache({cache}, {src}, {index}, {_tname(table)}, users={users}, "
        f"blocks={blocks}, block_size={n}, pool={rows // n}, tokens={tokens})"
    )


def _paged_gather_call(stage: sp.GatherOp, args: list[str], rows: int) -> str:
    """The shim call of the gather of users' paged caches (sp.GatherOp `table`): the host
    computes each row's id from the positions and the block table, ttnn.embedding copies."""
    assert stage.table is not None and stage.block_size is not None
    return (
        f"_paged_gather({', '.join(args)}, {_tname(stage.table.root_reference.data)}, "
        f"users={stage.users()}, capacity={stage.capacity}, tokens={stage.tokens}, "
        f"block_size={stage.block_size}, pool={rows // stage.block_size})"
    )


def host_step(program: sp.ProgramOp, index: int) -> HostStep | None:
    """The section as a host step where it is one gather or scatter and its load or store."""
    stages = list(program.stages())
    indexed = [s for s in stages if isinstance(s, sp.GatherOp | sp.ScatterOp)]
    if len(indexed) != 1 or not all(
        isinstance(s, sp.LoadOp | sp.StoreOp | sp.GatherOp | sp.ScatterOp) for s in stages
    ):
        return None
    return HostStep(program, index, indexed[0])
