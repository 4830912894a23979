"""link for the batched decode ops (docs/passes.md#link-the-batched-decode-step): the
single-user sections with the user as one more dimension.

    batch_set_rows   load rows[r0, c0] x [1, w] -> scatter into the cache, row r of user
                     r / T at its position pos[r / T] + r mod T (sp.scatter `tokens T`),
                     contiguous (b * S + j) or through the block table (`table`, `block_size`)
    batch_attention  the flash section (link/attention.py) over the users' caches one after
                     another: K and V loads of users' caches (sp.load `users`), from key tile
                     r0 * S / T where each query tile row walks its own users' caches, the
                     stage's block-diagonal causal mask (sp.attention `users`, `capacity`);
                     paged, on a target whose kernels cannot address DRAM by a block id they
                     read, after a gather of each pool into a contiguous scratch (sp.gather
                     `table`)

The write is the single-user write (link/indexed.py): the items are the same blocks of the rows
written, so the B users' rows are written by the sites that would write B rows of one user, and
the positions and block ids are read at run time by the scatter itself (checked, for every user,
before anything is written). The cache is carried state as tg.set_rows's: updated in place when
nothing reads the old cache later (link/context.py carried_names), else copied first.

The attention keeps the single-user item space (query blocks x heads of one kv head): laying
the caches one after another makes one K loop serve every user of an item, each user's K and V
read once, in either layout, and the mask (not the addressing) keeps users apart. Where the
queries fill more than one tile row and whole ones (sp/item_space.users_key_range: T divides the tile's
rows and S), an item is one tile row of queries and its K loop walks only its own th / T users'
caches, S / T key tiles from key tile r0 * S / T: no item reads a cache of a user it does not
serve, so each K and V byte is read once per head group that reads it. Otherwise (the users
fit one tile row, or the last tile row is partial) every item walks every cache, masked. Why
not an item per user: B users of one token fill one tile row of queries, so items per user
would read the same tile of q B times and leave the tile's other rows idle; and items that
share the result's tile row cannot each write their own rows where a kernel moves whole tiles
(TT-Lang). The heads of an item are tile's choice (g of the group's G, weighed against
spreading over sites), so the unsplit section reads K and V G / g times. It is priced at every
user's full capacity, since the positions are known at run time only.

Where the queries fit one tile row, the attention is also split **by whole users**
(link/attention.py `user_splits`): split p of P walks only its U / P users' caches and writes
their rows' results into a page of its own; a sum section adds the P pages (each row's value is
whole in its user's split). Items are P x kv heads x G / g, so g = G (each K and V byte read
once) still fills the sites: on Llama-3.1-8B at 32 users this is what brings the step within
1.15x of its roofline on n150 and p150 (bench/README.md). It is priced beside the unsplit
section (and the key splits where they apply) and chosen by price on every target.

Flash decoding also splits it as one query row's keys (link/attention.py `split_batch`): the P
splits cut the users' caches laid one after another, so a split is one K range of one user's
cache or of a few users' (where P is a multiple of U, of exactly one), and every K and V byte
is still read once per head group. Why not the range j of every user's cache per split: the
bytes read are the same, and the walk the loads of users' caches already make stays the one
addressing (paged or not). The partials carry the Q query rows' outputs and their m and l (2 Q
rows), so they fit one page only while 2 Q <= the tile's rows (16 one-token users on a 32-row
tile): past that, or where the target's kernels cannot carry them (Target.batched_kv_splits:
TT-Lang's flash.py moves one row's), the section is unsplit and unpriced; kv-splits forces a
count anywhere the partials fit.

A paged cache is read through its block table by the attention's own K and V loads only where
the target's kernels can address DRAM by a value they read (Target.kernel_reads_by_id: a GPU
thread loads from any address it computes). A TT-Lang kernel cannot (no scalar read, no
runtime argument), so there each of K's and V's pools is first gathered into a U x S scratch
(zero past each user's position: the pages the paged load would read), a section of its own
that the report prices (its rows read and written) and every executor runs (on TT-Lang a host
step, as the embedding's gather), and the attention is the contiguous one over the scratches.
What is planned is what runs: the copy is not hidden inside a kernel the chip cannot print.

Nothing is refused here: the REFUSED table stays, empty, as link's one place for an op that has
no section form (test/test_coverage.py reads it).
"""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr, SymbolRefAttr
from xdsl.ir import Operation

from spatial_dialect import sp, tg
from spatial_dialect.passes.link import attention
from spatial_dialect.passes.link.context import (
    C0,
    R0,
    LinkContext,
    ProgramBuilder,
    head_tiles,
    valid,
)
from spatial_dialect.passes.link.indexed import cache_copy
from spatial_dialect.sp import AccessAttr, GatherOp, ScatterOp, SectionKind, TensorRole
from spatial_dialect.sp.item_space import users_key_range


def link_batch_set_rows(op: tg.BatchSetRowsOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    sections = cache_copy(op, ctx)
    s = ProgramBuilder(ctx, op)
    rows, pos = s.input(op.rows), s.input(op.pos)
    table = s.input(op.table) if op.table is not None else None
    result = ctx.tensor(op.res, TensorRole.OUTPUT)
    s.declare(result)
    if not sections:
        s.why("carried", f"in place: @{result.sym_name.data} is the cache and its update")
    users, tokens = op.users(), op.tokens()
    layout = (
        f"paged: blocks of {op.block_size_value()} rows named by @{table.sym_name.data}"
        if table is not None
        else f"contiguous: {op.capacity()} rows per user"
    )
    s.why(
        "batch",
        f"{users} users x {tokens} row(s), each at its own position read from "
        f"@{pos.sym_name.data} ({layout}); an idle user (-1) writes nothing",
    )
    in0 = s.fifo("in0", rows, 1, "w")
    block = AccessAttr.of(R0, C0, 1, "w")
    s.load(rows, block, in0)
    count = valid(op.rows)[0]
    s.stage(
        ScatterOp.batched(
            result.sym_name.data,
            pos.sym_name.data,
            block,
            count,
            in0,
            tokens,
            None if table is None else table.sym_name.data,
            None if table is None else op.block_size_value(),
        )
    )
    sections.append(s.build(result.sym_name.data, SectionKind.SCATTER))
    return sections


def link_batch_attention(op: tg.BatchAttentionOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    heads, kv, d, dv = op.numbers()
    dt, dvt = head_tiles(
        op, ctx, {"head_dim": d, "the v head dim": dv}, "the flash form reads a head as whole tiles"
    )
    users, tokens, capacity = op.users(), op.tokens(), op.capacity()
    numbers = {
        "heads": heads,
        "kv_heads": kv,
        "head_dim": d,
        "v_head_dim": dv,
        "queries": users * tokens,
        "keys": users * capacity,
    }
    table = ctx.names[op.table] if op.table is not None else None
    block = op.block_size_value() if op.table is not None else None
    gathers: list[sp.ProgramOp] = []
    layout = (
        f"paged: blocks of {block} rows named by @{table}"
        if table is not None
        else f"contiguous: {capacity} rows per user"
    )
    if table is not None and not ctx.target.kernel_reads_by_id:
        gathers, copies = _gather_caches(op, ctx)
        layout = f"contiguous: the paged caches copied to {', '.join(copies.values())} first"
        table = block = None
    batch = attention.Users(users, capacity, tokens, table, block)
    key_tiles = ctx.tiles(users * capacity, 1)[0]
    shape = attention.Shape(op, heads, kv, dt, dvt, key_tiles, numbers, batch)
    made = attention.split_batch(shape, ctx)
    section = made[0]  # the attention, or the split's partials (the combine reads no cache)
    if gathers:
        _read_copies(section, gathers)
    ranged = users_key_range(users * tokens, users, capacity, ctx.tile[0])
    split = next(iter(section.ops_of(sp.AttentionOp)))
    walk = (
        f"a split's own {users // split.splits} users' caches"
        if split.by_users is not None and split.splits
        else "the users' caches"
        if ranged is None
        else f"a query tile row's own {ctx.tile[0] // tokens} users' caches ({ranged} key tiles)"
    )
    section.attributes["batch"] = StringAttr(
        f"{users} users x {tokens} query row(s), one K loop over {walk} one after "
        f"another ({layout}; each position read only up to the user's own, zero past it), a "
        "block-diagonal causal mask; priced at every user's full capacity (the positions are "
        "known at run time only)"
    )
    return [*gathers, *made]


def _gather_caches(
    op: tg.BatchAttentionOp, ctx: LinkContext
) -> tuple[list[sp.ProgramOp], dict[str, str]]:
    """The gather sections of a paged attention on a target whose kernels cannot address DRAM
    by a block id they read (Target.kernel_reads_by_id; module docstring): each of K and V's
    pools copied to a contiguous U x S scratch, zero past each user's position. With the
    names {pool: @copy}."""
    users, tokens, capacity, block = op.users(), op.tokens(), op.capacity(), op.block_size_value()
    sections: list[sp.ProgramOp] = []
    copies: dict[str, str] = {}
    for cache in dict.fromkeys((op.k, op.v)):
        s = ProgramBuilder(ctx, op)
        pool, pos, table = s.input(cache), s.input(op.pos), s.input(op.table)  # type: ignore[arg-type]
        # the scratch is named for its section (a deployment's prefill and decode both gather)
        name = ctx.section_name(f"{pool.sym_name.data}__users")
        ctx.sections.discard(name)  # build() takes it
        width = valid(cache)[1]
        copy = s.declare(ctx.scratch(name, (users * capacity, width), pool.element_type))
        out = s.fifo("out", copy, 1, "w")
        access = AccessAttr.of(R0, C0, 1, "w")
        s.stage(
            GatherOp.of_users(
                pool.sym_name.data,
                pos.sym_name.data,
                access,
                users * capacity,
                out,
                table.sym_name.data,
                block,
                capacity,
                tokens,
            )
        )
        s.store(out, copy, access)
        s.why(
            "batch",
            f"{users} users' caches copied from the pool @{pool.sym_name.data} (blocks of "
            f"{block} rows named by @{table.sym_name.data}) to {capacity} contiguous rows each, "
            f"zero past each user's position: the attention's kernels cannot address DRAM by a "
            f"block id they read ({ctx.target.name}: kernel_reads_by_id false)",
        )
        sections.append(s.build(name, SectionKind.GATHER))
        copies[pool.sym_name.data] = f"@{name}"
    return sections, copies


def _read_copies(section: sp.ProgramOp, gathers: list[sp.ProgramOp]) -> None:
    """The attention section reads the gathers' contiguous copies in place of the pools."""
    for gather in gathers:
        (stage,) = gather.ops_of(GatherOp)
        pool = stage.tensor.root_reference.data
        copy = gather.one(sp.StoreOp).tensor.root_reference.data  # type: ignore[union-attr]
        old = section.tensor(pool)
        new = gather.tensor(copy).clone()
        new.properties["role"] = sp.TensorRoleAttr(TensorRole.INPUT)
        old.parent_block().insert_op_before(new, old)  # type: ignore[union-attr]
        old.detach()
        old.erase()
        for load in section.ops_of(sp.LoadOp):
            if load.tensor.root_reference.data == pool:
                load.properties["tensor"] = SymbolRefAttr(copy)


LINKERS = {tg.BatchSetRowsOp: link_batch_set_rows, tg.BatchAttentionOp: link_batch_attention}
"""The ops this module links."""

REFUSED: dict[type[Operation], str] = {}
"""The tg ops link refuses, each with its reason (test/test_coverage.py reads this table)."""
