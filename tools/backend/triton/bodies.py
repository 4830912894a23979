"""The body of each section kind's Triton kernel (GEMM, map, row reduce, rope, gather, scatter,
argmax, attention and flash decoding's combine), written from a `Kernel`."""

from __future__ import annotations

from spatial_dialect import sp
from spatial_dialect.sp.enums import SectionKind
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.tools.backend.index import ix
from spatial_dialect.tools.backend.triton import batched
from spatial_dialect.tools.backend.triton.kernel import (
    REFUSED_SECTION_KINDS,
    SECTION_PRINTERS,
    Kernel,
    access,
    is_origin,
    pow2,
    section_printer,
)

# the map and row-reduction bodies register their section kinds when imported
from spatial_dialect.tools.backend.triton.maps import map_body  # noqa: F401
from spatial_dialect.tools.backend.triton.rows import row_reduce  # noqa: F401
from spatial_dialect.tools.backend.triton.splitk import k_range, store_partials
from spatial_dialect.tools.backend.triton.text import below, conj, offset

# ── Kernel bodies, one per section kind ───────────────────────────────────────────────────────


@section_printer(SectionKind.GEMM)
def _gemm(s: Kernel) -> None:
    if not s.program.ops_of(sp.MatmulTilesOp):
        raise s.refuse(f"kind gemm ({s.program.source_op.data}) has no Triton kernel")
    # a register accumulator holds the whole block: a K-block spill is the IR's bookkeeping
    mm = s.program.ops_of(sp.MatmulTilesOp)[0]
    a_load, b_load = s.load_of(sp.buffer_of(mm.in0)), s.load_of(sp.buffer_of(mm.in1))
    a_acc, b_acc = access(a_load.access, s.ranges), access(b_load.access, s.ranges)
    # B may start at a fixed tile row (a stacked weight's block: tg.moe's experts); with
    # transpose_b it is stored N x K and its block is read at [c0, k0]
    t_b = mm.transposes_b
    b_row0 = 0 if t_b else b_acc.row.evaluate({"r0": 0, "c0": 0, "k0": 0})
    b_origin = (ix("c0"), ix("k0")) if t_b else (ix("k0") + b_row0, ix("c0"))
    if not (is_origin(a_acc, "r0", "k0") and is_origin(b_acc, *b_origin)):
        raise s.refuse(
            f"matmul operand patterns {a_load.access.text()} / {b_load.access.text()} are not "
            f"[r0, k0] / [{', '.join(map(str, b_origin))}]"
        )
    a_t, b_t = a_load.tensor.root_reference.data, b_load.tensor.root_reference.data
    for load, t in ((a_load, a_t), (b_load, b_t)):
        fifo, tensor = sp.buffer_of(load.dst), s.program.tensor(t)
        if fifo.storage != tensor.storage:
            raise s.refuse(
                f"@{t} stored {tensor.storage} is loaded into {fifo.label.data} of "
                f"{fifo.storage}: a load that converts has no Triton form"
            )
    ea, eb = s.elt(a_t), s.elt(b_t)
    acc_elt = str(sp.buffer_of(mm.acc).elt)
    q8 = s.q8(a_t) is not None or s.q8(b_t) is not None
    if not q8 and (ea != eb or ea in ("i32",) or (ea == "i8") != (acc_elt == "i32")):
        raise s.refuse(f"matmul of {ea} x {eb} into a {acc_elt} accumulator has no tl.dot form")
    th, tw = s.tile
    M, K = s.shape(a_t)
    N = s.shape(b_t)[0 if t_b else 1]
    # element (k, n) of B: row-major K x N, or of the stored N x K read transposed (the strides
    # swapped: the block is loaded as B^T's, no copy)
    k_stride, n_stride = (1, K) if t_b else (N, 1)
    bm, bn, bk = s.block[0] * th, s.block[1] * tw, s.k_block * tw
    pm, pn, pk = pow2(bm), pow2(bn), pow2(bk)
    acc_ty = "tl.int32" if acc_elt == "i32" else "tl.float32"
    b_first = str(b_row0 * th) if b_row0 else None
    if b_load.index is not None and b_load.stride is not None:
        # an indexed load: the block of `stride` tile rows the id names (range-checked on the
        # host before the launch)
        idx, blocks = b_load.index.root_reference.data, s.shape(b_t)[0] // (b_load.stride * th)
        b_first = offset(ix(b_row0 * th), f"tl.load({s.arg(idx)}) * {b_load.stride * th}")
        s.checks.append(
            f"_check_range(t[{idx!r}].reshape(-1)[:1], 0, {blocks - 1}, 'block id of @{b_t} in section @{s.name}')"
        )
    # B's rows of the K block: from its first row (a stacked weight's block), else from row 0
    b_rows = "rk" if b_first is None else "(b0 + rk)"
    if b_first is not None:
        s.emit(f"b0 = {b_first}")
    s.emit(f"""
rm = r0 * {th} + tl.arange(0, {pm})
rn = c0 * {tw} + tl.arange(0, {pn})
mm_ = (tl.arange(0, {pm}) < h * {th}) & (rm < {M})
mn_ = (tl.arange(0, {pn}) < w * {tw}) & (rn < {N})
acc = tl.zeros(({pm}, {pn}), dtype={acc_ty})
""")
    loads = f"""
a = tl.load({s.arg(a_t)} + rm[:, None] * {K} + rk[None, :], mask=mm_[:, None] & mk_[None, :], other=0)
b = tl.load({s.arg(b_t)} + {_times(f"{b_rows}[:, None]", k_stride)} + {_times("rn[None, :]", n_stride)}, mask=mk_[:, None] & mn_[None, :], other=0)
"""
    if q8 and mm.dequantize is None:
        # the int8 dot: both operands Q8_0 blocked along K (verified), an f32 accumulator
        _int8_dot(s, a_t, b_t, loads, K, t_b, b_first is not None)
    else:
        # the datatype tl.dot multiplies: a Q8_0 operand is widened to the `dequantize` type
        dot_elt = str(mm.dequantize) if mm.dequantize is not None else ea
        prec = ', input_precision="ieee"' if dot_elt == "f32" else ""
        ks = k_range(s)
        s.emit(f"""
for k0 in range({ks}):
    rk = k0 * {tw} + tl.arange(0, {pk})
    mk_ = {conj(below(f"tl.arange(0, {pk})", bk, pk), f"rk < {K}")}
""")
        s.emit(loads, 3)
        b_at = ("rn[None, :]", "rk[:, None]") if t_b else (f"{b_rows}[:, None]", "rn[None, :]")
        for var, t, (row, col), mask in (
            ("a", a_t, ("rm[:, None]", "rk[None, :]"), "mm_[:, None] & mk_[None, :]"),
            ("b", b_t, b_at, "mk_[:, None] & mn_[None, :]"),
        ):
            if s.q8(t) is not None:  # `dequantize T`: f32(d) * q rounded once to T (docs/sp.md)
                at = s.scale_at(t, row, col)
                s.emit(f"{var}_d = tl.load({s.scales_arg(t)} + {at}, mask={mask}, other=0)", 3)
                widened = f"{var}.to(tl.float32) * {var}_d.to(tl.float32)"
                rounded = (
                    f"to_bf16({widened})"
                    if dot_elt == "bf16"
                    else f"({widened}).to({TL_TYPES[dot_elt]})"
                )
                s.emit(f"{var} = {rounded}", 3)
        if acc_ty == "tl.float32":
            # the interpreter multiplies 16-bit floats through numpy, which has no bf16: widen
            # them there (exact). Not i8: its int8 dot is exact, and it has no int32 dot at all.
            s.emit(
                """
if INTERPRETED:
    a = a.to(tl.float32)
    b = b.to(tl.float32)
""",
                3,
            )
        s.emit(f"acc += tl.dot(a, b, out_dtype={acc_ty}{prec})", 3)
    if s.k_slices > 1:  # the slice's sums to the partials; a second kernel adds and stores
        store_partials(s, acc_ty, M, N, "mm_[:, None] & mn_[None, :]")
    else:
        s.block_store("acc", s.store_of(sp.buffer_of(mm.out)))


def _times(expr: str, n: int) -> str:
    return expr if n == 1 else f"{expr} * {n}"


TL_TYPES = {"bf16": "tl.bfloat16", "f16": "tl.float16", "f32": "tl.float32"}
"""The float types a Q8_0 block is widened to (`dequantize T`), as Triton names them."""


def _int8_dot(s: Kernel, a_t: str, b_t: str, loads: str, K: int, t_b: bool, b0: bool) -> None:
    """ggml's Q8_0 x Q8_0 dot (targets/quant.py INT8_DOT): per block of 32 along K, the exact
    int32 dot of the view's and the weight's i8 values (tl.dot on int8 into int32, which the
    interpreter computes exactly too; |sum| <= 32 * 127 * 128 is exact in f32 as well), times
    f32(da) * f32(db), added to the f32 accumulator in K order, as tools/interpreters/q8_0.py's
    matmul_q8_0 sums it."""
    tw, bk = s.tile[1], s.k_block * s.tile[1]
    if bk % Q8_0_BLOCK:
        raise s.refuse(f"a K block of {bk} columns is not whole Q8_0 blocks of {Q8_0_BLOCK}")
    da = s.scale_at(a_t, "rm", "kq")
    db = s.scale_at(b_t, "rn", "kq") if t_b else s.scale_at(b_t, "b0 + kq" if b0 else "kq", "rn")
    ks = k_range(s)
    s.emit(f"""
for k0 in range({ks}):
    for kb in tl.static_range({bk // Q8_0_BLOCK}):
        kq = k0 * {tw} + kb * {Q8_0_BLOCK}
        rk = kq + tl.arange(0, {Q8_0_BLOCK})
        mk_ = rk < {K}
""")
    s.emit(loads, 4)
    s.emit(
        f"""
da = tl.load({s.scales_arg(a_t)} + {da}, mask=mm_ & (kq + tl.zeros_like(rm) < {K}), other=0).to(tl.float32)
db = tl.load({s.scales_arg(b_t)} + {db}, mask=mn_ & (kq + tl.zeros_like(rn) < {K}), other=0).to(tl.float32)
isum = tl.dot(a, b, out_dtype=tl.int32)
acc += isum.to(tl.float32) * (da[:, None] * db[None, :])
""",
        4,
    )


@section_printer(SectionKind.ROPE)
def _rope(s: Kernel) -> None:
    op = s.program.ops_of(sp.RopeOp)[0]
    d = op.head_dim
    half = d // 2
    th, tw = s.tile
    x_l, cos_l, sin_l = (s.load_of(sp.buffer_of(v)) for v in op.ins)
    t = x_l.tensor.root_reference.data
    a = access(x_l.access, s.ranges)
    R, C = s.shape(t)
    s.block_load("x", t, a)
    ct, st = cos_l.tensor.root_reference.data, sin_l.tensor.root_reference.data
    ca = access(cos_l.access, s.ranges)
    CR, CC = s.shape(ct)
    neox = op.kind.data == "neox"
    s.emit(f"""
jj = (x_c % {d})[None, :]
lead = {"jj < " + str(half) if neox else "(jj % 2) == 0"}
partner = x_c[None, :] + {f"tl.where(lead, {half}, -{half})" if neox else "tl.where(lead, 1, -1)"}
xp = tl.load({s.arg(t)} + x_r[:, None] * {C} + partner, mask=x_m, other=0).to(tl.float32)
ci = {"jj % " + str(half) if neox else "jj // 2"}
cr = {offset(ca.row * th, "tl.arange(0, x_r.shape[0])")}
cm = x_m & (cr < {CR})[:, None]
cs = tl.load({s.arg(ct)} + cr[:, None] * {CC} + ci, mask=cm, other=0).to(tl.float32)
sn = tl.load({s.arg(st)} + cr[:, None] * {CC} + ci, mask=cm, other=0).to(tl.float32)
y = tl.where(lead, x * cs - xp * sn, x * cs + xp * sn)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


@section_printer(SectionKind.GATHER)
def _gather(s: Kernel) -> None:
    op = s.program.ops_of(sp.GatherOp)[0]
    if op.table is not None:  # the users' paged caches laid contiguously
        return batched.paged_gather(s, op)
    th, tw = s.tile
    table, idx = op.tensor.root_reference.data, op.index.root_reference.data
    a = access(op.access, s.ranges)
    if a.vars - {"r0", "c0"}:
        raise s.refuse(f"gather pattern {op.access.text()} iterates inside an item")
    R, C = s.shape(table)
    pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
    count = op.count
    s.emit(f"""
g_r = {offset(a.row * th, f"tl.arange(0, {pr})")}
g_c = {offset(a.col * tw, f"tl.arange(0, {pc})")}
g_rm = {conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"g_r < {count}")}
g_cm = {conj(below(f"tl.arange(0, {pc})", a.cols * tw, pc), f"g_c < {C}")}
ids = tl.load({s.arg(idx)} + g_r, mask=g_rm, other=0)
g_rm = g_rm & (ids >= 0) & (ids < {R})
y = tl.load({s.arg(table)} + ids[:, None] * {C} + g_c[None, :], mask=g_rm[:, None] & g_cm[None, :], other=0)
""")
    scales = None
    if s.q8(table) is not None:  # Q8_0 rows: each row's scales travel with its values
        dst = s.store_of(sp.buffer_of(op.dst)).tensor.root_reference.data
        if s.q8(table) != 1 or s.q8(dst) != 1:
            raise s.refuse(
                f"rows of the Q8_0 table @{table} are gathered into @{dst}: both must be stored "
                "q8_0 (blocks along rows)"
            )
        pq, per = pc // Q8_0_BLOCK, tw // Q8_0_BLOCK
        s.emit(f"""
g_q = {offset(a.col * per, f"tl.arange(0, {pq})")}
g_qm = {conj(below(f"tl.arange(0, {pq})", a.cols * per, pq), f"g_q < {C // Q8_0_BLOCK}")}
ys = tl.load({s.scales_arg(table)} + {s.scale_of_block(table, "ids[:, None]", "g_q[None, :]")}, mask=g_rm[:, None] & g_qm[None, :], other=0)
""")
        scales = "ys"
    s.block_store("y", s.store_of(sp.buffer_of(op.dst)), scales=scales)
    s.checks.append(
        f"_check_range(t[{idx!r}].reshape(-1)[:{count}], 0, {R - 1}, 'gather ids of @{table} in section @{s.name}')"
    )


@section_printer(SectionKind.SCATTER)
def _scatter(s: Kernel) -> None:
    op = s.program.ops_of(sp.ScatterOp)[0]
    if op.tokens is not None:  # the batched write: each row at its own user's position
        return batched.batched_scatter(s, op)
    th, tw = s.tile
    cache, idx = op.tensor.root_reference.data, op.index.root_reference.data
    a = access(op.access, s.ranges)
    load = s.load_of(sp.buffer_of(op.src))
    src = load.tensor.root_reference.data
    s.block_load("x", src, access(load.access, s.ranges))
    R, C = s.shape(cache)
    count = op.count
    pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
    s.emit(f"""
s_i = {offset(a.row * th, f"tl.arange(0, {pr})")}
p = tl.load({s.arg(idx)}) + tl.zeros_like(s_i)  # the runtime position, one per row
s_c = {offset(a.col * tw, f"tl.arange(0, {pc})")}
s_rm = {conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"s_i < {count}", "p >= 0", f"p <= {R - count}")}
s_cm = {conj(below(f"tl.arange(0, {pc})", a.cols * tw, pc), f"s_c < {C}")}
tl.store({s.arg(cache)} + (p + s_i)[:, None] * {C} + s_c[None, :], {s.cast("x", cache)}, mask=s_rm[:, None] & s_cm[None, :])
""")
    s.checks.append(
        f"_check_range(t[{idx!r}].reshape(-1)[:1], 0, {R - count}, 'position of {count} row(s) into @{cache} in section @{s.name}')"
    )


@section_printer(SectionKind.ARGMAX)
def _argmax(s: Kernel) -> None:
    op = s.program.ops_of(sp.ArgmaxOp)[0]
    th, tw = s.tile
    load = s.load_of(sp.buffer_of(op.x))
    t = load.tensor.root_reference.data
    a = access(load.access, s.ranges)
    if not is_origin(a, a.row, "k0"):
        raise s.refuse(f"argmax reading {load.access.text()}: expected a K loop over columns")
    R, C = s.shape(t)
    pk = pow2(s.k_block * tw)
    s.emit(f"""
xr = {offset(a.row * th, f"tl.arange(0, {th})")}
rmask = (xr < {R}) & (xr < {op.rows})
best = tl.zeros(({th},), dtype=tl.float32) + float('-inf')
where = tl.zeros(({th},), dtype=tl.int32)
for k0 in range(0, {s.k_tiles}, {s.k_block}):
    xc = k0 * {tw} + tl.arange(0, {pk})
    cm = (tl.arange(0, {pk}) < {s.k_block * tw}) & (xc < {op.cols}) & (xc < {C})
    blk = tl.load({s.arg(t)} + xr[:, None] * {C} + xc[None, :], mask=rmask[:, None] & cm[None, :], other=float('-inf')).to(tl.float32)
    blk = tl.where(cm[None, :], blk, float('-inf'))
    top = tl.max(blk, axis=1)
    at = tl.min(tl.where(blk == top[:, None], xc[None, :], 2147483647), axis=1)
    better = top > best
    where = tl.where(better, at, where)
    best = tl.where(better, top, best)
y = tl.where(tl.arange(0, {th})[:, None] == 0, where[None, :], 0)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


@section_printer(SectionKind.ROUTE)
def _route(s: Kernel) -> None:
    """tg.moe's router over whole rows of logits: the k largest by logit (equal ones to the lower
    column), their softmax or sigmoid scores, renormalized; column 0 of the page gets `pick`."""
    op = s.program.ops_of(sp.RouteOp)[0]
    th, tw = s.tile
    load = s.load_of(sp.buffer_of(op.x))
    t = load.tensor.root_reference.data
    a = access(load.access, s.ranges)
    if not is_origin(a, "r0", "k0") or s.k_block != s.k_tiles:
        raise s.refuse(f"route reading {load.access.text()}: expected whole rows in one K block")
    R, C = s.shape(t)
    pr, pc = pow2(a.max_rows * th), pow2(s.k_tiles * tw)
    s.emit(f"""
xr = r0 * {th} + tl.arange(0, {pr})
rmask = (tl.arange(0, {pr}) < h * {th}) & (xr < {R}) & (xr < {op.rows})
xc = tl.arange(0, {pc})
cm = (xc < {op.cols}) & (xc < {C})
v = tl.load({s.arg(t)} + xr[:, None] * {C} + xc[None, :], mask=rmask[:, None] & cm[None, :], other=0).to(tl.float32)
v = tl.where(cm[None, :], v, float('-inf'))
""")
    if op.scores.data == "softmax":
        s.emit("""
e = tl.where(cm[None, :], tl.exp(v - tl.max(v, axis=1)[:, None]), 0.0)
sc = e / tl.sum(e, axis=1)[:, None]
""")
    else:
        s.emit("sc = 1.0 / (1.0 + tl.exp(-v))")
    s.emit(f"""
total = tl.zeros(({pr},), dtype=tl.float32)
chosen = tl.zeros(({pr}, {pc}), dtype=tl.float32)
""")
    for j in range(op.top_k):  # unrolled: k is the op's
        s.emit(f"""
top = tl.max(v, axis=1)
at{j} = tl.min(tl.where(v == top[:, None], xc[None, :], 2147483647), axis=1)
hit = xc[None, :] == at{j}[:, None]
w{j} = tl.sum(tl.where(hit, sc, 0.0), axis=1)
total += w{j}
chosen = tl.where(hit, sc, chosen)
v = tl.where(hit, float('-inf'), v)
""")
    norm = " / total" if op.renormalized() else ""
    pick, at = op.pick.data, op.at
    if op.first is not None:
        # a chip of the experts plan: ids from its first held expert (its own input), a chosen
        # expert it does not hold weighs 0 and reads held block 0 (sp.route)
        ft = s.load_of(sp.buffer_of(op.first)).tensor.root_reference.data
        # (not `first`: the kernel's loop names its first item so)
        s.emit(f"e0 = tl.load({s.arg(ft)}).to(tl.int32)")
        if pick == "id":
            s.emit(f"""
own = (at{at} >= e0) & (at{at} < e0 + {op.held})
at{at} = tl.where(own, at{at} - e0, 0)
""")
        elif pick == "weight":
            s.emit(f"w{at} = tl.where((at{at} >= e0) & (at{at} < e0 + {op.held}), w{at}, 0.0)")
        at = f"e0 + {at}" if at else "e0"
    if pick == "id":
        value = f"at{op.at}"
    elif pick == "weight":
        value = f"w{op.at}{norm}"
    else:
        value = f"tl.sum(tl.where(xc[None, :] == {at}, chosen, 0.0), axis=1){norm}"
    s.emit(f"""
val = tl.where(rmask, {value}, 0)
y = tl.where(tl.arange(0, {tw})[None, :] == 0, val[:, None], 0)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


@section_printer(SectionKind.ATTENTION)
def _attention(s: Kernel) -> None:
    op = s.program.ops_of(sp.AttentionOp)[0]
    if op.users is not None:  # the batched attention: each user over its own cache
        return batched.batched_attention(s, op)
    th, tw = s.tile
    d, dv = op.head_dim, op.v_head_dim
    q_l, k_l, v_l = (s.load_of(sp.buffer_of(x)) for x in (op.q, op.k, op.v))
    qt, kt, vt = (ld.tensor.root_reference.data for ld in (q_l, k_l, v_l))
    qa, ka, va = (access(ld.access, s.ranges) for ld in (q_l, k_l, v_l))
    # with splits (flash decoding) item c0 serves split c0 // W (W: every head's tiles) over
    # its k_tiles key tiles: its K block k0 is key tile split * k_tiles + k0
    first = ix("c0") // (op.heads * dv // tw) * s.k_tiles if op.splits else 0
    if not (is_origin(ka, first + ix("k0"), ka.col) and is_origin(va, first + ix("k0"), va.col)):
        raise s.refuse(
            f"attention K and V must be read a K block of keys at a time ([{first + ix('k0')}, "
            f"...]), not {k_l.access.text()} / {v_l.access.text()}"
        )
    QR = s.shape(qt)[0]
    KR, KC = s.shape(kt)
    VR, VC = s.shape(vt)
    maxw = max(b["w"] for b in s.ranges)
    G = pow2(maxw * tw // dv)
    pm = pow2(max(b["h"] for b in s.ranges) * th)
    pd, pdv = pow2(max(d, 16)), pow2(max(dv, 16))
    pk = pow2(s.k_block * th)
    queries, keys = op.queries, op.keys
    elt = s.elt(qt)
    prec = ', input_precision="ieee"'
    if op.pos is not None:
        pos_l = s.load_of(sp.buffer_of(op.pos))
        pt = pos_l.tensor.root_reference.data
        if op.is_causal:
            s.emit(f"p = tl.load({s.arg(pt)}).to(tl.int32)")
        s.checks.append(
            f"_check_range(t[{pt!r}].reshape(-1)[:1], 0, {keys - queries}, 'attention position ({queries} queries over {keys} keys) in section @{s.name}')"
        )
    elif op.is_causal:
        s.emit(f"p = {keys - queries}")
    # the first query row is key p: a causal row sees the keys up to its own position
    causal = "\n    masked = masked | (key[None, :] > (p + qrow)[:, None])" if op.is_causal else ""
    # a split pushes O undivided (its m and l go beside it: below)
    divide = "" if op.splits else "\no = o / l_i[:, None]"
    s.emit(batched.flash_prologue(s, qa, qt, (G, pm, pd, pdv), QR))
    s.emit(f"""
for k0 in range(0, {s.k_tiles}, {s.k_block}):
    key = {offset(ka.row * th, f"tl.arange(0, {pk})")}
    kmask = (tl.arange(0, {pk}) < {s.k_block * th}) & (key < {keys}) & (key < {KR})
    kc = {offset(ka.col * tw, "dd")}
    kb = tl.load({s.arg(kt)} + key[:, None] * {KC} + kc[None, :], mask=kmask[:, None] & (dd < {d})[None, :], other=0).to(tl.float32)
    vc = {offset(va.col * tw, "dvv")}
    vb = tl.load({s.arg(vt)} + key[:, None] * {VC} + vc[None, :], mask=kmask[:, None] & (dvv < {dv})[None, :], other=0).to(tl.float32)
    sc = tl.dot(q, tl.trans(kb){prec}) * {float(op.scale.value.data)!r}
    masked = (kmask == 0)[None, :] | (qi[:, None] < 0){causal}
    sc = tl.where(masked, float('-inf'), sc)
    m_new = tl.maximum(m_i, tl.max(sc, axis=1))
    alive = m_new > float('-inf')
    shift = tl.where(alive, m_new, 0.0)
    pr_ = tl.where(masked, 0.0, tl.exp(sc - shift[:, None]))
    keep = tl.where(alive, tl.exp(m_i - shift), 1.0)
    l_i = l_i * keep + tl.sum(pr_, axis=1)
    o = o * keep[:, None] + tl.dot(pr_, vb{prec})
    m_i = m_new{divide}
ocol = c0 * {tw} + qj[:, None] * {dv} + dvv[None, :]
""")
    store = s.store_of(sp.buffer_of(op.out))
    ot = store.tensor.root_reference.data
    OR, OC = s.shape(ot)
    sa = access(store.access, s.ranges)
    if not is_origin(sa, "r0", "c0"):
        raise s.refuse(f"attention store {store.access.text()} is not the item's block")
    s.emit(f"""
omask = qlive[:, None] & (dvv < {dv})[None, :] & (qrow < {min(OR, queries)})[:, None] & (ocol < {OC})
tl.store({s.arg(ot)} + qrow[:, None] * {OC} + ocol, {s.cast("o", ot)}, mask=omask)
""")
    if op.splits:  # the partials' row 1: the head's m and l in columns 0 and 1 of its tiles
        s.emit(f"""
ml = tl.where((dvv % {tw} == 0)[None, :], m_i[:, None], l_i[:, None])
mlmask = omask & (dvv % {tw} < 2)[None, :]
tl.store({s.arg(ot)} + (qrow + 1)[:, None] * {OC} + ocol, ml, mask=mlmask)
""")
    del elt


@section_printer(SectionKind.ATTENTION_COMBINE)
def _attention_combine(s: Kernel) -> None:
    """The log-sum-exp merge of flash decoding's splits (docs/sp.md#attention_combine): per
    item, split k0's row 0 (O) and the m and l its tiles carry in row 1, merged into a running
    state in registers; a split with m = -inf (every key past the position) adds nothing."""
    op = s.program.ops_of(sp.AttentionCombineOp)[0]
    th, tw = s.tile
    load = s.load_of(sp.buffer_of(op.parts))
    pt = load.tensor.root_reference.data
    C = s.shape(pt)[1]
    pa = access(load.access, s.ranges)
    pc = pow2(max(b["w"] for b in s.ranges) * tw)
    pr = pow2(max(b["h"] for b in s.ranges) * th)
    P = s.arg(pt)
    if op.sum is not None:
        return _summed_combine(s, op, P, pa, C, (pr, pc))
    if op.query_rows > 1:
        return _batched_combine(s, op, P, pa, C, (pr, pc))
    s.emit(f"""
cm = tl.arange(0, {pc}) < w * {tw}
m_run = tl.zeros(({pc},), dtype=tl.float32) + float('-inf')
l_run = tl.zeros(({pc},), dtype=tl.float32)
acc = tl.zeros(({pc},), dtype=tl.float32)
for k0 in range(0, {op.splits}):
    cc = {offset(pa.col * tw, f"tl.arange(0, {pc})")}
    tc = cc // {tw} * {tw}
    op_ = tl.load({P} + cc, mask=cm, other=0)
    mp = tl.load({P} + {C} + tc, mask=cm, other=float('-inf'))
    lp = tl.load({P} + {C} + tc + 1, mask=cm, other=0)
    m_new = tl.maximum(m_run, mp)
    shift = tl.where(m_new > float('-inf'), m_new, 0.0)
    a = tl.exp(m_run - shift)
    c = tl.exp(mp - shift)
    acc = acc * a + op_ * c
    l_run = l_run * a + lp * c
    m_run = m_new
y = tl.where(tl.arange(0, {pr})[:, None] == 0, (acc / l_run)[None, :], 0.0)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


def _summed_combine(
    s: Kernel, op: sp.AttentionCombineOp, P: str, pa, C: int, pads: tuple[int, int]
) -> None:
    """The sum of a batched attention's splits by users (sp.attention_combine `sum`): each of
    the Q query rows' results is whole in its user's split and zero in the others."""
    tw, (pr, pc), q = s.tile[1], pads, op.query_rows
    s.emit(f"""
rr = tl.arange(0, {pr})
cm = (rr < {q})[:, None] & (tl.arange(0, {pc}) < w * {tw})[None, :]
y = tl.zeros(({pr}, {pc}), dtype=tl.float32)
for k0 in range(0, {op.splits}):
    cc = {offset(pa.col * tw, f"tl.arange(0, {pc})")}
    y += tl.load({P} + rr[:, None] * {C} + cc[None, :], mask=cm, other=0).to(tl.float32)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


def _batched_combine(
    s: Kernel, op: sp.AttentionCombineOp, P: str, pa, C: int, pads: tuple[int, int]
) -> None:
    """The merge of a batched attention's splits (sp.attention_combine `rows Q`): the Q query
    rows' outputs in rows 0 .. Q - 1 of each split's partials, their m and l in rows Q ..
    2 Q - 1; a row no split saw a key of (an idle user's, l = 0) is zero."""
    tw, (pr, pc), q = s.tile[1], pads, op.query_rows
    s.emit(f"""
rr = tl.arange(0, {pr})
cm = (rr < {q})[:, None] & (tl.arange(0, {pc}) < w * {tw})[None, :]
m_run = tl.zeros(({pr}, {pc}), dtype=tl.float32) + float('-inf')
l_run = tl.zeros(({pr}, {pc}), dtype=tl.float32)
acc = tl.zeros(({pr}, {pc}), dtype=tl.float32)
for k0 in range(0, {op.splits}):
    cc = {offset(pa.col * tw, f"tl.arange(0, {pc})")}
    tc = cc // {tw} * {tw}
    op_ = tl.load({P} + rr[:, None] * {C} + cc[None, :], mask=cm, other=0)
    mp = tl.load({P} + (rr + {q})[:, None] * {C} + tc[None, :], mask=cm, other=float('-inf'))
    lp = tl.load({P} + (rr + {q})[:, None] * {C} + tc[None, :] + 1, mask=cm, other=0)
    m_new = tl.maximum(m_run, mp)
    shift = tl.where(m_new > float('-inf'), m_new, 0.0)
    a = tl.exp(m_run - shift)
    c = tl.exp(mp - shift)
    acc = acc * a + op_ * c
    l_run = l_run * a + lp * c
    m_run = m_new
y = tl.where(l_run > 0, acc / tl.where(l_run > 0, l_run, 1.0), 0.0)
""")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))


@section_printer(SectionKind.CAUSAL_CONV)
def _causal_conv(s: Kernel) -> None:
    """Each item's channels, a K block of time at a time: out[t] = act(sum_j w[j] xx[t + j])
    with xx = [state; x], read straight from x (rows t + j - (K - 1)) or the state (the rows
    before the first); then the new state, the last K - 1 rows of xx."""
    op = s.program.ops_of(sp.CausalConvOp)[0]
    th, tw = s.tile
    xt, wt, st = (
        s.load_of(sp.buffer_of(v)).tensor.root_reference.data for v in (op.x, op.weight, op.state)
    )
    ot = s.store_of(sp.buffer_of(op.out)).tensor.root_reference.data
    nt = s.store_of(sp.buffer_of(op.new_state)).tensor.root_reference.data
    taps, rows, cols = op.taps, op.rows, op.cols
    pc, pk, ps = pow2(max(b["w"] for b in s.ranges) * tw), pow2(s.k_block * th), pow2(taps - 1)
    silu = "\n    acc = acc / (1.0 + tl.exp(-acc))" if op.activation.data == "silu" else ""
    X, W, S, OUT, N = (s.arg(t) for t in (xt, wt, st, ot, nt))
    s.emit(f"""
cc = c0 * {tw} + tl.arange(0, {pc})
cm = (tl.arange(0, {pc}) < w * {tw}) & (cc < {cols})
for k0 in range(0, {s.k_tiles}, {s.k_block}):
    rr = k0 * {th} + tl.arange(0, {pk})
    rm = (tl.arange(0, {pk}) < {s.k_block * th}) & (rr < {rows})
    acc = tl.zeros(({pk}, {pc}), dtype=tl.float32)
    for j in tl.static_range({taps}):
        src = rr + j - {taps - 1}
        xv = tl.load({X} + src[:, None] * {cols} + cc[None, :], mask=(rm & (src >= 0))[:, None] & cm[None, :], other=0).to(tl.float32)
        sv = tl.load({S} + (rr + j)[:, None] * {cols} + cc[None, :], mask=(rm & (src < 0))[:, None] & cm[None, :], other=0).to(tl.float32)
        wv = tl.load({W} + j * {cols} + cc, mask=cm, other=0).to(tl.float32)
        acc += (xv + sv) * wv[None, :]{silu}
    tl.store({OUT} + rr[:, None] * {cols} + cc[None, :], {s.cast("acc", ot)}, mask=rm[:, None] & cm[None, :])
si = tl.arange(0, {ps})
src = {rows - (taps - 1)} + si
live = si < {taps - 1}
xv = tl.load({X} + src[:, None] * {cols} + cc[None, :], mask=(live & (src >= 0))[:, None] & cm[None, :], other=0)
sv = tl.load({S} + ({rows} + si)[:, None] * {cols} + cc[None, :], mask=(live & (src < 0))[:, None] & cm[None, :], other=0)
tl.store({N} + si[:, None] * {cols} + cc[None, :], {s.cast("xv.to(tl.float32) + sv.to(tl.float32)", nt)}, mask=live[:, None] & cm[None, :])
""")


@section_printer(SectionKind.GATED_DELTA)
def _gated_delta(s: Kernel) -> None:
    """Each item's head and state columns: the state in registers, the rows of time in order
    (within each chunk the recurrent step, which the chunked form equals up to f32 rounding:
    docs/tg.md#tggated_delta), each row's output stored; then the new state."""
    op = s.program.ops_of(sp.GatedDeltaOp)[0]
    th, tw = s.tile
    names = [
        s.load_of(sp.buffer_of(v)).tensor.root_reference.data
        for v in (op.q, op.k, op.v, op.g, op.beta, op.state)
    ]
    ot = s.store_of(sp.buffer_of(op.out)).tensor.root_reference.data
    nt = s.store_of(sp.buffer_of(op.new_state)).tensor.root_reference.data
    Q, K, V, G, B, S = (s.arg(t) for t in names)
    OUT, N = s.arg(ot), s.arg(nt)
    heads, d, dv, rows = op.heads, op.head_dim, op.v_head_dim, op.rows
    group = heads // op.k_heads
    kc, vc = s.shape(names[0])[1], s.shape(names[2])[1]
    pd, pw = pow2(d), pow2(max(b["w"] for b in s.ranges) * tw)
    s.emit(f"""
head = r0 // {d // tw}
kh = head // {group}
dd = tl.arange(0, {pd})
dm = dd < {d}
vv = c0 * {tw} + tl.arange(0, {pw})
vm = (tl.arange(0, {pw}) < w * {tw}) & (vv < {dv})
sm = dm[:, None] & vm[None, :]
state = tl.load({S} + (head * {d} + dd)[:, None] * {dv} + vv[None, :], mask=sm, other=0).to(tl.float32)
for row in range(0, {rows}):
    q = tl.load({Q} + row * {kc} + kh * {d} + dd, mask=dm, other=0).to(tl.float32) * {float(op.scale.value.data)!r}
    k = tl.load({K} + row * {kc} + kh * {d} + dd, mask=dm, other=0).to(tl.float32)
    v = tl.load({V} + row * {vc} + head * {dv} + vv, mask=vm, other=0).to(tl.float32)
    g = tl.load({G} + row * {heads} + head).to(tl.float32)
    b = tl.load({B} + row * {heads} + head).to(tl.float32)
    state = state * tl.exp(g)
    delta = (v - tl.sum(state * k[:, None], axis=0)) * b
    state = state + k[:, None] * delta[None, :]
    o = tl.sum(state * q[:, None], axis=0)
    tl.store({OUT} + row * {vc} + head * {dv} + vv, {s.cast("o", ot)}, mask=vm)
tl.store({N} + (head * {d} + dd)[:, None] * {dv} + vv[None, :], {s.cast("state", nt)}, mask=sm)
""")


def kernel_of(s: Kernel) -> None:
    """Fills s.lines with the kernel's body (inside the item loop)."""
    kind = s.program.kind.value
    if kind in REFUSED_SECTION_KINDS:
        raise s.refuse(REFUSED_SECTION_KINDS[kind])
    for t in s.tensors:
        if t.format is not None and t.q8_0_axis is None:
            raise s.refuse(
                f"tensor @{t.sym_name.data} stored as {t.format.data} has no Triton form"
            )
    SECTION_PRINTERS[kind](s)
