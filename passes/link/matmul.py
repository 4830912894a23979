"""link for tg.matmul (C = A @ B): one GEMM section.

    in0  FIFO of [h, kw] tiles of A     load  A[r0, k0] x [h, kw]
    in1  FIFO of [kw, w] tiles of B     load  B[k0, c0] x [kw, w]
    out  FIFO of [sh, sw] tiles of C    matmul_tiles in0, in1 -> out (accumulator dst)
                                        store C[r0 + ti, c0 + tj] x [sh, sw]

With `transpose_b` (C = A @ B^T, B stored N x K: a tied LM head's embedding table) B is declared
at its stored shape and the same block is read from it transposed, `B[c0, k0] x [w, kw]` into a
FIFO of [w, kw] pages, and matmul_tiles transposes each page (`b_block`, the one definition of
the block of B an item reads; docs/passes.md#link-a-tied-head-reads-b-transposed). No transpose
section, no copy of B.

Partial tiles at the edges are padded: a tensor of 100x70 elements is 4x3 tiles in DRAM, the
padding is zero, and the product over it adds nothing. The accumulator's precision follows
`numerics.Numerics`. An integer matmul computes in the narrowest integer datatype the target has
that holds its operands' proven interval (`operand_precision`); its loads convert to it.
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    C0,
    K0,
    R0,
    SUB_BLOCK,
    ZERO,
    LinkContext,
    ProgramBuilder,
    operand_precision,
)
from spatial_dialect.passes.numerics import ELEMENT_TYPES, Numerics
from spatial_dialect.sp import AccessAttr, Layout, SectionKind
from spatial_dialect.sp.program import type_text


def link_matmul(op: tg.MatmulOp, ctx: LinkContext) -> sp.ProgramOp:
    a_t, c_t = op.a.type, op.res.type
    assert isinstance(a_t, TensorType) and isinstance(c_t, TensorType)
    in_dtype, out_dtype = type_text(a_t.element_type), type_text(c_t.element_type)
    why = None
    if isinstance(a_t.element_type, IntegerType):
        in_dtype, why = operand_precision(op, ctx, [op.a, op.b])
    ctx.check_dtype(op, in_dtype, matmul=True)
    ctx.check_dtype(op, out_dtype)
    acc_dtype = Numerics.of(ctx.target, in_dtype, out_dtype).acc
    s = ProgramBuilder(ctx, op)
    page = b_block(transpose_b=op.transposes_b).extent.exprs
    if why is None:
        a, b = s.input(op.a, Layout.TILED), s.input(op.b, Layout.TILED)
        in0 = s.fifo("in0", a, "h", "kw")
        in1 = s.fifo("in1", b, *page)
    else:
        # Loaded tiles convert to the compute datatype; the DRAM tensors keep their type.
        a = s.input(op.a, Layout.TILED, check=False)
        b = s.input(op.b, Layout.TILED, check=False)
        in0 = s.fifo("in0", ELEMENT_TYPES[in_dtype], "h", "kw")
        in1 = s.fifo("in1", ELEMENT_TYPES[in_dtype], *page)
        s.why("operand_precision", why)
    c = s.output(op.res, Layout.TILED)
    return gemm_section(s, a, b, c, in0, in1, acc_dtype, transpose_b=op.transposes_b)


def b_block(b_rows: AffineExpr = ZERO, transpose_b: bool = False) -> AccessAttr:
    """The block of B an item reads per K block, the one definition every GEMM section uses:
    K tiles k0 .. k0 + kw by the item's N tiles c0 .. c0 + w of a K x N B (whose K rows start at
    tile row `b_rows`, a block of a stacked B). With `transpose_b`, B is stored N x K and the
    same block is its rows c0 .. c0 + w and columns k0 .. k0 + kw: origin and extent swapped,
    the page matmul_tiles transposes. The bytes are the same either way, so the cost model
    prices B alike."""
    origin, extent = (K0 + b_rows, C0), ("kw", "w")
    if transpose_b:
        origin, extent = origin[::-1], extent[::-1]
    return AccessAttr.of(*origin, *extent)


def gemm_section(
    s: ProgramBuilder,
    a: sp.TensorOp,
    b: sp.TensorOp,
    c: sp.TensorOp,
    in0: SSAValue,
    in1: SSAValue,
    acc_dtype: str,
    b_rows: AffineExpr = ZERO,
    b_index: tuple[str, int] | None = None,
    dequantize: Attribute | None = None,
    transpose_b: bool = False,
) -> sp.ProgramOp:
    """The GEMM's stages (module docstring) over declared tensors and operand FIFOs. `b_rows`:
    B's first tile row (a block of a stacked B; 0 for a whole B); `b_index`: B's block is chosen
    at run time (an indexed load, sp.LoadOp: the id's tensor and the block's tile rows);
    `dequantize`: the type Q8_0 operands are widened to (link/quant.py); `transpose_b`: B is
    stored N x K and read transposed (`b_block`)."""
    out = s.fifo("out", c, "sh", "sw")
    dst = s.acc("dst", ELEMENT_TYPES[acc_dtype], "sh", "sw")
    s.load(a, AccessAttr.of(R0, K0, "h", "kw"), in0)
    s.load(b, b_block(b_rows, transpose_b), in1, b_index)
    s.stage(sp.MatmulTilesOp(in0, in1, out, dst, dequantize=dequantize, transpose_b=transpose_b))
    s.store(out, c, SUB_BLOCK)
    return s.build(c.sym_name.data, SectionKind.GEMM)


LINKERS = {tg.MatmulOp: link_matmul}
"""The ops this module links."""
