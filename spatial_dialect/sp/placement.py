"""Where a section runs and how its sites share operands: `sp.mesh` (the sites), `sp.sites` (a
site range and its work items), `sp.group` (multicast groups) and `sp.share` (sharing decisions
where the fabric has no multicast rectangles)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import ClassVar, cast

from xdsl.dialects.builtin import (
    AffineMapAttr,
    DenseArrayBase,
    DictionaryAttr,
    FlatSymbolRefAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolNameConstraint,
    SymbolRefAttr,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
    AffineMap,
)
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, traits_def
from xdsl.traits import SymbolOpInterface
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    InProgram,
    MemoryBufferOp,
    SectionOp,
    section_traits,
)
from spatial_dialect.sp.attrs import (
    BufferType,
    RectAttr,
)
from spatial_dialect.sp.enums import (
    GroupAxis,
    GroupAxisAttr,
    Sharing,
    SharingAttr,
)
from spatial_dialect.sp.formats import Offsets, Pair, Rect, SiteMap
from spatial_dialect.sp.syntax import (
    IntValue,
    PairValue,
    int_attr,
    int_prop,
    opt_int_prop,
    pair_attr,
    pair_prop,
)

# ── Placement ─────────────────────────────────────────────────────────────────────────────────


@irdl_op_definition
class MeshOp(SectionOp):
    """`sp.mesh 8x8 movement 2 nocs 2 local 1395424`: the sites a placed section runs on.

    The (sub-)mesh, each site's movement engines and NoCs, and the local memory each site can
    be configured with (bytes from its first usable address): the budget size-buffers lays out
    against.
    """

    name = "sp.mesh"
    size_attr = pair_prop("size")
    movement_engines_attr = int_prop("movement_engines")
    nocs_attr = int_prop("nocs")
    local_mem_attr = int_prop("local_mem")
    traits = section_traits()
    custom_directives = (Pair,)
    assembly_format = (
        "custom<Pair>($size) `movement` $movement_engines `nocs` $nocs `local` $local_mem"
        " attr-dict-with-keyword"
    )

    size = PairValue("size")
    """The sites of the mesh (x by y)."""
    movement_engines = IntValue("movement_engines")
    nocs = IntValue("nocs")
    local_mem = IntValue("local_mem")

    def __init__(self, mesh: tuple[int, int], movement_engines: int, nocs: int, local_mem: int):
        super().__init__(
            properties={
                "size": pair_attr(mesh),
                "movement_engines": int_attr(movement_engines),
                "nocs": int_attr(nocs),
                "local_mem": int_attr(local_mem),
            }
        )

    def verify_(self) -> None:
        if min(self.size) <= 0:
            raise VerifyException("sp.mesh: the mesh must have sites")


@irdl_op_definition
class SitesOp(SectionOp):
    """`sp.sites [0, 6]x[0, 7] first y * 8 + x count 1 block 16x16 sub_block 4x2 [memory {...}]`.

    A site range: sites that run the same instances with the same shapes (tt-metal's
    CoreRange). Per site, what differs is an argument: site (x, y) runs the `count` work items
    from `first(x, y)` (affine in x and y). Every item of the range has the stated block; with
    the sub-block it binds the size symbols (`bindings`). Once sized, `memory` gives each
    buffer's offset in the site's local memory (from its first usable byte) and, for an operand
    FIFO whose depth on this range is not the buffer's own, that depth (`in0 = 0 depth 8`): the
    credit loop asks for a depth per page size, and pages differ between ranges. A buffer's
    bytes are its depth here x page tiles x tile bytes under the range's bindings.
    """

    name = "sp.sites"
    rect = prop_def(RectAttr)
    first = prop_def(AffineMapAttr)
    count_attr = int_prop("count")
    block_attr = pair_prop("block")
    sub_block_attr = pair_prop("sub_block")
    memory = opt_prop_def(DictionaryAttr)
    traits = section_traits()
    custom_directives = (Rect, SiteMap, Pair, Offsets)
    assembly_format = (
        "custom<Rect>($rect) `first` custom<SiteMap>($first) `count` $count"
        " `block` custom<Pair>($block) `sub_block` custom<Pair>($sub_block)"
        " (`memory` custom<Offsets>($memory)^)? attr-dict-with-keyword"
    )

    count = IntValue("count")
    block = PairValue("block")
    sub_block = PairValue("sub_block")

    def __init__(
        self,
        rect: RectAttr,
        first: AffineMapAttr,
        count: int,
        block: tuple[int, int],
        sub_block: tuple[int, int],
        memory: dict[str, int] | None = None,
        depths: dict[str, int] | None = None,
    ):
        super().__init__(
            properties={
                "rect": rect,
                "first": first,
                "count": int_attr(count),
                "block": pair_attr(block),
                "sub_block": pair_attr(sub_block),
                "memory": None if memory is None else _memory_attr(memory, depths or {}),
            }
        )

    # Semantics ---------------------------------------------------------------------------------

    def first_item(self, x: int, y: int) -> int:
        # ~300k calls on a 70B step (the verifier visits every site of every range); xDSL's
        # AffineMap.eval walks the expression tree each time, so the range keeps the map's
        # compiled form beside the map it was compiled from (a new map compiles afresh).
        m = self.first.data
        cached = self.__dict__.get("_first_fn")
        if cached is None or cached[0] is not m:
            cached = self.__dict__["_first_fn"] = (m, _site_function(m))
        return cached[1](x, y)

    def items(self, x: int, y: int) -> range:
        first = self.first_item(x, y)
        return range(first, first + self.count)

    def bindings(self, k_block: int) -> dict[str, int]:
        """The size symbols of this range's sites."""
        (h, w), (sh, sw) = self.block, self.sub_block
        return {"h": h, "w": w, "sh": sh, "sw": sw, "kw": k_block, "subs": (h // sh) * (w // sw)}

    def offsets(self) -> dict[str, int]:
        """Each buffer's offset by label (none before size-buffers)."""
        return {k: _slot(v)[0] for k, v in self._memory().items()}

    def depths(self) -> dict[str, int]:
        """The depths this range's memory map states: only where they are not the buffer's own."""
        return {k: d for k, v in self._memory().items() if (d := _slot(v)[1]) is not None}

    def depth_of(self, buf: MemoryBufferOp, bindings: dict[str, int]) -> int:
        """The depth of `buf` on this range's sites: its memory map's, else the buffer's own
        under the range's `bindings`."""
        entry = self._memory().get(buf.label.data)
        depth = None if entry is None else _slot(entry)[1]
        return buf.depth.resolve(bindings)[0] if depth is None else depth

    def bytes_of(self, buf: MemoryBufferOp, bindings: dict[str, int]) -> int:
        """The bytes `buf` takes on this range's sites (at `depth_of`)."""
        return buf.bytes(bindings, self.depth_of(buf, bindings))

    def set_memory(self, offsets: dict[str, int], depths: dict[str, int]) -> None:
        """The memory map: offsets of every buffer, and the depths not the buffers' own."""
        self.properties["memory"] = _memory_attr(offsets, depths)

    def _memory(self) -> dict[str, Attribute]:
        return {} if self.memory is None else self.memory.data

    def verify_(self) -> None:
        m = self.first.data
        if m.num_dims != 2 or m.num_symbols != 0 or len(m.results) != 1:
            raise VerifyException(
                "sp.sites: `first` is one affine expression of the site's x and y"
            )
        (h, w), (sh, sw) = self.block, self.sub_block
        if self.count <= 0 or min(h, w, sh, sw) <= 0:
            raise VerifyException("sp.sites: count, block and sub-block must be positive")
        if h % sh or w % sw:
            raise VerifyException(
                f"sp.sites: the sub-block {sh}x{sw} does not tile the block {h}x{w}"
            )
        for label, value in self._memory().items():
            if not isinstance(value, IntegerAttr | DenseArrayBase) or (
                isinstance(value, DenseArrayBase)
                and (value.elt_type != i64 or len(value.get_values()) != 2)
            ):
                raise VerifyException(
                    f"sp.sites: the memory map gives {label} an offset, or an offset and a depth"
                )
            depth = _slot(value)[1]
            if depth is not None and depth < 1:
                raise VerifyException(
                    f"sp.sites: {label} has depth {depth} on sites {self.rect.text()}; a FIFO "
                    "holds at least one page"
                )


def _is_linear(e: AffineExpr) -> bool:
    """Whether `e` is a sum of constants and constant multiples of dims (no floordiv, mod or
    ceildiv, no symbols): then it equals c + a*x + b*y for all x, y."""
    if isinstance(e, AffineDimExpr | AffineConstantExpr):
        return True
    if not isinstance(e, AffineBinaryOpExpr):
        return False
    if e.kind == AffineBinaryOpKind.Mul:
        constant = isinstance(e.lhs, AffineConstantExpr) or isinstance(e.rhs, AffineConstantExpr)
        return constant and _is_linear(e.lhs) and _is_linear(e.rhs)
    return e.kind == AffineBinaryOpKind.Add and _is_linear(e.lhs) and _is_linear(e.rhs)


def _site_function(m: AffineMap) -> Callable[[int, int], int]:
    """`first` as a function of (x, y) with the map's own values: a linear map (every map the
    passes write) by its three coefficients, read off the map at (0, 0), (1, 0) and (0, 1);
    any other by the map's own evaluation."""
    if m.num_dims == 2 and len(m.results) == 1 and _is_linear(m.results[0]):
        c = m.eval([0, 0], [])[0]
        a, b = m.eval([1, 0], [])[0] - c, m.eval([0, 1], [])[0] - c
        return lambda x, y: c + a * x + b * y
    return lambda x, y: m.eval([x, y], [])[0]


def _memory_attr(offsets: dict[str, int], depths: dict[str, int]) -> DictionaryAttr:
    return DictionaryAttr(
        {
            k: IntegerAttr(v, i64)
            if k not in depths
            else DenseArrayBase.from_list(i64, (v, depths[k]))
            for k, v in offsets.items()
        }
    )


def _slot(value: Attribute) -> tuple[int, int | None]:
    """A memory map entry's offset and depth (None: the buffer's own)."""
    if isinstance(value, IntegerAttr):
        return value.value.data, None
    offset, depth = cast(DenseArrayBase[IntegerType], value).get_values()
    return offset, depth


# ── Multicast groups and sharing decisions ────────────────────────────────────────────────────


@irdl_op_definition
class GroupOp(SectionOp):
    """`sp.group @in0_rows %in0 rows [0, 7]x[0, 7] sender 0`: a family of multicast groups.

    `rows`: each row y of the rectangle is one group; its sender is the site (sender, y), its
    members the instances of the buffer on every site (x, y) of the row. `columns`: each column
    x, sender (x, sender). `every N` (rows or columns): each row (column) is cut into runs of N
    sites from the rectangle's edge, each run a group whose sender sits as far into it as
    `sender` into the first (split-K's slices of the grid: a row of one slice shares nothing
    with the next slice's). `line` (`sp.group @in0_line %in0 line [0, 7]x[0, 7] sites 60
    sender 0`): one group, the first `sites` sites of the rectangle walked row by row (x
    fastest), which is a line of sites folded onto the mesh; its sender is the `sender`-th of
    them. A load naming the group runs on the sender only: for the sender's t-th item it reads
    the block once from DRAM and writes each page to the same offset of the FIFO of every member
    that runs a t-th item, waiting until each of them has a free page; the members' own
    instances of that load do nothing. A member runs at most as many items as its sender, and
    its t-th item reads the same block of the operand as the sender's t-th (the verifier checks
    it), so each page it receives is the one its next item pops. Members agree on depth, page
    size and offset (GroupMemberMismatch).
    """

    name = "sp.group"
    sym_name = prop_def(SymbolNameConstraint())
    buffer = operand_def(BufferType)
    axis = prop_def(GroupAxisAttr)
    rect = prop_def(RectAttr)
    sites_attr = opt_int_prop("sites")
    every_attr = opt_int_prop("every")
    sender_attr = int_prop("sender")
    traits = traits_def(InProgram(), SymbolOpInterface())
    custom_directives = (Rect,)
    assembly_format = (
        "$sym_name $buffer $axis custom<Rect>($rect) (`sites` $sites^)? (`every` $every^)?"
        " `sender` $sender attr-dict-with-keyword"
    )

    sites = IntValue("sites")
    every = IntValue("every")
    sender = IntValue("sender")

    def __init__(
        self,
        name: str,
        buffer: SSAValue,
        axis: GroupAxis,
        rect: RectAttr,
        sender: int,
        sites: int | None = None,
        every: int | None = None,
    ):
        if axis == GroupAxis.LINE and sites is None:
            sites = rect.width * rect.height
        super().__init__(
            operands=[buffer],
            properties={
                "sym_name": StringAttr(name),
                "axis": GroupAxisAttr(axis),
                "rect": rect,
                "sites": int_attr(sites),
                "every": int_attr(every),
                "sender": int_attr(sender),
            },
        )

    def groups(self) -> Iterator[tuple[tuple[int, int], list[tuple[int, int]]]]:
        """Each group of the family: (sender site, member sites)."""
        x0, x1, y0, y1 = self.rect.bounds
        s = self.sender
        if self.axis.data == GroupAxis.LINE:
            members = self.rect.sites()[: self.line_sites]
            yield members[s], members
        elif self.axis.data == GroupAxis.ROWS:
            run = self.every or x1 - x0 + 1
            for y in range(y0, y1 + 1):
                for start in range(x0, x1 + 1, run):
                    yield (start + s - x0, y), [(x, y) for x in range(start, start + run)]
        else:
            run = self.every or y1 - y0 + 1
            for x in range(x0, x1 + 1):
                for start in range(y0, y1 + 1, run):
                    yield (x, start + s - y0), [(x, y) for y in range(start, start + run)]

    @property
    def line_sites(self) -> int:
        return self.sites if self.sites is not None else self.rect.width * self.rect.height

    def verify_(self) -> None:
        x0, x1, y0, y1 = self.rect.bounds
        name = self.sym_name.data
        if self.axis.data == GroupAxis.LINE:
            n, width = self.line_sites, self.rect.width
            # The rectangle is the one the line occupies: its last row is the only partial one.
            if not (self.rect.height - 1) * width < n <= self.rect.height * width:
                raise VerifyException(
                    f"sp.group @{name}: a line of {n} sites does not fill the rows of {self.rect.text()}"
                )
            if not 0 <= self.sender < n:
                raise VerifyException(
                    f"sp.group @{name}: sender {self.sender} is not one of the line's {n} sites"
                )
            return
        if self.sites is not None:
            raise VerifyException(f"sp.group @{name}: only a line group counts its sites")
        lo, hi = (x0, x1) if self.axis.data == GroupAxis.ROWS else (y0, y1)
        if self.every is not None:
            if self.every <= 0 or (hi - lo + 1) % self.every:
                raise VerifyException(
                    f"sp.group @{name}: runs of {self.every} sites do not cut its "
                    f"{self.axis.data.value} [{lo}, {hi}]"
                )
            hi = lo + self.every - 1
        if not lo <= self.sender <= hi:
            raise VerifyException(
                f"sp.group @{name}: sender {self.sender} lies outside the group's {self.axis.data.value} [{lo}, {hi}]"
            )


@irdl_op_definition
class ShareOp(SectionOp):
    """`sp.share @a broadcast consumers 8 bytes 65536 hops 7 saves 40 costs 12 copies 1 "why"`.

    How one shared operand panel reaches the items that read it where the fabric has no
    multicast rectangles (docs/passes.md#fuse-broadcast-or-replicate-on-the-rdu): `broadcast` fetches it once and fans it out over the
    fabric, `replicated` lets each consumer fetch its own copy. The numbers are the decision's:
    the panel's bytes, its consumers, the hops a fan-out crosses, the DRAM cycles a broadcast
    saves and the fabric cycles it costs, and the copies fetched from DRAM. Every consumer
    receives the same panel either way, so a simulator's data does not change; the bytes the
    report and the roofline count do.
    """

    name = "sp.share"
    tensor = prop_def(FlatSymbolRefAttr)
    sharing = prop_def(SharingAttr)
    consumers_attr = int_prop("consumers")
    bytes_attr = int_prop("bytes")
    hops_attr = int_prop("hops")
    dram_cycles_saved_attr = int_prop("dram_cycles_saved")
    fabric_cycles_added_attr = int_prop("fabric_cycles_added")
    copies_attr = int_prop("copies")
    why = prop_def(StringAttr)
    traits = section_traits()
    assembly_format = (
        "$tensor $sharing `consumers` $consumers `bytes` $bytes `hops` $hops"
        " `saves` $dram_cycles_saved `costs` $fabric_cycles_added `copies` $copies $why"
        " attr-dict-with-keyword"
    )

    consumers = IntValue("consumers")
    bytes = IntValue("bytes")
    hops = IntValue("hops")
    dram_cycles_saved = IntValue("dram_cycles_saved")
    fabric_cycles_added = IntValue("fabric_cycles_added")
    copies = IntValue("copies")

    FIELDS: ClassVar = (
        ("consumers", "consumers"),
        ("bytes", "bytes"),
        ("hops", "hops"),
        ("saves", "dram_cycles_saved"),
        ("costs", "fabric_cycles_added"),
        ("copies", "copies"),
    )

    def __init__(self, tensor: str, sharing: Sharing, numbers: dict[str, int], why: str):
        props: dict[str, Attribute] = {
            "tensor": SymbolRefAttr(tensor),
            "sharing": SharingAttr(sharing),
            "why": StringAttr(why),
        }
        props.update({field: IntegerAttr(numbers[field], i64) for _, field in self.FIELDS})
        super().__init__(properties=props)
