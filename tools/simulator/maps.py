"""The simulator's `sp.map`: one runner for the stage and the math of each map kind, each kind's
function registered by its `MapKindName` next to it (registry.MAP_KINDS).

The runner holds one page of every input for the item, broadcasts each as its mode says (a
`rows` operand's row 0 over every row, a `transposed` block transposed), calls the kind's function
on the whole block, zeroes what lies outside `valid` and pushes the result in [sh, sw] pages.
Each function computes on widened operands (f32; integers exactly) with the reference's own
functions (tools/interpreters/reference.py) and returns the unrounded result: pushing to the
output FIFO is the one rounding, to its element type (for a Q8_0 FIFO, the quantization).

Adding a map kind to the simulator is one function here under `@map_kind(MapKindName.X)`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp import MapOp, Mode
from spatial_dialect.sp.kinds import MapKindName
from spatial_dialect.tools.interpreters import numerics as ref
from spatial_dialect.tools.simulator.machine import Process, SiteRun
from spatial_dialect.tools.simulator.pages import (
    hold,
    item_label,
    push_sub_blocks,
    release,
    zero_outside,
)
from spatial_dialect.tools.simulator.registry import map_function_of, map_kind, runs

if TYPE_CHECKING:
    from spatial_dialect.tools.simulator.program import ProgramRun

F32 = np.float32


@runs(MapOp)
def run_map(sec: ProgramRun, op: MapOp, run: SiteRun, item: int, k0: int | None) -> Process:
    b = run.bindings
    h, w = b["h"], b["w"]
    th, tw = sec.tile
    who = item_label(run, op, item)
    function = map_function_of(op.kind.data, who)
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
        result = np.array(function(op, *operands))
    rect = sec.space.rect(item)
    zero_outside(result, (rect.r0 * th, rect.c0 * tw), op.valid)
    yield from push_sub_blocks(run.buffers[sp.buffer_of(op.out)], result, b, who)
    for fifo, mode, _ in held:
        release(fifo, pages[mode], who)


# ── The kinds ─────────────────────────────────────────────────────────────────────────────────
# Each takes the op (for its scalar and integer properties) and the operand blocks in the order
# of the kind's roles (sp.kinds.MAP_KINDS); an optional role left out is absent from *rest.


def _scalar(op: MapOp) -> np.float32:
    assert op.scalar is not None
    return F32(op.scalar.value.data)


@map_kind(
    MapKindName.COPY,
    MapKindName.TILIZE,
    MapKindName.UNTILIZE,
    # the runner already transposed the block (the input's mode is `transposed`)
    MapKindName.TRANSPOSE,
)
def identity(op: MapOp, x: np.ndarray) -> np.ndarray:
    """The layout bridges and copies: the data as it is (the layout is the DRAM tensors')."""
    return x


@map_kind(MapKindName.SILU)
def silu(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.silu(x)


@map_kind(MapKindName.RELU)
def relu(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.relu(x)


@map_kind(MapKindName.SIGMOID)
def sigmoid(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.sigmoid(x)


@map_kind(MapKindName.SOFTPLUS)
def softplus(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.softplus(x)


@map_kind(MapKindName.GELU)
def gelu(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.gelu(x, "none")


@map_kind(MapKindName.GELU_TANH)
def gelu_tanh(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.gelu(x, "tanh")


@map_kind(MapKindName.SCALE)
def scale(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.widen(x) * _scalar(op)


@map_kind(MapKindName.SOFTCAP)
def softcap(op: MapOp, x: np.ndarray) -> np.ndarray:
    return _scalar(op) * np.tanh(ref.widen(x) / _scalar(op))


@map_kind(MapKindName.ADD, MapKindName.ADD_ROW)
def add(op: MapOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.add(ref.widen(a), ref.widen(b))


@map_kind(MapKindName.SUB, MapKindName.SUB_ROW)
def sub(op: MapOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.subtract(ref.widen(a), ref.widen(b))


@map_kind(MapKindName.MUL, MapKindName.MUL_ROW)
def mul(op: MapOp, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.multiply(ref.widen(a), ref.widen(b))


@map_kind(MapKindName.SWIGLU)
def swiglu(op: MapOp, gate: np.ndarray, up: np.ndarray) -> np.ndarray:
    return ref.silu(gate) * ref.widen(up)


@map_kind(MapKindName.RMS_APPLY)
def rms_apply(op: MapOp, x: np.ndarray, *rest: np.ndarray) -> np.ndarray:
    """(x [+ residual]) * the row's 1/rms (stats column 0) * weight."""
    *residual, stats, weight = rest
    h = ref.widen(x) + ref.widen(residual[0]) if residual else ref.widen(x)
    return h * stats[:, 0:1] * ref.widen(weight)


@map_kind(MapKindName.LAYER_APPLY)
def layer_apply(
    op: MapOp, x: np.ndarray, stats: np.ndarray, weight: np.ndarray, bias: np.ndarray
) -> np.ndarray:
    """(x - mean) * 1/std * weight + bias, the row's 1/std and mean in stats columns 0 and 1."""
    centered = ref.widen(x) - stats[:, 1:2]
    return centered * stats[:, 0:1] * ref.widen(weight) + ref.widen(bias)


@map_kind(MapKindName.SOFTMAX_APPLY)
def softmax_apply(op: MapOp, x: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """exp(x - max) * 1/sum, the row's maximum and 1/sum in stats columns 0 and 1."""
    return np.exp(ref.widen(x) - stats[:, 0:1]) * stats[:, 1:2]


@map_kind(MapKindName.L2_APPLY)
def l2_apply(op: MapOp, x: np.ndarray, stats: np.ndarray) -> np.ndarray:
    """x * 1/sqrt(sum(x^2) + eps), the row's factor in stats column 0."""
    return ref.widen(x) * stats[:, 0:1]


@map_kind(MapKindName.MOE_COMBINE)
def moe_combine(op: MapOp, x: np.ndarray, weight: np.ndarray, *acc: np.ndarray) -> np.ndarray:
    """The running sum (absent for the first expert) + x * the row's routing weight."""
    return (ref.widen(acc[0]) if acc else F32(0)) + ref.widen(x) * weight[:, 0:1]


@map_kind(MapKindName.REQUANT)
def requant(op: MapOp, x: np.ndarray) -> np.ndarray:
    return ref.int_requant(x, op.scalar.value.data, op.offset)  # type: ignore[union-attr]


@map_kind(MapKindName.CLAMP)
def clamp(op: MapOp, x: np.ndarray) -> np.ndarray:
    return np.clip(ref.widen(x), op.lo, op.hi)


@map_kind(MapKindName.QUANTIZE_Q8_0)
def quantize_q8_0(op: MapOp, x: np.ndarray) -> np.ndarray:
    """The widened block: pushing it to the Q8_0 output FIFO is what quantizes (Q8_0 is that
    FIFO's rounding)."""
    return ref.widen(x)


@map_kind(MapKindName.DEQUANTIZE_Q8_0)
def dequantize_q8_0(op: MapOp, x) -> np.ndarray:
    """f32(d) * q of each Q8_0 block (the input page is a machine.Q8Block)."""
    return x.dequantized()


@map_kind(MapKindName.DECAY)
def decay(op: MapOp, a: np.ndarray, a_log: np.ndarray, dt_bias: np.ndarray) -> np.ndarray:
    return ref.decay(a, a_log, dt_bias)
