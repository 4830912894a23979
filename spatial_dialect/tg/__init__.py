"""tg: the tensor-graph dialect, the input language of spatial-dialect.

A program is a `func.func` of tg ops over ranked tensors of rank 1 or 2 with static shapes and
element types bf16, f16, f32, i8 or i32. Op names, operand order and property names are a contract
(docs/tg.md): importers and other tools write the generic form, e.g.

    %c = "tg.matmul"(%a, %b) : (tensor<64x128xf32>, tensor<128x32xf32>) -> tensor<64x32xf32>
    %y = "tg.rms_norm"(%x, %w) <{eps = 1.0e-06 : f32}> : (...) -> ...

The custom form is the generic one without quotes, with properties written as keywords:

    %y = tg.rms_norm %x, %w eps 1.000000e-06 : (tensor<4x64xf32>, tensor<1x64xf32>) -> tensor<4x64xf32>

From Python, every op has a builder that infers the result type from the operands by the same
rule its verifier checks, and takes the properties as Python values:

    y = RmsNormOp(x, w, eps=1e-6)            # the result has x's type
    o = AttentionOp(q, k, v, heads=4, kv_heads=2, causal=True)   # T x heads * v head dim

Every verifier names the op, the operand that breaks the rule and the numbers involved, because
the user reads these messages without a debugger: "tg.matmul: a is 64x100 and b is 128x32; the
inner dimensions 100 and 128 differ".
"""

from xdsl.ir import Dialect

from spatial_dialect.sp.kinds import ROPE_STYLES
from spatial_dialect.tg.attention import (
    AttentionOp,
)
from spatial_dialect.tg.base import (
    FLOAT_TYPES,
    TgOp,
    argmax_shape,
    attention_shape,
    b_dims,
    gather_rows_shape,
    is_float,
    is_int,
    matmul_shape,
    shape_str,
    transpose_shape,
)
from spatial_dialect.tg.batched import (
    BatchAttentionOp,
    BatchedCacheOp,
    BatchSetRowsOp,
)
from spatial_dialect.tg.delta import (
    CONV_ACTIVATIONS,
    CausalConvOp,
    DecayOp,
    GatedDeltaOp,
    L2NormOp,
    conv_state_shape,
    delta_state_shape,
)
from spatial_dialect.tg.elementwise import (
    GELU_APPROXIMATIONS,
    AddOp,
    BinaryOp,
    GeluOp,
    MulOp,
    ReluOp,
    ScaleOp,
    SigmoidOp,
    SiluOp,
    SoftcapOp,
    SoftmaxOp,
    SoftplusOp,
    SubOp,
    SwigluOp,
    UnaryOp,
)
from spatial_dialect.tg.heads import (
    HeadMatmulOp,
    HeadSliceOp,
    JoinOp,
    head_matmul_shape,
    head_slice_shape,
    join_shape,
)
from spatial_dialect.tg.indexed import (
    ArgmaxOp,
    GatherRowsOp,
    SetRowsOp,
)
from spatial_dialect.tg.integer import (
    IntClampOp,
    IntRequantOp,
)
from spatial_dialect.tg.matmul import (
    MatmulOp,
    TransposeOp,
)
from spatial_dialect.tg.moe import (
    MOE_SCORES,
    SHARED_ROLES,
    MoeOp,
)
from spatial_dialect.tg.quant import (
    Q8_0_ACTIVATIONS,
    Q8_0_BLOCK,
    DequantizeQ8_0Op,
    MatmulQ8_0Op,
    q8_0_scales_shape,
)
from spatial_dialect.tg.rows import (
    LayerNormOp,
    RmsApplyOp,
    RmsNormOp,
    RmsStatsOp,
    RopeOp,
)

__all__ = [
    "TG",
    "FLOAT_TYPES",
    "GELU_APPROXIMATIONS",
    "ROPE_STYLES",
    "TgOp",
    "UnaryOp",
    "BinaryOp",
    "MatmulOp",
    "AddOp",
    "SubOp",
    "MulOp",
    "SiluOp",
    "ReluOp",
    "SigmoidOp",
    "GeluOp",
    "ScaleOp",
    "SoftcapOp",
    "SoftplusOp",
    "SwigluOp",
    "RmsNormOp",
    "RmsStatsOp",
    "RmsApplyOp",
    "LayerNormOp",
    "RopeOp",
    "AttentionOp",
    "SoftmaxOp",
    "TransposeOp",
    "GatherRowsOp",
    "SetRowsOp",
    "ArgmaxOp",
    "BatchedCacheOp",
    "BatchSetRowsOp",
    "BatchAttentionOp",
    "HeadSliceOp",
    "JoinOp",
    "HeadMatmulOp",
    "IntRequantOp",
    "IntClampOp",
    "L2NormOp",
    "DecayOp",
    "CausalConvOp",
    "GatedDeltaOp",
    "CONV_ACTIVATIONS",
    "conv_state_shape",
    "delta_state_shape",
    "DequantizeQ8_0Op",
    "MatmulQ8_0Op",
    "MoeOp",
    "MOE_SCORES",
    "SHARED_ROLES",
    "Q8_0_BLOCK",
    "Q8_0_ACTIVATIONS",
    "q8_0_scales_shape",
    "is_float",
    "is_int",
    "shape_str",
    "matmul_shape",
    "b_dims",
    "transpose_shape",
    "gather_rows_shape",
    "attention_shape",
    "argmax_shape",
    "head_slice_shape",
    "join_shape",
    "head_matmul_shape",
]


def _operations(names: list[str]) -> list[type[TgOp]]:
    """The op definitions among `names` (the abstract families, TgOp, UnaryOp, BinaryOp, are no
    ops), in their order."""
    exported = [globals().get(name) for name in names]  # TG itself is not defined yet
    return [
        op
        for op in exported
        if isinstance(op, type) and issubclass(op, TgOp) and "get_irdl_definition" in vars(op)
    ]


TG = Dialect("tg", _operations(__all__), [])
"""The tg dialect: every op this package exports, so an op is registered by exporting it."""
