"""size-buffers: FIFO depths from the credit loop under the local-memory budget, and a
deterministic memory map (docs/passes.md#size-buffers).

Depths. A FIFO exists to keep its consumer fed while its producer works, so its depth is what the
credit loop asks (Little's law): the producer cannot refill a page until the consumer's release
has travelled back, so the depth covers the whole loop, fetch and return, divided by the service
time it hides:

    depth = max(2, ceil((page_tiles * fetch_tile + credit_return) / service_page))

with the TARGET's declared latencies (a chip that declares none gets double buffering, what every
program we ran used). Only operand FIFOs (filled by a movement engine that can run ahead) are
deepened: the output FIFO's producer is the compute engine itself, which never has more than a
block of sub-blocks outstanding, and the spill's depth is a correctness constraint. A buffer's
depth is one number for all its instances, so the members of a multicast group (one buffer
replicated across a rectangle, landing at one address) agree by construction: each range asks
for its own depth and the buffer takes the MINIMUM, since a smaller depth is what some site
could afford. If the deepened buffers do not fit a site's default budget, the page with the most
bytes is given back, group-wide, until they do; if they never do, the old depths stay.

Layout. First-fit per site range in buffer order; multicast group buffers first, at one offset
every member can take (the largest cursor among them), because a multicast writes one local
address on every receiver; an alias at its target's offset; the accumulator is not in local
memory. A site over its configurable budget is LocalMemExceeded{site, needed, budget}; a
sub-block holding more accumulator tiles than the target has is AccTilesExceeded.

Traversal: the depths and the layout are whole-section decisions (a walk over the fused
sections); writing each FIFO's depth is a local rewrite, `SetFifoDepth`, a pattern that acts on
an sp.fifo whose depth is not yet the one decided for it.

resize-operand-fifos{depth=N} re-lays a sized program with every operand FIFO at N pages: depth
is the one buffering choice the cost model cannot score, so it is measured, and this is the
instrument that changes exactly that number between two runs.
"""

from __future__ import annotations

from collections.abc import Mapping
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

from spatial_dialect import sp
from spatial_dialect.passes.analysis import (
    k_block,
    memory_buffers,
    module_target,
    operand_fifos,
    refusals_at,
    sections_taken,
    site_bytes,
)
from spatial_dialect.sp import Phase, SizesAttr
from spatial_dialect.sp.errors import AccTilesExceeded, LocalMemExceeded, SpatialPassError
from spatial_dialect.targets import Target
from spatial_dialect.targets.gemm import ceil_div

Offsets = dict[sp.SitesOp, dict[str, int]]


def credit_depth(target: Target, page_tiles: int) -> int:
    fetch, credit, service = (
        target.fetch_tile_cycles,
        target.credit_return_cycles,
        target.service_page_cycles,
    )
    if fetch is None or credit is None or not service:
        return 2
    return max(2, ceil_div(page_tiles * fetch + credit, service))


def check_accumulator(program: sp.ProgramOp, target: Target) -> None:
    kw = k_block(program)
    for acc in program.ops_of(sp.AccOp):
        available = target.acc_tiles(str(acc.elt))
        for r in program.ops_of(sp.SitesOp):
            needed = acc.page_tiles(r.bindings(kw))
            if needed > available:
                raise AccTilesExceeded(needed, available, str(acc.elt))


def deepened(program: sp.ProgramOp, target: Target) -> dict[sp.FifoOp, int]:
    """Operand FIFO depths from the credit loop, shrunk group-wide under the default budget (none
    where even the shallowest do not fit: the old depths stay)."""
    ranges = program.ops_of(sp.SitesOp)
    kw = k_block(program)
    trial: dict[sp.MemoryBufferOp, int] = {}
    for fifo in operand_fifos(program):
        current = fifo.depth.resolve({})[0]
        want = min(credit_depth(target, fifo.page_tiles(r.bindings(kw))) for r in ranges)
        trial[fifo] = max(want, current)

    def page_bytes(fifo: sp.MemoryBufferOp) -> int:
        return max(fifo.page_tiles(r.bindings(kw)) for r in ranges) * fifo.tile_bytes

    def fits() -> bool:
        return max(site_bytes(program, r, trial) for r in ranges) <= target.local_mem_bytes

    # Give back pages one at a time, always from the buffer whose page costs the most bytes
    # (from every instance of it), until the site fits. A buffer's page cost is fixed, so that
    # is the buffers in that order, each down to 2 before the next: per buffer, the fewest pages
    # given back that fit is found by bisection (site bytes grow with depth), so a credit loop
    # of millions of pages costs a few dozen layouts, not millions.
    for fifo in sorted((f for f in trial if trial[f] > 2), key=page_bytes, reverse=True):
        if fits():
            break
        full = trial[fifo]
        trial[fifo] = 2
        if not fits():
            continue
        lo, hi = 2, full  # depth lo fits; depth hi does not
        while hi - lo > 1:
            mid = (lo + hi) // 2
            trial[fifo] = mid
            lo, hi = (mid, hi) if fits() else (lo, mid)
        trial[fifo] = lo
    if not fits():
        return {}
    return {f: d for f, d in trial.items() if isinstance(f, sp.FifoOp)}


@dataclass(frozen=True)
class SetFifoDepth(RewritePattern):
    """Give each FIFO of `depths` its decided depth; acts only on one whose depth differs."""

    depths: Mapping[sp.FifoOp, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: sp.FifoOp, rewriter: PatternRewriter) -> None:
        depth = self.depths.get(op)
        if depth is None or op.depth == SizesAttr.of(depth):
            return
        op.properties["depth"] = SizesAttr.of(depth)
        rewriter.notify_op_modified(op)


def set_depths(program: sp.ProgramOp, depths: Mapping[sp.FifoOp, int]) -> None:
    if depths:
        PatternRewriteWalker(
            GreedyRewritePatternApplier([SetFifoDepth(depths)], dce_enabled=False)
        ).rewrite_region(program.body)


def lay_out(program: sp.ProgramOp) -> None:
    """First-fit per range, group buffers first at one offset; refuses a site over budget."""
    mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
    assert mesh is not None and work is not None
    ranges = program.ops_of(sp.SitesOp)
    bindings = {r: r.bindings(work.k_block) for r in ranges}
    cursor = {r: 0 for r in ranges}
    offsets: Offsets = {r: {} for r in ranges}
    for group in program.ops_of(sp.GroupOp):
        buf = sp.buffer_of(group.buffer)
        assert isinstance(buf, sp.MemoryBufferOp)
        label = buf.label.data
        sites = {site for _, family in group.groups() for site in family}
        members = [r for r in ranges if any(site in sites for site in r.rect.sites())]
        if any(label in offsets[r] for r in members):
            continue
        at = max(cursor[r] for r in members)
        for r in members:
            offsets[r][label] = at
            cursor[r] = at + buf.bytes(bindings[r])
    for buf in memory_buffers(program):
        label = buf.label.data
        target = buf.alias_of
        for r in ranges:
            if label in offsets[r]:
                continue
            if target is not None:
                offsets[r][label] = offsets[r][target.label.data]
                continue
            offsets[r][label] = cursor[r]
            cursor[r] += buf.bytes(bindings[r])
    budget = mesh.local_mem
    for r in ranges:
        if cursor[r] > budget:
            x0, _, y0, _ = r.rect.bounds
            raise LocalMemExceeded((x0, y0), cursor[r], budget)
    for r in ranges:
        r.set_offsets({b.label.data: offsets[r][b.label.data] for b in memory_buffers(program)})


def size_section(program: sp.ProgramOp, target: Target) -> None:
    """Check the accumulator, deepen the operand FIFOs, lay the buffers out."""
    check_accumulator(program, target)
    plan = program.one(sp.PlanOp)
    assert plan is not None
    # A streaming site holds one tile per page and walks tiles as fast as they come: its
    # double buffering is tt-metal's, and the credit loop is the blocked plans' question.
    if not plan.streaming:
        set_depths(program, deepened(program, target))
    lay_out(program)
    program.set_phase(Phase.SIZED)


@dataclass(frozen=True)
class SizeBuffersPass(ModulePass):
    """`size-buffers`: depths and the memory map of every fused section."""

    name = "size-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = module_target(op, self.name)
        for program in sections_taken(op, self.name, Phase.FUSED):
            with refusals_at(program):
                size_section(program, target)


@dataclass(frozen=True)
class ResizeOperandFifosPass(ModulePass):
    """`resize-operand-fifos{depth=N}`: every operand FIFO of a sized program at N pages, laid out
    again (the instrument that measures depth)."""

    name = "resize-operand-fifos"
    depth: int = 2

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.depth < 1:
            raise SpatialPassError(f"resize-operand-fifos: depth {self.depth} must be at least 1")
        module_target(op, self.name)
        for program in sections_taken(op, self.name, Phase.SIZED):
            with refusals_at(program):
                set_depths(program, dict.fromkeys(operand_fifos(program), self.depth))
                lay_out(program)
