"""fuse-operands: how operands that several work items read reach them (docs/passes.md#fuse-operands).

On a mesh with rectangle multicast (Tensix) under the 2-D map, every site of a row computes, in
every round, a block of the same block row, so they all read the same A blocks, and a column the
same B blocks. Fetching them once is the point of the 2-D map: a row of sites becomes a
multicast group for A (sender x = 0, one DRAM read, one multicast per K block) and a column a
group for B (sender y = 0). On a line plan every site of the line reads the same A (a GX x 1
line) or B (1 x GY): the line is one group, sender its first site. Multicast is the plan's choice
per operand (`sp.plan ... multicast a, b`): where the sender's read-then-send chain would bind,
tile lets every site read the operand itself, and then no group is formed for it. A group needs
at least two sites; what the cost model priced (`mcast_a`, `mcast_b`) is exactly this rule, so
the prediction recorded by tile holds.

On a fabric without multicast rectangles but with a vector network (Plasticine), each shared
operand panel is either broadcast over the fabric or fetched by every consumer, decided by
`share_operand` from the machine and the shape only: the DRAM cycles the copies a broadcast avoids
would cost, against what the panel's stream across its hops (pipelined links: words + hops - 1)
adds once it overlaps the DRAM reads (`memory_cycles`, the cost model's rule too). The decision
and its numbers are recorded (`sp.share`), and the report counts exactly the DRAM bytes it chose.
Moving only a cost of the target flips it (test/fuse-operands has the two target files).

Elsewhere (a GPU's SMs share nothing on chip; a streaming plan on Tensix is dealt out flat, so
its rows of sites hold no common block row; a stream section shares no operand) there is nothing
to fuse and the section only advances to the fused phase.

Traversal: which groups and sharings a section gets is a whole-section decision (a walk over the
placed sections, building sp.group and sp.share ops); naming each load's group is a local
rewrite, `JoinMulticastGroup`, a pattern that acts on an sp.load whose FIFO a group of its
section multicasts and that does not name it yet.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint, Rewriter

from spatial_dialect import sp
from spatial_dialect.passes.dram_layout import dram_tile_bytes
from spatial_dialect.passes.gemm_view import GemmView, gemm_plan
from spatial_dialect.passes.phases import refusals_at, sections_taken
from spatial_dialect.passes.target_choice import module_target
from spatial_dialect.sp import GroupAxis, Phase, RectAttr
from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import (
    OperandStream,
    gemm_dram_rate,
    gemm_operand_streams,
    share_operand,
)
from spatial_dialect.targets.gemm import ceil_div


def multicast_groups(
    program: sp.ProgramOp,
    plan: sp.PlanOp,
    gemm: GemmView,
    mesh_x: int,
    rewriter: Rewriter,
) -> None:
    """The groups of the operands the plan multicasts: on a grid a row of sites shares A (sender
    x = 0) and a column B (sender y = 0), within each K slice of a split-K plan; on a line the
    whole line shares its operand (sender its first site)."""
    gx, gy = program.item_space().grid
    chosen = plan.multicast_operands
    last_buffer = program.buffers()[-1]
    if plan.is_line:
        sites = gx * gy
        cols, rows = min(sites, mesh_x), ceil_div(sites, mesh_x)
        rect = RectAttr.of(0, cols - 1, 0, rows - 1)
        shared = (gemm.load_a, "a") if gy == 1 else (gemm.load_b, "b")
        families = [(shared[0], GroupAxis.LINE, sites if shared[1] in chosen else 0, None)]
    else:
        # Split-K's slices are copies of the grid side by side: a row (column) of sites across
        # them is cut into one group per slice, each reading its own K range.
        work = program.one(sp.WorkOp)
        assert work is not None
        slices, along = work.k_slices, work.split_axis
        ex, ey = (gx * slices, gy) if along == "x" else (gx, gy * slices)
        rect = RectAttr.of(0, ex - 1, 0, ey - 1)
        families = [
            (gemm.load_a, GroupAxis.ROWS, gx if "a" in chosen else 0, gx if ex > gx else None),
            (gemm.load_b, GroupAxis.COLUMNS, gy if "b" in chosen else 0, gy if ey > gy else None),
        ]
    for load, axis, members, every in families:
        if members < 2:
            continue
        buffer = sp.buffer_of(load.dst)
        group = sp.GroupOp(
            f"{buffer.label.data}_{axis.value}",
            load.dst,
            axis,
            rect,
            0,
            members if axis == GroupAxis.LINE else None,
            every,
        )
        rewriter.insert_op(group, InsertPoint.after(last_buffer))
        last_buffer = group


def site_of_items(program: sp.ProgramOp) -> dict[int, tuple[int, int]]:
    return {
        i: (x, y)
        for r in program.ops_of(sp.SitesOp)
        for x, y in r.rect.sites()
        for i in r.items(x, y)
    }


def operand_streams(
    program: sp.ProgramOp, gemm: GemmView, target: Target
) -> list[tuple[sp.LoadOp, OperandStream]]:
    """Each operand's stream as the cost model priced it (:func:`gemm_operand_streams`), with the
    sites read off the placed ranges."""
    space = program.item_space()
    kt = program.one(sp.WorkOp).k_tiles  # type: ignore[union-attr]
    where = site_of_items(program)
    a, b = gemm.tensor(gemm.load_a), gemm.tensor(gemm.load_b)
    a_stream, b_stream = gemm_operand_streams(
        (a.sym_name.data, b.sym_name.data),
        # DRAM pages in the storage the operand FIFOs hold them in (an integer operand may
        # convert on load), as the cost model's sharing prices them
        (
            dram_tile_bytes(target, a, sp.buffer_of(gemm.matmul.in0).storage),
            dram_tile_bytes(target, b, sp.buffer_of(gemm.matmul.in1).storage),
        ),
        (space.block_m, space.block_n),
        kt,
        (space.items_m, space.items_n),
        lambda i, j: where[space.item(i, j)],
    )
    return [(gemm.load_a, a_stream), (gemm.load_b, b_stream)]


def share_decisions(
    program: sp.ProgramOp, gemm: GemmView, target: Target, rewriter: Rewriter
) -> None:
    anchor: sp.SectionOp = program.buffers()[-1]
    # The copies priced at the DRAM rate the planner priced this plan's traffic at.
    rate = gemm_dram_rate(target, gemm.shape(), gemm_plan(program))
    for load, stream in operand_streams(program, gemm, target):
        d = share_operand(stream, target, rate)
        numbers = {
            "consumers": stream.consumers,
            "bytes": stream.bytes,
            "hops": stream.broadcast_hops,
            "dram_cycles_saved": d.dram_cycles_saved,
            "fabric_cycles_added": d.fabric_cycles_added,
            "copies": d.copies,
        }
        sharing = sp.Sharing(d.sharing.value)  # the cost model's answer, as the dialect's enum
        share = sp.ShareOp(load.tensor.root_reference.data, sharing, numbers, d.why)
        rewriter.insert_op(share, InsertPoint.after(anchor))
        anchor = share


def fuse_section(program: sp.ProgramOp, target: Target, rewriter: Rewriter) -> None:
    """The section's multicast groups (rectangle multicast, a blocked GEMM) or sharing decisions
    (a fabric without multicast rectangles), then the fused phase."""
    plan = program.one(sp.PlanOp)
    assert plan is not None
    if program.kind.is_gemm:
        gemm = GemmView.of(program)
        if target.multicasts_rectangles and not plan.streaming:
            multicast_groups(program, plan, gemm, target.mesh_x, rewriter)
        elif not target.multicasts_rectangles and target.fabric_word_bytes is not None:
            share_decisions(program, gemm, target, rewriter)
    program.set_phase(Phase.FUSED)


class JoinMulticastGroup(RewritePattern):
    """An sp.load whose FIFO a multicast group of its section fills names that group (the
    group's sender reads for every member). Acts only on a load that does not name it yet."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sp.LoadOp, rewriter: PatternRewriter) -> None:
        program = op.parent_op()
        if op.group is not None or not isinstance(program, sp.ProgramOp):
            return
        group = next((g for g in program.ops_of(sp.GroupOp) if g.buffer == op.dst), None)
        if group is None:
            return
        joined = sp.LoadOp(
            op.tensor.root_reference.data,
            op.access,
            op.dst,
            group=group.sym_name.data,
            engine=op.engine,
        )
        joined.attributes.update(op.attributes)
        rewriter.replace(op, joined)


@dataclass(frozen=True)
class FuseOperandsPass(ModulePass):
    """`fuse-operands`: multicast groups on Tensix, broadcast-or-replicate on the RDU."""

    name = "fuse-operands"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.name)
        rewriter = Rewriter()
        for program in sections_taken(op, self.name, Phase.PLACED):
            with refusals_at(program):
                fuse_section(program, target, rewriter)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([JoinMulticastGroup()], dce_enabled=False)
        ).rewrite_module(op)
