"""link for the ops that move rows named at run time: tg.gather_rows and tg.set_rows.

    gather_rows gather @table by @ids[r0, c0] x [1, w] -> store y[r0, c0] x [1, w]: each row
                of the page is the table's row named by its id, read at run time (range-checked)
    set_rows    load rows[r0, c0] x [1, w] -> scatter into the cache at the runtime position.
                The cache is carried state, updated in place (one DRAM tensor for the cache and
                the result, link/context.py carried_names) when nothing reads the old cache
                later; otherwise a copy section (a map) first makes the result, and the rows
                land in the copy.

A gather writes its rows in `rows` layout and reads its table in the layout the prelude decided
for it (docs/passes.md#link-a-gather-reads-a-tiled-table-directly): rows, unless another reader
lays it out tiled (the LM head of tied embeddings reads the table as a matrix), and then it reads
the id's row straight from the tiles of the table's tile row, never through a whole-table
untilize for the few rows it needs.
"""

from __future__ import annotations

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    R0,
    LinkContext,
    ProgramBuilder,
    valid,
)
from spatial_dialect.passes.link.maps import map_section
from spatial_dialect.sp import (
    AccessAttr,
    GatherOp,
    Layout,
    Mode,
    ScatterOp,
    SectionKind,
    TensorRole,
)


def link_gather(op: tg.GatherRowsOp, ctx: LinkContext) -> sp.ProgramOp:
    s = ProgramBuilder(ctx, op)
    table, ids = s.input(op.table), s.input(op.ids)
    if table.layout.data == Layout.TILED:
        s.why(
            "table_layout",
            f"rows read from the tiled @{table.sym_name.data} (row id % {ctx.tile[0]} of the "
            f"tiles of tile row id / {ctx.tile[0]}): no whole-table untilize",
        )
    y = s.output(op.res, Layout.ROWS)
    out = s.fifo("out", y, 1, "w")
    count = valid(op.res)[0]
    s.stage(
        GatherOp(table.sym_name.data, ids.sym_name.data, AccessAttr.of(R0, C0, 1, "w"), count, out)
    )
    s.store(out, y, AccessAttr.of(R0, C0, 1, "w"))
    return s.build(y.sym_name.data, SectionKind.GATHER)


def link_set_rows(op: tg.SetRowsOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    in_place = ctx.names[op.res] == ctx.names[op.cache]
    sections = []
    if not in_place:
        s = ProgramBuilder(ctx, op)
        cache, copy = s.input(op.cache), s.output(op.res)
        s.why("carried", f"copied: the old @{cache.sym_name.data} is read after the update")
        sections.append(map_section(ctx, op, "copy", [(cache, Mode.FULL, BLOCK)], copy, s))
    s = ProgramBuilder(ctx, op)
    rows, pos = s.input(op.rows), s.input(op.pos)
    result = ctx.tensor(op.res, TensorRole.OUTPUT)
    s.declare(result)
    if in_place:
        s.why("carried", f"in place: @{result.sym_name.data} is the cache and its update")
    in0 = s.fifo("in0", rows, 1, "w")
    block = AccessAttr.of(R0, C0, 1, "w")
    s.load(rows, block, in0)
    count = valid(op.rows)[0]
    s.stage(ScatterOp(result.sym_name.data, pos.sym_name.data, block, count, in0))
    sections.append(s.build(result.sym_name.data, SectionKind.SCATTER))
    return sections


LINKERS = {tg.GatherRowsOp: link_gather, tg.SetRowsOp: link_set_rows}
"""The ops this module links."""
