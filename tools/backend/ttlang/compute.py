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

- a whole layer_norm / softmax over a row that is not whole tiles reads the host's column mask
  (`_col_keep`: 1 on the real columns), so the padding never enters a statistic.
- the blocked layer_norm / softmax (two statistics, in columns 0 and 1) and their apply maps
  are stats.py's.

A group narrower than the block (a per-group reduction within a tile row) is refused by name.

Each map kind and each row-reduction kind is printed by one function, registered next to it by
`@map_kind(...)` / `@row_kind(...)` in MAP_PRINTERS / ROW_PRINTERS, keyed by the kind's enum;
the kinds TT-Lang has no form for are refused, with their reason, in REFUSED_MAP_KINDS /
REFUSED_ROW_KINDS. A kind is in exactly one of the two (test/backend/ttlang/test_ttlang_coverage.py).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.sp.kinds import MapKindName, Mode, RowForm, RowKindName
from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.backend.ttlang.blocks import Constant, fill, page_of, with_blocks
from spatial_dialect.tools.backend.ttlang.stats import (
    APPLY_KINDS,
    check_pair,
    column_1,
    emit_pair,
    masked_logits,
    pair_constants,
)
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines


# ── Map kinds ───────────────────────────────────────────────────────────────────────────────


@dataclass
class MapText:
    """What a map kind's printer is given: its operands as blocks of the computed shape (a
    `rows` or `cols` operand already broadcast), that shape as text, the stage, and the writer,
    for a temporary it prints before the expression it returns."""

    args: list[str]
    shape: str
    stage: sp.MapOp
    out: Lines
    raw: list[str]
    """The operands' block names as popped (a `cols` operand not yet broadcast)."""
    rows: int
    """The block's tile rows."""

    def fill(self, value: float) -> str:
        return fill(value, self.shape)

    @property
    def scalar(self) -> float:
        return self.stage.scalar.value.data  # type: ignore[union-attr]


MapPrinter = Callable[[MapText], str]
MapCheck = Callable[[str, sp.MapOp], None]

MAP_PRINTERS: dict[MapKindName, MapPrinter] = {}
"""Map kind -> the function that prints its block math (the expression the output stores)."""

_MAP_CHECKS: dict[MapKindName, MapCheck] = {}

# ttnn's tensors have no int8 dtype (its integer dtypes: uint8, uint16, uint32, int32), and the
# TT-Lang specification states its block operators and math functions for float blocks only:
# an integer map computed in f32 would be exact only while every value is below 2^24.
_I8 = (
    "its i8 result: ttnn has no int8 tensor (its integer dtypes are uint8, uint16, uint32 and "
    "int32), so no TT-Lang program holds it (Triton and the simulator print it)"
)
_INTEGER = (
    "integer block math: TT-Lang's block operators are stated for float blocks, ttnn has no "
    "int8 tensor for an i8 clamp, and an i32 clamp in f32 is exact only below 2^24 in "
    "magnitude (Triton and the simulator print it)"
)

REFUSED_MAP_KINDS: dict[MapKindName, str] = {
    MapKindName.REQUANT: _I8,
    MapKindName.CLAMP: _INTEGER,
}
"""Map kind -> why TT-Lang cannot print it (the message of its refusal)."""


def map_kind(
    *kinds: MapKindName, check: MapCheck | None = None
) -> Callable[[MapPrinter], MapPrinter]:
    """Register the decorated function as the printer of `kinds` (and `check` as a refusal of
    some of their stages, run before the section prints)."""

    def register(fn: MapPrinter) -> MapPrinter:
        for kind in kinds:
            assert kind not in MAP_PRINTERS, f"map kind {kind} printed twice"
            MAP_PRINTERS[kind] = fn
            if check is not None:
                _MAP_CHECKS[kind] = check
        return fn

    return register


@map_kind(
    MapKindName.COPY,
    MapKindName.TILIZE,
    MapKindName.UNTILIZE,
    MapKindName.QUANTIZE_Q8_0,
    MapKindName.DEQUANTIZE_Q8_0,
)
def _identity(m: MapText) -> str:
    # a layout bridge: ttnn's tiles are the layout the program reads. A Q8_0 tensor is stored
    # as bfp8_b on Tensix (Target.q8_0_storage): pushing into its DFB is the packer's rounding
    # to bfp8_b, popping from it the unpacker's widening (docs/backend-ttlang.md#q8_0-weights)
    return m.args[0]


@map_kind(MapKindName.SILU)
def _silu(m: MapText) -> str:
    return f"ttl.math.silu({m.args[0]})"


@map_kind(MapKindName.RELU)
def _relu(m: MapText) -> str:
    return f"ttl.math.relu({m.args[0]})"


@map_kind(MapKindName.SIGMOID)
def _sigmoid(m: MapText) -> str:
    return f"ttl.math.sigmoid({m.args[0]})"


def softplus_of(arg: str) -> str:
    """log(1 + exp(arg)) without overflow, as TT-Lang's math writes it (the reference's
    logaddexp(0, arg)); `arg` is a name, read three times."""
    return (
        f"(ttl.math.relu({arg}) + ttl.math.logp1(ttl.math.exp(ttl.math.neg(ttl.math.abs({arg})))))"
    )


@map_kind(MapKindName.SOFTPLUS)
def _softplus(m: MapText) -> str:
    return softplus_of(m.args[0])


@map_kind(MapKindName.GELU)
def _gelu(m: MapText) -> str:
    return f"ttl.math.gelu({m.args[0]})"


@map_kind(MapKindName.TRANSPOSE)
def _transpose(m: MapText) -> str:
    return f"ttl.block.transpose({m.args[0]})"


@map_kind(MapKindName.ADD, MapKindName.ADD_ROW)
def _add(m: MapText) -> str:
    return f"{m.args[0]} + {m.args[1]}"


@map_kind(MapKindName.SUB, MapKindName.SUB_ROW)
def _sub(m: MapText) -> str:
    return f"{m.args[0]} - {m.args[1]}"


# l2_apply: x * stats[:, 0], the statistics broadcast from column 0 (a `cols` operand)
@map_kind(MapKindName.MUL, MapKindName.MUL_ROW, MapKindName.L2_APPLY)
def _mul(m: MapText) -> str:
    return f"{m.args[0]} * {m.args[1]}"


@map_kind(MapKindName.SWIGLU)
def _swiglu(m: MapText) -> str:
    return f"ttl.math.silu({m.args[0]}) * {m.args[1]}"


@map_kind(MapKindName.SCALE)
def _scale(m: MapText) -> str:
    return f"{m.args[0]} * {m.fill(m.scalar)}"


@map_kind(MapKindName.SOFTCAP)
def _softcap(m: MapText) -> str:
    cap = m.scalar
    return f"ttl.math.tanh({m.args[0]} * {m.fill(1.0 / cap)}) * {m.fill(cap)}"


@map_kind(MapKindName.GELU_TANH)
def _gelu_tanh(m: MapText) -> str:
    a = m.args[0]
    m.out(f"inner = ({a} + {a} * {a} * {a} * {m.fill(0.044715)}) * {m.fill(0.7978845608028654)}")
    return f"{a} * (ttl.math.tanh(inner) + {m.fill(1.0)}) * {m.fill(0.5)}"


@map_kind(MapKindName.DECAY)
def _decay(m: MapText) -> str:
    # -exp(A_log) * softplus(a + dt_bias), softplus as logaddexp(0, y); the temporary is named
    # so as not to shadow the kernel's x, y = ttl.node(dims=2)
    a, a_log, dt_bias = m.args
    m.out(f"arg = {a} + {dt_bias}")
    return f"ttl.math.neg(ttl.math.exp({a_log})) * {softplus_of('arg')}"


def _stats_column_1(m: MapText) -> str:
    """The `cols` operand's column 1 (a blocked layer_norm's mean, softmax's 1/sum), broadcast
    over the block's columns (stats.column_1: masked by the host's selector, summed)."""
    second = column_1(m.out, m.raw[1], m.rows)
    return f"ttl.block.broadcast({second}, dims=[-1], shape={m.shape})"


@map_kind(MapKindName.LAYER_APPLY)
def _layer_apply(m: MapText) -> str:
    # (x - mean) * inv * weight + bias: inv in column 0 (args[1]), the mean in column 1
    x, inv, weight, bias = m.args
    return f"({x} - {_stats_column_1(m)}) * {inv} * {weight} + {bias}"


@map_kind(MapKindName.SOFTMAX_APPLY)
def _softmax_apply(m: MapText) -> str:
    # exp(x - max) * 1/sum: the maximum in column 0 (args[1]), 1/sum in column 1
    x, peak = m.args[:2]
    x = masked_logits(m.out, m.stage, x, m.rows, m.shape)
    return f"ttl.math.exp({x} - {peak}) * {_stats_column_1(m)}"


@map_kind(MapKindName.MOE_COMBINE)
def _moe_combine(m: MapText) -> str:
    # x * weight[:, 0] [+ acc] (docs/sp.md, route)
    return f"{m.args[0]} * {m.args[1]}" + (f" + {m.args[2]}" if len(m.args) == 3 else "")


def _rms_apply_group(section: str, s: sp.MapOp) -> None:
    if s.group is not None:
        raise TTLangUnsupported(
            section,
            f"sp.map rms_apply group {s.group}: a per-group weight inside a block needs a "
            "sub-block view of the block (TT-Lang blocks are whole units)",
        )


@map_kind(MapKindName.RMS_APPLY, check=_rms_apply_group)
def _rms_apply(m: MapText) -> str:
    # (x [+ residual]) * stats[:, 0] * weight
    args = m.args
    x = args[0] if len(args) == 3 else f"({args[0]} + {args[1]})"
    return f"{x} * {args[-2]} * {args[-1]}"


# ── Row-reduction kinds ─────────────────────────────────────────────────────────────────────


@dataclass
class RowText:
    """What a whole row reduction's printer is given: its inputs' block names, the block's
    shape and a column's ([h, 1]: a row statistic in column 0) as text, the stage and the
    writer for its temporaries."""

    names: list[str]
    full: str
    col: str
    stage: sp.RowReduceOp
    out: Lines
    keep: str | None = None
    """The column mask broadcast over the block (1 on real columns, 0 on the last tile's
    padding), where the kind is not zero-padding safe and the row is not whole tiles."""

    @property
    def eps(self) -> str:
        eps = self.stage.eps.value.data if self.stage.eps is not None else 0.0  # type: ignore[union-attr]
        return fill(eps, self.col)

    def wide(self, blk: str) -> str:
        """A column statistic broadcast over the block's columns."""
        return f"ttl.block.broadcast({blk}, dims=[-1], shape={self.full})"

    def across(self, blk: str) -> str:
        """A 1 x C row operand broadcast over the block's rows."""
        return f"ttl.block.broadcast({blk}, dims=[0], shape={self.full})"


@dataclass(frozen=True)
class RowPrinter:
    """A row-reduction kind in TT-Lang: `whole` prints its temporaries and returns the stored
    expression; `zero_padding_safe`: zeros past the last real column leave its statistics as
    they are (a sum of squares), so a width that is not whole tiles needs no column mask;
    `blocked_mean`: None where the blocked forms of one statistic (column 0) are not printed,
    else whether the combine divides the summed partials by the width (a mean: rms) or not
    (l2, sum_squares); `pairs`: the blocked forms are stats.py's (two statistics); `rooted`:
    the combine stores 1/sqrt(total + eps), else the total itself (sum_squares); `whole` is
    None for a kind the dialect has no whole form of (sum_squares)."""

    whole: Callable[[RowText], str] | None
    zero_padding_safe: bool
    blocked_mean: bool | None = None
    pairs: bool = False
    """The blocked forms carry two statistics, in columns 0 and 1 (stats.py prints them)."""
    rooted: bool = True


ROW_PRINTERS: dict[RowKindName, RowPrinter] = {}
"""Row-reduction kind -> how TT-Lang prints it."""

REFUSED_ROW_KINDS: dict[RowKindName, str] = {}
"""Row-reduction kind -> why TT-Lang cannot print it: none is refused whole (the forms and
widths each printer cannot take are refused by check_compute, from ROW_PRINTERS' flags)."""


def row_kind(
    kind: RowKindName,
    *,
    zero_padding_safe: bool,
    blocked_mean: bool | None = None,
    pairs: bool = False,
) -> Callable[[Callable[[RowText], str]], Callable[[RowText], str]]:
    def register(fn: Callable[[RowText], str]) -> Callable[[RowText], str]:
        _register_row(kind, RowPrinter(fn, zero_padding_safe, blocked_mean, pairs))
        return fn

    return register


def _register_row(kind: RowKindName, printer: RowPrinter) -> None:
    assert kind not in ROW_PRINTERS, f"row kind {kind} printed twice"
    ROW_PRINTERS[kind] = printer


@row_kind(RowKindName.RMS_NORM, zero_padding_safe=True, blocked_mean=True)
def _rms_norm(t: RowText) -> str:
    names = t.names
    t.out(f"xv = {names[0]} + {names[1]}" if len(names) == 3 else f"xv = {names[0]}")
    t.out(f"ss = ttl.math.reduce_sum(xv * xv, dims=[-1], shape={t.col})")
    t.out(f"inv = ttl.math.rsqrt(ss / {fill(float(t.stage.width), t.col)} + {t.eps})")
    return f"xv * {t.wide('inv')} * {t.across(names[-1])}"


@row_kind(RowKindName.LAYER_NORM, zero_padding_safe=False, pairs=True)
def _layer_norm(t: RowText) -> str:
    # the padding is zero, so the sum is the real columns'; the centred padding (-mean) is
    # masked back to zero before it enters the variance and the output
    x, wgt, bias = t.names
    n = fill(float(t.stage.width), t.col)
    t.out(f"mean = ttl.math.reduce_sum({x}, dims=[-1], shape={t.col}) / {n}")
    t.out(f"c = ({x} - {t.wide('mean')}) * {t.keep}" if t.keep else f"c = {x} - {t.wide('mean')}")
    t.out(f"var = ttl.math.reduce_sum(c * c, dims=[-1], shape={t.col}) / {n}")
    t.out(f"inv = ttl.math.rsqrt(var + {t.eps})")
    return f"c * {t.wide('inv')} * {t.across(wgt)} + {t.across(bias)}"


@row_kind(RowKindName.L2_NORM, zero_padding_safe=True, blocked_mean=False)
def _l2_norm(t: RowText) -> str:
    x = t.names[0]
    t.out(f"ss = ttl.math.reduce_sum({x} * {x}, dims=[-1], shape={t.col})")
    t.out(f"inv = ttl.math.rsqrt(ss + {t.eps})")
    return f"{x} * {t.wide('inv')}"


# tg.rms_stats' share of a row's sum of squares: the blocked forms only (the dialect has no
# whole sum_squares), the combine storing the partials' sum
_register_row(
    RowKindName.SUM_SQUARES,
    RowPrinter(None, zero_padding_safe=True, blocked_mean=False, rooted=False),
)


@row_kind(RowKindName.SOFTMAX, zero_padding_safe=False, pairs=True)
def _softmax(t: RowText) -> str:
    # masked: the padding is pushed to -1e30 ((keep - 1) * 1e30, exact: 0 on the real columns)
    # before the maximum and the exponential, whose value there is then 0 (a padding of 0
    # would overflow exp(0 - peak) where the logits are far below 0)
    x = t.names[0]
    if t.keep:
        t.out(f"xm = {x} + ({t.keep} - {fill(1.0, t.full)}) * {fill(1e30, t.full)}")
        x = "xm"
    t.out(f"peak = ttl.math.reduce_max({x}, dims=[-1], shape={t.col})")
    t.out(f"e = ttl.math.exp({x} - {t.wide('peak')})")
    t.out(f"total = ttl.math.reduce_sum(e, dims=[-1], shape={t.col})")
    return f"e / {t.wide('total')}"


# ── Refusals ────────────────────────────────────────────────────────────────────────────────


def check_compute(section: str, s: sp.StageOp) -> None:
    """Refuse, by name, what this printer cannot express in TT-Lang block math."""
    if isinstance(s, sp.MapOp):
        kind = s.kind.data
        if kind in REFUSED_MAP_KINDS:
            raise TTLangUnsupported(section, f"sp.map {kind}: {REFUSED_MAP_KINDS[kind]}")
        if (check := _MAP_CHECKS.get(kind)) is not None:
            check(section, s)
    elif isinstance(s, sp.RowReduceOp):
        form, kind = s.form.data, s.kind.data
        if kind in REFUSED_ROW_KINDS:
            raise TTLangUnsupported(section, f"sp.row_reduce {kind}: {REFUSED_ROW_KINDS[kind]}")
        printer = ROW_PRINTERS[kind]
        if form != RowForm.WHOLE and printer.pairs:
            check_pair(section, s)
        elif form != RowForm.WHOLE and printer.blocked_mean is None:
            raise TTLangUnsupported(
                section, f"sp.row_reduce {form} {kind}: no blocked form is printed"
            )
        elif form == RowForm.WHOLE and printer.whole is None:
            raise TTLangUnsupported(section, f"sp.row_reduce whole {kind}: no whole form")
        if s.width != s.cols and s.width % TILE:
            raise TTLangUnsupported(
                section,
                f"sp.row_reduce {kind} width {s.width}: groups narrower than a tile need a "
                f"reduction per group of {s.width} columns within a tile; reduce_sum sums a "
                "tile row's 32 columns",
            )
    elif isinstance(s, sp.RopeOp):
        if s.head_dim % 2:
            raise TTLangUnsupported(section, f"sp.rope head_dim {s.head_dim} is odd")


def stage_constants(section: OperationWriter, s: sp.StageOp) -> dict[str, Constant]:
    """The constant tensors a compute stage reads: rope's permutation and duplication matrices,
    a whole row reduction's column mask."""
    if isinstance(s, sp.RopeOp):
        return _rope_constants(section, s)
    if isinstance(s, sp.RowReduceOp) and _masked(s):
        return _mask_constant(section, s)
    blocked = isinstance(s, sp.RowReduceOp) and s.form.data != RowForm.WHOLE
    if (blocked and ROW_PRINTERS[s.kind.data].pairs) or (
        isinstance(s, sp.MapOp) and s.kind.data in APPLY_KINDS
    ):
        return pair_constants(section, s)
    return {}


def _rope_constants(section: OperationWriter, s: sp.RopeOp) -> dict[str, Constant]:
    b_all = [r.bindings(section.work.k_block) for r in section.ranges]
    w_max = max(sp.buffer_of(s.ins[0]).page.resolve(b)[1] for b in b_all)
    cw = max(sp.buffer_of(s.ins[1]).page.resolve(b)[1] for b in b_all)
    hd, style = s.head_dim, str(s.kind.data.value)
    n, c = w_max * TILE, cw * TILE
    pages = [
        (sp.buffer_of(s.ins[0]).page.resolve(b)[1], sp.buffer_of(s.ins[1]).page.resolve(b)[1])
        for b in b_all
    ]
    return {
        f"_rope_p_{style}_{hd}_{n}": Constant(
            (n, n),
            f"_rope_perm({style!r}, {hd}, {n})",
            {i: (w, w) for i, (w, _) in enumerate(pages)},
        ),
        f"_rope_d_{style}_{hd}_{n}_{c}": Constant(
            (c, n),
            f"_rope_dup({style!r}, {hd}, {c}, {n})",
            {i: (cw_i, w) for i, (w, cw_i) in enumerate(pages)},
        ),
    }


def _masked(s: sp.RowReduceOp) -> bool:
    """A whole row reduction whose statistics the zero padding of its last tile would change
    (layer_norm's centred values, softmax's maximum and sum) over a row that is not whole
    tiles: it reads a column mask."""
    return (
        s.form.data == RowForm.WHOLE
        and s.cols % TILE != 0
        and not ROW_PRINTERS[s.kind.data].zero_padding_safe
    )


def _mask_name(s: sp.RowReduceOp) -> str:
    return f"_keep_{s.cols}_{_ceil_tiles(s.cols) * TILE}"


def _ceil_tiles(n: int) -> int:
    return -(-n // TILE)


def _mask_constant(section: OperationWriter, s: sp.RowReduceOp) -> dict[str, Constant]:
    """1 on the row's real columns, 0 on the padding of its last tile: one tile row, read once
    per range and broadcast down the block (every tile row of the block is the same row of
    columns: a whole reduction's block is the whole row, from column 0)."""
    n = _ceil_tiles(s.cols)
    pages = {i: (1, n) for i, _ in enumerate(section.ranges)}
    return {_mask_name(s): Constant((TILE, n * TILE), f"_col_keep({s.cols}, {n * TILE})", pages)}


def emit_compute(sec: OperationWriter, out: Lines, s: sp.StageOp, r: sp.SitesOp, b: dict) -> None:
    if isinstance(s, sp.MapOp):
        _emit_map(sec, out, s, r, b)
    elif isinstance(s, sp.RowReduceOp):
        _emit_row_reduce(sec, out, s, r, b)
    else:
        assert isinstance(s, sp.RopeOp)
        _emit_rope(sec, out, s, r, b)


def _block(sec: OperationWriter, s: sp.StageOp, r: sp.SitesOp) -> tuple[int, int]:
    """The shape the stage computes in: its output DFB's page (the whole block where the IR's
    output page is one of several sub-blocks: OperationWriter.declared)."""
    return sec.declared(sp.buffer_of(s.out), r)[0]


def _emit_map(sec: OperationWriter, out: Lines, s: sp.MapOp, r: sp.SitesOp, b: dict) -> None:
    oh, ow = _block(sec, s, r)
    shape = f"({oh}, {ow})"
    head, names = with_blocks(sec, list(s.ins), s.out, r)
    args = []
    for n, (_, mode) in zip(names, s.inputs(), strict=True):
        if mode == Mode.ROWS:
            args.append(f"ttl.block.broadcast({n}, dims=[0], shape={shape})")
        elif mode == Mode.COLS:
            args.append(f"ttl.block.broadcast({n}, dims=[-1], shape={shape})")
        else:
            args.append(n)
    out(head)
    with out.indent():
        expr = MAP_PRINTERS[s.kind.data](MapText(args, shape, s, out, names, oh))
        out(f"o_blk.store({expr})")


def _emit_row_reduce(
    sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict
) -> None:
    kind = s.kind.data
    ins = list(s.ins)
    if s.form.data != RowForm.WHOLE:
        if ROW_PRINTERS[kind].pairs:
            emit_pair(sec, out, s, r, b)
        else:
            _emit_blocked(sec, out, s, r, b)
        return
    h, w = page_of(ins[0], b)
    oh, ow = _block(sec, s, r)
    if (oh, ow) != (h, w):
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce {kind}: output block {oh}x{ow} differs from the {h}x{w} input page",
        )
    if s.width != s.cols and s.width != w * TILE:
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce {kind} width {s.width}: a {w}-tile block holds several groups; "
            "TT-Lang blocks are whole units (no per-group view of a block)",
        )
    head, names = with_blocks(sec, ins, s.out, r)
    out(head)
    with out.indent():
        full = f"({h}, {w})"
        keep = None
        if _masked(s):  # the mask's 32 rows are alike: one tile row needs no broadcast
            keep = f"{_mask_name(s)}_blk"
            if h > 1:
                out(f"keep = ttl.block.broadcast({keep}, dims=[0], shape={full})")
                keep = "keep"
        text = RowText(names, full, f"({h}, 1)", s, out, keep)
        whole = ROW_PRINTERS[kind].whole
        assert whole is not None  # check_compute refused the kind's whole form
        out(f"o_blk.store({whole(text)})")


def _emit_rope(sec: OperationWriter, out: Lines, s: sp.RopeOp, r: sp.SitesOp, b: dict) -> None:
    x_v, cos_v, sin_v = list(s.ins)
    h, w = page_of(x_v, b)
    ch, cw = page_of(cos_v, b)
    oh, ow = _block(sec, s, r)
    if (oh, ow) != (h, w):
        raise TTLangUnsupported(
            sec.name, f"sp.rope: output block {oh}x{ow} differs from the {h}x{w} input page"
        )
    consts = _rope_constants(sec, s)
    head, names = with_blocks(sec, [x_v, cos_v, sin_v], s.out, r)
    out(head)
    with out.indent():
        pn, dn = consts
        x, c, si = names
        out(f"c_full = {c} @ {dn}_blk")
        out(f"s_full = {si} @ {dn}_blk")
        out(f"o_blk.store({x} * c_full + ({x} @ {pn}_blk) * s_full)")


def _emit_blocked(
    sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict
) -> None:
    """rms_norm, l2_norm and sum_squares partial (each row's sum of squares in column 0 of an
    [h, 1] page) and combine (the partials of every K block summed, then 1/sqrt(mean + eps),
    l2_norm's 1/sqrt(sum + eps), sum_squares' sum itself, in column 0): their statistics use column 0 only, which reduce_sum
    leaves them in."""
    ins = list(s.ins)
    h, _ = page_of(ins[0], b)
    col = f"({h}, 1)"
    if s.form.data == RowForm.PARTIAL:
        head, names = with_blocks(sec, ins, s.out, r)
        out(head)
        with out.indent():
            x = names[0] if len(names) == 1 else f"({names[0]} + {names[1]})"
            out(f"xv = {x}")
            out(f"o_blk.store(ttl.math.reduce_sum(xv * xv, dims=[-1], shape={col}))")
        return
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
    printer = ROW_PRINTERS[s.kind.data]
    if printer.blocked_mean:
        out(f"total = total / {fill(float(s.width), col)}")
    out(f"with {o}.reserve() as o_blk:")
    with out.indent():
        if printer.rooted:
            eps = s.eps.value.data  # type: ignore[union-attr]
            out(f"o_blk.store(ttl.math.rsqrt(total + {fill(eps, col)}))")
        else:
            out("o_blk.store(total)")
