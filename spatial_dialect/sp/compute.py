"""The stages of the sections that are not GEMMs: pointwise maps, row reductions, rope, flash
attention and its combine, arg-max. The Gated DeltaNet's causal convolution and chunked delta
rule (delta.py) and the MoE router (route.py) follow the same rules; `COMPUTE_STAGES` lists them
all.

Every op here is a stage template like `sp.load` and `sp.matmul_tiles` (stages.py): one instance per
site, on the engine place gives it, joined to the other stages by FIFOs, and executed per work
item in the order the package docstring states. What each stage does with the pages it pops
and pushes is its docstring: that is what a simulator executes, so each one says which pages it
pops per item (one page per input per item unless it says otherwise), what it computes and in
which precision, and what it pushes.

Two rules hold for every compute stage here:

  * Arithmetic is f32 (integers: exact, wrapped to i32), and a result is rounded once, to the
    element type of the FIFO it is pushed to: the precision of the reference semantics (docs/tg.md#numerics-of-the-reference-semantics,
    section 3). Partial results that cross sections (the row statistics of a blocked norm) are
    f32 tensors.
  * Padding never leaks: a stage that reduces over a row reads only its real columns (`cols`,
    `width`), and every stage writes zeros to the elements of its pages outside the real extent
    of the tensor it computes (`valid`, `rows`), so a tiled tensor's padding holds zeros whoever
    wrote it (the package's contract that a product over padding adds nothing).

Kinds are strings checked against kinds.py's tables (`MAP_KINDS`, `ROW_KINDS`, ...), the one
place that says which kinds exist and what operands each takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IntegerType,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    var_operand_def,
)
from xdsl.irdl.declarative_assembly_format import AttributeVariable, irdl_custom_directive
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    ON_ENGINE,
    ComputeStage,
    StageOp,
    buffer_of,
    section_traits,
)
from spatial_dialect.sp.attrs import (
    BufferType,
)
from spatial_dialect.sp.buffers import AccOp
from spatial_dialect.sp.delta import CausalConvOp, GatedDeltaOp
from spatial_dialect.sp.enums import (
    MapKindAttr,
    ModeAttr,
    RopeStyleAttr,
    RowFormAttr,
    RowKindAttr,
)
from spatial_dialect.sp.errors import TypeMismatch
from spatial_dialect.sp.formats import F32, Engine, EnumList, Pair
from spatial_dialect.sp.item_space import users_key_range
from spatial_dialect.sp.kinds import (
    MAP_KINDS,
    ROW_KINDS,
    MapKindName,
    Mode,
    RopeStyle,
    RowForm,
    RowKindName,
)
from spatial_dialect.sp.route import RouteOp
from spatial_dialect.sp.stage_checks import f32_state, fifo_of, same_elt
from spatial_dialect.sp.syntax import (
    IntValue,
    PairValue,
    int_attr,
    int_prop,
    opt_int_prop,
    pair_attr,
    pair_prop,
)


@irdl_custom_directive
class Modes(EnumList):
    """`[full, rows]`: how a map reads each input."""

    attr: AttributeVariable
    ENUM = ModeAttr


# ── Maps ──────────────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class MapOp(ComputeStage):
    """`sp.map "add_row" %in0, %in1 rows -> %out valid 8x128 [group 4] [scalar S] [on compute]`.

    An elementwise op over the item's block. Per item: pop one page of every input (its mode,
    `Mode`, says which block that page is); for each sub-block (ti, tj) in row-major order compute
    the kind's function (MAP_KINDS) on the sub-block's elements in f32, zero every element outside
    the first `valid` rows and columns of the result, and push the sub-block as one page. Then
    release the input pages. `group`: the item's columns lie inside one group of that many tiles
    (a per-group norm's apply step: its row operand is the group's weight); `scalar` is the
    factor of `scale`, the cap of `softcap` and the scale of `requant`. The integer kinds
    compute exactly, not in f32: `requant` rounds x * scale half to even (in f64), adds
    `offset` and saturates to its output's element type (i32 in, i8 out); `clamp` is
    min(max(x, lo), hi).
    """

    name = "sp.map"
    kind = prop_def(MapKindAttr)
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    modes = prop_def(ArrayAttr[ModeAttr])
    valid_attr = pair_prop("valid")
    group_attr = opt_int_prop("group")
    scalar = opt_prop_def(FloatAttr)
    offset_attr = opt_int_prop("offset")
    lo_attr = opt_int_prop("lo")
    hi_attr = opt_int_prop("hi")
    traits = section_traits()
    custom_directives = (Modes, Pair, F32, Engine)
    assembly_format = (
        "$kind $ins custom<Modes>($modes) `->` $out `valid` custom<Pair>($valid)"
        " (`group` $group^)? (`scalar` custom<F32>($scalar)^)? (`offset` $offset^)?"
        " (`lo` $lo^)? (`hi` $hi^)? " + ON_ENGINE
    )

    valid = PairValue("valid")
    """The rows and columns of the result that hold data (the rest is zeroed)."""
    group = IntValue("group")
    offset = IntValue("offset")
    lo = IntValue("lo")
    hi = IntValue("hi")

    def __init__(
        self,
        kind: str,
        ins: Sequence[SSAValue],
        modes: Sequence[str],
        out: SSAValue,
        valid: tuple[int, int],
        group: int | None = None,
        scalar: float | None = None,
        engine: Attribute | None = None,
        ints: dict[str, int] | None = None,
    ):
        """`ints`: the integer properties of the kinds that take them (offset, lo, hi)."""
        ints = ints or {}
        super().__init__(
            operands=[list(ins), out],
            properties={
                "kind": MapKindAttr(MapKindName(kind)),
                "modes": ArrayAttr([ModeAttr(Mode(m)) for m in modes]),
                "valid": pair_attr(valid),
                "group": int_attr(group),
                "scalar": FloatAttr(scalar, f32) if scalar is not None else None,
                "engine": engine,
                **{k: int_attr(ints.get(k)) for k in ("offset", "lo", "hi")},
            },
        )

    @property
    def mode_list(self) -> list[str]:
        return [m.data for m in self.modes.data]

    def inputs(self) -> list[tuple[SSAValue, str]]:
        return list(zip(self.ins, self.mode_list, strict=True))

    def verify_(self) -> None:
        kind = self.kind.data
        spec = MAP_KINDS[kind]
        if len(self.ins) not in spec.arities():
            raise VerifyException(
                f"{self.stage_name()}: takes {' or '.join(map(str, sorted(spec.arities())))} input(s), got {len(self.ins)}"
            )
        if self.mode_list != spec.modes(len(self.ins)):
            raise VerifyException(
                f"{self.stage_name()}: reads its inputs as {', '.join(spec.modes(len(self.ins)))}, "
                f"not {', '.join(self.mode_list)}"
            )
        if (self.scalar is not None) != (spec.scalar is not None):
            raise VerifyException(
                f"{self.stage_name()}: "
                + (f"needs its {spec.scalar}" if spec.scalar else "takes no scalar")
            )
        for prop in ("offset", "lo", "hi"):
            if (self.properties.get(prop) is not None) != (prop in spec.int_props):
                raise VerifyException(
                    f"{self.stage_name()}: "
                    + (f"needs its {prop}" if prop in spec.int_props else f"takes no {prop}")
                )
        ins = [fifo_of(self, v, f"input {i}") for i, v in enumerate(self.ins)]
        out = fifo_of(self, self.out, "the output")
        if isinstance(out.elt, IntegerType) and not spec.ints:
            raise TypeMismatch(f"{self.stage_name()}: computes on floats, not {out.elt}")
        if spec.ints_only and not all(isinstance(b.elt, IntegerType) for b in [*ins, out]):
            raise TypeMismatch(f"{self.stage_name()}: computes on integers only")
        if spec.converts:
            same_elt(self, ins, "its inputs")
        elif not spec.mixed:
            same_elt(self, [*ins, out], "its inputs and output")
        if min(self.valid) <= 0:
            raise VerifyException(f"{self.stage_name()}: the valid extent must be positive")


# ── Row reductions ────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class RowReduceOp(ComputeStage):
    """`sp.row_reduce whole "rms_norm" %x, %w -> %out width 128 cols 128 rows 8 [block B] [eps E]`.

    A reduction over each row of elements, in groups of `width` consecutive columns (an
    rms_norm's `width`; the whole row otherwise), over the first `cols` columns and `rows` rows
    of the tensor it reads. Statistics are f32. Three forms (docs/passes.md#link-wide-rows-are-blocked-never-refused: a row too
    wide for one site's accumulator is cut into blocks, never refused):

    whole    per item (a block of whole groups): pop one page of each input (rms_norm: x,
             [residual,] weight; layer_norm: x, weight, bias; softmax: x; a weight or bias is a
             [1, w] row page), compute the op on each row's groups, push the block in [sh, sw]
             pages (row-major).
    partial  per item (a block of h x w tiles inside one group, `block` columns wide): pop x
             [and residual], push one [h, 1] page whose tiles hold each row's partial statistics
             of the block's real columns in their first columns: rms_norm and sum_squares the
             sum of squares;
             layer_norm the sum and the sum of squared deviations from the block's mean; softmax
             the maximum and the sum of exp(x - maximum).
    combine  per item (one group of h tile rows): for each K block pop an [h, kw] page of the
             partials (one tile per block of `block` columns), merge them in order; push one
             [h, 1] page: rms_norm 1/sqrt(mean(x^2) + eps); layer_norm 1/sqrt(var + eps) and the
             mean; softmax the maximum and 1/sum (the map kinds *_apply read them); sum_squares
             the sum itself (tg.rms_stats' share; the kind has no whole form).
    """

    name = "sp.row_reduce"
    form = prop_def(RowFormAttr)
    kind = prop_def(RowKindAttr)
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    width_attr = int_prop("width")
    cols_attr = int_prop("cols")
    rows_attr = int_prop("rows")
    block_attr = opt_int_prop("block")
    eps = opt_prop_def(FloatAttr)
    traits = section_traits()
    custom_directives = (F32, Engine)
    assembly_format = (
        "$form $kind $ins `->` $out `width` $width `cols` $cols `rows` $rows"
        " (`block` $block^)? (`eps` custom<F32>($eps)^)? " + ON_ENGINE
    )

    width = IntValue("width")
    cols = IntValue("cols")
    rows = IntValue("rows")
    block = IntValue("block")

    def __init__(
        self,
        form: str,
        kind: str,
        ins: Sequence[SSAValue],
        out: SSAValue,
        width: int,
        cols: int,
        rows: int,
        block: int | None = None,
        eps: float | None = None,
        engine: Attribute | None = None,
    ):
        super().__init__(
            operands=[list(ins), out],
            properties={
                "form": RowFormAttr(RowForm(form)),
                "kind": RowKindAttr(RowKindName(kind)),
                "width": int_attr(width),
                "cols": int_attr(cols),
                "rows": int_attr(rows),
                "block": int_attr(block),
                "eps": FloatAttr(eps, f32) if eps is not None else None,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"row_reduce {self.form.data} {self.kind.data}"

    def verify_(self) -> None:
        form, kind = self.form.data, self.kind.data
        if form not in ROW_KINDS[kind]:
            raise VerifyException(f"{self.stage_name()}: {kind} has no {form} form")
        if len(self.ins) not in ROW_KINDS[kind][form]:
            raise VerifyException(
                f"{self.stage_name()}: takes {' or '.join(map(str, sorted(ROW_KINDS[kind][form])))} input(s), got {len(self.ins)}"
            )
        needs_eps = kind not in ("softmax", "sum_squares") and form != "partial"
        if (self.eps is not None) != needs_eps:
            raise VerifyException(
                f"{self.stage_name()}: " + ("needs its eps" if needs_eps else "takes no eps")
            )
        if (self.block is not None) != (form != "whole"):
            raise VerifyException(
                f"{self.stage_name()}: "
                + ("takes no block" if form == "whole" else "needs the columns of a block")
            )
        if self.cols % self.width and self.width != self.cols:
            raise VerifyException(
                f"{self.stage_name()}: groups of {self.width} do not cut {self.cols} columns"
            )
        for i, v in enumerate(self.ins):
            fifo_of(self, v, f"input {i}")
        out = fifo_of(self, self.out, "the output")
        if form != "whole" and out.elt != Float32Type():
            raise TypeMismatch(f"{self.stage_name()}: pushes f32 statistics, not {out.elt}")


# ── Rope ──────────────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class RopeOp(ComputeStage):
    """`sp.rope "neox" %x, %cos, %sin -> %out head_dim 32 valid 8x128`.

    Per item (a block of whole heads: h tile rows by w tiles): pop one page of x ([h, w]), of
    cos and of sin (each [h, ceil(head_dim / 2 / tile)], the rows of the item's rows). Rotate
    every head of each row in f32: `neox` pairs column i with i + head_dim / 2, `interleaved`
    2i with 2i + 1 (x1 cos - x2 sin, x2 cos + x1 sin); zero what lies outside `valid`; push the
    block in [sh, sw] pages.
    """

    name = "sp.rope"
    kind = prop_def(RopeStyleAttr)
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    head_dim_attr = int_prop("head_dim")
    valid_attr = pair_prop("valid")
    traits = section_traits()
    custom_directives = (Pair, Engine)
    assembly_format = (
        "$kind $ins `->` $out `head_dim` $head_dim `valid` custom<Pair>($valid) " + ON_ENGINE
    )

    head_dim = IntValue("head_dim")
    valid = PairValue("valid")

    def __init__(
        self,
        style: str,
        x: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        out: SSAValue,
        head_dim: int,
        valid: tuple[int, int],
        engine: Attribute | None = None,
    ):
        super().__init__(
            operands=[[x, cos, sin], out],
            properties={
                "kind": RopeStyleAttr(RopeStyle(style)),
                "head_dim": int_attr(head_dim),
                "valid": pair_attr(valid),
                "engine": engine,
            },
        )

    def verify_(self) -> None:
        if len(self.ins) != 3:
            raise VerifyException("rope: takes x, cos and sin")
        bufs = [fifo_of(self, v, r) for v, r in zip(self.ins, ("x", "cos", "sin"), strict=True)]
        # x and the output agree (tg.rope's result is like x); the tables may hold any float type
        # of their own (llama.cpp keeps them in f32 beside bf16 activations): the rotation is
        # computed in f32 and rounded once, to the output's type (docs/sp.md#sp-rope).
        same_elt(self, [bufs[0], fifo_of(self, self.out, "the output")], "x and the output")
        for buf, role in zip(bufs[1:], ("cos", "sin"), strict=True):
            if isinstance(buf.elt, IntegerType):
                raise TypeMismatch(f"{self.stage_name()}: {role} holds {buf.elt}, not a float type")
        if self.head_dim <= 0 or self.head_dim % 2:
            raise VerifyException(f"rope: head_dim {self.head_dim} must be even")


# ── Flash attention ───────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class AttentionOp(StageOp):
    """`sp.attention %q, %k, %v [pos %p] -> %out acc %dst state %o, %ml heads 4 kv_heads 2
    head_dim 32 v_head_dim 32 queries 8 keys 64 scale S [causal]`.

    The flash form: K and V are read a block at a time and never held whole. A work item is
    (query block, heads of one kv head): the block of the result it covers is h tile rows of
    queries by w tiles of columns, the g = w / (v_head_dim / tile) query heads from
    c0 / (v_head_dim / tile) on, all of one kv head's group (grouped-query attention: head j
    reads kv head j / G, G = heads / kv_heads), so one read of each K and V block serves all g.
    Per item: pop the query page ([h, g * D] tiles: the g heads' queries side by side) and, with
    `pos`, the position page (element 0 is p; without it p = keys - queries); then for each K
    block: pop a page of K ([kw, D]) and of V ([kw, Dv]) and, for each of the g heads, compute
    the scores q k^T * scale in f32 (in the accumulator, [h, kw] tiles), mask keys at or past
    `keys` and, when causal, keys j > p + i for query row i, and update the head's online softmax
    in f32: its running maximum m and sum l per row (tile j of `ml`, an f32 page [h, g], holds
    head j's in its columns 0 and 1) and its running output O (columns j * Dv .. of `o`, an f32
    page [h, w]), both held in local memory between K blocks,
    O = O * exp(m_old - m) + exp(s - m) V. After the last block push O / l in [sh, sw] pages,
    zeroing rows at or past `queries`. A position with p + queries > keys or p < 0 is a runtime
    error, reported, never read past.

    `splits P` (one query row only: docs/passes.md#link-flash-decoding-splits-the-keys): the
    split form of flash decoding. The result is a partials tensor of two rows whose columns hold
    the P splits one after another, each as wide as the heads' outputs (W = heads * Dv / tile
    tiles); an item at column c0 serves split c0 / W, the keys of key tiles
    [split * K, (split + 1) * K) with K = the key tiles / P (the K loop), and the heads of
    column c0 mod W. After its last block it pushes, in f32 and without dividing by l, row 0: the
    running output O; row 1: in columns 0 and 1 of every tile, the m and l of the head the tile
    belongs to (zeros elsewhere), so that every tile merges on its own. A split whose every key
    is masked pushes O = 0, m = -inf, l = 0. `sp.attention_combine` merges them. With `users`
    (docs/sp.md#attention) partials rows r and Q + r hold query row r's O and its m, l (2 Q <= th).

    `users U capacity S` (the batched attention, docs/tg.md#batched-decode): the queries are U
    users' T = queries / U rows each (row r: user r / T, its token r mod T) and the keys are
    the users' caches one after another, U x S (`keys`), as the loads of users' caches (sp.load
    `users`) walk them. The position page holds pos[0 .. U - 1]. Key x is user x / S's position
    x mod S: query row r sees it when both are the same user's and x mod S <= pos[u] + r mod T
    (a block-diagonal causal mask, so one K loop over every cache serves every user of the
    item). A user at pos -1 is idle: its rows are zero. A live position outside [0, S - T] is
    a runtime error, reported, never read past. Where the queries fill more than one tile row
    and whole ones, each of th / T users (`user_key_tiles`), an item is one tile row of queries
    (h = 1) and walks only its own users' caches: S / T key tiles from key tile r0 * S / T (the
    K and V loads' origin; the K loop's extent), key x of that walk being key
    r0 * S / T * th + x of the U x S. `splits P by_users` (docs/sp.md): a split is U / P whole
    users' caches, pushes their rows' O / l (others zero) in the result's type; a `sum` combines.
    """

    name = "sp.attention"
    q = operand_def(BufferType)
    k = operand_def(BufferType)
    v = operand_def(BufferType)
    pos = opt_operand_def(BufferType)
    out = operand_def(BufferType)
    acc = operand_def(BufferType)
    state = operand_def(BufferType)
    stats = operand_def(BufferType)
    heads_attr = int_prop("heads")
    kv_heads_attr = int_prop("kv_heads")
    head_dim_attr = int_prop("head_dim")
    v_head_dim_attr = int_prop("v_head_dim")
    queries_attr = int_prop("queries")
    keys_attr = int_prop("keys")
    scale = prop_def(FloatAttr)
    causal = opt_prop_def(UnitAttr)
    splits_attr = opt_int_prop("splits")
    users_attr = opt_int_prop("users")
    capacity_attr = opt_int_prop("capacity")
    by_users = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = section_traits()
    custom_directives = (F32, Engine)
    assembly_format = (
        "$q `,` $k `,` $v (`pos` $pos^)? `->` $out `acc` $acc `state` $state `,` $stats"
        " `heads` $heads `kv_heads` $kv_heads `head_dim` $head_dim `v_head_dim` $v_head_dim"
        " `queries` $queries `keys` $keys `scale` custom<F32>($scale) (`causal` $causal^)?"
        " (`splits` $splits^)? (`users` $users^ `capacity` $capacity)? (`by_users` $by_users^)? "
        + ON_ENGINE
    )

    users = IntValue("users")
    capacity = IntValue("capacity")

    heads = IntValue("heads")
    kv_heads = IntValue("kv_heads")
    head_dim = IntValue("head_dim")
    v_head_dim = IntValue("v_head_dim")
    queries = IntValue("queries")
    keys = IntValue("keys")
    splits = IntValue("splits")

    NUMBERS: ClassVar = ("heads", "kv_heads", "head_dim", "v_head_dim", "queries", "keys")

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        pos: SSAValue | None,
        out: SSAValue,
        acc: SSAValue,
        state: SSAValue,
        stats: SSAValue,
        numbers: dict[str, int],
        scale: float,
        causal: bool,
        splits: int | None = None,
        engine: Attribute | None = None,
    ):
        props: dict[str, Attribute | None] = {k_: int_attr(numbers[k_]) for k_ in self.NUMBERS}
        props.update(
            scale=FloatAttr(scale, f32),
            causal=UnitAttr() if causal else None,
            splits=int_attr(splits),
            engine=engine,
        )
        super().__init__(operands=[q, k, v, pos, out, acc, state, stats], properties=props)

    def stage_name(self) -> str:
        return "attention"

    @property
    def is_causal(self) -> bool:
        return self.causal is not None

    @property
    def group(self) -> int:
        """Query heads per kv head."""
        return self.heads // self.kv_heads

    def user_key_tiles(self, tile_rows: int) -> int | None:
        """The key tiles of one query tile row's users where each tile row walks only its own
        users' caches (`users_key_range`), else None (every item walks every cache)."""
        if self.users is None or self.capacity is None:
            return None
        return users_key_range(self.queries, self.users, self.capacity, tile_rows)

    def verify_(self) -> None:
        h, kv = self.heads, self.kv_heads
        if min(h, kv, self.head_dim, self.v_head_dim) <= 0 or h % kv:
            raise VerifyException(
                f"attention: heads {h} must be a positive multiple of kv_heads {kv}"
            )
        fifos = [fifo_of(self, x, r) for x, r in ((self.q, "q"), (self.k, "k"), (self.v, "v"))]
        out = fifo_of(self, self.out, "the output")
        # q, k and v agree (tg.attention's contract: the two tile products read their operands in
        # one format); the output is O / l in f32 rounded once to its own type (docs/sp.md).
        same_elt(self, fifos, "q, k and v")
        if self.splits is not None:
            if self.splits < 1 or (self.queries != 1 and self.users is None):
                raise VerifyException(
                    f"attention: splits {self.splits} needs a positive count and one query row "
                    f"or users (queries {self.queries})"
                )
            if out.elt != Float32Type() and self.by_users is None:
                raise TypeMismatch("attention: a split pushes f32 partials")
        if self.by_users is not None and (not self.splits or (self.users or 1) % self.splits):
            raise VerifyException(f"attention: by_users: {self.splits} splits, {self.users} users")
        if self.pos is not None and fifo_of(self, self.pos, "pos").elt != IntegerType(32):
            raise TypeMismatch("attention: the position page holds i32")
        if (self.users is None) != (self.capacity is None):
            raise VerifyException("attention: a batched attention takes users and capacity")
        if self.users is not None:
            u, s = self.users, self.capacity
            if self.pos is None or not self.is_causal:
                raise VerifyException("attention: users needs the positions and is causal")
            if u <= 0 or self.queries % u or self.keys != u * s:
                raise VerifyException(
                    f"attention: {self.queries} queries and {self.keys} keys are not {u} users' "
                    f"rows and caches of capacity {s}"
                )
        acc = buffer_of(self.acc)
        if not isinstance(acc, AccOp) or acc.elt != Float32Type():
            raise TypeMismatch("attention: the scores accumulate in an f32 sp.acc")
        f32_state(self, self.state, "the running output")
        f32_state(self, self.stats, "the running maximum and sum")


# ── Arg-max ───────────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class ArgmaxOp(StageOp):
    """`sp.argmax %x -> %out state %best cols 512 rows 8`.

    Per item (one tile of the i32 result vector: the 32 rows of x tile row c0): for each K block
    pop an [h, kw] page of x (h = 1) and update each row's running maximum and its index over the
    block's real columns (before `cols`), keeping the first index of the maximum; the running
    pair lives in `best` (an f32 page of two tiles: values, indices) between K blocks. After the
    last block push one [1, 1] i32 page whose row 0 holds the indices of the tile's rows (the
    result vector's elements), zero past `rows`.
    """

    name = "sp.argmax"
    x = operand_def(BufferType)
    out = operand_def(BufferType)
    best = operand_def(BufferType)
    cols_attr = int_prop("cols")
    rows_attr = int_prop("rows")
    traits = section_traits()
    custom_directives = (Engine,)
    assembly_format = "$x `->` $out `state` $best `cols` $cols `rows` $rows " + ON_ENGINE

    cols = IntValue("cols")
    rows = IntValue("rows")

    def __init__(
        self,
        x: SSAValue,
        out: SSAValue,
        best: SSAValue,
        cols: int,
        rows: int,
        engine: Attribute | None = None,
    ):
        super().__init__(
            operands=[x, out, best],
            properties={"cols": int_attr(cols), "rows": int_attr(rows), "engine": engine},
        )

    def stage_name(self) -> str:
        return "argmax"

    def verify_(self) -> None:
        fifo_of(self, self.x, "x")
        if fifo_of(self, self.out, "the output").elt != IntegerType(32):
            raise TypeMismatch("argmax: pushes i32 indices")
        f32_state(self, self.best, "the running maximum")


@irdl_op_definition
class AttentionCombineOp(StageOp):
    """`sp.attention_combine %parts -> %out state %o splits 16`.

    The merge of flash decoding (docs/passes.md#link-flash-decoding-splits-the-keys): per item
    (w tiles of the one-row result), for each of the `splits` K steps pop a [1, w] f32 page of
    the partials `sp.attention splits` pushed (row 0 a split's running output O, row 1 in
    columns 0 and 1 of each tile the m and l of the head the tile belongs to) and merge it,
    tile by tile, into the running state (an f32 page [1, w] in the same encoding):
    m = max(m_a, m_b), O = O_a exp(m_a - m) + O_b exp(m_b - m), likewise l (the log-sum-exp
    merge; a side with m = -inf adds nothing). After the last split push O / l in [sh, sw]
    pages of the result's element type, rows past the first zero (`rows Q`: see sp.attention).
    `sum`: the pages of `sp.attention splits P by_users` (any float type), added.
    """

    name = "sp.attention_combine"
    parts = operand_def(BufferType)
    out = operand_def(BufferType)
    state = operand_def(BufferType)
    splits_attr = int_prop("splits")
    rows_attr = opt_int_prop("rows")
    sum = opt_prop_def(UnitAttr)
    traits = section_traits()
    custom_directives = (Engine,)
    assembly_format = (
        "$parts `->` $out `state` $state `splits` $splits (`rows` $rows^)? (`sum` $sum^)?"
        + ON_ENGINE
    )

    splits = IntValue("splits")
    query_rows = property(lambda self: self.rows_attr.value.data if self.rows_attr else 1)

    def __init__(
        self,
        parts: SSAValue,
        out: SSAValue,
        state: SSAValue,
        splits: int,
        engine: Attribute | None = None,
        rows: int | None = None,
        summed: bool = False,
    ):
        props = {"splits": int_attr(splits), "rows": int_attr(rows), "engine": engine}
        props["sum"] = UnitAttr() if summed else None
        super().__init__(operands=[parts, out, state], properties=props)

    def stage_name(self) -> str:
        return "attention_combine"

    def verify_(self) -> None:
        if min(self.splits, self.query_rows) <= 0:  # splits P, rows Q
            raise VerifyException(f"attention_combine: P {self.splits}, Q {self.query_rows} <= 0")
        if fifo_of(self, self.parts, "the partials").elt != Float32Type() and self.sum is None:
            raise TypeMismatch("attention_combine: pops f32 partials")
        fifo_of(self, self.out, "the output")
        f32_state(self, self.state, "the running output and statistics")


COMPUTE_STAGES = (
    MapOp,
    RowReduceOp,
    RopeOp,
    AttentionOp,
    AttentionCombineOp,
    ArgmaxOp,
    CausalConvOp,
    GatedDeltaOp,
    RouteOp,
)
"""The compute stages of this module (place puts them on the compute engine)."""
