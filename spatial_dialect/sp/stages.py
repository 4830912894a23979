"""The movement stages and the GEMM's compute stage: `sp.load` and `sp.store` (DRAM to FIFO and
back), `sp.matmul_tiles`, and the data-dependent movements `sp.gather` and `sp.scatter`.

Each is a stage template (`StageOp`): one instance per site, executed per work item in the order
the package docstring states; its docstring says what it does per item.
"""

from __future__ import annotations

from xdsl.dialects.builtin import FlatSymbolRefAttr, SymbolRefAttr, UnitAttr
from xdsl.ir import SSAValue, TypeAttribute
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.sp.abstract_ops import (
    ON_ENGINE,
    IndexedStage,
    StageOp,
    buffer_of,
    section_traits,
)
from spatial_dialect.sp.attrs import (
    AccessAttr,
    BufferType,
    EngineAttr,
    SizesAttr,
    size_expr,
)
from spatial_dialect.sp.enums import (
    FidelityAttr,
)
from spatial_dialect.sp.formats import Engine, TensorAccess
from spatial_dialect.sp.kinds import PARTIALS_RINGS, Fidelity
from spatial_dialect.sp.syntax import IntValue, int_attr, opt_int_prop


@irdl_op_definition
class LoadOp(StageOp):
    """`sp.load @a[r0, k0] x [h, kw] -> %in0 [multicast @in0_rows] [on movement 1 noc 0]`.

    Per item and per iteration of its loops, reads the block of tiles the access pattern gives
    from the DRAM tensor and pushes it as one page. With `multicast`, the load belongs to the
    group's sender (sp.group).

    An indexed load (`sp.load @w[k0, c0] x [kw, w] by @id stride 64 -> %in1`) reads one block of
    `stride` tile rows chosen at run time: before each item it reads e = the first element of the
    i32 tensor `by` names (an expert id) and adds e * stride to every origin row, so the access
    pattern walks inside block e. e outside [0, tile rows / stride) is a runtime error, reported,
    never read (a mixture of experts' weights of the expert its router chose).

    A load of users' caches (`sp.load @k[k0, c] x [kw, d] users @pos capacity 16 tokens 1
    [table @t block_size 4] -> %k`; the batched attention, docs/tg.md#batched-decode) walks the
    keys of U users one after another, U x S rows (S = `capacity`, the positions a user holds):
    element row x of the walk is user u = x / S's position j = x mod S. Before each item it
    reads every user's position p = pos[u] (the i32 vector `users` names) and, paged, the block
    ids it uses, all checked before anything is read (a live p in [0, S - T], T = `tokens`; a
    block id inside the pool); then row x of a page is the cache's row u * S + j (contiguous)
    or table[u, j / N] * N + j mod N (paged, N = `block_size`) where j <= p + T - 1, and zero
    where the user holds no such position yet or is idle (p = -1): the same page from either
    layout.
    """

    name = "sp.load"
    tensor = prop_def(FlatSymbolRefAttr)
    access = prop_def(AccessAttr)
    group = opt_prop_def(FlatSymbolRefAttr)
    index = opt_prop_def(FlatSymbolRefAttr)
    stride_attr = opt_int_prop("stride")
    stride = IntValue("stride")
    users = opt_prop_def(FlatSymbolRefAttr)
    capacity_attr = opt_int_prop("capacity")
    capacity = IntValue("capacity")
    tokens_attr = opt_int_prop("tokens")
    tokens = IntValue("tokens")
    table = opt_prop_def(FlatSymbolRefAttr)
    block_size_attr = opt_int_prop("block_size")
    block_size = IntValue("block_size")
    dst = operand_def(BufferType)
    traits = section_traits()
    custom_directives = (TensorAccess, Engine)
    assembly_format = (
        "custom<TensorAccess>($tensor, $access) (`by` $index^ `stride` $stride)?"
        " (`users` $users^ `capacity` $capacity `tokens` $tokens)?"
        " (`table` $table^ `block_size` $block_size)? `->` $dst "
        "(`multicast` $group^)? " + ON_ENGINE
    )

    def of_users(
        self, pos: str, capacity: int, tokens: int, table: str | None, block_size: int | None
    ) -> LoadOp:
        """This load as a load of users' caches (class docstring); paged with `table`."""
        self.properties["users"] = SymbolRefAttr(pos)
        self.properties["capacity"] = int_attr(capacity)  # type: ignore[assignment]
        self.properties["tokens"] = int_attr(tokens)  # type: ignore[assignment]
        if table is not None:
            self.properties["table"] = SymbolRefAttr(table)
            self.properties["block_size"] = int_attr(block_size)  # type: ignore[assignment]
        return self

    def __init__(
        self,
        tensor: str,
        access: AccessAttr,
        dst: SSAValue,
        group: str | None = None,
        engine: EngineAttr | None = None,
        index: tuple[str, int] | None = None,
    ):
        """`index`: (the i32 tensor holding the block id, the block's tile rows)."""
        super().__init__(
            operands=[dst],
            properties={
                "tensor": SymbolRefAttr(tensor),
                "access": access,
                "group": SymbolRefAttr(group) if group else None,
                "index": SymbolRefAttr(index[0]) if index else None,
                "stride": int_attr(index[1]) if index else None,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"load @{self.tensor.root_reference.data} -> {buffer_of(self.dst).label.data}"


@irdl_op_definition
class StoreOp(StageOp):
    """`sp.store %out -> @c[r0 + ti, c0 + tj] x [sh, sw] [on movement 0 noc 1]`.

    Per item and per iteration of its loops, pops one page and writes it to the block of the
    DRAM tensor the access pattern gives.
    """

    name = "sp.store"
    src = operand_def(BufferType)
    tensor = prop_def(FlatSymbolRefAttr)
    access = prop_def(AccessAttr)
    traits = section_traits()
    custom_directives = (TensorAccess, Engine)
    assembly_format = "$src `->` custom<TensorAccess>($tensor, $access) " + ON_ENGINE

    def __init__(
        self, src: SSAValue, tensor: str, access: AccessAttr, engine: EngineAttr | None = None
    ):
        super().__init__(
            operands=[src],
            properties={
                "tensor": SymbolRefAttr(tensor),
                "access": access,
                "engine": engine,
            },
        )

    def stage_name(self) -> str:
        return f"store {buffer_of(self.src).label.data} -> @{self.tensor.root_reference.data}"


def partials_depth() -> SizesAttr:
    """The depth of split-K's partials FIFO: `PARTIALS_RINGS` pages per sub-block (received,
    sent)."""
    return SizesAttr.of(size_expr("subs") * PARTIALS_RINGS)


@irdl_op_definition
class MatmulTilesOp(StageOp):
    """`sp.matmul_tiles %in0, %in1 -> %out acc %dst [spill %spill] [transpose_b] [fidelity hifi4]
    [on compute]`.

    Per item: for each K block k0, pop one page of A (h x kw tiles) and one of B (kw x w); for
    each sub-block (ti, tj), row-major: start the accumulator at zero on the first K block,
    else from the sub-block's partial (popped from the spill, or still held in the accumulator
    where there is no spill: a single sub-block, or a register accumulator holding the whole
    block); add A[ti .. ti+sh, :] @ B[:, tj .. tj+sw] over the kw tiles in the accumulator's
    precision; push the partial to the spill, or on the last K block push the sub-block to the
    output FIFO rounded to its element type, in pages of the FIFO's page shape (row-major over
    the sub-block: one page of sh x sw tiles, or single tiles where a register accumulator's
    lanes write their own tiles). Then release the two operand pages. Without a spill, an item
    has one sub-block or one K block. `fidelity` is the Tensix math fidelity (lofi, hifi2,
    hifi3, hifi4) where the target has one.

    Q8_0 operands (FIFOs stored `q8_0` / `q8_0_kn`, docs/sp.md#q8_0-tensors): with `dequantize T`
    each popped block is widened to T (f32(d) * q, rounded to T) before the product; without it
    both operands are Q8_0 and each K tile (one block of 32 per row of A and column of B) adds
    the exact int32 dot of the values times f32(da) * f32(db) into the f32 accumulator, the
    blocks in K order: ggml's Q8_0 x Q8_0 dot.

    `transpose_b`: B is stored N x K and its page is the w x kw tiles of B^T's block (the load
    reads B[c0, k0] x [w, kw]); the stage transposes it, every tile and the tiles' order, before
    the product (tt-metal's matmul_tiles transpose flag on in1's tile). The bytes moved are the
    same; a Q8_0 page blocked along its rows (`q8_0`) is then blocked along K as `q8_0_kn` is.

    `partials %p` (split-K, `sp.work ... split S`): an item walks only its K slice's blocks. On
    its last K block, an item of slice s > 0 adds to each sub-block's sums the partial sums it
    pops from its `%p` (what slice s - 1 computed for the same block); an item of slice
    s < S - 1 then pushes the sums, unrounded, to `%p` of the site that runs the same block in
    slice s + 1 (over the NoC, through the site's writer) instead of to the output FIFO. Only
    the last slice's items push to the output FIFO, and only they store. `%p` is a FIFO at the
    accumulator's element type of depth `subs * 2` (`partials_depth`): one [sh, sw] page per
    sub-block received, one per sub-block to send.
    """

    name = "sp.matmul_tiles"
    in0 = operand_def(BufferType)
    in1 = operand_def(BufferType)
    out = operand_def(BufferType)
    acc = operand_def(BufferType)
    spill = opt_operand_def(BufferType)
    partials = opt_operand_def(BufferType)
    fidelity = opt_prop_def(FidelityAttr)
    dequantize = opt_prop_def(TypeAttribute)
    transpose_b = opt_prop_def(UnitAttr)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = section_traits()
    custom_directives = (Engine,)
    assembly_format = (
        "$in0 `,` $in1 `->` $out `acc` $acc (`spill` $spill^)? (`partials` $partials^)?"
        " (`dequantize` $dequantize^)? (`transpose_b` $transpose_b^)?"
        " (`fidelity` $fidelity^)? " + ON_ENGINE
    )

    def __init__(
        self,
        in0: SSAValue,
        in1: SSAValue,
        out: SSAValue,
        acc: SSAValue,
        spill: SSAValue | None = None,
        fidelity: str | None = None,
        engine: EngineAttr | None = None,
        dequantize: TypeAttribute | None = None,
        partials: SSAValue | None = None,
        transpose_b: bool = False,
    ):
        super().__init__(
            operands=[in0, in1, out, acc, spill, partials],
            properties={
                "fidelity": FidelityAttr(Fidelity(fidelity)) if fidelity else None,
                "engine": engine,
                "dequantize": dequantize,
                "transpose_b": UnitAttr() if transpose_b else None,
            },
        )

    @property
    def transposes_b(self) -> bool:
        """B's pages are blocks of B^T (w x kw tiles), transposed by this stage."""
        return self.transpose_b is not None

    def stage_name(self) -> str:
        return "matmul_tiles"


# ── Data-dependent movement ───────────────────────────────────────────────────────────────────


@irdl_op_definition
class GatherOp(IndexedStage):
    """`sp.gather @table by @ids[r0, c0] x [1, w] count 8 -> %out`.

    An embedding lookup on a movement engine. The access pattern walks the result's tiles: per
    iteration, the block of er x ec tiles at (R, C). For each of its element rows
    r = R * tile_rows + i below `count`, read id = ids[r] from DRAM; an id outside [0, V) of the
    V-row table is a runtime error, reported, never read; row i of the page is the table's row
    id, columns C * tile_cols onward (zero past the table's width); rows at or past `count` are
    zero. Push the block as one page. The table may be in either layout: in `tiled` the row is
    row id % tile_rows of the tiles of tile row id / tile_rows (the reference's dense row read).

    The gather of users' paged caches (`sp.gather @pool by @pos[r0, c0] x [1, w] count 48
    table @t block_size 4 capacity 16 tokens 1 -> %out`; a paged batched attention on a target
    whose kernels cannot address DRAM by a block id they read, docs/tg.md#batched-decode): the
    result is the U users' caches laid contiguously, U x S rows (S = `capacity`; count = U x S).
    `index` holds one position per user. Before anything is read, every user's position p (a
    live one in [0, S - T], T = `tokens`) and every block id it uses (table[u, 0 .. (p + T - 1)
    / N] in the pool, N = `block_size`) are read and checked; then row x is user u = x / S's
    position j = x mod S: the pool's row table[u, j / N] * N + j mod N where j <= p + T - 1,
    zero where the user holds no such position yet or is idle (p = -1): the page sp.load
    `users ... table` reads, as a tensor.
    """

    name = "sp.gather"
    dst = operand_def(BufferType)
    table = opt_prop_def(FlatSymbolRefAttr)
    block_size_attr = opt_int_prop("block_size")
    block_size = IntValue("block_size")
    capacity_attr = opt_int_prop("capacity")
    capacity = IntValue("capacity")
    tokens_attr = opt_int_prop("tokens")
    tokens = IntValue("tokens")
    traits = section_traits()
    assembly_format = (
        "$tensor `by` custom<TensorAccess>($index, $access) `count` $count"
        " (`table` $table^ `block_size` $block_size `capacity` $capacity `tokens` $tokens)?"
        " `->` $dst " + ON_ENGINE
    )

    @staticmethod
    def of_users(
        pool: str,
        pos: str,
        access: AccessAttr,
        count: int,
        buffer: SSAValue,
        table: str,
        block_size: int,
        capacity: int,
        tokens: int,
    ) -> GatherOp:
        """The gather of users' paged caches into U x `capacity` contiguous rows (class
        docstring)."""
        op = GatherOp(pool, pos, access, count, buffer)
        op.properties["table"] = SymbolRefAttr(table)
        op.properties["block_size"] = int_attr(block_size)  # type: ignore[assignment]
        op.properties["capacity"] = int_attr(capacity)  # type: ignore[assignment]
        op.properties["tokens"] = int_attr(tokens)  # type: ignore[assignment]
        return op

    def users(self) -> int | None:
        """U, the users of a gather of users' caches (count / capacity); None otherwise."""
        return None if self.capacity is None else self.count // self.capacity

    def verify_(self) -> None:
        s, t, n = self.capacity, self.tokens, self.block_size
        if s is None or t is None or n is None:
            return
        if s <= 0 or self.count % s or n <= 0 or s % n or not 0 < t <= s:
            raise VerifyException(
                f"gather: capacity {s} must divide count {self.count}, block_size {n} divide "
                f"capacity {s}, and tokens {t} lie in [1, {s}]"
            )

    def buffer(self) -> SSAValue:
        return self.dst

    def stage_name(self) -> str:
        return f"gather @{self.tensor.root_reference.data} -> {buffer_of(self.dst).label.data}"


@irdl_op_definition
class ScatterOp(IndexedStage):
    """`sp.scatter %in -> @cache at @pos[r0, c0] x [1, w] count 8 [tokens 1] [table @t
    block_size 4]`.

    A row write at a runtime position (the KV-cache update) on a movement engine. The access
    pattern walks the tiles of the rows written: per iteration pop one page, the block of er x ec
    tiles at (R, C); read p = pos[0] from DRAM; each element row r = R * tile_rows + i below
    `count` is written to row p + r of the tensor, columns C * tile_cols onward up to its width.
    p < 0 or p + count past the tensor's rows is a runtime error, reported, never written.
    The tensor is carried state: updated in place, it keeps every row not written.

    `tokens T` (the batched write, tg.batch_set_rows; docs/tg.md#batched-decode): the rows are
    U = count / T users' T rows each and `pos` holds one position per user. Row r belongs to
    user b = r / T and goes to the cache row of its position j = pos[b] + r mod T: b * S + j in
    a contiguous cache of U x S rows; with `table` (U x max_blocks i32 block ids) and
    `block_size` N, table[b, j / N] * N + j mod N. A user at pos -1 is idle: none of its rows is
    written. Before any row is written, every user's position (in [0, S - T], S the positions a
    user holds) and every block id it uses (in the pool) is read and checked, so a bad one is a
    runtime error that writes nothing. Without `tokens` it is the single-user write above.
    """

    name = "sp.scatter"
    src = operand_def(BufferType)
    tokens_attr = opt_int_prop("tokens")
    table = opt_prop_def(FlatSymbolRefAttr)
    block_size_attr = opt_int_prop("block_size")
    traits = section_traits()
    assembly_format = (
        "$src `->` $tensor `at` custom<TensorAccess>($index, $access) `count` $count"
        " (`tokens` $tokens^)? (`table` $table^)? (`block_size` $block_size^)? " + ON_ENGINE
    )

    tokens = IntValue("tokens")
    block_size = IntValue("block_size")

    @staticmethod
    def batched(
        tensor: str,
        index: str,
        access: AccessAttr,
        count: int,
        buffer: SSAValue,
        tokens: int,
        table: str | None = None,
        block_size: int | None = None,
    ) -> ScatterOp:
        """The batched write of `count` / `tokens` users (class docstring); paged with `table`
        and `block_size`."""
        op = ScatterOp(tensor, index, access, count, buffer)
        op.properties["tokens"] = int_attr(tokens)  # type: ignore[assignment]
        if table is not None:
            op.properties["table"] = SymbolRefAttr(table)
            op.properties["block_size"] = int_attr(block_size)  # type: ignore[assignment]
        return op

    def buffer(self) -> SSAValue:
        return self.src

    def stage_name(self) -> str:
        return f"scatter {buffer_of(self.src).label.data} -> @{self.tensor.root_reference.data}"

    def verify_(self) -> None:
        if (self.table is None) != (self.block_size is None):
            raise VerifyException("scatter: a paged write takes both table and block_size")
        if self.table is not None and self.tokens is None:
            raise VerifyException("scatter: a block table is for a batched write (tokens T)")
        t, n = self.tokens, self.block_size
        if t is not None and (t <= 0 or self.count % t):
            raise VerifyException(
                f"scatter: tokens {t} must be positive and divide count {self.count}"
            )
        if n is not None and n <= 0:
            raise VerifyException(f"scatter: block_size {n} must be positive")
