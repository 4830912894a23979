"""The stages of Qwen3-Next's Gated DeltaNet sections: the causal depthwise convolution with its
carried state, and the chunked delta rule over a per-head state (docs/tg.md states the ops these
implement). Like every stage of compute.py, each docstring says what it pops, computes and pushes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    Float32Type,
    FloatAttr,
    StringAttr,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    ON_ENGINE,
    StageOp,
    buffer_of,
    section_traits,
)
from spatial_dialect.sp.attrs import (
    BufferType,
)
from spatial_dialect.sp.buffers import AccOp
from spatial_dialect.sp.errors import TypeMismatch
from spatial_dialect.sp.formats import F32, Engine
from spatial_dialect.sp.kinds import (
    CONV_ACTIVATIONS,
)
from spatial_dialect.sp.stage_checks import f32_state, fifo_of, same_elt
from spatial_dialect.sp.syntax import (
    IntValue,
    int_attr,
    int_prop,
)


@irdl_op_definition
class CausalConvOp(StageOp):
    """`sp.causal_conv %x, %w, %state -> %out, %new_state window %win taps 4 rows 8 cols 96
    activation "silu"`.

    A causal depthwise convolution down the rows (time) of x, continuing a carried state. A work
    item is a block of w tile columns (channels) of the state, which is one tile row (its first
    taps - 1 rows hold the state). Per item: pop the state page and the weight page ([1, w]:
    the first `taps` rows hold tap j of each channel); the window (`win`, an f32 [1, w] interm)
    starts as the state. For each K block pop a page of x ([kw, w]: kw tile rows of time); each
    real row t (before `rows`) sums weight[j] * xx[t + j] over the taps in f32, xx being the
    window's taps - 1 rows followed by the block's rows, applies `activation` (silu or none), and
    the block is pushed as one [kw, w] page of `out`, rows at or past `rows` and columns at or
    past `cols` zero; the window keeps the last taps - 1 rows of xx that are real. After the last
    block push the window to `new_state` ([1, w]). docs/tg.md#tgcausal_conv is the meaning.
    """

    name = "sp.causal_conv"
    x = operand_def(BufferType)
    weight = operand_def(BufferType)
    state = operand_def(BufferType)
    out = operand_def(BufferType)
    new_state = operand_def(BufferType)
    window = operand_def(BufferType)
    taps_attr = int_prop("taps")
    rows_attr = int_prop("rows")
    cols_attr = int_prop("cols")
    activation = prop_def(StringAttr)
    traits = section_traits()
    custom_directives = (Engine,)
    assembly_format = (
        "$x `,` $weight `,` $state `->` $out `,` $new_state `window` $window `taps` $taps"
        " `rows` $rows `cols` $cols `activation` $activation " + ON_ENGINE
    )

    taps = IntValue("taps")
    rows = IntValue("rows")
    cols = IntValue("cols")

    def __init__(
        self,
        ins: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        window: SSAValue,
        numbers: dict[str, int],
        activation: str,
        engine: Attribute | None = None,
    ):
        """`ins`: x, weight, state; `outs`: out, new_state; `numbers`: taps, rows, cols."""
        super().__init__(
            operands=[*ins, *outs, window],
            properties={
                **{k: int_attr(numbers[k]) for k in ("taps", "rows", "cols")},
                "activation": StringAttr(activation),
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return "causal_conv"

    def verify_(self) -> None:
        roles = (("x", self.x), ("weight", self.weight), ("state", self.state))
        fifos = [fifo_of(self, v, r) for r, v in roles]
        outs = [fifo_of(self, self.out, "out"), fifo_of(self, self.new_state, "new_state")]
        same_elt(self, [*fifos, *outs], "x, weight, state and the outputs")
        f32_state(self, self.window, "the window")
        if self.taps < 2 or min(self.rows, self.cols) <= 0:
            raise VerifyException(
                f"causal_conv: taps {self.taps} must be at least 2 and rows, cols positive"
            )
        if self.activation.data not in CONV_ACTIVATIONS:
            raise VerifyException(f'causal_conv: activation "{self.activation.data}" is unknown')


@irdl_op_definition
class GatedDeltaOp(StageOp):
    """`sp.gated_delta %q, %k, %v, %g, %beta, %state -> %out, %new_state acc %dst state %s
    heads 4 k_heads 2 head_dim 32 v_head_dim 32 rows 8 scale S`.

    The gated delta rule in chunks: a K block is a chunk of kw tile rows of time, the chunk size
    tile chose. A work item is one head's state block: h = head_dim / tile rows of the state
    (head r0 / h) by w tile columns of its v_head_dim (the columns of a state evolve
    independently). Per item: pop the state page ([h, w]) into the running state `s` (an f32
    [h, w] interm, in local memory between chunks). For each K block pop the chunk's q and k of
    the head's key head (head j reads key head j / (heads / k_heads); [kw, h] pages each), its
    v columns ([kw, w]), and the tile column of g and of beta that holds the head's column
    ([kw, 1] each, column j % tile); rows at or past `rows` are taken as zero (k = v = g = beta
    = 0 changes nothing). Compute in f32, q scaled by `scale`, the chunk step of
    `tools/interpreters/reference.py: delta_chunk` (the WY form: the chunk's C x C products, C = kw tile rows,
    live in the f32 accumulator `dst`, [kw, kw] tiles); push the chunk's output as one [kw, w]
    page of `out` (rows at or past `rows` zero) and keep the new state in `s`. After the last
    chunk push `s` to `new_state` ([h, w]).
    """

    name = "sp.gated_delta"
    q = operand_def(BufferType)
    k = operand_def(BufferType)
    v = operand_def(BufferType)
    g = operand_def(BufferType)
    beta = operand_def(BufferType)
    state = operand_def(BufferType)
    out = operand_def(BufferType)
    new_state = operand_def(BufferType)
    acc = operand_def(BufferType)
    running = operand_def(BufferType)
    heads_attr = int_prop("heads")
    k_heads_attr = int_prop("k_heads")
    head_dim_attr = int_prop("head_dim")
    v_head_dim_attr = int_prop("v_head_dim")
    rows_attr = int_prop("rows")
    scale = prop_def(FloatAttr)
    traits = section_traits()
    custom_directives = (F32, Engine)
    assembly_format = (
        "$q `,` $k `,` $v `,` $g `,` $beta `,` $state `->` $out `,` $new_state `acc` $acc"
        " `state` $running `heads` $heads `k_heads` $k_heads `head_dim` $head_dim"
        " `v_head_dim` $v_head_dim `rows` $rows `scale` custom<F32>($scale) " + ON_ENGINE
    )

    heads = IntValue("heads")
    k_heads = IntValue("k_heads")
    head_dim = IntValue("head_dim")
    v_head_dim = IntValue("v_head_dim")
    rows = IntValue("rows")

    NUMBERS: ClassVar = ("heads", "k_heads", "head_dim", "v_head_dim", "rows")

    def __init__(
        self,
        ins: Sequence[SSAValue],
        outs: Sequence[SSAValue],
        acc: SSAValue,
        running: SSAValue,
        numbers: dict[str, int],
        scale: float,
        engine: Attribute | None = None,
    ):
        """`ins`: q, k, v, g, beta, state; `outs`: out, new_state; `numbers`: NUMBERS."""
        props: dict[str, Attribute | None] = {k_: int_attr(numbers[k_]) for k_ in self.NUMBERS}
        props.update(scale=FloatAttr(scale, f32), engine=engine)
        super().__init__(operands=[*ins, *outs, acc, running], properties=props)

    def stage_name(self) -> str:
        return "gated_delta"

    def verify_(self) -> None:
        h, hk = self.heads, self.k_heads
        if min(h, hk, self.head_dim, self.v_head_dim, self.rows) <= 0 or h % hk:
            raise VerifyException(
                f"gated_delta: heads {h} must be a positive multiple of k_heads {hk}"
            )
        roles = ("q", "k", "v", "g", "beta", "state")
        fifos = [fifo_of(self, getattr(self, r), r) for r in roles]
        out = fifo_of(self, self.out, "out")
        same_elt(self, [*fifos[:3], out], "q, k, v and the output")
        if fifo_of(self, self.new_state, "new_state").elt != fifos[-1].elt:
            raise TypeMismatch("gated_delta: the new state holds the state's element type")
        acc = buffer_of(self.acc)
        if not isinstance(acc, AccOp) or acc.elt != Float32Type():
            raise TypeMismatch("gated_delta: the chunk's products accumulate in an f32 sp.acc")
        f32_state(self, self.running, "the running state")
