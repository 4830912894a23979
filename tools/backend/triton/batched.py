"""The Triton kernels of the batched decode step (docs/tg.md#batched-decode): the batched
KV-cache write (sp.scatter `tokens`) and the batched flash attention (sp.attention `users` over
the loads of users' caches, sp.load `users`).

Decided here: a kernel addresses the cache by the positions and the block table it reads, row by
row, with pointer arithmetic (a GPU reads any row); the contiguous cache is the same arithmetic
without the table (user u's position j is row u * S + j). An idle user (position -1) is a
masked row: nothing stored, its attention rows zero. The positions and the block ids a step
uses are range-checked on the host before the launch (`_check_range`), so a bad one raises
before anything is written, as the simulator's `IndexOutOfRange` does. The attention walks the
users' caches one after another, as the IR does: key x is user x // S's position x % S, read
where that user holds it (else zero) and seen by a query row of the same user up to its
position (the block-diagonal causal mask); the walk starts at the K load's origin, which is a
query tile row's own users' first key tile where each tile row walks its own
(sp users_key_range). The query block and running state are the single-user kernel's
(`flash_prologue`, shared with bodies.py), with the users' positions read beside it.
"""

from __future__ import annotations

from spatial_dialect import sp
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.triton.kernel import Kernel, access, is_origin, pow2
from spatial_dialect.tools.backend.triton.text import below, conj, offset


def _users(s: Kernel, pos: str, users: int, tokens: int, capacity: int) -> None:
    """The host check of a step's positions: -1 (idle) or [0, S - T]."""
    s.checks.append(
        f"_check_range(t[{pos!r}].reshape(-1)[:{users}], -1, {capacity - tokens}, "
        f"'position of a user ({tokens} row(s), -1 idle) in section @{s.name}')"
    )


def _blocks(s: Kernel, pos: str, table: str, tokens: int, block: int, pool: int, prefix: bool):
    """The host check of the block ids a step uses: of each live user's positions (0 .. or
    pos ..) pos + T - 1, in [0, pool - 1]; the other entries are never read."""
    p = f"t[{pos!r}].reshape(-1)[:, None]"
    blocks = f"torch.arange(t[{table!r}].shape[1], device=t[{table!r}].device)[None, :]"
    last = p if tokens == 1 else f"({p} + {tokens - 1})"
    used = [f"({p} >= 0)", f"({blocks} <= {last} // {block})"]
    if not prefix:
        used.append(f"({blocks} >= {p} // {block})")
    s.checks.append(
        f"_check_range(t[{table!r}][{' & '.join(used)}], 0, {pool - 1}, "
        f"'block id of @{table} in section @{s.name}')"
    )


def _row(s: Kernel, user: str, j: str, live: str, capacity: int, table, block) -> str:
    """The cache row of position `j` of user `user` (expressions)."""
    if table is None:
        return f"{user} * {capacity} + {j}"
    mb = capacity // block
    blk = f"tl.load({s.arg(table)} + {user} * {mb} + {j} // {block}, mask={live}, other=0)"
    return f"{blk} * {block} + {j} % {block}"


def batched_scatter(s: Kernel, op: sp.ScatterOp) -> None:
    """Row r of the block goes to user r // T's position pos[r // T] + r % T."""
    th, tw = s.tile
    cache, pos = op.tensor.root_reference.data, op.index.root_reference.data
    table = op.table.root_reference.data if op.table is not None else None
    a = access(op.access, s.ranges)
    load = s.load_of(sp.buffer_of(op.src))
    s.block_load("x", load.tensor.root_reference.data, access(load.access, s.ranges))
    R, C = s.shape(cache)
    count, tokens = op.count, op.tokens
    assert tokens is not None
    users = count // tokens
    capacity = R // users if table is None else s.shape(table)[1] * (op.block_size or 1)
    pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
    row = _row(s, "s_u", "s_j", "s_rm", capacity, table, op.block_size)
    s.emit(f"""
s_i = {offset(a.row * th, f"tl.arange(0, {pr})")}
s_u = {"s_i" if tokens == 1 else f"s_i // {tokens}"}
p = tl.load({s.arg(pos)} + s_u, mask=s_i < {count}, other=-1)  # the row's user's position
s_j = {"p" if tokens == 1 else f"p + s_i % {tokens}"}
s_c = {offset(a.col * tw, f"tl.arange(0, {pc})")}
s_rm = {conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"s_i < {count}", "p >= 0")}
s_cm = {conj(below(f"tl.arange(0, {pc})", a.cols * tw, pc), f"s_c < {C}")}
s_row = {row}
tl.store({s.arg(cache)} + s_row[:, None] * {C} + s_c[None, :], {s.cast("x", cache)}, mask=s_rm[:, None] & s_cm[None, :])
""")
    _users(s, pos, users, tokens, capacity)
    if table is not None and op.block_size is not None:
        _blocks(s, pos, table, tokens, op.block_size, R // op.block_size, prefix=False)


def paged_gather(s: Kernel, op: sp.GatherOp) -> None:
    """The users' paged caches laid contiguously (sp.gather `table`): row x of the block is
    user x // S's position x % S, read through the block table where the user holds it, else
    zero (what a target whose kernels cannot address by a read id runs before the attention)."""
    th, tw = s.tile
    pool, pos = op.tensor.root_reference.data, op.index.root_reference.data
    assert op.table is not None and op.capacity is not None and op.block_size is not None
    table, capacity, tokens, n = op.table.root_reference.data, op.capacity, op.tokens, op.block_size
    a = access(op.access, s.ranges)
    if a.vars - {"r0", "c0"}:
        raise s.refuse(f"gather pattern {op.access.text()} iterates inside an item")
    R, C = s.shape(pool)
    pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
    last = "g_p" if tokens == 1 else f"g_p + {tokens - 1}"
    s.emit(f"""
g_x = {offset(a.row * th, f"tl.arange(0, {pr})")}
g_u = g_x // {capacity}
g_j = g_x % {capacity}
g_p = tl.load({s.arg(pos)} + g_u, mask=g_x < {op.count}, other=-1)  # the row's user's position
g_rm = {conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"g_x < {op.count}", "g_p >= 0", f"g_j <= {last}")}
g_c = {offset(a.col * tw, f"tl.arange(0, {pc})")}
g_cm = {conj(below(f"tl.arange(0, {pc})", a.cols * tw, pc), f"g_c < {C}")}
g_row = {_row(s, "g_u", "g_j", "g_rm", capacity, table, n)}
y = tl.load({s.arg(pool)} + g_row[:, None] * {C} + g_c[None, :], mask=g_rm[:, None] & g_cm[None, :], other=0)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.dst)))
    users = op.users()
    assert users is not None
    _users(s, pos, users, tokens, capacity)
    _blocks(s, pos, table, tokens, n, R // n, prefix=True)


def flash_prologue(
    s: Kernel, qa, qt: str, pads: tuple[int, int, int, int], rows: int, users: str = ""
) -> str:
    """The flash kernels' query block and running state (bodies.py's single-user attention and
    the batched one): the item's G heads as extra rows, row (j, i) query row i of head j, live
    below `rows` (the queries, or the q tensor's rows); `users` (the batched form) adds the
    lines that read each row's user and position before the queries are loaded."""
    th, tw = s.tile
    G, pm, pd, pdv = pads
    _, QC = s.shape(qt)
    op = s.program.ops_of(sp.AttentionOp)[0]
    d, dv = op.head_dim, op.v_head_dim
    return f"""
# the heads of the item as extra rows: row (j, i) is query row i of head j
qi = tl.arange(0, {G * pm}) % {pm}
qj = tl.arange(0, {G * pm}) // {pm}
group = (w * {tw}) // {dv}
qrow = {offset(qa.row * th, "qi")}
qlive = (qi < h * {th}) & (qrow < {rows}) & (qj < group){users}
dd = tl.arange(0, {pd})
qcol = {offset(qa.col * tw, f"qj[:, None] * {d} + dd[None, :]")}
q = tl.load({s.arg(qt)} + qrow[:, None] * {QC} + qcol, mask=qlive[:, None] & (dd < {d})[None, :] & (qcol < {QC}), other=0).to(tl.float32)
m_i = tl.zeros(({G * pm},), dtype=tl.float32) + float('-inf')
l_i = tl.zeros(({G * pm},), dtype=tl.float32)
o = tl.zeros(({G * pm}, {pdv}), dtype=tl.float32)
dvv = tl.arange(0, {pdv})
"""


def batched_attention(s: Kernel, op: sp.AttentionOp) -> None:
    """The flash attention of docs/sp.md#compute-stages-of-the-other-sections (`users`): the
    heads of the item as extra rows, one K loop over the users' caches one after another."""
    th, tw = s.tile
    d, dv = op.head_dim, op.v_head_dim
    users, capacity = op.users, op.capacity
    assert users is not None and capacity is not None and op.pos is not None
    q_l, k_l, v_l = (s.load_of(sp.buffer_of(x)) for x in (op.q, op.k, op.v))
    qt, kt, vt = (ld.tensor.root_reference.data for ld in (q_l, k_l, v_l))
    qa, ka, va = (access(ld.access, s.ranges) for ld in (q_l, k_l, v_l))
    # a query tile row of a batch that fills several walks its own users' caches only
    ranged = op.user_key_tiles(th)
    first = ix("k0") if ranged is None else ix("r0") * ranged + ix("k0")
    if op.splits:  # flash decoding: item c0 serves split c0 // W (W: every head's tiles)
        first = ix("c0") // (op.heads * dv // tw) * s.k_tiles + ix("k0")
    if not (is_origin(ka, first, ka.col) and is_origin(va, first, va.col)):
        raise s.refuse(f"batched attention K and V read {k_l.access.text()}, not a K block")
    pos = s.load_of(sp.buffer_of(op.pos)).tensor.root_reference.data
    table = k_l.table.root_reference.data if k_l.table is not None else None
    tokens = op.queries // users
    KR, KC = s.shape(kt)
    VC = s.shape(vt)[1]
    G = pow2(max(b["w"] for b in s.ranges) * tw // dv)
    pm = pow2(max(b["h"] for b in s.ranges) * th)
    pd, pdv = pow2(max(d, 16)), pow2(max(dv, 16))
    pk = pow2(s.k_block * th)
    prec = ', input_precision="ieee"'
    row = _row(s, "ku", "kj", "klive", capacity, table, k_l.block_size)
    # the last position each query row sees (-1: an idle user's row sees none)
    qlast = (
        "qlast = qp"
        if tokens == 1
        else f"qlast = tl.where(qp >= 0, qp + qrow % {tokens}, -1)  # the row's last position"
    )
    kp = "kp" if tokens == 1 else f"kp + {tokens - 1}"
    s.emit(
        flash_prologue(
            s,
            qa,
            qt,
            (G, pm, pd, pdv),
            op.queries,
            f"""
qu = {"qrow" if tokens == 1 else f"qrow // {tokens}"}
qp = tl.load({s.arg(pos)} + qu, mask=qlive, other=-1)
{qlast}""",
        )
    )
    # a split stores O undivided, its m and l in the rows below the outputs (sp.attention)
    finish = (
        ""
        if op.splits and op.by_users is None
        else "\no = tl.where((qlast >= 0)[:, None], o / tl.where(l_i > 0, l_i, 1.0)[:, None], "
        "0.0)  # idle: 0"
    )
    s.emit(f"""
for k0 in range(0, {s.k_tiles}, {s.k_block}):
    key = {offset(ka.row * th, f"tl.arange(0, {pk})")}
    ku = key // {capacity}
    kj = key % {capacity}
    kp = tl.load({s.arg(pos)} + ku, mask=key < {users * capacity}, other=-1)
    klive = (tl.arange(0, {pk}) < {s.k_block * th}) & (key < {users * capacity}) & (kj <= {kp})
    krow = {row}
    kc = {offset(ka.col * tw, "dd")}
    kb = tl.load({s.arg(kt)} + krow[:, None] * {KC} + kc[None, :], mask=klive[:, None] & (dd < {d})[None, :], other=0).to(tl.float32)
    vc = {offset(va.col * tw, "dvv")}
    vb = tl.load({s.arg(vt)} + krow[:, None] * {VC} + vc[None, :], mask=klive[:, None] & (dvv < {dv})[None, :], other=0).to(tl.float32)
    sc = tl.dot(q, tl.trans(kb){prec}) * {float(op.scale.value.data)!r}
    masked = (ku[None, :] != qu[:, None]) | (kj[None, :] > qlast[:, None])
    masked = masked | (klive == 0)[None, :]
    sc = tl.where(masked, float('-inf'), sc)
    m_new = tl.maximum(m_i, tl.max(sc, axis=1))
    alive = m_new > float('-inf')
    shift = tl.where(alive, m_new, 0.0)
    pr_ = tl.where(masked, 0.0, tl.exp(sc - shift[:, None]))
    keep = tl.where(alive, tl.exp(m_i - shift), 1.0)
    l_i = l_i * keep + tl.sum(pr_, axis=1)
    o = o * keep[:, None] + tl.dot(pr_, vb{prec})
    m_i = m_new{finish}
ocol = c0 * {tw} + qj[:, None] * {dv} + dvv[None, :]
""")
    store = s.store_of(sp.buffer_of(op.out))
    ot = store.tensor.root_reference.data
    OR, OC = s.shape(ot)
    if not is_origin(access(store.access, s.ranges), "r0", "c0"):
        raise s.refuse(f"attention store {store.access.text()} is not the item's block")
    s.emit(f"""
omask = qlive[:, None] & (dvv < {dv})[None, :] & (qrow < {min(OR, op.queries)})[:, None] & (ocol < {OC})
tl.store({s.arg(ot)} + qrow[:, None] * {OC} + ocol, {s.cast("o", ot)}, mask=omask)
""")
    if op.splits and op.by_users is None:  # row queries + r: row r's head's m and l
        s.emit(f"""
ml = tl.where((dvv % {tw} == 0)[None, :], m_i[:, None], l_i[:, None])
mlmask = omask & (dvv % {tw} < 2)[None, :]
tl.store({s.arg(ot)} + (qrow + {op.queries})[:, None] * {OC} + ocol, ml, mask=mlmask)
""")
    _users(s, pos, users, tokens, capacity)
    if table is not None and k_l.block_size is not None:
        _blocks(s, pos, table, tokens, k_l.block_size, KR // k_l.block_size, prefix=True)
