"""Maps (`sp.map`) as Triton kernel bodies: one printer per map kind, registered by its
`MapKindName` next to the arithmetic it prints, and the operand loads every kind shares.

A map is elementwise in f32 with one rounding at the store, so a kind is one expression over its
operands (`MapOperands`): the printer returns that expression. The integer kinds (`requant`,
`clamp`: sp's `ints_only`) are exact, not f32: their operand is loaded in its own integer type
and their expression is integer (clamp) or f64 (requant: x * scale in f64 is the reference's
own product, rounded half to even by floor and a parity test, all exact in f64) arithmetic. How an operand is read (its mode:
the item's block, a row broadcast down, a column of per-row numbers, the transposed block) is the
IR's and the same for every kind, so it is printed once here. A kind with no Triton form is
refused by name in `REFUSED_MAP_KINDS`; `MAP_PRINTERS` and it together hold every `MapKindName`
(test/backend/triton/test_triton_coverage.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp.enums import SectionKind
from spatial_dialect.sp.kinds import MAP_KINDS, MapKindName, Mode
from spatial_dialect.tools.backend.triton.kernel import Kernel, access, pow2, section_printer
from spatial_dialect.tools.backend.triton.text import below, conj, offset


@dataclass(frozen=True)
class MapOperands:
    """What a map kind's expression is written over: `x[i]`, the name of operand i (for a
    column operand, its first per-row number), `cols[i]` the names of a column operand's two
    numbers (its statistics), and the op's scalar."""

    x: list[str]
    cols: list[list[str]]
    scalar: float | None
    op: sp.MapOp


MapPrinter = Callable[[MapOperands], str]
"""A kind's printer returns the result's expression, after the statements (one a line) that it
needs first (an integer requantization's rounding steps), emitted once the operands are loaded."""

MAP_PRINTERS: dict[MapKindName, MapPrinter] = {}
"""Every map kind Triton prints, by kind: the f32 expression of the result."""

REFUSED_MAP_KINDS: dict[MapKindName, str] = {}
"""Map kinds with no Triton form, and why (none today)."""


def map_printer(*kinds: MapKindName) -> Callable[[MapPrinter], MapPrinter]:
    def register(printer: MapPrinter) -> MapPrinter:
        for kind in kinds:
            assert kind not in MAP_PRINTERS and kind not in REFUSED_MAP_KINDS, kind
            MAP_PRINTERS[kind] = printer
        return printer

    return register


# ── The kinds ─────────────────────────────────────────────────────────────────────────────────

K = MapKindName


# A Q8_0 operand is loaded dequantized and a store into a Q8_0 tensor quantizes, as the FIFOs
# do (docs/sp.md#q8_0-tensors): the two conversions are copies here.
@map_printer(K.COPY, K.TILIZE, K.UNTILIZE, K.TRANSPOSE, K.QUANTIZE_Q8_0, K.DEQUANTIZE_Q8_0)
def _identity(m: MapOperands) -> str:
    return m.x[0]


def _tanh(x: str) -> str:
    return f"(1.0 - 2.0 / (tl.exp(2.0 * ({x})) + 1.0))"


@map_printer(K.SILU)
def _silu(m: MapOperands) -> str:
    return f"{m.x[0]} / (1.0 + tl.exp(-{m.x[0]}))"


@map_printer(K.RELU)
def _relu(m: MapOperands) -> str:
    return f"tl.maximum({m.x[0]}, 0.0)"


@map_printer(K.SIGMOID)
def _sigmoid(m: MapOperands) -> str:
    return f"1.0 / (1.0 + tl.exp(-{m.x[0]}))"


@map_printer(K.GELU)
def _gelu(m: MapOperands) -> str:
    return f"0.5 * {m.x[0]} * (1.0 + tl.math.erf({m.x[0]} * 0.7071067811865476))"


@map_printer(K.GELU_TANH)
def _gelu_tanh(m: MapOperands) -> str:
    x = m.x[0]
    return (
        f"0.5 * {x} * (1.0 + {_tanh(f'0.7978845608028654 * ({x} + 0.044715 * {x} * {x} * {x})')})"
    )


@map_printer(K.SCALE)
def _scale(m: MapOperands) -> str:
    return f"{m.x[0]} * {m.scalar!r}"


@map_printer(K.SOFTCAP)
def _softcap(m: MapOperands) -> str:
    return f"{m.scalar!r} * {_tanh(f'{m.x[0]} / {m.scalar!r}')}"


@map_printer(K.ADD, K.ADD_ROW)
def _add(m: MapOperands) -> str:
    return f"{m.x[0]} + {m.x[1]}"


@map_printer(K.SUB, K.SUB_ROW)
def _sub(m: MapOperands) -> str:
    return f"{m.x[0]} - {m.x[1]}"


@map_printer(K.MUL, K.MUL_ROW)
def _mul(m: MapOperands) -> str:
    return f"{m.x[0]} * {m.x[1]}"


@map_printer(K.SWIGLU)
def _swiglu(m: MapOperands) -> str:
    return f"{m.x[0]} / (1.0 + tl.exp(-{m.x[0]})) * {m.x[1]}"


@map_printer(K.RMS_APPLY)
def _rms_apply(m: MapOperands) -> str:
    """(x [+ residual]) * stats[:, 0] * weight."""
    if len(m.x) == 4:
        x, residual, stats, weight = m.x
        return f"({x} + {residual}) * {stats} * {weight}"
    x, stats, weight = m.x
    return f"{x} * {stats} * {weight}"


@map_printer(K.LAYER_APPLY)
def _layer_apply(m: MapOperands) -> str:
    x, _, weight, bias = m.x
    inv, mean = m.cols[1]
    return f"({x} - {mean}) * {inv} * {weight} + {bias}"


@map_printer(K.MOE_COMBINE)
def _moe_combine(m: MapOperands) -> str:
    """acc + x * weight[:, 0]; the first expert has no acc."""
    scaled = f"{m.x[0]} * {m.x[1]}"
    return f"{m.x[2]} + {scaled}" if len(m.x) == 3 else scaled


@map_printer(K.SOFTMAX_APPLY)
def _softmax_apply(m: MapOperands) -> str:
    top, inv = m.cols[1]
    return f"tl.exp({m.x[0]} - {top}) * {inv}"


@map_printer(K.L2_APPLY)
def _l2_apply(m: MapOperands) -> str:
    return f"{m.x[0]} * {m.x[1]}"


def softplus_of(z: str) -> str:
    """log(1 + exp(z)) without overflow: max(z, 0) + log(1 + exp(-|z|))."""
    return f"(tl.maximum({z}, 0.0) + tl.log(1.0 + tl.exp(-tl.abs({z}))))"


@map_printer(K.SOFTPLUS)
def _softplus(m: MapOperands) -> str:
    return softplus_of(m.x[0])


@map_printer(K.CLAMP)
def _clamp(m: MapOperands) -> str:
    """min(max(x, lo), hi) in the operand's integer type (lo and hi lie in its range: tg)."""
    return f"tl.minimum(tl.maximum({m.x[0]}, {m.op.lo}), {m.op.hi})"


@map_printer(K.REQUANT)
def _requant(m: MapOperands) -> str:
    """clip(round_half_even(x * scale) + offset, -128, 127), as numerics.int_requant: x * scale
    in f64 (x exact, scale its f32 value: the reference's product, the same IEEE operation);
    v - floor(v) is exact in f64, so a tie is seen exactly and goes to the even neighbour; the
    sum and the bounds are integers below 2^53, exact; the store converts the integral f64."""
    return (
        f"v = {m.x[0]}.to(tl.float64) * {float(np.float32(m.scalar))!r}\n"
        "fl = tl.floor(v)\n"
        "fr = v - fl\n"
        "odd = fl - 2.0 * tl.floor(fl * 0.5)\n"
        "up = (fr > 0.5) | ((fr == 0.5) & (odd == 1.0))\n"
        f"tl.minimum(tl.maximum(tl.where(up, fl + 1.0, fl) + {float(m.op.offset)!r}, -128.0), "
        "127.0)"
    )


@map_printer(K.DECAY)
def _decay(m: MapOperands) -> str:
    """-exp(a_log) * softplus(a + dt_bias), softplus without overflow."""
    a, a_log, dt_bias = m.x
    return f"-tl.exp({a_log}) * {softplus_of(f'({a} + {dt_bias})')}"


# ── The operands and the body ─────────────────────────────────────────────────────────────────


def _operand(s: Kernel, var: str, value, mode: Mode, used: str, exact: bool) -> None:
    """Loads one map operand as `var` (a column operand: the per-row numbers `var`0 and `var`1
    that `used` reads); `exact`: in the tensor's own (integer) type, not widened to f32."""
    load = s.load_of(sp.buffer_of(value))
    a = access(load.access, s.ranges)
    t = load.tensor.root_reference.data
    th, tw = s.tile
    R, C = s.shape(t)
    if mode == Mode.TRANSPOSED:
        pr = pow2(max(b["h"] for b in s.ranges) * th)
        pc = pow2(max(b["w"] for b in s.ranges) * tw)
        # element (i, j) of the block is element (j, i) of the pattern's block
        s.emit(f"""
{var}_r = {offset(a.row * th, f"tl.arange(0, {pc})")}
{var}_c = {offset(a.col * tw, f"tl.arange(0, {pr})")}
{var}_m = ({var}_r < {R})[None, :] & ({var}_c < {C})[:, None]
{var}_at = {s.arg(t)} + {var}_r[None, :] * {C} + {var}_c[:, None]
{var} = tl.load({var}_at, mask={var}_m, other=0).to(tl.float32)
""")
    elif mode == Mode.COLS:  # an R x 1 page: its first two columns are per-row numbers
        pr = pow2(a.max_rows * th)
        rows = conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"{var}_r < {R}")
        s.emit(f"""
{var}_r = {offset(a.row * th, f"tl.arange(0, {pr})")}
{var}_m = {rows}
""")
        for j, col in enumerate((a.col * tw, a.col * tw + (1 if C > 1 else 0))):
            if re.search(rf"\b{var}{j}\b", used):
                at = offset(col, f"{var}_r * {C}") if col.constant != 0 else f"{var}_r * {C}"
                s.emit(
                    f"{var}{j} = tl.load({s.arg(t)} + {at}, mask={var}_m, other=0)"
                    ".to(tl.float32)[:, None]"
                )
    else:
        s.block_load(var, t, a, widen=not exact)
        if mode == Mode.ROWS:  # row 0 of each tile, broadcast down
            rows = pow2(a.max_rows * th)
            s.emit(
                f"{var} = tl.sum(tl.where(tl.arange(0, {rows})[:, None] == 0, {var}, 0.0), "
                "axis=0)[None, :]"
            )


@section_printer(SectionKind.MAP, SectionKind.TILIZE, SectionKind.UNTILIZE)
def map_body(s: Kernel) -> None:
    op = s.program.ops_of(sp.MapOp)[0]
    kind = op.kind.data
    printer = MAP_PRINTERS.get(kind)
    if printer is None:
        raise s.refuse(f"sp.map {kind} has no Triton form: {REFUSED_MAP_KINDS[kind]}")
    inputs = [(value, Mode(str(mode))) for value, mode in op.inputs()]
    names = [f"x{i}" for i in range(len(inputs))]
    cols = [
        [f"{n}0", f"{n}1"] if mode == Mode.COLS else [n]
        for n, (_, mode) in zip(names, inputs, strict=True)
    ]
    scalar = float(op.scalar.value.data) if op.scalar is not None else None
    *steps, y = printer(MapOperands([c[0] for c in cols], cols, scalar, op)).split("\n")
    exact = MAP_KINDS[kind].ints_only
    for name, (value, mode) in zip(names, inputs, strict=True):
        _operand(s, name, value, mode, "\n".join([*steps, y]), exact)
    for step in steps:
        s.emit(step)
    s.emit(f"y = {y}")
    s.block_store("y", s.store_of(sp.buffer_of(op.out)))
