"""link for the Q8_0 ops (docs/passes.md#link-q8_0-weights): tg.matmul_q8_0, tg.dequantize_q8_0,
and the quantize section that makes an activation's Q8_0 view.

A Q8_0 weight stays Q8_0 in DRAM and on the NoC: ONE sp.tensor of the i8 values stored
`q8_0_kn` (blocks of 32 along K, each with its f16 scale, 34 bytes per 32 elements), naming the
argument that holds its scales. The product is a GEMM section like tg.matmul's (link/matmul.py):

    in0  FIFO of [h, kw] tiles of A (as it is, or its Q8_0 view)
    in1  FIFO of [kw, w] Q8_0 tiles of the weight
    out  FIFO of [sh, sw] tiles of C      matmul_tiles in0, in1 -> out [dequantize T]

With `transpose_b` (a tied LM head over a Q8_0 embedding table) the weight is stored N x K,
blocked along K as GGUF stores the table (`q8_0`, the format whose axis is the values' columns),
and read transposed like tg.matmul's B (link/matmul.py `b_block`): in1 holds [w, kw] Q8_0 pages
that matmul_tiles transposes, blocks along K either way.

What the chip multiplies is `targets.quant.q8_0_compute`'s decision, made there once for every
target and recorded on the section (`q8_0 = "<path>: <why>"`): the int8 dot (no `dequantize` on
the stage, the accumulator f32) or the blocks widened to T in the compute stage.

Where the product quantizes its activation (`activation = "q8_0"`, llama.cpp's x86 rule for every
Q8_0 weight product, or `"q8_0_ref"`, ggml's reference rule), A is read through the activation's
Q8_0 view, stored in the format the activation names (which says how its floats round): one per
value and format, named for the value and its write count, made by one quantize section before
the first reader and shared by every later one (link/context.py, `LinkContext.q8_0_view`), as a
layout twin is.
"""

from __future__ import annotations

from xdsl.dialects.builtin import TensorType

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    LinkContext,
    ProgramBuilder,
    Q8View,
    q8_0_format,
)
from spatial_dialect.passes.link.indexed import q8_0_row_gather
from spatial_dialect.passes.link.maps import map_section
from spatial_dialect.passes.link.matmul import b_block, gemm_section
from spatial_dialect.passes.numerics import ELEMENT_TYPES, Numerics
from spatial_dialect.sp import Layout, Mode, TensorRole
from spatial_dialect.sp.errors import UnsupportedDatatype
from spatial_dialect.targets import TargetError
from spatial_dialect.targets.quant import INT8_DOT, Q8Compute, q8_0_compute

QUANTIZE = "quantize_q8_0"
"""The op name of the section that makes a Q8_0 view."""


def compute_of(op: tg.MatmulQ8_0Op, ctx: LinkContext) -> Q8Compute:
    """The target's decision for this product, refused by name where the chip has no datatype
    to compute it in."""
    act = str(op.a.type.element_type)  # type: ignore[union-attr]
    try:
        return q8_0_compute(ctx.target, op.activation.data, act)
    except TargetError as err:
        raise UnsupportedDatatype(f"{op.name}: {err}") from None


def link_matmul_q8_0(op: tg.MatmulQ8_0Op, ctx: LinkContext) -> sp.ProgramOp:
    c_t = op.res.type
    assert isinstance(c_t, TensorType)
    out_dtype = str(c_t.element_type)
    choice = compute_of(op, ctx)
    ctx.check_dtype(op, out_dtype)
    int8 = choice.path == INT8_DOT
    # The int8 dot scales each block's int32 sum into f32 (ggml sums the blocks in f32).
    acc_dtype = "f32" if int8 else Numerics.of(ctx.target, choice.dtype, out_dtype).acc
    s = ProgramBuilder(ctx, op)
    if op.quantizes_activation:  # the activation names its view's format (its rounding rule)
        a = s.declare(ctx.q8_0_view(op.a, op.activation.data))
    else:
        a = s.input(op.a, Layout.TILED)
    values = ctx.names[op.values]
    w = s.declare(
        ctx.q8_0_tensor(
            op.values,
            values,
            TensorRole.INPUT,
            q8_0_format(op.block_axis()),
            scales=ctx.names[op.scales],
        )
    )
    in0 = s.fifo("in0", a, "h", "kw")
    in1 = s.fifo("in1", w, *b_block(transpose_b=op.transposes_b).extent.exprs)
    c = s.output(op.res, Layout.TILED)
    widen = None if int8 else ELEMENT_TYPES[choice.dtype]
    s.why("q8_0", f"{choice.path}: {choice.why}")
    return gemm_section(
        s, a, w, c, in0, in1, acc_dtype, dequantize=widen, transpose_b=op.transposes_b
    )


def view_section(ctx: LinkContext, view: Q8View) -> sp.ProgramOp:
    """The section that makes the Q8_0 view of `view.value`: read it as it is laid out, quantize
    each row's blocks of 32, write the view in the same layout."""
    value = view.value
    src = ctx.tensor(value, TensorRole.INPUT)
    dst = ctx.q8_0_tensor(value, view.view, TensorRole.SCRATCH, view.fmt)
    s = ProgramBuilder(ctx, QUANTIZE)
    s.why(
        "q8_0_view",
        f"@{view.src} after {ctx.writes.get(view.src, 0)} write(s), read by Q8_0 products",
    )
    return map_section(ctx, QUANTIZE, QUANTIZE, [(src, Mode.FULL, BLOCK)], dst, s)


def link_dequantize_q8_0(op: tg.DequantizeQ8_0Op, ctx: LinkContext) -> sp.ProgramOp:
    """A map over the Q8_0 tensor: each block widened to the result's type. Rows gathered
    from a Q8_0 table are one Q8_0 tensor holding their scales (link/indexed.py), not an
    argument that names its scales."""
    s = ProgramBuilder(ctx, op)
    gathered = q8_0_row_gather(op) is not None
    x = s.declare(
        ctx.q8_0_tensor(
            op.values,
            ctx.names[op.values],
            TensorRole.INPUT,
            q8_0_format(op.block_axis()),
            scales=None if gathered else ctx.names[op.scales],
        )
    )
    y = s.output(op.res, ctx.layout(op.values))
    return map_section(ctx, op, "dequantize_q8_0", [(x, Mode.FULL, BLOCK)], y, s)


LINKERS = {tg.MatmulQ8_0Op: link_matmul_q8_0, tg.DequantizeQ8_0Op: link_dequantize_q8_0}
"""The ops this module links."""
