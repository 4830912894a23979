"""The machine the simulator runs on (tools/simulator/program.py): what it can find wrong, DRAM
tensors, each site's local memory and its FIFOs, the stage processes and their scheduler, and the
access patterns evaluated per iteration. The stages' execution builds on it, one runner per sp
stage op registered in tools/simulator/registry.py: data movement in movement.py, the GEMM's
in matmul.py, maps in maps.py, row reductions in rows.py and the other stages in stages.py.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from spatial_dialect import sp
from spatial_dialect.sp import LOOP_VARS, ceil_div
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.tools.interpreters import q8_0 as gguf_quant
from spatial_dialect.tools.interpreters.numerics import matmul, numpy_dtype, round_to

Site = tuple[int, int]


def scale_cut(axis: int, rows: slice, cols: slice) -> tuple[slice, slice]:
    """The scales of the elements `rows` x `cols` of a Q8_0 tensor blocked along `axis` (the
    slices start and stop on block boundaries)."""
    cut = [rows, cols]
    whole = cut[axis]
    start = None if whole.start is None else whole.start // Q8_0_BLOCK
    stop = None if whole.stop is None else whole.stop // Q8_0_BLOCK
    cut[axis] = slice(start, stop)
    return cut[0], cut[1]


@dataclass(frozen=True)
class Q8Block:
    """A block of a Q8_0 tensor as it moves between DRAM and FIFOs: its i8 values, its f16 scales
    (the values' shape with the block `axis` divided by 32). Sliced as a numpy block is, along
    tile boundaries, so the movement stages and the FIFOs cut it into pages like any block."""

    values: np.ndarray
    scales: np.ndarray
    axis: int

    @staticmethod
    def of(x: np.ndarray, axis: int, rule: str) -> Q8Block:
        """x quantized to Q8_0 along `axis` by `rule` ("x86" or "ref",
        tools/interpreters/q8_0.py)."""
        values, scales = gguf_quant.quantize(x, axis, rule)
        return Q8Block(values, scales, axis)

    @property
    def shape(self) -> tuple[int, ...]:
        return self.values.shape

    def __getitem__(self, key: slice | tuple[slice, slice]) -> Q8Block:
        rows, cols = key if isinstance(key, tuple) else (key, slice(None))
        return Q8Block(
            self.values[rows, cols], self.scales[scale_cut(self.axis, rows, cols)], self.axis
        )

    @property
    def T(self) -> Q8Block:  # noqa: N802 (numpy's name, so a page transposes alike)
        """The transposed block: each block of 32 stays one block, now along the other axis."""
        return Q8Block(self.values.T, self.scales.T, 1 - self.axis)

    def dequantized(self) -> np.ndarray:
        """f32(scale) * value (exact in f32)."""
        return gguf_quant.dequantize(self.values, self.scales, self.axis)

    def dot(self, other: Q8Block) -> np.ndarray:
        """self (M x K, blocks along K) @ other (K x N, blocks along K) as ggml's Q8_0 x Q8_0
        dot, unrounded f32: per block the exact int32 sum times f32(da) * f32(db), the blocks
        added in K order."""
        out = np.zeros((self.shape[0], other.shape[1]), np.float32)
        da, db = self.scales.astype(np.float32), other.scales.astype(np.float32)
        for k in range(self.shape[1] // Q8_0_BLOCK):
            cut = slice(k * Q8_0_BLOCK, (k + 1) * Q8_0_BLOCK)
            sumi = self.values[:, cut].astype(np.int32) @ other.values[cut].astype(np.int32)
            out = out + sumi.astype(np.float32) * (da[:, k : k + 1] * db[k : k + 1, :])
        return out


class SimulationError(Exception):
    """The compiled program does not compute its result; the message says where and why."""


class NotSimulated(Exception):
    """A construct of the IR this simulator does not execute (yet): not a verdict on the
    program."""


class IndexOutOfRange(SimulationError):
    """A runtime index (an id of a gather or an indexed load, a position of a scatter or an
    attention) outside the tensor it indexes: reported, never read or written."""


class AccessOutsideTensor(SimulationError):
    def __init__(
        self,
        where: str,
        tensor: str,
        tile: tuple[int, int],
        extent: tuple[int, int],
        tiles: tuple[int, int],
    ):
        self.where, self.tensor, self.tile, self.tiles = where, tensor, tile, tiles
        super().__init__(
            f"{where}: the block of {extent[0]}x{extent[1]} tiles at tile ({tile[0]}, {tile[1]}) "
            f"leaves @{tensor}, which has {tiles[0]}x{tiles[1]} tiles"
        )


class BufferOutsideMemory(SimulationError):
    def __init__(self, buffer: str, start: int, end: int, size: int):
        self.buffer, self.start, self.end, self.size = buffer, start, end, size
        super().__init__(
            f"buffer {buffer} occupies [{start}, {end}) but local memory is [0, {size})"
        )


class FifoDeadlock(SimulationError):
    def __init__(self, section: str, waits: list[str]):
        self.section, self.waits = section, waits
        shown = waits[:8] + ([f"... and {len(waits) - 8} more"] if len(waits) > 8 else [])
        super().__init__(
            f"FIFO deadlock in section @{section}: every unfinished stage waits:\n  "
            + "\n  ".join(shown)
        )


class UnwrittenRead(SimulationError):
    def __init__(self, where: str, tensor: str, element: tuple[int, int], count: int):
        self.where, self.tensor, self.element, self.count = where, tensor, element, count
        super().__init__(
            f"{where} reads {count} tile(s) of @{tensor} that nothing wrote, the first at "
            f"element ({element[0]}, {element[1]})"
        )


class UnwrittenOutput(SimulationError):
    def __init__(self, tensor: str, element: tuple[int, ...], count: int, total: int):
        self.tensor, self.element, self.count = tensor, element, count
        super().__init__(
            f"output @{tensor}: {count} of its {total} tiles never written, the first at "
            f"element {element}"
        )


# ── DRAM ──────────────────────────────────────────────────────────────────────────────────────


class DramTensor:
    """A DRAM tensor padded to whole tiles, with a mask of the tiles written so far (access
    patterns move whole tiles, so a tile is written entirely or not at all)."""

    def __init__(self, op: sp.TensorOp, tile: tuple[int, int]):
        self.name = op.sym_name.data
        self.dtype = numpy_dtype(op.element_type)
        self.shape = tuple(op.type.get_shape())
        self.rows, self.cols = op.shape2d
        self.tiles = op.tiles
        self.layout = op.layout.data
        self.tile = tile
        self.data = np.zeros((self.tiles[0] * tile[0], self.tiles[1] * tile[1]), self.dtype)
        self.written = np.zeros(self.tiles, bool)
        self.q8_axis = op.q8_0_axis
        self.scales_name = op.scales_name
        self.scales: np.ndarray | None = None
        if self.q8_axis is not None:  # a Q8_0 tensor: its scales beside its values
            shape = list(self.data.shape)
            shape[self.q8_axis] //= Q8_0_BLOCK
            self.scales = np.zeros(shape, np.float16)
        elif op.format is not None:
            raise NotSimulated(f"@{self.name}: storage format {op.format.data} is not simulated")

    def fill(self, array: np.ndarray) -> None:
        """An input: its elements, zero padding, every tile written."""
        self.data[: self.rows, : self.cols] = array.reshape(self.rows, self.cols)
        self.written[:] = True

    def fill_scales(self, array: np.ndarray) -> None:
        """A Q8_0 input's scales (the function argument its `scales` names)."""
        assert self.scales is not None
        rows, cols = array.shape
        self.scales[:rows, :cols] = array

    def _block(self, where: str, r: int, c: int, rows: int, cols: int) -> tuple[slice, slice]:
        tm, tn = self.tiles
        if r < 0 or c < 0 or r + rows > tm or c + cols > tn:
            raise AccessOutsideTensor(where, self.name, (r, c), (rows, cols), self.tiles)
        return slice(r, r + rows), slice(c, c + cols)

    def _elements(self, tiles: tuple[slice, slice]) -> tuple[slice, slice]:
        (th, tw), (rs, cs) = self.tile, tiles
        return slice(rs.start * th, rs.stop * th), slice(cs.start * tw, cs.stop * tw)

    def read(self, where: str, r: int, c: int, rows: int, cols: int) -> np.ndarray | Q8Block:
        tiles = self._block(where, r, c, rows, cols)
        missing = ~self.written[tiles]
        if missing.any():
            i, j = np.argwhere(missing)[0]
            raise UnwrittenRead(
                where,
                self.name,
                ((r + i) * self.tile[0], (c + j) * self.tile[1]),
                int(np.count_nonzero(missing)),
            )
        elements = self._elements(tiles)
        if self.scales is not None:
            return self._q8()[elements]
        return self.data[elements].copy()

    def _q8(self) -> Q8Block:
        assert self.scales is not None and self.q8_axis is not None
        return Q8Block(self.data, self.scales, self.q8_axis)

    def write(
        self, where: str, r: int, c: int, rows: int, cols: int, block: np.ndarray | Q8Block
    ) -> None:
        tiles = self._block(where, r, c, rows, cols)
        elements = self._elements(tiles)
        if isinstance(block, Q8Block):
            self.data[elements] = block.values
            assert self.scales is not None and self.q8_axis is not None
            self.scales[scale_cut(self.q8_axis, *elements)] = block.scales
        else:
            self.data[elements] = block
        self.written[tiles] = True

    def result(self) -> np.ndarray:
        """The unpadded result; UnwrittenOutput if a tile of it was never written."""
        if not self.written.all():
            i, j = (int(v) for v in np.argwhere(~self.written)[0])
            raise UnwrittenOutput(
                self.name,
                (i * self.tile[0], j * self.tile[1]),
                int(np.count_nonzero(~self.written)),
                self.written.size,
            )
        return self.data[: self.rows, : self.cols].reshape(self.shape).copy()


# ── Local memory and FIFOs ────────────────────────────────────────────────────────────────────


class LocalMemory:
    """Every site's local memory, one byte array each, created when a site first uses it."""

    def __init__(self, size: int):
        self.size = size
        self._sites: dict[Site, np.ndarray] = {}

    def window(self, site: Site, buffer: str, offset: int, nbytes: int) -> np.ndarray:
        if offset < 0 or offset + nbytes > self.size:
            raise BufferOutsideMemory(buffer, offset, offset + nbytes, self.size)
        if site not in self._sites:
            self._sites[site] = np.zeros(self.size, np.uint8)
        return self._sites[site][offset : offset + nbytes]


class Fifo:
    """One buffer instance: `depth` pages in a window of a site's local memory, used as a ring.

    A page of rows x cols tiles is stored tile after tile (each tile's elements row-major), so
    bytes, not arrays, are what a page is between its push and its pop. A block of several
    pages (a stage whose block is larger than the FIFO's page) is cut into pages in row-major
    page order. A Q8_0 FIFO (`q8_axis`, the axis of its blocks) stores each tile as its i8
    values and then its f16 scales (1088 bytes for 32x32); a float block pushed to it is
    quantized by `q8_rule` (Q8_0 is that FIFO's rounding: its storage format's rule), a popped
    block is a `Q8Block`.
    """

    def __init__(
        self,
        name: str,
        window: np.ndarray,
        depth: int,
        page: tuple[int, int],
        dtype: np.dtype,
        tile: tuple[int, int],
        q8_axis: int | None = None,
        q8_rule: str = "x86",
    ):
        self.name, self.depth, self.page, self.dtype, self.tile = name, depth, page, dtype, tile
        self.q8_axis, self.q8_rule = q8_axis, q8_rule
        tile_bytes = tile[0] * tile[1] * dtype.itemsize
        if q8_axis is not None:
            scales = list(tile)
            scales[q8_axis] //= Q8_0_BLOCK
            self.scale_tile = (scales[0], scales[1])
            tile_bytes += scales[0] * scales[1] * 2
        self.page_bytes = page[0] * page[1] * tile_bytes
        self.window = window
        self.count = self.head = self.tail = 0

    def free(self) -> int:
        return self.depth - self.count

    def _slot(self, i: int) -> np.ndarray:
        return self.window[i * self.page_bytes : (i + 1) * self.page_bytes]

    def pages_of(self, tiles: tuple[int, int], who: str) -> tuple[int, int]:
        """How many pages (down, across) a block of `tiles` is; SimulationError if the page
        does not divide it."""
        (rows, cols), (pr, pc) = tiles, self.page
        if rows % pr or cols % pc:
            raise SimulationError(
                f"{who}: a block of {rows}x{cols} tiles is no whole number of "
                f"{self.name}'s {pr}x{pc}-tile pages"
            )
        return rows // pr, cols // pc

    def push(self, block: np.ndarray | Q8Block, who: str) -> None:
        if self.q8_axis is not None:
            self._push_q8(block, who)
            return
        assert isinstance(block, np.ndarray)
        (th, tw), (pr, pc) = self.tile, self.page
        down, across = self.pages_of((block.shape[0] // th, block.shape[1] // tw), who)
        data = round_to(block, self.dtype)
        for i in range(down):
            for j in range(across):
                page = data[i * pr * th : (i + 1) * pr * th, j * pc * tw : (j + 1) * pc * tw]
                tiles = page.reshape(pr, th, pc, tw).transpose(0, 2, 1, 3)
                self._slot(self.tail)[:] = np.ascontiguousarray(tiles).view(np.uint8).reshape(-1)
                self.tail = (self.tail + 1) % self.depth
                self.count += 1

    @staticmethod
    def _tiles(x: np.ndarray, page: tuple[int, int], tile: tuple[int, int]) -> np.ndarray:
        """A page's elements as (tiles, elements of a tile), tiles row-major."""
        (pr, pc), (th, tw) = page, tile
        t = x.reshape(pr, th, pc, tw).transpose(0, 2, 1, 3)
        return np.ascontiguousarray(t).reshape(pr * pc, th * tw)

    @staticmethod
    def _untile(t: np.ndarray, page: tuple[int, int], tile: tuple[int, int]) -> np.ndarray:
        (pr, pc), (th, tw) = page, tile
        return t.reshape(pr, pc, th, tw).transpose(0, 2, 1, 3).reshape(pr * th, pc * tw)

    def _push_q8(self, block: np.ndarray | Q8Block, who: str) -> None:
        assert self.q8_axis is not None
        if not isinstance(block, Q8Block):
            block = Q8Block.of(block, self.q8_axis, self.q8_rule)
        (th, tw), (pr, pc), (sh, sw) = self.tile, self.page, self.scale_tile
        down, across = self.pages_of((block.shape[0] // th, block.shape[1] // tw), who)
        for i in range(down):
            for j in range(across):
                page = block[i * pr * th : (i + 1) * pr * th, j * pc * tw : (j + 1) * pc * tw]
                values = self._tiles(page.values.astype(np.int8), self.page, self.tile)
                scales = self._tiles(page.scales.astype(np.float16), self.page, (sh, sw))
                raw = np.concatenate([values.view(np.uint8), scales.view(np.uint8)], axis=1)
                self._slot(self.tail)[:] = raw.reshape(-1)
                self.tail = (self.tail + 1) % self.depth
                self.count += 1

    def _front_q8(self, tiles: tuple[int, int], who: str) -> Q8Block:
        assert self.q8_axis is not None
        (th, tw), (pr, pc), (sh, sw) = self.tile, self.page, self.scale_tile
        down, across = self.pages_of(tiles, who)
        values = np.empty((tiles[0] * th, tiles[1] * tw), np.int8)
        shape = [tiles[0] * th, tiles[1] * tw]
        shape[self.q8_axis] //= Q8_0_BLOCK
        scales = np.empty(shape, np.float16)
        for n in range(down * across):
            i, j = divmod(n, across)
            raw = self._slot((self.head + n) % self.depth).reshape(pr * pc, -1)
            v = raw[:, : th * tw].copy().view(np.int8)
            s = raw[:, th * tw :].copy().view(np.float16)
            values[i * pr * th : (i + 1) * pr * th, j * pc * tw : (j + 1) * pc * tw] = self._untile(
                v, self.page, self.tile
            )
            scales[i * pr * sh : (i + 1) * pr * sh, j * pc * sw : (j + 1) * pc * sw] = self._untile(
                s, self.page, (sh, sw)
            )
        return Q8Block(values, scales, self.q8_axis)

    def front(self, tiles: tuple[int, int], who: str) -> np.ndarray:
        """The oldest pages that make a block of `tiles`, decoded from the bytes there now."""
        if self.q8_axis is not None:
            return self._front_q8(tiles, who)  # type: ignore[return-value]
        (th, tw), (pr, pc) = self.tile, self.page
        down, across = self.pages_of(tiles, who)
        block = np.empty((tiles[0] * th, tiles[1] * tw), self.dtype)
        for n in range(down * across):
            i, j = divmod(n, across)
            page = self._slot((self.head + n) % self.depth).view(self.dtype).reshape(pr, pc, th, tw)
            block[i * pr * th : (i + 1) * pr * th, j * pc * tw : (j + 1) * pc * tw] = (
                page.transpose(0, 2, 1, 3).reshape(pr * th, pc * tw)
            )
        return block

    def pop(self, pages: int) -> None:
        self.head = (self.head + pages) % self.depth
        self.count -= pages


# ── Processes and the scheduler ───────────────────────────────────────────────────────────────


def accumulate(acc: np.ndarray, a: np.ndarray, b: np.ndarray, tile_k: int) -> np.ndarray:
    """acc + a @ b in the accumulator's precision. A 32-bit accumulator (f32, i32) takes the
    whole K block at once; a narrower one (Tensix dest in its 16-bit mode) rounds after each
    tile-matmul, as the hardware adds each into dest."""
    steps = (
        [slice(0, a.shape[1])]
        if acc.dtype.itemsize >= 4
        else [slice(k, k + tile_k) for k in range(0, a.shape[1], tile_k)]
    )
    for k in steps:
        product = matmul(a[:, k], b[k])
        acc = round_to(acc.astype(product.dtype) + product, acc.dtype)
    return acc


@dataclass(frozen=True)
class Wait:
    """What a stage needs before its next step: `pages` free pages in every FIFO (`space`) or
    that many full ones in every FIFO; `who` says which stage instance and where in its loops."""

    fifos: tuple[Fifo, ...]
    space: bool
    pages: int
    who: str

    def blocked(self) -> list[Fifo]:
        return [f for f in self.fifos if (f.free() if self.space else f.count) < self.pages]

    def describe(self) -> str:
        what = "free page" if self.space else "full page"
        need = f"a {what}" if self.pages == 1 else f"{self.pages} {what}s"
        return f"{self.who} waits for {need} in " + ", ".join(
            f"{f.name} ({f.count}/{f.depth} pages full)" for f in self.blocked()
        )


Process = Generator[Wait, None, None]


def run_processes(section: str, processes: Sequence[Process]) -> None:
    """Runs every process to its end, each as far as it can go in turn; FifoDeadlock when all
    unfinished ones wait on FIFOs that no one can change."""
    waiting: list[tuple[Process, Wait | None]] = [(p, None) for p in processes]
    while waiting:
        progressed = False
        still: list[tuple[Process, Wait | None]] = []
        for proc, wait in waiting:
            while wait is None or not wait.blocked():
                progressed = True  # even a last step (to StopIteration) can move pages
                try:
                    wait = next(proc)
                except StopIteration:
                    wait = None
                    break
            if wait is not None:
                still.append((proc, wait))
        if still and not progressed:
            raise FifoDeadlock(section, [w.describe() for _, w in still if w is not None])
        waiting = still


def take(fifo: Fifo, tiles: tuple[int, int], who: str) -> Generator[Wait, None, np.ndarray]:
    """Pops a block of `tiles` (one page or several), waiting until they are all there."""
    down, across = fifo.pages_of(tiles, who)
    wait = Wait((fifo,), False, down * across, who)
    if wait.blocked():
        yield wait
    block = fifo.front(tiles, who)
    fifo.pop(down * across)
    return block


def give(fifos: tuple[Fifo, ...], block: np.ndarray, who: str) -> Process:
    """Pushes a block to every FIFO (a multicast: all of them) one page at a time, in row-major
    page order, each page waiting for room in each (sp.fifo: a push waits while every page is
    full). A block of several pages (a register accumulator's sub-block written a tile a lane)
    therefore streams through a FIFO shallower than the block."""
    (th, tw), (pr, pc) = fifos[0].tile, fifos[0].page
    down, across = fifos[0].pages_of((block.shape[0] // th, block.shape[1] // tw), who)
    for i in range(down):
        for j in range(across):
            page = block[i * pr * th : (i + 1) * pr * th, j * pc * tw : (j + 1) * pc * tw]
            wait = Wait(fifos, True, 1, who)
            if wait.blocked():
                yield wait
            for f in fifos:
                f.push(page, who)


# ── Access patterns ───────────────────────────────────────────────────────────────────────────


def compile_expr(e: AffineExpr) -> Callable[[Sequence[int]], int]:
    """An affine expression of the loop variables as a Python function of their values."""
    if isinstance(e, AffineConstantExpr):
        value = e.value
        return lambda _: value
    if isinstance(e, AffineDimExpr):
        i = e.position
        return lambda env: env[i]
    assert isinstance(e, AffineBinaryOpExpr)
    lhs, rhs = compile_expr(e.lhs), compile_expr(e.rhs)
    op = {
        AffineBinaryOpKind.Add: lambda a, b: a + b,
        AffineBinaryOpKind.Mul: lambda a, b: a * b,
        AffineBinaryOpKind.FloorDiv: lambda a, b: a // b,
        AffineBinaryOpKind.CeilDiv: ceil_div,
        AffineBinaryOpKind.Mod: lambda a, b: a % b,
    }[e.kind]
    return lambda env: op(lhs(env), rhs(env))


class Pattern:
    """A stage's access pattern under one range's size symbols: its iterations and their tiles."""

    def __init__(self, access: sp.AccessAttr, bindings: dict[str, int], k_tiles: int):
        self.row, self.col = (compile_expr(e) for e in access.origin.data.results)
        self.extent = access.extent.resolve(bindings)
        self.used = access.loop_vars()
        b = bindings
        ranges = {
            "k0": range(0, k_tiles, b["kw"]),
            "ti": range(0, b["h"], b["sh"]),
            "tj": range(0, b["w"], b["sw"]),
            "u": range(b["sh"]),
            "v": range(b["sw"]),
        }
        self.nested = [v for v in LOOP_VARS if v not in ("r0", "c0")]
        if unknown := [v for v in self.nested if v not in ranges]:
            raise NotSimulated(f"loop variables {unknown} are not simulated")
        self.ranges = [ranges[v] if v in self.used else [0] for v in self.nested]
        self.k = self.nested.index("k0")

    @property
    def has_k_loop(self) -> bool:
        return "k0" in self.used

    def iterations(self, r0: int, c0: int, k0: int | None) -> Iterator[list[int]]:
        """The loop variables (in LOOP_VARS order) of each iteration for the item at (r0, c0);
        with k0 given, only that K block's."""
        ranges = list(self.ranges)
        if k0 is not None:
            ranges[self.k] = [k0]
        for values in itertools.product(*ranges):
            yield [r0, c0, *values]

    def tile(self, env: list[int]) -> tuple[int, int]:
        return self.row(env), self.col(env)

    def describe(self, env: list[int]) -> str:
        """The loop variables this pattern uses, with their values: "k0 4" or "ti 0, tj 2"."""
        return ", ".join(
            f"{n} {x}"
            for n, x in zip(LOOP_VARS, env, strict=True)
            if n in self.used and n not in ("r0", "c0")
        )


# ── One site ──────────────────────────────────────────────────────────────────────────────────


@dataclass
class SiteRun:
    """One site of one range: its symbols, its items, its buffer instances."""

    site: Site
    sites: sp.SitesOp
    bindings: dict[str, int]
    items: range
    buffers: dict[sp.BufferOp, Fifo] = field(default_factory=dict)

    def name(self, buffer: str) -> str:
        """A buffer instance's name, `label@x,y` (docs/sp.md#sections)."""
        return f"{buffer}@{self.site[0]},{self.site[1]}"

    def where(self, stage: str) -> str:
        """A stage instance, as reports name it."""
        return f"{stage} at ({self.site[0]}, {self.site[1]})"
