"""The stages of the sections that are not GEMMs: pointwise maps, row reductions, rope, flash
attention, arg-max, and the data-dependent movements (gather, scatter).

Every op here is a stage template like `sp.load` and `sp.matmul_tiles` (stages.py): one instance per
site, on the engine place gives it, joined to the other stages by FIFOs, and executed per work
item in the order the package docstring states. What each stage does with the pages it pops
and pushes is its docstring: that is what a simulator executes, so each one says which pages it
pops per item (one page per input per item unless it says otherwise), what it computes and in
which precision, and what it pushes.

Two rules hold for every compute stage here:

  * Arithmetic is f32 (integers: exact, wrapped to i32), and a result is rounded once, to the
    element type of the FIFO it is pushed to: the precision of the reference semantics (DESIGN.md
    section 3). Partial results that cross sections (the row statistics of a blocked norm) are
    f32 tensors.
  * Padding never leaks: a stage that reduces over a row reads only its real columns (`cols`,
    `width`), and every stage writes zeros to the elements of its pages outside the real extent
    of the tensor it computes (`valid`, `rows`), so a tiled tensor's padding holds zeros whoever
    wrote it (the package's contract that a product over padding adds nothing).

Kinds are strings checked against the tables of kinds.py (`MAP_KINDS`, `ROW_KINDS`, ...), the one place
that says which kinds exist and what operands each takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    ArrayAttr,
    Float32Type,
    FloatAttr,
    IntAttr,
    IntegerType,
    StringAttr,
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
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    BufferOp,
    ComputeStage,
    StageOp,
    buffer_of,
    section_traits,
)
from spatial_dialect.sp.attrs import BUFFER, BufferType
from spatial_dialect.sp.buffers import AccOp, FifoOp, IntermOp
from spatial_dialect.sp.errors import TypeMismatch
from spatial_dialect.sp.kinds import MAP_KINDS, ROPE_STYLES, ROW_FORMS, ROW_KINDS, Mode
from spatial_dialect.sp.syntax import (
    float_text,
    parse_attr_dict,
    parse_operands,
    parse_props,
    print_operands,
    props_text,
)

# ── Checks shared by the stages ───────────────────────────────────────────────────────────────


def _fifo(op: StageOp, value: SSAValue, role: str) -> FifoOp:
    buf = buffer_of(value)
    if not isinstance(buf, FifoOp):
        raise TypeMismatch(f"{op.stage_name()}: {role} is {buf.name}, expected sp.fifo")
    return buf


def _same_elt(op: StageOp, bufs: Sequence[BufferOp], what: str) -> None:
    elts = {str(b.elt) for b in bufs}
    if len(elts) > 1:
        raise TypeMismatch(
            f"{op.stage_name()}: {what} hold {', '.join(sorted(elts))}; they must agree"
        )


def _f32_state(op: StageOp, value: SSAValue, role: str) -> None:
    buf = buffer_of(value)
    if not isinstance(buf, IntermOp) or buf.elt != Float32Type():
        raise TypeMismatch(f"{op.stage_name()}: {role} is an sp.interm of f32")


def _kind_of(op: StageOp, kind: str, known: Sequence[str]) -> None:
    if kind not in known:
        raise VerifyException(
            f"{op.stage_name()}: unknown kind {kind!r}; the kinds are {', '.join(known)}"
        )


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
    factor of `scale` and the cap of `softcap`.
    """

    name = "sp.map"
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    modes = prop_def(ArrayAttr[StringAttr])
    valid_rows = prop_def(IntAttr)
    valid_cols = prop_def(IntAttr)
    group = opt_prop_def(IntAttr)
    scalar = opt_prop_def(FloatAttr)
    traits = section_traits()

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
    ):
        super().__init__(
            operands=[list(ins), out],
            properties={
                "kind": StringAttr(kind),
                "modes": ArrayAttr([StringAttr(m) for m in modes]),
                "valid_rows": IntAttr(valid[0]),
                "valid_cols": IntAttr(valid[1]),
                "group": IntAttr(group) if group is not None else None,
                "scalar": FloatAttr(scalar, f32) if scalar is not None else None,
                "engine": engine,
            },
        )

    @property
    def mode_list(self) -> list[str]:
        return [m.data for m in self.modes.data]

    def inputs(self) -> list[tuple[SSAValue, str]]:
        return list(zip(self.ins, self.mode_list, strict=True))

    def verify_(self) -> None:
        kind = self.kind.data
        _kind_of(self, kind, list(MAP_KINDS))
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
        ins = [_fifo(self, v, f"input {i}") for i, v in enumerate(self.ins)]
        out = _fifo(self, self.out, "the output")
        if isinstance(out.elt, IntegerType) and not spec.ints:
            raise TypeMismatch(f"{self.stage_name()}: computes on floats, not {out.elt}")
        if kind not in ("rms_apply", "layer_apply", "softmax_apply"):
            _same_elt(self, [*ins, out], "its inputs and output")
        if min(self.valid_rows.data, self.valid_cols.data) <= 0:
            raise VerifyException(f"{self.stage_name()}: the valid extent must be positive")

    @classmethod
    def parse(cls, parser: Parser) -> MapOp:
        kind = parser.parse_str_literal()

        def one() -> tuple[SSAValue, str]:
            value = parser.parse_operand(BUFFER)
            mode = parser.parse_optional_keyword_in(Mode.ALL[1:])
            return value, mode or Mode.FULL

        ins = parser.parse_comma_separated_list(parser.Delimiter.NONE, one)
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        parser.parse_keyword("valid")
        rows, cols = parser.parse_dimension_list()[:2]
        group = parser.parse_integer() if parser.parse_optional_keyword("group") else None
        scalar = parser.parse_float() if parser.parse_optional_keyword("scalar") else None
        engine = cls._parse_engine(parser)
        op = cls(
            kind, [v for v, _ in ins], [m for _, m in ins], out, (rows, cols), group, scalar, engine
        )
        op.attributes.update(parse_attr_dict(parser))
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kind.data)
        for i, (v, mode) in enumerate(self.inputs()):
            printer.print_string(", " if i else " ")
            printer.print_operand(v)
            if mode != Mode.FULL:
                printer.print_string(f" {mode}")
        printer.print_string(" -> ")
        printer.print_operand(self.out)
        printer.print_string(f" valid {self.valid_rows.data}x{self.valid_cols.data}")
        if self.group is not None:
            printer.print_string(f" group {self.group.data}")
        if self.scalar is not None:
            printer.print_string(f" scalar {float_text(self.scalar)}")
        self._print_engine(printer)


# ── Row reductions ────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class RowReduceOp(ComputeStage):
    """`sp.row_reduce whole "rms_norm" %x, %w -> %out width 128 cols 128 rows 8 [block B] [eps E]`.

    A reduction over each row of elements, in groups of `width` consecutive columns (an
    rms_norm's `width`; the whole row otherwise), over the first `cols` columns and `rows` rows
    of the tensor it reads. Statistics are f32. Three forms (seed 004's blocked row: a row too
    wide for one site's accumulator is cut into blocks, never refused):

    whole    per item (a block of whole groups): pop one page of each input (rms_norm: x,
             [residual,] weight; layer_norm: x, weight, bias; softmax: x; a weight or bias is a
             [1, w] row page), compute the op on each row's groups, push the block in [sh, sw]
             pages (row-major).
    partial  per item (a block of h x w tiles inside one group, `block` columns wide): pop x
             [and residual], push one
             [h, 1] page whose tiles hold each row's partial statistics of the block's real
             columns in their first columns: rms_norm the sum of squares; layer_norm the sum and
             the sum of squared deviations from the block's mean; softmax the maximum and the
             sum of exp(x - maximum).
    combine  per item (one group of h tile rows): for each K block pop an [h, kw] page of the
             partials (one tile per block of `block` columns), merge them in order; push one
             [h, 1] page: rms_norm 1/sqrt(mean(x^2) + eps); layer_norm 1/sqrt(var + eps) and the
             mean; softmax the maximum and 1/sum (the map kinds *_apply read them).
    """

    name = "sp.row_reduce"
    form = prop_def(StringAttr)
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    width = prop_def(IntAttr)
    cols = prop_def(IntAttr)
    rows = prop_def(IntAttr)
    block = opt_prop_def(IntAttr)
    eps = opt_prop_def(FloatAttr)
    traits = section_traits()

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
                "form": StringAttr(form),
                "kind": StringAttr(kind),
                "width": IntAttr(width),
                "cols": IntAttr(cols),
                "rows": IntAttr(rows),
                "block": IntAttr(block) if block is not None else None,
                "eps": FloatAttr(eps, f32) if eps is not None else None,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"row_reduce {self.form.data} {self.kind.data}"

    def verify_(self) -> None:
        form, kind = self.form.data, self.kind.data
        if form not in ROW_FORMS:
            raise VerifyException(f"sp.row_reduce: the form is one of {', '.join(ROW_FORMS)}")
        _kind_of(self, kind, list(ROW_KINDS))
        if len(self.ins) not in ROW_KINDS[kind][form]:
            raise VerifyException(
                f"{self.stage_name()}: takes {' or '.join(map(str, sorted(ROW_KINDS[kind][form])))} input(s), got {len(self.ins)}"
            )
        needs_eps = kind != "softmax" and form != "partial"
        if (self.eps is not None) != needs_eps:
            raise VerifyException(
                f"{self.stage_name()}: " + ("needs its eps" if needs_eps else "takes no eps")
            )
        if (self.block is not None) != (form != "whole"):
            raise VerifyException(
                f"{self.stage_name()}: "
                + ("takes no block" if form == "whole" else "needs the columns of a block")
            )
        if self.cols.data % self.width.data and self.width.data != self.cols.data:
            raise VerifyException(
                f"{self.stage_name()}: groups of {self.width.data} do not cut {self.cols.data} columns"
            )
        for i, v in enumerate(self.ins):
            _fifo(self, v, f"input {i}")
        out = _fifo(self, self.out, "the output")
        if form != "whole" and out.elt != Float32Type():
            raise TypeMismatch(f"{self.stage_name()}: pushes f32 statistics, not {out.elt}")

    @classmethod
    def parse(cls, parser: Parser) -> RowReduceOp:
        form = parser.parse_identifier()
        kind = parser.parse_str_literal()
        ins = parse_operands(parser)
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        p = parse_props(parser, ("width", "cols", "rows"))
        block = parser.parse_integer() if parser.parse_optional_keyword("block") else None
        eps = parser.parse_float() if parser.parse_optional_keyword("eps") else None
        op = cls(
            form,
            kind,
            ins,
            out,
            p["width"].data,
            p["cols"].data,
            p["rows"].data,
            block,
            eps,
            cls._parse_engine(parser),
        )
        op.attributes.update(parse_attr_dict(parser))
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(f" {self.form.data} ")
        printer.print_string_literal(self.kind.data)
        print_operands(printer, self.ins)
        printer.print_string(" -> ")
        printer.print_operand(self.out)
        printer.print_string(props_text(self, ("width", "cols", "rows")))
        if self.block is not None:
            printer.print_string(f" block {self.block.data}")
        if self.eps is not None:
            printer.print_string(f" eps {float_text(self.eps)}")
        self._print_engine(printer)


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
    ins = var_operand_def(BufferType)
    out = operand_def(BufferType)
    head_dim = prop_def(IntAttr)
    valid_rows = prop_def(IntAttr)
    valid_cols = prop_def(IntAttr)
    traits = section_traits()

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
                "kind": StringAttr(style),
                "head_dim": IntAttr(head_dim),
                "valid_rows": IntAttr(valid[0]),
                "valid_cols": IntAttr(valid[1]),
                "engine": engine,
            },
        )

    def verify_(self) -> None:
        _kind_of(self, self.kind.data, ROPE_STYLES)
        if len(self.ins) != 3:
            raise VerifyException("rope: takes x, cos and sin")
        bufs = [_fifo(self, v, r) for v, r in zip(self.ins, ("x", "cos", "sin"), strict=True)]
        _same_elt(self, [*bufs, _fifo(self, self.out, "the output")], "x, cos, sin and the output")
        if self.head_dim.data <= 0 or self.head_dim.data % 2:
            raise VerifyException(f"rope: head_dim {self.head_dim.data} must be even")

    @classmethod
    def parse(cls, parser: Parser) -> RopeOp:
        style = parser.parse_str_literal()
        ins = parse_operands(parser)
        if len(ins) != 3:
            parser.raise_error("sp.rope takes x, cos and sin")
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        head_dim = parse_props(parser, ("head_dim",))["head_dim"].data
        parser.parse_keyword("valid")
        rows, cols = parser.parse_dimension_list()[:2]
        op = cls(style, *ins, out, head_dim, (rows, cols), cls._parse_engine(parser))
        op.attributes.update(parse_attr_dict(parser))
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_string_literal(self.kind.data)
        print_operands(printer, self.ins)
        printer.print_string(" -> ")
        printer.print_operand(self.out)
        printer.print_string(
            f" head_dim {self.head_dim.data} valid {self.valid_rows.data}x{self.valid_cols.data}"
        )
        self._print_engine(printer)


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
    heads = prop_def(IntAttr)
    kv_heads = prop_def(IntAttr)
    head_dim = prop_def(IntAttr)
    v_head_dim = prop_def(IntAttr)
    queries = prop_def(IntAttr)
    keys = prop_def(IntAttr)
    scale = prop_def(FloatAttr)
    causal = opt_prop_def(IntAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = section_traits()

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
        engine: Attribute | None = None,
    ):
        props: dict[str, Attribute | None] = {k_: IntAttr(numbers[k_]) for k_ in self.NUMBERS}
        props.update(
            scale=FloatAttr(scale, f32), causal=IntAttr(1) if causal else None, engine=engine
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
        return self.heads.data // self.kv_heads.data

    def verify_(self) -> None:
        h, kv = self.heads.data, self.kv_heads.data
        if min(h, kv, self.head_dim.data, self.v_head_dim.data) <= 0 or h % kv:
            raise VerifyException(
                f"attention: heads {h} must be a positive multiple of kv_heads {kv}"
            )
        fifos = [_fifo(self, x, r) for x, r in ((self.q, "q"), (self.k, "k"), (self.v, "v"))]
        out = _fifo(self, self.out, "the output")
        _same_elt(self, [*fifos, out], "q, k, v and the output")
        if self.pos is not None and _fifo(self, self.pos, "pos").elt != IntegerType(32):
            raise TypeMismatch("attention: the position page holds i32")
        acc = buffer_of(self.acc)
        if not isinstance(acc, AccOp) or acc.elt != Float32Type():
            raise TypeMismatch("attention: the scores accumulate in an f32 sp.acc")
        _f32_state(self, self.state, "the running output")
        _f32_state(self, self.stats, "the running maximum and sum")

    @classmethod
    def parse(cls, parser: Parser) -> AttentionOp:
        q, k, v = parse_operands(parser)[:3]
        pos = parser.parse_operand(BUFFER) if parser.parse_optional_keyword("pos") else None
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        parser.parse_keyword("acc")
        acc = parser.parse_operand(BUFFER)
        parser.parse_keyword("state")
        state = parser.parse_operand(BUFFER)
        parser.parse_punctuation(",")
        stats = parser.parse_operand(BUFFER)
        numbers = {k_: a.data for k_, a in parse_props(parser, cls.NUMBERS).items()}
        parser.parse_keyword("scale")
        scale = parser.parse_float()
        causal = parser.parse_optional_keyword("causal") is not None
        op = cls(
            q,
            k,
            v,
            pos,
            out,
            acc,
            state,
            stats,
            numbers,
            scale,
            causal,
            cls._parse_engine(parser),
        )
        op.attributes.update(parse_attr_dict(parser))
        return op

    def print(self, printer: Printer) -> None:
        print_operands(printer, (self.q, self.k, self.v))
        if self.pos is not None:
            printer.print_string(" pos ")
            printer.print_operand(self.pos)
        for word, value in ((" -> ", self.out), (" acc ", self.acc), (" state ", self.state)):
            printer.print_string(word)
            printer.print_operand(value)
        printer.print_string(", ")
        printer.print_operand(self.stats)
        printer.print_string(props_text(self, self.NUMBERS))
        printer.print_string(f" scale {float_text(self.scale)}")
        if self.is_causal:
            printer.print_string(" causal")
        self._print_engine(printer)


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
    cols = prop_def(IntAttr)
    rows = prop_def(IntAttr)
    traits = section_traits()

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
            properties={"cols": IntAttr(cols), "rows": IntAttr(rows), "engine": engine},
        )

    def stage_name(self) -> str:
        return "argmax"

    def verify_(self) -> None:
        _fifo(self, self.x, "x")
        if _fifo(self, self.out, "the output").elt != IntegerType(32):
            raise TypeMismatch("argmax: pushes i32 indices")
        _f32_state(self, self.best, "the running maximum")

    @classmethod
    def parse(cls, parser: Parser) -> ArgmaxOp:
        x = parser.parse_operand(BUFFER)
        parser.parse_punctuation("->")
        out = parser.parse_operand(BUFFER)
        parser.parse_keyword("state")
        best = parser.parse_operand(BUFFER)
        p = parse_props(parser, ("cols", "rows"))
        op = cls(x, out, best, p["cols"].data, p["rows"].data, cls._parse_engine(parser))
        op.attributes.update(parse_attr_dict(parser))
        return op

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_operand(self.x)
        printer.print_string(" -> ")
        printer.print_operand(self.out)
        printer.print_string(" state ")
        printer.print_operand(self.best)
        printer.print_string(props_text(self, ("cols", "rows")))
        self._print_engine(printer)


COMPUTE_STAGES = (MapOp, RowReduceOp, RopeOp, AttentionOp, ArgmaxOp)
"""The compute stages of this module (place puts them on the compute engine)."""
