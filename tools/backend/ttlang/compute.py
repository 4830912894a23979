"""The compute stages other than the GEMM's, as TT-Lang block math (`-t ttlang`).

Every stage pops one page of each input and pushes one page of its output per item, as sp says
(spatial_dialect/sp/compute.py); the math is block math on whole pages:

- `sp.map`: the kind's function; a `rows` operand (a 1 x C row) is `ttl.block.broadcast` over
  the tile rows (dims=[0]: row 0 of each tile replicated), a `cols` operand ([h, 1] statistics in
  column 0) over the columns (dims=[-1]); scalars (scale, cap) are `ttl.block.fill` blocks.
- `sp.row_reduce whole`: `ttl.math.reduce_sum` / `reduce_max` over the block's columns (dims=[-1]
  leaves each row's result in column 0), broadcast back; eps and 1/width are fill blocks.
- `sp.rope`: x * C + (x @ P) * S, where P (the rotate-half permutation with its sign, block
  diagonal over the item's heads) and D (cos/sin columns to their two head columns: C = cos @ D,
  S = sin @ D) are constant tensors the host allocates beside the program's own (`_rope_*`).

What needs a column other than column 0 of a tile (layer_norm / softmax statistics), a group
narrower than the block, or a column mask (a row reduction over a width that is not whole
tiles) is refused by name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.ttlang.prelude import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.prelude import Lines
    from spatial_dialect.tools.backend.ttlang.printer import OperationWriter

TILE = 32

UNARY = {
    "copy": "{a}",
    "tilize": "{a}",
    "untilize": "{a}",
    "silu": "ttl.math.silu({a})",
    "relu": "ttl.math.relu({a})",
    "sigmoid": "ttl.math.sigmoid({a})",
    "gelu": "ttl.math.gelu({a})",
    "transpose": "ttl.block.transpose({a})",
    "add": "{a} + {b}",
    "sub": "{a} - {b}",
    "mul": "{a} * {b}",
    "add_row": "{a} + {b}",
    "sub_row": "{a} - {b}",
    "mul_row": "{a} * {b}",
    "l2_apply": "{a} * {b}",
    "swiglu": "ttl.math.silu({a}) * {b}",
}

# the map kinds whose text is more than one expression of their inputs (_emit_map)
WITH_FORMS = ("scale", "softcap", "rms_apply", "moe_combine", "decay")


def _unsupported(section: str, what: str) -> Exception:
    return TTLangUnsupported(section, what)


def check_compute(section: str, s: sp.StageOp) -> None:
    """Refuse, by name, what this printer cannot express in TT-Lang block math."""
    if isinstance(s, sp.MapOp):
        kind = s.kind.data
        if kind in ("layer_apply", "softmax_apply"):
            raise _unsupported(
                section,
                f"sp.map {kind}: its statistics sit in columns 0 and 1 of a tile; TT-Lang block "
                "math has no column shift within a tile to bring column 1 to column 0",
            )
        if kind == "gelu_tanh":
            return
        if kind not in UNARY and kind not in WITH_FORMS:
            raise _unsupported(section, f"sp.map {kind}: no TT-Lang form in this printer")
        if kind == "rms_apply" and s.group is not None:
            raise _unsupported(
                section,
                f"sp.map rms_apply group {s.group}: a per-group weight inside a block needs a "
                "sub-block view of the block (TT-Lang blocks are whole units)",
            )
    elif isinstance(s, sp.RowReduceOp):
        form, kind = s.form.data, s.kind.data
        if form != "whole" and kind not in ("rms_norm", "l2_norm"):
            raise _unsupported(
                section,
                f"sp.row_reduce {form} {kind}: a blocked row reduction's statistics use columns "
                "0 and 1 of a tile, which TT-Lang block math cannot address (only whole rows "
                "that fit one site are printed)",
            )
        if s.width != s.cols and s.width % TILE:
            raise _unsupported(
                section,
                f"sp.row_reduce {kind} width {s.width}: groups narrower than a tile need a "
                "column mask (ttl.block.mask is simulator-only)",
            )
        if kind not in ("rms_norm", "l2_norm") and s.cols % TILE:
            raise _unsupported(
                section,
                f"sp.row_reduce {kind} over {s.cols} columns: the padding of the last tile "
                "would enter the statistics; a column mask (ttl.block.mask) is simulator-only",
            )
    elif isinstance(s, sp.RopeOp):
        if s.head_dim % 2:
            raise _unsupported(section, f"sp.rope head_dim {s.head_dim} is odd")


def _fill(value: float, shape: str) -> str:
    return f"ttl.block.fill({value!r}, {shape})"


def rope_constants(
    section: OperationWriter, s: sp.RopeOp
) -> dict[str, tuple[tuple[int, int], str]]:
    """The constant tensors of a rope stage: name -> (shape, numpy source)."""
    b_all = [r.bindings(section.work.k_block) for r in section.ranges]
    w_max = max(sp.buffer_of(s.ins[0]).page.resolve(b)[1] for b in b_all)
    cw = max(sp.buffer_of(s.ins[1]).page.resolve(b)[1] for b in b_all)
    hd, style = s.head_dim, str(s.kind.data.value)
    n, c = w_max * TILE, cw * TILE
    p = f"_rope_p_{style}_{hd}_{n}"
    d = f"_rope_d_{style}_{hd}_{n}_{c}"
    return {
        p: ((n, n), f"_rope_perm({style!r}, {hd}, {n})"),
        d: ((c, n), f"_rope_dup({style!r}, {hd}, {c}, {n})"),
    }


def emit_compute(sec: OperationWriter, out: Lines, s: sp.StageOp, r: sp.SitesOp, b: dict) -> None:
    if isinstance(s, sp.MapOp):
        _emit_map(sec, out, s, r, b)
    elif isinstance(s, sp.RowReduceOp):
        _emit_row_reduce(sec, out, s, r, b)
    else:
        assert isinstance(s, sp.RopeOp)
        _emit_rope(sec, out, s, r, b)


def _page(s: sp.StageOp, v, b: dict) -> tuple[int, int]:  # noqa: ANN001
    return sp.buffer_of(v).page.resolve(b)


def _withs(sec: OperationWriter, ins, out_v, r: sp.SitesOp) -> tuple[str, list[str]]:  # noqa: ANN001
    names = [f"i{k}" for k in range(len(ins))]
    parts = [
        f"{sec.dfb(sp.buffer_of(v), r)}.wait() as {n}" for v, n in zip(ins, names, strict=True)
    ]
    if not sec.sub_compute(r):  # several sub-blocks: the output is reserved per slice (_store)
        parts.append(f"{sec.dfb(sp.buffer_of(out_v), r)}.reserve() as o_blk")
    return "with " + ", ".join(parts) + ":", names


def _block(sec: OperationWriter, s: sp.StageOp, r: sp.SitesOp, b: dict) -> tuple[int, int]:
    """The shape the stage computes in: the output page, or the whole block when the output
    page is one of several sub-blocks."""
    if sec.sub_compute(r):
        return b["h"], b["w"]
    return _page(s, s.out, b)


def _store(
    sec: OperationWriter, out: Lines, expr: str, s: sp.StageOp, r: sp.SitesOp, b: dict
) -> None:
    """Push the block's result: whole, or one [sh, sw] slice per sub-block (R_ti @ f @ C_tj)."""
    if not sec.sub_compute(r):
        out(f"o_blk.store({expr})")
        return
    out(f"full = {expr}")
    sec.emit_sub_slices(out, r, b, "full", sec.dfb(sp.buffer_of(s.out), r))


def _emit_map(sec: OperationWriter, out: Lines, s: sp.MapOp, r: sp.SitesOp, b: dict) -> None:
    oh, ow = _block(sec, s, r, b)
    shape = f"({oh}, {ow})"
    head, names = _withs(sec, list(s.ins), s.out, r)
    args = []
    for n, (v, mode) in zip(names, s.inputs(), strict=True):
        ph, pw = _page(s, v, b)
        if mode == "rows":
            args.append(f"ttl.block.broadcast({n}, dims=[0], shape={shape})")
        elif mode == "cols":
            args.append(f"ttl.block.broadcast({n}, dims=[-1], shape={shape})")
        else:
            args.append(n)
    kind = s.kind.data
    out(head)
    with out.indent():
        if kind in UNARY:
            expr = UNARY[kind].format(a=args[0], b=args[1] if len(args) > 1 else "")
        elif kind == "scale":
            expr = f"{args[0]} * {_fill(s.scalar.value.data, shape)}"  # type: ignore[union-attr]
        elif kind == "softcap":
            cap = s.scalar.value.data  # type: ignore[union-attr]
            expr = f"ttl.math.tanh({args[0]} * {_fill(1.0 / cap, shape)}) * {_fill(cap, shape)}"
        elif kind == "gelu_tanh":
            a = args[0]
            out(
                f"inner = ({a} + {a} * {a} * {a} * {_fill(0.044715, shape)}) * "
                f"{_fill(0.7978845608028654, shape)}"
            )
            expr = f"{a} * (ttl.math.tanh(inner) + {_fill(1.0, shape)}) * {_fill(0.5, shape)}"
        elif kind == "decay":  # -exp(A_log) * softplus(a + dt_bias), softplus as logaddexp(0, y)
            # (named so as not to shadow the kernel's x, y = ttl.node(dims=2))
            out(f"arg = {args[0]} + {args[2]}")
            expr = (
                f"ttl.math.neg(ttl.math.exp({args[1]})) * (ttl.math.relu(arg) + "
                "ttl.math.logp1(ttl.math.exp(ttl.math.neg(ttl.math.abs(arg)))))"
            )
        elif kind == "moe_combine":  # x * weight[:, 0] [+ acc] (docs/sp.md, route)
            expr = f"{args[0]} * {args[1]}" + (f" + {args[2]}" if len(args) == 3 else "")
        else:  # rms_apply: (x [+ residual]) * stats[:, 0] * weight
            x = args[0] if len(args) == 3 else f"({args[0]} + {args[1]})"
            expr = f"{x} * {args[-2]} * {args[-1]}"
        _store(sec, out, expr, s, r, b)


def _emit_row_reduce(
    sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict
) -> None:
    kind = s.kind.data
    ins = list(s.ins)
    if s.form.data != "whole":
        _emit_blocked(sec, out, s, r, b)
        return
    h, w = _page(s, ins[0], b)
    oh, ow = _block(sec, s, r, b)
    if (oh, ow) != (h, w):
        raise _unsupported(
            sec.name,
            f"sp.row_reduce {kind}: output block {oh}x{ow} differs from the {h}x{w} input page",
        )
    if s.width != s.cols and s.width != w * TILE:
        raise _unsupported(
            sec.name,
            f"sp.row_reduce {kind} width {s.width}: a {w}-tile block holds several groups; "
            "TT-Lang blocks are whole units (no per-group view of a block)",
        )
    full, col = f"({h}, {w})", f"({h}, 1)"
    head, names = _withs(sec, ins, s.out, r)
    eps = s.eps.value.data if s.eps is not None else 0.0  # type: ignore[union-attr]
    out(head)
    with out.indent():
        if kind == "rms_norm":
            if len(ins) == 3:
                out(f"xv = {names[0]} + {names[1]}")
            else:
                out(f"xv = {names[0]}")
            wgt = names[-1]
            out(f"ss = ttl.math.reduce_sum(xv * xv, dims=[-1], shape={col})")
            out(f"inv = ttl.math.rsqrt(ss / {_fill(float(s.width), col)} + {_fill(eps, col)})")
            _store(
                sec,
                out,
                f"xv * ttl.block.broadcast(inv, dims=[-1], shape={full}) * "
                f"ttl.block.broadcast({wgt}, dims=[0], shape={full})",
                s,
                r,
                b,
            )
        elif kind == "layer_norm":
            x, wgt, bias = names
            n = _fill(float(s.width), col)
            out(f"mean = ttl.math.reduce_sum({x}, dims=[-1], shape={col}) / {n}")
            out(f"c = {x} - ttl.block.broadcast(mean, dims=[-1], shape={full})")
            out(f"var = ttl.math.reduce_sum(c * c, dims=[-1], shape={col}) / {n}")
            out(f"inv = ttl.math.rsqrt(var + {_fill(eps, col)})")
            _store(
                sec,
                out,
                f"c * ttl.block.broadcast(inv, dims=[-1], shape={full}) * "
                f"ttl.block.broadcast({wgt}, dims=[0], shape={full}) + "
                f"ttl.block.broadcast({bias}, dims=[0], shape={full})",
                s,
                r,
                b,
            )
        elif kind == "l2_norm":
            x = names[0]
            out(f"ss = ttl.math.reduce_sum({x} * {x}, dims=[-1], shape={col})")
            out(f"inv = ttl.math.rsqrt(ss + {_fill(eps, col)})")
            _store(sec, out, f"{x} * ttl.block.broadcast(inv, dims=[-1], shape={full})", s, r, b)
        else:  # softmax
            x = names[0]
            out(f"peak = ttl.math.reduce_max({x}, dims=[-1], shape={col})")
            out(f"e = ttl.math.exp({x} - ttl.block.broadcast(peak, dims=[-1], shape={full}))")
            out(f"total = ttl.math.reduce_sum(e, dims=[-1], shape={col})")
            _store(sec, out, f"e / ttl.block.broadcast(total, dims=[-1], shape={full})", s, r, b)


def _emit_rope(sec: OperationWriter, out: Lines, s: sp.RopeOp, r: sp.SitesOp, b: dict) -> None:
    x_v, cos_v, sin_v = list(s.ins)
    h, w = _page(s, x_v, b)
    ch, cw = _page(s, cos_v, b)
    oh, ow = _block(sec, s, r, b)
    if (oh, ow) != (h, w):
        raise _unsupported(
            sec.name, f"sp.rope: output block {oh}x{ow} differs from the {h}x{w} input page"
        )
    consts = rope_constants(sec, s)
    head, names = _withs(sec, [x_v, cos_v, sin_v], s.out, r)
    out(head)
    with out.indent():
        pn, dn = consts
        x, c, si = names
        out(f"c_full = {c} @ {dn}_blk")
        out(f"s_full = {si} @ {dn}_blk")
        _store(sec, out, f"{x} * c_full + ({x} @ {pn}_blk) * s_full", s, r, b)


def _emit_blocked(
    sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict
) -> None:
    """rms_norm and l2_norm partial (each row's sum of squares in column 0 of an [h, 1] page)
    and combine (the partials of every K block summed, then 1/sqrt(mean + eps), l2_norm's
    1/sqrt(sum + eps), in column 0): their statistics use column 0 only, which reduce_sum
    leaves them in."""
    ins = list(s.ins)
    h, _ = _page(s, ins[0], b)
    col = f"({h}, 1)"
    if s.form.data == "partial":
        head, names = _withs(sec, ins, s.out, r)
        out(head)
        with out.indent():
            x = names[0] if len(names) == 1 else f"({names[0]} + {names[1]})"
            out(f"xv = {x}")
            out(f"o_blk.store(ttl.math.reduce_sum(xv * xv, dims=[-1], shape={col}))")
        return
    eps = s.eps.value.data  # type: ignore[union-attr]
    k_blocks = sec.k_tiles // b["kw"]
    p = sec.dfb(sp.buffer_of(ins[0]), r)
    o = sec.dfb(sp.buffer_of(s.out), r)
    for kb in range(k_blocks):
        out(f"with {p}.wait() as p_blk:")
        with out.indent():
            part = f"ttl.math.reduce_sum(p_blk, dims=[-1], shape={col})"
            if kb == 0:
                out(f"total = {part}")
            else:
                out(f"total = total + {part}")
    if s.kind.data == "rms_norm":
        out(f"total = total / {_fill(float(s.width), col)}")
    out(f"with {o}.reserve() as o_blk:")
    with out.indent():
        out(f"o_blk.store(ttl.math.rsqrt(total + {_fill(eps, col)}))")
