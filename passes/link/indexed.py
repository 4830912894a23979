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

A Q8_0 table (docs/passes.md#link-a-q8_0-table-gathers-its-rows): a tg.dequantize_q8_0 (blocks
along rows) of a gather of the table's values and a gather of its scales by the same ids is one
gather of Q8_0 rows. The values' gather reads the ids' rows of the ONE Q8_0 tensor (values with
their scales, as stored) into a Q8_0 tensor of T rows named for its result; the scales' gather
has no section (its rows travel with the values'); the dequantize widens those T rows only.
"""

from __future__ import annotations

from xdsl.ir import BlockArgument

from spatial_dialect import sp, tg
from spatial_dialect.passes.link.context import (
    BLOCK,
    C0,
    R0,
    LinkContext,
    ProgramBuilder,
    q8_0_format,
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


def q8_0_row_gather(op: tg.DequantizeQ8_0Op) -> tuple[tg.GatherRowsOp, tg.GatherRowsOp] | None:
    """The gathers of a Q8_0 table's values and of its scales (function arguments) by one ids
    vector, read by `op` alone, blocks along rows: one gather of Q8_0 rows (module docstring).
    None where `op` dequantizes anything else."""
    v, sc = op.values.owner, op.scales.owner
    if not (isinstance(v, tg.GatherRowsOp) and isinstance(sc, tg.GatherRowsOp)):
        return None
    if op.block_axis() != 1 or v.ids != sc.ids:
        return None
    if not all(isinstance(g.table, BlockArgument) for g in (v, sc)):
        return None  # a table's scales are named by argument (docs/sp.md#q8_0-tensors)
    if any(len(list(g.res.uses)) != 1 for g in (v, sc)):
        return None
    return v, sc


def _q8_0_half(op: tg.GatherRowsOp) -> tuple[tg.GatherRowsOp, tg.GatherRowsOp] | None:
    """The Q8_0 row gather `op` is the values' or the scales' gather of, if any."""
    use = next(iter(op.res.uses), None)
    if use is None or not isinstance(use.operation, tg.DequantizeQ8_0Op):
        return None
    return q8_0_row_gather(use.operation)


def link_gather(op: tg.GatherRowsOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    pair = _q8_0_half(op)
    if pair is not None and op is pair[1]:
        return []  # the scales' rows: gathered with the values', as the Q8_0 table stores them
    s = ProgramBuilder(ctx, op)
    if pair is None:
        table = s.input(op.table)
        ids = s.input(op.ids)
        y = s.output(op.res, Layout.ROWS)
    else:
        scales = ctx.names[pair[1].table]
        table = s.declare(
            ctx.q8_0_tensor(
                op.table, ctx.names[op.table], TensorRole.INPUT, q8_0_format(1), scales=scales
            )
        )
        ids = s.input(op.ids)
        y = s.declare(
            ctx.q8_0_tensor(op.res, ctx.names[op.res], TensorRole.SCRATCH, q8_0_format(1))
        )
        s.why(
            "q8_0_rows",
            f"the ids' rows of the Q8_0 @{table.sym_name.data} with their scales (@{scales}): "
            f"{valid(op.res)[0]} row(s) to dequantize, not the table",
        )
    if table.layout.data == Layout.TILED:
        s.why(
            "table_layout",
            f"rows read from the tiled @{table.sym_name.data} (row id % {ctx.tile[0]} of the "
            f"tiles of tile row id / {ctx.tile[0]}): no whole-table untilize",
        )
    out = s.fifo("out", y, 1, "w")
    count = valid(op.res)[0]
    s.stage(
        GatherOp(table.sym_name.data, ids.sym_name.data, AccessAttr.of(R0, C0, 1, "w"), count, out)
    )
    s.store(out, y, AccessAttr.of(R0, C0, 1, "w"))
    return [s.build(y.sym_name.data, SectionKind.GATHER)]


def cache_copy(op: tg.SetRowsOp | tg.BatchSetRowsOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    """A cache write's copy of the old cache, where the old one is read after the update (the
    result is not updated in place); none where it is. Shared by tg.set_rows and
    tg.batch_set_rows."""
    if ctx.names[op.res] == ctx.names[op.cache]:
        return []
    s = ProgramBuilder(ctx, op)
    cache, copy = s.input(op.cache), s.output(op.res)
    s.why("carried", f"copied: the old @{cache.sym_name.data} is read after the update")
    return [map_section(ctx, op, "copy", [(cache, Mode.FULL, BLOCK)], copy, s)]


def link_set_rows(op: tg.SetRowsOp, ctx: LinkContext) -> list[sp.ProgramOp]:
    sections = cache_copy(op, ctx)
    s = ProgramBuilder(ctx, op)
    rows, pos = s.input(op.rows), s.input(op.pos)
    result = ctx.tensor(op.res, TensorRole.OUTPUT)
    s.declare(result)
    if not sections:
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
