"""The kinds of the compute stages (compute.py): the one place that says which kinds exist and
what operands each takes. Plain tables, no IR: the tg dialect reads the rope styles here too."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.utils.str_enum import StrEnum


class Mode(StrEnum):
    """How a map reads one input (the page it pops per item):

    full        the item's block, [h, w] tiles, element for element
    rows        a 1 x C operand broadcast over rows: [1, w] tiles, row 0 of each tile is used
    cols        an R x 1 operand broadcast over columns: [h, 1] tiles, column 0 is used
    transposed  the transposed block, [w, h] tiles (a transpose's input)
    """

    FULL = "full"
    ROWS = "rows"
    COLS = "cols"
    TRANSPOSED = "transposed"


@dataclass(frozen=True)
class MapKind:
    """A map's operands by role (each with the mode it is read in) and whether it takes a scalar.
    `optional` roles may be left out (the residual of an rms_norm's apply step)."""

    roles: tuple[tuple[str, str], ...]
    scalar: str | None = None
    optional: tuple[str, ...] = ()
    ints: bool = False
    # integer properties the kind takes (sp.map's `lo`, `hi`, `offset`), and whether its output
    # holds another element type than its input (a requantization's i32 -> i8)
    int_props: tuple[str, ...] = ()
    converts: bool = False
    ints_only: bool = False
    # inputs of other element types than the output (f32 statistics or weights beside x)
    mixed: bool = False
    # the vector instructions the kind costs per element (targets/stream_cost.py prices a map's
    # compute with it): stated with the kind, so a new kind cannot be left unpriced
    vector_ops: float = field(kw_only=True)

    def arities(self) -> set[int]:
        return {len(self.roles) - n for n in range(len(self.optional) + 1)}

    def modes(self, arity: int) -> list[str]:
        """The modes of the operands when `arity` of them are given (optional ones dropped)."""
        drop = len(self.roles) - arity
        dropped = set(self.optional[:drop])
        return [mode for role, mode in self.roles if role not in dropped]


_X = (("x", Mode.FULL),)
_AB = (("a", Mode.FULL), ("b", Mode.FULL))

MAP_KINDS: dict[str, MapKind] = {
    # Layout bridges and copies: the identity on the data (tilize / untilize change the layout
    # of the DRAM tensors the section's movement stages read and write).
    "copy": MapKind(_X, ints=True, vector_ops=0.0),
    "tilize": MapKind(_X, ints=True, vector_ops=1.0),
    "untilize": MapKind(_X, ints=True, vector_ops=1.0),
    "transpose": MapKind((("x", Mode.TRANSPOSED),), ints=True, vector_ops=1.0),
    "silu": MapKind(_X, vector_ops=4.0),
    "relu": MapKind(_X, ints=True, vector_ops=1.0),
    "sigmoid": MapKind(_X, vector_ops=4.0),
    "gelu": MapKind(_X, vector_ops=8.0),
    "gelu_tanh": MapKind(_X, vector_ops=6.0),
    # log(1 + exp(x)) as max(x, 0) + log1p(exp(-|x|)): abs, exp, log, max and add
    "softplus": MapKind(_X, vector_ops=5.0),
    "scale": MapKind(_X, scalar="factor", vector_ops=1.0),
    "softcap": MapKind(_X, scalar="cap", vector_ops=4.0),
    "add": MapKind(_AB, ints=True, vector_ops=1.0),
    "sub": MapKind(_AB, ints=True, vector_ops=1.0),
    "mul": MapKind(_AB, ints=True, vector_ops=1.0),
    # a op b with b a 1 x C row broadcast over the rows of a
    "add_row": MapKind((("a", Mode.FULL), ("b", Mode.ROWS)), ints=True, vector_ops=1.0),
    "sub_row": MapKind((("a", Mode.FULL), ("b", Mode.ROWS)), ints=True, vector_ops=1.0),
    "mul_row": MapKind((("a", Mode.FULL), ("b", Mode.ROWS)), ints=True, vector_ops=1.0),
    "swiglu": MapKind((("gate", Mode.FULL), ("up", Mode.FULL)), vector_ops=5.0),
    # The last section of a blocked row reduction (row_reduce partial / combine before it):
    # rms: (x [+ residual]) * stats[:, 0] * weight; layer: (x - stats[:, 1]) * stats[:, 0] *
    # weight + bias; softmax: exp(x - stats[:, 0]) * stats[:, 1].
    "rms_apply": MapKind(
        (("x", Mode.FULL), ("residual", Mode.FULL), ("stats", Mode.COLS), ("weight", Mode.ROWS)),
        optional=("residual",),
        mixed=True,
        vector_ops=2.0,
    ),
    "layer_apply": MapKind(
        (("x", Mode.FULL), ("stats", Mode.COLS), ("weight", Mode.ROWS), ("bias", Mode.ROWS)),
        mixed=True,
        vector_ops=3.0,
    ),
    "softmax_apply": MapKind((("x", Mode.FULL), ("stats", Mode.COLS)), mixed=True, vector_ops=3.0),
    # tg.moe's combine: acc + x * weight[:, 0], one expert's f32 FFN output scaled by its
    # per-row routing weight (an R x 1 f32 column) and added to the running sum (absent for the
    # first expert).
    "moe_combine": MapKind(
        (("x", Mode.FULL), ("weight", Mode.COLS), ("acc", Mode.FULL)),
        optional=("acc",),
        mixed=True,
        vector_ops=2.0,
    ),
    # tg.int_requant: round_half_even(x * scale) + offset, saturated to the output's range
    # (i32 in, i8 out); tg.int_clamp: min(max(x, lo), hi). Exact integer maps.
    "requant": MapKind(
        _X,
        scalar="scale",
        ints=True,
        int_props=("offset",),
        converts=True,
        ints_only=True,
        vector_ops=4.0,
    ),
    "clamp": MapKind(_X, ints=True, int_props=("lo", "hi"), ints_only=True, vector_ops=2.0),
    # Q8_0 (docs/sp.md#q8_0-tensors): quantize a float block to an i8 FIFO stored q8_0 or
    # q8_0_ref (each row's blocks of 32: d = max|x| / 127 kept as f16, q by the format's rule:
    # llama.cpp's x86 quantize_row_q8_0 or ggml's quantize_row_q8_0_ref, Q8_0_FORMATS), and
    # dequantize one (f32(d) * q, rounded once to the output's type).
    "quantize_q8_0": MapKind(_X, ints=True, converts=True, vector_ops=4.0),
    "dequantize_q8_0": MapKind(_X, ints=True, converts=True, vector_ops=2.0),
    # tg.decay: -exp(a_log) * softplus(a + dt_bias), a_log and dt_bias one row per head
    "decay": MapKind(
        (("a", Mode.FULL), ("a_log", Mode.ROWS), ("dt_bias", Mode.ROWS)), vector_ops=6.0
    ),
    # the apply step of a blocked tg.l2_norm: x * stats[:, 0] (1 / sqrt(sum(x^2) + eps))
    "l2_apply": MapKind((("x", Mode.FULL), ("stats", Mode.COLS)), mixed=True, vector_ops=1.0),
}
"""Every map kind. The math of each is the tg op's reference semantics (tools/interpreters/reference.py)."""


JOIN_ATTR = "join"
"""The attribute a join's part section carries (link/heads.py): which columns of the result it
writes. Its items cut the part it reads, not the tensor it stores into (passes/stream_plans.py)."""


ROW_KINDS: dict[str, dict[str, set[int]]] = {
    # form -> the input counts it takes
    "rms_norm": {"whole": {2, 3}, "partial": {1, 2}, "combine": {1}},
    "layer_norm": {"whole": {3}, "partial": {1}, "combine": {1}},
    "softmax": {"whole": {1}, "partial": {1}, "combine": {1}},
    "l2_norm": {"whole": {1}, "partial": {1}, "combine": {1}},
    # tg.rms_stats' share of a row's sum of squares (the distributed rms_norm): blocked forms
    # only, the combine's finish the plain sum of the partials (no whole form: its result is a
    # statistic, not a row, and one block is the partial alone)
    "sum_squares": {"partial": {1, 2}, "combine": {1}},
}
"""Row reductions and the inputs each form takes (sp.row_reduce)."""

ROW_FORMS = ("whole", "partial", "combine")

ROPE_STYLES = ("neox", "interleaved")

PARTIALS_RINGS = 2
"""Rings of pages a split-K partials FIFO holds per sub-block (`sp.matmul_tiles ... partials`):
the sums received from the slice before and the sums sent to the slice after. A middle slice
holds both at once and they cannot share a ring (the writer fills the one, the compute the
other; a ring has one producer), so the IR's depth, tile's footprint and size-buffers' layout
all count both (docs/sp.md#matmul_tiles)."""

Q8_0_BLOCK = 32
"""Values per Q8_0 block (each with one f16 scale)."""

Q8_0_FORMATS: dict[str, int] = {"q8_0": 1, "q8_0_kn": 0, "q8_0_ref": 1}
"""The Q8_0 storage formats of an i8 tensor or buffer and the axis their blocks of 32 run along:
`q8_0` along a row (ggml's own order: a GGUF table as stored, an activation's Q8_0 view),
`q8_0_kn` down a column (a weight as the K x N right operand of a product, blocked along K),
`q8_0_ref` along a row like `q8_0` (an activation's view quantized by ggml's reference rule,
tg.matmul_q8_0's `activation "q8_0_ref"`). Floats written into a `q8_0` tensor round by
llama.cpp's x86 rule, into `q8_0_ref` by ggml's reference rule (tools/interpreters/q8_0.py
RULES). A 32 x 32 tile of any is 32 blocks: 1024 values and 32 scales, 1088 bytes."""

CONV_ACTIVATIONS = ("silu", "none")
"""What a causal convolution applies to its sums (tg.causal_conv's `activation`)."""


# ── The closed vocabularies of the sp ops, as enumerations (their attributes are attrs.py's) ─────

MapKindName = StrEnum("MapKindName", {k.upper(): k for k in MAP_KINDS})  # type: ignore[misc]
"""The name of a map kind (the keys of MAP_KINDS)."""

RowKindName = StrEnum("RowKindName", {k.upper(): k for k in ROW_KINDS})  # type: ignore[misc]
"""The name of a row reduction (the keys of ROW_KINDS)."""


class RowForm(StrEnum):
    WHOLE = "whole"
    PARTIAL = "partial"
    COMBINE = "combine"


class RopeStyle(StrEnum):
    NEOX = "neox"
    INTERLEAVED = "interleaved"


class Packing(StrEnum):
    """How a plan's data movement shares the movement engines (sp.plan)."""

    SINGLE = "single"
    OPERAND_WITH_STORE = "operand_with_store"
    SPLIT = "split"


class Bound(StrEnum):
    """The resource that binds a plan's predicted cycles."""

    COMPUTE = "compute"
    DRAM = "dram"
    NOC = "noc"


class Operand(StrEnum):
    """A GEMM operand a plan multicasts."""

    A = "a"
    B = "b"


class Fidelity(StrEnum):
    """The Tensix math fidelity of a matmul."""

    LOFI = "lofi"
    HIFI2 = "hifi2"
    HIFI3 = "hifi3"
    HIFI4 = "hifi4"


class EngineKind(StrEnum):
    COMPUTE = "compute"
    MOVEMENT = "movement"
