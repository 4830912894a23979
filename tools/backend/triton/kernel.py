"""A section as the Triton printer sees it (`Kernel`): its tensors, access patterns, per-program
site and item tables and block sizes, all read off the sized IR; the refusal and small helpers."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.utils.exceptions import DiagnosticException

from spatial_dialect import sp
from spatial_dialect.sp.attrs import LOOP_VARS, SIZE_SYMBOLS
from spatial_dialect.sp.enums import SectionKind
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.tools.backend.index import Ix, from_affine, ix
from spatial_dialect.tools.backend.names import ident
from spatial_dialect.tools.backend.triton.text import (
    INDENT,
    below,
    conj,
    offset,
    par,
    wrap,
)
from spatial_dialect.tools.interpreters.q8_0 import LEVELS, RULES

NUM_WARPS = 4


class TritonNotEmitted(DiagnosticException):
    """A section, stage or datatype the Triton backend has no kernel for: named, with why."""

    def __init__(self, section: str, what: str):
        self.section, self.what = section, what
        super().__init__(f"TritonNotEmitted: section @{section}: {what}")


# ── Small helpers ─────────────────────────────────────────────────────────────────────────────


def pow2(n: int) -> int:
    return 1 << max(0, (max(1, n) - 1).bit_length())


TORCH_DTYPES = {
    "bf16": "torch.bfloat16",
    "f16": "torch.float16",
    "f32": "torch.float32",
    "i8": "torch.int8",
    "i32": "torch.int32",
}


def scales_of(t: sp.TensorOp) -> str | None:
    """The DRAM tensor holding a Q8_0 tensor's f16 scales: the argument its `scales` names, or
    (a view, gathered rows: no argument) one named after it; None for any other storage. The
    values and the scales are two torch tensors, passed to a kernel side by side."""
    if t.q8_0_axis is None:
        return None
    return t.scales_name or f"{t.sym_name.data}.scales"


def scales_shape(t: sp.TensorOp) -> tuple[int, int]:
    """The held shape of a Q8_0 tensor's scales: its own with the block axis divided by 32."""
    dims = list(t.shape2d)
    assert t.q8_0_axis is not None
    dims[t.q8_0_axis] //= Q8_0_BLOCK
    return dims[0], dims[1]


@dataclass
class Access:
    """An access pattern read for one item: origin tile expressions (in r0, c0, k0; the
    sub-block variables at 0, which covers the whole block when the extent is the sub-block)
    and the extent in tiles, as expressions of h, w, kw and as its largest value over ranges."""

    row: Ix
    col: Ix
    rows: Ix
    cols: Ix
    max_rows: int
    max_cols: int
    vars: set[str]


def access(acc: sp.AccessAttr, ranges: list[dict[str, int]]) -> Access:
    dims = [v if v in ("r0", "c0", "k0") else 0 for v in LOOP_VARS]
    row, col = (from_affine(e, dims) for e in acc.origin.data.results)
    vars_ = acc.loop_vars()
    exprs = list(acc.extent.exprs)
    if vars_ & {"ti", "tj"}:  # the store of sub-blocks covers the item's whole block
        rows, cols = ix("h"), ix("w")
        max_rows = max(b["h"] for b in ranges)
        max_cols = max(b["w"] for b in ranges)
    else:
        rows, cols = (from_affine(e, (), SIZE_SYMBOLS) for e in exprs)
        max_rows = max(acc.extent.resolve(b)[0] for b in ranges)
        max_cols = max(acc.extent.resolve(b)[1] for b in ranges)
    return Access(row, col, rows, cols, max_rows, max_cols, vars_)


_PROBE = {"r0": 7, "c0": 11, "k0": 13}
"""Loop variables at values no two distinct origin expressions of a pattern agree on."""


def is_origin(a: Access, row: Ix | int | str, col: Ix | int | str) -> bool:
    """Whether the pattern's origin is exactly (row, col), loop variables by name."""
    return (a.row.evaluate(_PROBE), a.col.evaluate(_PROBE)) == (
        ix(row).evaluate(_PROBE),
        ix(col).evaluate(_PROBE),
    )


_UNIT_STRIDE = re.compile(r" \* 1(?![\w.])")
"""A product by the literal 1: a row stride of a one-column tensor (an R x 1 routing weight, an
id column) that the templates print as `rows * C`. `*` binds tighter than every operator the
kernels print beside it, so dropping it changes no value."""


@dataclass
class Scratch:
    """A DRAM tensor no sp.tensor declares that a section's kernels pass values through (split-K's
    partial sums): the host allocates it beside the program's tensors."""

    name: str
    held: tuple[int, int]
    elt: str
    declared: tuple[int, ...]


# ── One section ───────────────────────────────────────────────────────────────────────────────


@dataclass
class Kernel:
    """One section as a Triton kernel: its program, tensors, per-program item tables and
    block sizes, all read off the sized IR."""

    program: sp.ProgramOp
    name: str
    fn: str
    tile: tuple[int, int]
    tensors: list[sp.TensorOp]
    ranges: list[dict[str, int]]
    sites: list[tuple[int, int]]
    items: list[tuple[int, int, int, int]]
    k_tiles: int
    k_block: int
    block: tuple[int, int]
    num_stages: int
    k_slices: int = 1
    k_slice_tiles: int = 0
    blocks: int = 0
    """Split-K's K slices, K tiles a slice and items a slice (blocks of the result)."""
    lines: list[str] = field(default_factory=list)
    scratch: list[Scratch] = field(default_factory=list)
    checks: list[str] = field(default_factory=list)
    """Host-side range checks of runtime indices, run before the launch."""
    depth: int = 2
    """The indent `emit` writes at by default: 2, the item loop's body; 3 inside a branch of it
    (split-K's adder, splitk.py)."""

    def refuse(self, what: str) -> TritonNotEmitted:
        return TritonNotEmitted(self.name, what)

    def shape(self, tensor: str) -> tuple[int, int]:
        t = self.program.tensor(tensor)
        dims = t.type.get_shape()
        return (1, dims[0]) if len(dims) == 1 else (dims[0], dims[1])

    def elt(self, tensor: str) -> str:
        return str(self.program.tensor(tensor).type.get_element_type())

    def cast(self, value: str, tensor: str) -> str:
        """`value` rounded once to `tensor`'s element type, as a store into it writes it; bf16
        through the module's `to_bf16` (printer.py: TO_BF16), which rounds as the GPU does even
        under Triton's interpreter."""
        if self.elt(tensor) == "bf16":
            return f"to_bf16({value})"
        return f"{par(value)}.to({self.arg(tensor)}.dtype.element_ty)"

    def arg(self, tensor: str) -> str:
        return "T_" + ident(tensor)

    def q8(self, tensor: str) -> int | None:
        """The axis a Q8_0 tensor's blocks of 32 run along; None for any other storage."""
        return self.program.tensor(tensor).q8_0_axis

    def scales_arg(self, tensor: str) -> str:
        return "S_" + ident(tensor)

    def params(self, only: str | None = None) -> list[tuple[str, str, str]]:
        """(DRAM tensor, kernel parameter, element type) of every pointer the kernel takes, in
        order: each tensor (or the one named `only`), a Q8_0 tensor's f16 scales right after
        its values, then the scratch tensors."""
        out = []
        for t in self.tensors:
            name = t.sym_name.data
            if only is not None and name != only:
                continue
            out.append((name, self.arg(name), str(t.type.get_element_type())))
            scales = scales_of(t)
            if scales is not None:
                out.append((scales, self.scales_arg(name), "f16"))
        if only is None:
            out += [(t.name, self.arg(t.name), t.elt) for t in self.scratch]
        return out

    def scale_at(self, tensor: str, row: str, col: str) -> str:
        """The offset, in the scales of a Q8_0 tensor, of the scale of its element (row, col)
        (expressions, broadcast as the caller writes them)."""
        C = self.shape(tensor)[1]
        if self.q8(tensor) == 1:
            return f"{par(row)} * {C // Q8_0_BLOCK} + {par(col)} // {Q8_0_BLOCK}"
        return f"{par(row)} // {Q8_0_BLOCK} * {C} + {col}"

    def scale_of_block(self, tensor: str, row: str, block: str) -> str:
        """The offset of the scale of block `block` (counted along the row) of row `row`, in the
        scales of a Q8_0 tensor blocked along its rows."""
        return f"{par(row)} * {self.shape(tensor)[1] // Q8_0_BLOCK} + {block}"

    def load_of(self, buffer: sp.BufferOp) -> sp.LoadOp:
        for load in self.program.ops_of(sp.LoadOp):
            if sp.buffer_of(load.dst) is buffer:
                return load
        raise self.refuse(f"buffer {buffer.label.data} is filled by no sp.load")

    def store_of(self, buffer: sp.BufferOp) -> sp.StoreOp:
        for store in self.program.ops_of(sp.StoreOp):
            if sp.buffer_of(store.src) is buffer:
                return store
        raise self.refuse(f"buffer {buffer.label.data} is drained by no sp.store")

    def emit(self, text: str, indent: int | None = None) -> None:
        """Appends `text`'s lines at `indent` levels (default `depth`: inside the kernel's item
        loop), each wrapped to the printed width."""
        indent = self.depth if indent is None else indent
        for line in text.strip("\n").split("\n"):
            line = _UNIT_STRIDE.sub("", line)
            self.lines.extend(wrap(INDENT * indent + line) if line else [""])

    # -- blocks of DRAM ------------------------------------------------------------------------

    def block_mask(self, var: str, a: Access, pr: int, pc: int, R: int, C: int) -> str:
        """Emits `{var}_r`, `{var}_c` (the block's rows and columns) and their masks; returns the
        block's 2-D mask: the pattern's extent and the tensor's bounds."""
        th, tw = self.tile
        rows = conj(below(f"tl.arange(0, {pr})", a.rows * th, pr), f"{var}_r < {R}")
        cols = conj(below(f"tl.arange(0, {pc})", a.cols * tw, pc), f"{var}_c < {C}")
        self.emit(
            f"""
{var}_r = {offset(a.row * th, f"tl.arange(0, {pr})")}
{var}_c = {offset(a.col * tw, f"tl.arange(0, {pc})")}
{var}_rm = {rows}
{var}_cm = {cols}
""",
        )
        return f"{var}_rm[:, None] & {var}_cm[None, :]"

    def store_mask(self, store: sp.StoreOp) -> str:
        """Emits the rows, columns and masks of a store's block (`o_r`, `o_c`, ...) before the
        store (`block_store(..., masked=True)`), for a body that reads the same block."""
        th, tw = self.tile
        a = access(store.access, self.ranges)
        R, C = self.shape(store.tensor.root_reference.data)
        mask = self.block_mask("o", a, pow2(a.max_rows * th), pow2(a.max_cols * tw), R, C)
        self.emit(f"o_m = {mask}")
        return "o_m"

    def block_load(self, var: str, tensor: str, a: Access, widen: bool = True) -> None:
        """`var` = the [rows x cols] tiles at the pattern's origin, masked to the extent and
        the tensor, widened to f32 (a Q8_0 tensor's elements: f32(scale) * value, exact);
        `widen=False` keeps the tensor's own element type (an integer map's exact operand)."""
        th, tw = self.tile
        R, C = self.shape(tensor)
        pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
        mask = self.block_mask(var, a, pr, pc, R, C)
        self.emit(f"{var}_m = {mask}")
        value = (
            f"tl.load({self.arg(tensor)} + {var}_r[:, None] * {C} + {var}_c[None, :], "
            f"mask={var}_m, other=0)" + (".to(tl.float32)" if widen else "")
        )
        if self.q8(tensor) is not None:
            at = self.scale_at(tensor, f"{var}_r[:, None]", f"{var}_c[None, :]")
            scale = f"tl.load({self.scales_arg(tensor)} + {at}, mask={var}_m, other=0)"
            self.emit(f"{var}_d = {scale}.to(tl.float32)")
            value += f" * {var}_d"
        self.emit(f"{var} = {value}")

    def block_store(
        self,
        value: str,
        store: sp.StoreOp,
        extra_mask: str = "",
        scales: str | None = None,
        masked: bool = False,
    ) -> None:
        """Stores `value` (the [rows x cols] block of the pattern) at the pattern's origin,
        rounded once to the tensor's type. Into a Q8_0 tensor (blocks along rows), `scales` is
        the block's f16 scales ([rows x cols / 32], a gather's rows) or, absent, the float
        block is quantized here (pushing to a Q8_0 FIFO is what quantizes: docs/sp.md).
        `masked`: the caller emitted the block's rows, columns and mask `o_m` (`store_mask`)."""
        assert not (masked and extra_mask), "a store under a mask of its own makes its own o_m"
        th, tw = self.tile
        tensor = store.tensor.root_reference.data
        a = access(store.access, self.ranges)
        R, C = self.shape(tensor)
        pr, pc = pow2(a.max_rows * th), pow2(a.max_cols * tw)
        axis = self.q8(tensor)
        if axis is not None and (axis != 1 or extra_mask or tw % Q8_0_BLOCK):
            raise self.refuse(
                f"a store into @{tensor} stored {self.program.tensor(tensor).storage} (blocks "
                "of 32 down its columns, or under a mask) has no Triton form"
            )
        if axis is not None and scales is None:
            value, scales = self.quantize(value, pr, pc, RULES[self.program.tensor(tensor).storage])
        if not masked:
            mask = self.block_mask("o", a, pr, pc, R, C)
            self.emit(f"o_m = {conj(mask, extra_mask or None)}")
        out = self.arg(tensor)
        self.emit(
            f"""
o_at = {out} + o_r[:, None] * {C} + o_c[None, :]
tl.store(o_at, {self.cast(value, tensor)}, mask=o_m)
""",
        )
        if axis is not None:
            pq, nq = pc // Q8_0_BLOCK, C // Q8_0_BLOCK
            per = tw // Q8_0_BLOCK
            q_cols = conj(below(f"tl.arange(0, {pq})", a.cols * per, pq), f"o_q < {nq}")
            at = self.scale_of_block(tensor, "o_r[:, None]", "o_q[None, :]")
            self.emit(
                f"""
o_q = {offset(a.col * per, f"tl.arange(0, {pq})")}
o_qm = o_rm[:, None] & {par(q_cols)}[None, :]
tl.store({self.scales_arg(tensor)} + {at}, {par(scales)}.to(tl.float16), mask=o_qm)
""",
            )

    def quantize(self, value: str, pr: int, pc: int, rule: str) -> tuple[str, str]:
        """Q8_0 quantization of a [pr x pc] f32 block, per 32 along its rows, by the tensor's
        rule, as tools/interpreters/q8_0.py computes it in f32: d = max|x| / LEVELS (127), d kept
        as f16; "x86" (llama.cpp's AVX2 quantize_row_q8_0): q = rint(x * (127 / max|x|)), ties
        to even; "ref" (quantize_row_q8_0_ref): q = roundf(x * (1 / d)), ties away from zero;
        q = 0 where max|x| = 0. Returns (values, scales)."""
        nb = pc // Q8_0_BLOCK
        self.emit(
            f"""
q_x = tl.reshape({value}, ({pr}, {nb}, {Q8_0_BLOCK}))
q_a = tl.max(tl.abs(q_x), axis=2)
q_d = q_a / {float(LEVELS)!r}
""",
        )
        if rule == "x86":
            # Round half to even in f32 by adding and taking away 1.5 * 2^23 (exact for
            # |x| < 2^22; |x * id| <= 127 here): what _mm256_round_ps(_MM_ROUND_NEAREST) does,
            # without libdevice.rint, which Triton's interpreter lacks.
            self.emit(
                f"""
q_i = tl.where(q_a == 0, 0.0, {float(LEVELS)!r} / tl.where(q_a == 0, 1.0, q_a))
q_v = tl.reshape((q_x * q_i[:, :, None] + {RINT!r}) - {RINT!r}, ({pr}, {pc}))
""",
            )
        else:
            self.emit(
                f"""
q_i = tl.where(q_d == 0, 0.0, 1.0 / tl.where(q_d == 0, 1.0, q_d))
q_s = q_x * q_i[:, :, None]
q_v = tl.reshape(tl.where(q_s < 0, -1.0, 1.0) * tl.floor(tl.abs(q_s) + 0.5), ({pr}, {pc}))
""",
            )
        return "q_v", "q_d"


RINT = 12582912.0
"""1.5 * 2^23: x + RINT - RINT is x rounded half to even in f32, for |x| < 2^22."""


def _sites_and_items(
    program: sp.ProgramOp,
) -> tuple[list[dict[str, int]], list[tuple[int, int]], list[tuple[int, int, int, int]]]:
    work = program.one(sp.WorkOp)
    assert work is not None
    space = program.item_space()
    ranges, sites = [], []
    for rng in program.ops_of(sp.SitesOp):
        ranges.append(rng.bindings(work.k_block))
        for x, y in rng.rect.sites():
            items = rng.items(x, y)
            sites.append((items.start, len(items)))
    items = []
    for i in range(space.count):
        r = space.rect(i)
        items.append((r.r0, r.c0, r.h, r.w))
    return ranges, sites, items


def section_of(program: sp.ProgramOp) -> Kernel:
    name = program.sym_name.data
    if program.phase_value != sp.Phase.SIZED:
        raise TritonNotEmitted(
            name, f"phase {program.phase_value.value}: run spatial-pipeline first"
        )
    work = program.one(sp.WorkOp)
    assert work is not None
    ranges, sites, items = _sites_and_items(program)
    # One launch has one num_stages: per operand FIFO the smallest depth any range's memory map
    # gives it (every range affords that many pages).
    site_ranges = program.ops_of(sp.SitesOp)
    depths = [
        min(r.depth_of(f, b) for r, b in zip(site_ranges, ranges, strict=True))
        for f in program.ops_of(sp.FifoOp)
        if any(sp.buffer_of(ld.dst) is f for ld in program.ops_of(sp.LoadOp))
    ]
    return Kernel(
        program=program,
        name=name,
        fn=ident(name),
        tile=program.tile,
        tensors=program.tensors(),
        ranges=ranges,
        sites=sites,
        items=items,
        k_tiles=work.k_tiles,
        k_block=work.k_block,
        block=work.block,
        num_stages=max(depths) if depths else 1,
        k_slices=work.k_slices,
        k_slice_tiles=work.k_slice_tiles,
        blocks=program.item_space().blocks,
    )


# ── The table of section printers ─────────────────────────────────────────────────────────────

SectionPrinter = Callable[["Kernel"], None]

SECTION_PRINTERS: dict[SectionKind, SectionPrinter] = {}
"""The kernel body of every section kind Triton prints, filled by `section_printer` next to each
body (bodies.py, maps.py, rows.py)."""

REFUSED_SECTION_KINDS: dict[SectionKind, str] = {}
"""Section kinds with no Triton kernel, and why."""


def section_printer(*kinds: SectionKind) -> Callable[[SectionPrinter], SectionPrinter]:
    def register(printer: SectionPrinter) -> SectionPrinter:
        for kind in kinds:
            assert kind not in SECTION_PRINTERS and kind not in REFUSED_SECTION_KINDS, kind
            SECTION_PRINTERS[kind] = printer
        return printer

    return register


_ITEM_FIELDS = ("r0", "c0", "h", "w")
"""An item's row in the ITEMS table: origin tile (row, column) and extent in tiles."""


def preamble(body: list[str]) -> list[str]:
    """The item loop each kernel body runs in: the program's items from the SITES table, and of
    each item's origin and extent only the fields the body reads (an unread local is noise a
    linter reports)."""
    text = "\n".join(body)
    lines = [
        "pid = tl.program_id(0)",
        "first = tl.load(SITES + 2 * pid)",
        "count = tl.load(SITES + 2 * pid + 1)",
        "for t in range(count):",
        f"{INDENT}item = first + t",
    ]
    for i, name in enumerate(_ITEM_FIELDS):
        if re.search(rf"\b{name}\b", text):
            lines.append(f"{INDENT}{name} = tl.load(ITEMS + {ix('item') * 4 + i})")
    return [INDENT + line for line in lines]
