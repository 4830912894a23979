"""Batched decode ops: B users, T tokens each (T = 1: a decode step; T > 1: a user's prefill
into its slot), each user at its own position in its own KV cache.

Decided here (docs/tg.md#batched-decode):

- Two new ops, `tg.batch_set_rows` and `tg.batch_attention`, rather than attributes on
  `tg.set_rows` / `tg.attention`. Their operands mean something else (a cache of B users, one
  position per user, an optional block table), and every consumer that knows the single-user ops
  (link, the simulator, both printers, the cost model) would read a batched op as a single-user
  one if it ignored an attribute: a silent wrong answer. A new op is refused by name wherever it
  is not yet implemented.
- One op per meaning, two layouts by one optional operand: without `table` the cache is
  contiguous, B x S rows (user b's position p is row b * S + p); with `table` (B x max_blocks,
  i32) and the property `block_size` it is a pool of blocks (row table[b, p // block_size] *
  block_size + p % block_size), as vLLM's PagedAttention and tt-metal's paged_update_cache /
  paged SDPA decode lay it out. The contiguous layout is the paged one with block_size S and
  table[b] = [b], so the two give the same numbers on the same data by construction of the
  reference (test/interpreters/test_batched.py checks it bitwise).
- Each user's T rows are consecutive (rows b*T .. b*T + T - 1 of q and of the written rows) and
  sit at positions pos[b] .. pos[b] + T - 1. One op serves the serving loop's two steps: a
  decode of B users (T = 1) and the admission of one user (B = 1, T tokens, its table row) into
  the same cache tensor, so both are one deployment.
- A position -1 marks an idle user (a free slot of a continuous batch, as tt-metal's cur_pos -1
  and vLLM's slot -1): nothing is written for it and its attention row is zero. Any other
  position outside the user's capacity, or a block id outside the pool, is a runtime error raised
  before anything is written; what the shapes alone show wrong is refused here, by the verifier.
- Arg-max per user needs no new op: `tg.argmax` of the B x V logits is per row.
"""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from spatial_dialect.tg.attention import head_properties, verify_heads
from spatial_dialect.tg.base import (
    TgOp,
    Value,
    attention_shape,
    i64_property,
)


class BatchedCacheOp(TgOp):
    """The layout rules shared by the two batched ops: the CACHE_FIELD operand (C x W) holds the KV rows of
    `users` users, contiguously (C = users x S) or as a pool of C / block_size blocks addressed
    through `table` (users x max_blocks i32)."""

    CACHE_FIELD: ClassVar[str] = "cache"
    NEW_FIELD: ClassVar[str] = "rows"  # the operand of T rows per user
    # the subclasses define the fields (IRDL orders operands by their own class body): table,
    # pos and the property block_size are read here

    def users(self) -> int:
        return self.shape(self.pos)[0]

    def tokens(self) -> int:
        """T, each user's rows: the new rows' (or queries') count over the users."""
        return self.shape(getattr(self, self.NEW_FIELD))[0] // self.users()

    def capacity(self) -> int:
        """The positions a user can hold: S (contiguous) or max_blocks x block_size (paged)."""
        rows = self.shape(getattr(self, self.CACHE_FIELD))[0]
        if self.table is None:
            return rows // self.users()
        return self.shape(self.table)[1] * self.block_size_value()

    def block_size_value(self) -> int:
        assert self.block_size is not None
        return self.block_size.value.data

    def verify_users(self, field: str, rows: int) -> None:
        """pos is one i32 per user, `field`'s rows are T per user; then the cache's layout."""
        users = self.require_i32_vector("pos")
        if rows % users:
            raise self.err(
                f"{field} has {rows} rows for {users} users (pos is tensor<{users}xi32>); "
                "each user has the same number T of rows"
            )
        self.verify_layout(users)
        s, t = self.capacity(), rows // users
        if t > s:
            raise self.err(
                f"{field} has {t} rows per user but a user holds {s} positions; no position "
                "puts them all in its cache"
            )

    def verify_layout(self, users: int) -> None:
        field = self.CACHE_FIELD
        rows = self.shape(getattr(self, field))[0]
        if self.table is None:
            if self.block_size is not None:
                raise self.err(
                    f"block_size {self.block_size.value.data} is given without a block table; "
                    "a paged cache takes both, a contiguous one neither"
                )
            if rows % users:
                raise self.err(
                    f"{field} has {rows} rows for {users} users; a contiguous cache holds "
                    f"users x S rows, and {rows} is not a multiple of {users}"
                )
            return
        if self.block_size is None:
            raise self.err("a block table is given without block_size; a paged cache takes both")
        block = self.require_positive("block_size")
        if rows % block:
            raise self.err(
                f"{field} has {rows} rows, not a whole number of blocks of block_size {block}"
            )
        t_users, _ = self.require_rank("table", 2)
        elt = self.elt(self.table)
        if not (isinstance(elt, IntegerType) and elt.width.data == 32):
            raise self.err(f"table must hold i32 block ids, got {elt}")
        if t_users != users:
            raise self.err(f"table has {t_users} rows for {users} users; one row per user")


@irdl_op_definition
class BatchSetRowsOp(BatchedCacheOp):
    """The cache with user b's T rows written at its positions pos[b] .. pos[b] + T - 1 (the
    batched KV-cache update)."""

    name = "tg.batch_set_rows"
    cache = operand_def(TensorType)
    rows = operand_def(TensorType)
    pos = operand_def(TensorType)
    table = opt_operand_def(TensorType)
    res = result_def(TensorType)
    block_size = opt_prop_def(IntegerAttr[I64])
    RESULT_LIKE: ClassVar[str | None] = "cache"
    assembly_format = (
        "operands (`block_size` $block_size^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        cache: Value,
        rows: Value,
        pos: Value,
        table: Value | None = None,
        *,
        block_size: int | IntegerAttr | None = None,
    ):
        """Contiguous without `table`; paged with `table` and `block_size`."""
        bs = None if block_size is None else i64_property(self.name, "block_size", block_size)
        self.init_tg([cache, rows, pos, table], {"block_size": bs})

    def verify_shapes(self) -> None:
        _, d = self.require_rank("cache", 2)
        r, d2 = self.require_rank("rows", 2)
        if d2 != d:
            raise self.err(
                f"cache is {self.shape(self.cache)[0]}x{d} and rows is {r}x{d2}; "
                f"the widths {d} and {d2} differ"
            )
        self.require_same_element("rows", "cache")
        self.verify_users("rows", r)


@irdl_op_definition
class BatchAttentionOp(BatchedCacheOp):
    """T queries per user: user b's query i (row b*T + i) attends to its keys at positions
    0 .. pos[b] + i."""

    name = "tg.batch_attention"
    CACHE_FIELD: ClassVar[str] = "k"
    NEW_FIELD: ClassVar[str] = "q"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    pos = operand_def(TensorType)
    table = opt_operand_def(TensorType)
    res = result_def(TensorType)
    heads = prop_def(IntegerAttr[I64])
    kv_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    scale = prop_def(FloatAttr[Float32Type])
    block_size = opt_prop_def(IntegerAttr[I64])
    assembly_format = (
        "operands `heads` $heads `kv_heads` $kv_heads `head_dim` $head_dim `scale` $scale "
        "(`block_size` $block_size^)? attr-dict `:` functional-type(operands, results)"
    )

    def __init__(
        self,
        q: Value,
        k: Value,
        v: Value,
        pos: Value,
        table: Value | None = None,
        *,
        heads: int | IntegerAttr,
        kv_heads: int | IntegerAttr,
        head_dim: int | IntegerAttr | None = None,
        scale: float | FloatAttr | None = None,
        block_size: int | IntegerAttr | None = None,
        element_type: Attribute | None = None,
    ):
        """As `AttentionOp`'s builder (head_dim defaults to q's columns / heads, scale to
        1 / sqrt(head_dim)); paged with `table` and `block_size`."""
        props, result_type = head_properties(
            self.name, q, v, heads, kv_heads, head_dim, scale, element_type
        )
        props["block_size"] = (
            None if block_size is None else i64_property(self.name, "block_size", block_size)
        )
        self.init_tg([q, k, v, pos, table], props, result_type)

    def numbers(self) -> tuple[int, int, int, int]:
        """(heads, kv_heads, head_dim, v head dim)."""
        kv = self.kv_heads.value.data
        return self.heads.value.data, kv, self.head_dim.value.data, self.shape(self.v)[1] // kv

    def verify_shapes(self) -> None:
        b, q_cols, s, s_v, v_cols, h, kv = verify_heads(self)
        self.verify_users("q", b)
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != attention_shape((b, q_cols), (s_v, v_cols), h, kv):
            raise self.err(
                f"the result is {rows}x{cols}; it must be {b}x{h * (v_cols // kv)} "
                "(q's rows x heads * v head dim)"
            )
