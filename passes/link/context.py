"""What linking one tg op needs besides the op: the function's tensor names, the prelude's layouts
and the bridges that apply them, the target, the storage format; and the builder of a section.

The layout agreement (docs/passes.md#link-one-bridge-per-tensor) lives here because it is a property of naming: a section says
which layout it wants each tensor in (`LinkContext.tensor(..., want=...)`); where that is not
the layout the prelude decided for the whole function, the section reads or writes the tensor's
TWIN (`x__rows` or `x__tiled`) instead, and ONE bridge section (tilize or untilize) converts
between the two: before the section for a tensor it reads, after it for one it writes. A twin is
made once and every later reader of that layout shares it. A tensor of one row is the same tile
row in both layouts and is never bridged; carried state (a cache `tg.set_rows` updates in place)
has one layout, tied by the prelude, so no section ever asks for the other.

Names: every DRAM tensor is named after the function's value (its SSA name, made unique); a cache
updated in place by `tg.set_rows` and the value the update returns are ONE DRAM tensor, so the
result takes the cache's name (`carried_names`); section names are the tensor they write, made
unique within the module.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseArrayBase,
    Float32Type,
    IntegerType,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineExpr

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.prelude import Interval, Prelude, rows_of, type_interval
from spatial_dialect.sp import (
    AccessAttr,
    Layout,
    Phase,
    SectionKind,
    SizesAttr,
    SizeTerm,
    TensorRole,
    loop_var,
)
from spatial_dialect.sp.errors import NotLowered, UnsupportedDatatype
from spatial_dialect.sp.kinds import Q8_0_FORMATS
from spatial_dialect.sp.program import type_text
from spatial_dialect.targets import Target, TargetError
from spatial_dialect.targets.gemm import ceil_div

F32 = Float32Type()

R0, C0, K0, TI, TJ = (loop_var(v) for v in ("r0", "c0", "k0", "ti", "tj"))
ZERO = AffineExpr.constant(0)

BLOCK = AccessAttr.of(R0, C0, "h", "w")
"""The item's block: what a map reads of each full operand."""
SUB_BLOCK = AccessAttr.of(R0 + TI, C0 + TJ, "sh", "sw")
"""One sub-block of the item: what a compute stage pushes and the store writes."""
ROW_OPERAND = AccessAttr.of(ZERO, C0, 1, "w")
"""A 1 x C operand broadcast over rows: the item's columns of its one row."""

BRIDGE_OPS = {Layout.TILED: "tilize", Layout.ROWS: "untilize"}
"""The bridge section that produces a tensor in each layout."""


def valid(value: SSAValue) -> tuple[int, int]:
    """The real (unpadded) rows and columns of a tensor value."""
    shape = value.type.get_shape()  # type: ignore[attr-defined]
    return (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])


def value_names(function: func.FuncOp, ops: Sequence[Operation]) -> dict[SSAValue, str]:
    """DRAM tensor names: the function's own value names where it has them, unique."""
    names: dict[SSAValue, str] = {}
    taken: set[str] = set()
    values = [*function.body.block.args, *(r for op in ops for r in op.results)]
    for i, v in enumerate(values):
        base = v.name_hint or (f"arg{i}" if i < len(function.body.block.args) else f"t{i}")
        name, n = base, 1
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        taken.add(name)
        names[v] = name
    return names


def updates_in_place(
    op: tg.SetRowsOp | tg.BatchSetRowsOp,
    results: frozenset[SSAValue],
    order: dict[Operation, int] | None = None,
) -> bool:
    """Whether a `tg.set_rows` may update its cache in place: nothing reads the old cache after
    it (in program order) and the function does not return the old cache. `order`: each op of
    its block by position, if the caller has it (80 layers ask 160 times)."""
    cache = op.cache
    if cache in results:
        return False
    if order is None:
        order = {o: i for i, o in enumerate(op.parent_block().ops)}  # type: ignore[union-attr]
    return all(order[use.operation] <= order[op] for use in cache.uses)


def carried_names(
    ops: Sequence[Operation], names: dict[SSAValue, str], results: frozenset[SSAValue]
) -> None:
    """A cache updated in place and its updated value are one DRAM tensor: the result takes the
    cache's name (carried state: one tensor, one layout, never bridged)."""
    orders: dict[object, dict[Operation, int]] = {}
    for op in ops:
        if not isinstance(op, tg.SetRowsOp | tg.BatchSetRowsOp):
            continue
        block = op.parent_block()
        if block not in orders:
            orders[block] = {o: i for i, o in enumerate(block.ops)}  # type: ignore[union-attr]
        if updates_in_place(op, results, orders[block]):
            names[op.res] = names[op.cache]


Q8_0_VIEW = "q8_0"
"""The storage format of an activation's Q8_0 view: blocks of 32 along each row (along K);
`q8_0_ref` for a product that quantizes by ggml's reference rule (its `activation`)."""


def q8_0_format(axis: int) -> str:
    """The Q8_0 storage format whose blocks run along `axis` of the values (sp/kinds.py)."""
    return next(f for f, a in Q8_0_FORMATS.items() if a == axis)


@dataclass(frozen=True)
class Relayout:
    """A layout bridge: read `src` in `src_layout`, write `dst` in `dst_layout` (link/maps.py)."""

    value: SSAValue
    src: str
    src_layout: Layout
    dst: str
    dst_layout: Layout


@dataclass(frozen=True)
class Q8View:
    """The Q8_0 view of `value` (read as `src`), named `view`, stored in `fmt` (link/quant.py)."""

    value: SSAValue
    src: str
    view: str
    fmt: str = Q8_0_VIEW


@dataclass
class Bridges:
    """The twins made so far ((value, layout or "q8_0") -> twin name) and the bridges the op
    being linked still needs: `before` (a twin or a Q8_0 view of a tensor it reads) and `after`
    (the real tensor of a twin it writes)."""

    twins: dict[tuple[SSAValue, Layout | str], str] = field(default_factory=dict)
    before: list[Relayout | Q8View] = field(default_factory=list)
    after: list[Relayout | Q8View] = field(default_factory=list)

    def take(self) -> tuple[list, list]:
        before, after = self.before, self.after
        self.before, self.after = [], []
        return before, after


@dataclass(frozen=True)
class LinkContext:
    """What linking one op needs besides the op: names, layouts, results, the chip, the format."""

    names: dict[SSAValue, str]
    prelude: Prelude
    results: frozenset[SSAValue]
    target: Target
    fmt: str
    bridges: Bridges = field(default_factory=Bridges)
    sections: set[str] = field(default_factory=set)
    kv_splits: int | None = None  # the `kv-splits` option: a forced count of flash-decoding splits
    # flash decoding's priced split counts by the shape of the attention (a stacked model's
    # layers price one shape once)
    split_counts: dict[tuple, tuple[int, bool, str]] = field(default_factory=dict)
    writes: dict[str, int] = field(default_factory=dict)
    """How many linked ops have written each DRAM tensor name so far (a value is its name and
    this count: what names an activation's Q8_0 view)."""
    per_chip: bool = False
    """Linking a per-chip function (one chip of a mesh deployment, docs/mesh.md)."""
    chip_firsts: dict[str, int] = field(default_factory=dict)
    """The inputs a linked op added for the host to supply per chip: name -> H, chip c's value
    c x H (a tg.moe's first held expert, link/moe.py); the entry lists them after the
    function's arguments (steps.chip_inputs)."""

    @property
    def tile(self) -> tuple[int, int]:
        return self.target.tile_rows, self.target.tile_cols

    def tiles(self, rows: int, cols: int) -> tuple[int, int]:
        tr, tc = self.tile
        return ceil_div(rows, tr), ceil_div(cols, tc)

    def storage(self, dtype: str) -> str | None:
        """The storage format a tensor of `dtype` takes under the `format` option (bf16 only)."""
        return self.fmt if dtype == "bf16" and self.fmt != "bf16" else None

    def layout(self, value: SSAValue) -> Layout:
        return self.prelude.layout(value)

    def chip_first(self, name: str, held: int) -> sp.TensorOp:
        """The [1, 1] i32 input `name` whose value on chip c is c x `held` (chip_firsts)."""
        self.chip_firsts[name] = held
        return self.scratch(name, (1, 1), IntegerType(32), TensorRole.INPUT)

    def section_name(self, base: str) -> str:
        """A section name not used yet in this module: the tensor it writes, made unique."""
        name, n = base, 1
        while name in self.sections:
            name, n = f"{base}_{n}", n + 1
        self.sections.add(name)
        return name

    def tensor(self, value: SSAValue, role: TensorRole, want: Layout | None = None) -> sp.TensorOp:
        """The DRAM tensor of `value` as the section sees it. `want`: the layout the section
        needs it in, where it has one; when the prelude decided the other, the section gets the
        twin and the bridge is recorded (module docstring)."""
        t = value.type
        assert isinstance(t, TensorType)
        name, layout = self.names[value], self.layout(value)
        if want is not None and want != layout and rows_of(value) > 1:
            name = self._twin(value, name, layout, want, role)
            layout = want
            if role == TensorRole.OUTPUT:
                role = TensorRole.SCRATCH  # the bridge writes the function's result
        elif role == TensorRole.OUTPUT and value not in self.results:
            role = TensorRole.SCRATCH
        shape = t.get_shape()
        rows, cols = (1, shape[0]) if len(shape) == 1 else (shape[0], shape[1])
        op = sp.TensorOp(
            name, t, self.tiles(rows, cols), role, layout, self.storage(type_text(t.element_type))
        )
        interval = self.prelude.intervals.get(value)
        if interval is not None:
            op.attributes["interval"] = DenseArrayBase.from_list(i64, [interval.lo, interval.hi])
        return op

    def _twin(
        self, value: SSAValue, name: str, decided: Layout, want: Layout, role: TensorRole
    ) -> str:
        key = (value, want)
        if key in self.bridges.twins:
            return self.bridges.twins[key]
        twin = f"{name}__{want.value}"
        self.bridges.twins[key] = twin
        if role == TensorRole.INPUT:
            self.bridges.before.append(Relayout(value, name, decided, twin, want))
        else:
            self.bridges.after.append(Relayout(value, twin, want, name, decided))
        return twin

    def q8_0_view(self, value: SSAValue, fmt: str = Q8_0_VIEW) -> sp.TensorOp:
        """docs/passes.md#link-one-q8_0-view-per-value: the Q8_0 view a product reads `value`
        through, as its section declares it. ONE view per value and format (`fmt`: the rounding
        rule, `q8_0` or `q8_0_ref`), named for the value's tensor and the count of writes to that
        name before it (`x__q8_0_1`, `x__q8_0_ref_1`), made by one quantize section before its
        first reader and shared by every later one, like a layout twin."""
        key = (value, fmt)
        if key not in self.bridges.twins:
            name = self.names[value]
            view = f"{name}__{fmt}_{self.writes.get(name, 0)}"
            self.bridges.twins[key] = view
            self.bridges.before.append(Q8View(value, name, view, fmt))
        return self.q8_0_tensor(value, self.bridges.twins[key], TensorRole.INPUT, fmt)

    def q8_0_tensor(
        self, value: SSAValue, name: str, role: TensorRole, fmt: str, scales: str | None = None
    ) -> sp.TensorOp:
        """A Q8_0 tensor of `value`'s shape (i8 values stored in `fmt`) in `value`'s layout."""
        t = value.type
        assert isinstance(t, TensorType)
        rows, cols = valid(value)
        i8 = TensorType(IntegerType(8), t.get_shape())
        return sp.TensorOp(name, i8, self.tiles(rows, cols), role, self.layout(value), fmt, scales)

    def wrote(self, value: SSAValue) -> None:
        """`value` has been written (its op is linked)."""
        name = self.names[value]
        self.writes[name] = self.writes.get(name, 0) + 1

    def scratch(
        self,
        name: str,
        shape: tuple[int, int],
        elt: Attribute,
        role: TensorRole = TensorRole.SCRATCH,
    ) -> sp.TensorOp:
        """A tensor of the compiler's own between two sections of one op (tiled: tiles in,
        tiles out): SCRATCH where a section writes it, INPUT where the next reads it."""
        return sp.TensorOp(name, TensorType(elt, shape), self.tiles(*shape), role, Layout.TILED)

    def check_dtype(self, op: Operation, dtype: str, matmul: bool = False) -> None:
        """Refuse a datatype (or storage format) the chip does not compute in, by name."""
        try:
            storage = self.storage(dtype) or dtype
            self.target.tile_bytes(storage)
            if matmul:
                self.target.matmul_tile_cycles(dtype)
        except TargetError as err:
            raise UnsupportedDatatype(f"{op.name}: {err}") from None


def head_tiles(op: Operation, ctx: LinkContext, dims: dict[str, int], form: str) -> list[int]:
    """The tiles of each head width in `dims` (what -> columns), refused by name (NotLowered)
    where one does not fill whole tiles: `form` says why the section needs them whole."""
    tc = ctx.tile[1]
    for what, n in dims.items():
        if n % tc:
            raise NotLowered(f"{op.name}: {what} {n} does not fill whole {tc}-column tiles; {form}")
    return [n // tc for n in dims.values()]


INT_DTYPES = ("i8", "i32")
"""The integer datatypes a chip may compute a product in, narrowest first."""


def operand_precision(
    op: Operation, ctx: LinkContext, operands: Sequence[SSAValue]
) -> tuple[str, str]:
    """docs/passes.md#link-integer-operand-precision-from-intervals: an integer product's operand precision is the narrowest that holds its
    interval. The datatype the chip computes `operands` in: the narrowest integer datatype the
    target has whose width holds every operand's proven interval (the prelude's, or its element
    type's range where it has none); and the reason, to record on the section. Refused, by name
    and with the interval, where no datatype of the target holds it."""
    interval: Interval | None = None
    for v in operands:
        t = v.type
        assert isinstance(t, TensorType) and isinstance(t.element_type, IntegerType)
        iv = ctx.prelude.intervals.get(v) or type_interval(t.element_type)
        interval = iv if interval is None else interval.hull(iv)
    assert interval is not None
    target = ctx.target
    for dtype in INT_DTYPES:
        if target.has_dtype(dtype) and interval.bits() <= int(dtype[1:]):
            skipped = [
                d for d in INT_DTYPES[: INT_DTYPES.index(dtype)] if interval.bits() <= int(d[1:])
            ]
            why = f"{dtype}: interval {interval} fits"
            if skipped:
                why += f"; {target.name} has no {', '.join(skipped)}"
            return dtype, why
    raise UnsupportedDatatype(
        f"{op.name}: no datatype of target {target.name} holds the operands' interval "
        f"{interval} ({interval.bits()} bits); it has {', '.join(target.datatypes)}"
    )


class ProgramBuilder:
    """One section (an sp.program) under construction: its tensors (each declared once), buffers and stages,
    in the order a section lists them."""

    def __init__(self, ctx: LinkContext, op: Operation | str):
        self.ctx = ctx
        self.op = op
        self.source = op if isinstance(op, str) else op.name
        self.tensors: dict[str, sp.TensorOp] = {}
        self.buffers: list[Operation] = []
        self.stages: list[Operation] = []
        self.attributes: dict[str, Attribute] = {}

    def _add(self, t: sp.TensorOp) -> sp.TensorOp:
        if t.parent is not None:  # declared by another section already: each declares its own
            t = t.clone()
        # A Q8_0 tensor's i8 values are bytes the chip moves, not a datatype it computes in:
        # what it computes in is targets.quant's decision (link/quant.py).
        if not isinstance(self.op, str) and t.q8_0_axis is None:
            self.ctx.check_dtype(self.op, type_text(t.element_type))
        return self.tensors.setdefault(t.sym_name.data, t)

    def input(self, value: SSAValue, want: Layout | None = None, check: bool = True) -> sp.TensorOp:
        """`check=False`: the section converts the tensor on load (the FIFO's datatype is the
        one the chip computes in), so the DRAM element type need not be one the chip has."""
        t = self.ctx.tensor(value, TensorRole.INPUT, want)
        if not check:
            return self.tensors.setdefault(t.sym_name.data, t)
        return self._add(t)

    def output(self, value: SSAValue, want: Layout | None = None) -> sp.TensorOp:
        return self._add(self.ctx.tensor(value, TensorRole.OUTPUT, want))

    def declare(self, t: sp.TensorOp) -> sp.TensorOp:
        return self._add(t)

    def fifo(
        self, label: str, elt_of: sp.TensorOp | Attribute, *page: SizeTerm, depth: int = 2
    ) -> SSAValue:
        """A FIFO of pages of `page` tiles holding what `elt_of` holds (a tensor: its element
        type and storage format; an element type: that)."""
        if isinstance(elt_of, sp.TensorOp):
            elt, fmt, storage = (
                elt_of.element_type,
                elt_of.format.data if elt_of.format else None,
                elt_of.storage,
            )
        else:
            elt, fmt, storage = elt_of, None, type_text(elt_of)
        if not isinstance(self.op, str):
            self.ctx.check_dtype(self.op, storage)
        label = self.unique_label(label)
        buf = sp.FifoOp(
            label,
            SizesAttr.of(depth),
            SizesAttr.of(*page),
            elt,
            self.ctx.target.tile_bytes(storage),
            fmt,
        )
        return self._buffer(buf, label)

    def interm(self, label: str, elt: Attribute, *page: SizeTerm) -> SSAValue:
        """State a compute stage keeps in local memory between K blocks (one page)."""
        if not isinstance(self.op, str):
            self.ctx.check_dtype(self.op, str(elt))
        buf = sp.IntermOp(
            label,
            SizesAttr.of(1),
            SizesAttr.of(*page),
            elt,
            self.ctx.target.tile_bytes(str(elt)),
        )
        return self._buffer(buf, label)

    def acc(self, label: str, elt: Attribute, *page: SizeTerm) -> SSAValue:
        return self._buffer(sp.AccOp(label, SizesAttr.of(*page), elt), label)

    def unique_label(self, label: str) -> str:
        """`label`, or `label_2`, `label_3`... when the section already has a buffer of that
        name: one value read twice by an op (layer_norm %x, %w, %w) gets a FIFO per read."""
        taken = {b.label.data for b in self.buffers if hasattr(b, "label")}
        if label not in taken:
            return label
        n = 2
        while f"{label}_{n}" in taken:
            n += 1
        return f"{label}_{n}"

    def _buffer(self, buf: sp.BufferOp, label: str) -> SSAValue:
        buf.res.name_hint = label
        self.buffers.append(buf)
        return buf.res

    def load(
        self,
        tensor: sp.TensorOp,
        access: AccessAttr,
        dst: SSAValue,
        index: tuple[str, int] | None = None,
    ) -> None:
        """`index`: an indexed load's (id tensor, block tile rows), sp.LoadOp."""
        self.stages.append(sp.LoadOp(tensor.sym_name.data, access, dst, index=index))

    def store(self, src: SSAValue, tensor: sp.TensorOp, access: AccessAttr) -> None:
        self.stages.append(sp.StoreOp(src, tensor.sym_name.data, access))

    def stage(self, op: Operation) -> None:
        self.stages.append(op)

    def why(self, key: str, text: str) -> None:
        """A decision link made for this section and its reason, recorded on it."""
        self.attributes[key] = StringAttr(text)

    def build(self, name: str, kind: SectionKind) -> sp.ProgramOp:
        """The section, named after the tensor it writes, of the kind its linker made."""
        program = sp.ProgramOp(
            self.ctx.section_name(name),
            self.source,
            kind,
            Phase.LINKED,
            self.ctx.tile,
            [*self.tensors.values(), *self.buffers, *self.stages],
        )
        program.attributes.update(self.attributes)
        return program
