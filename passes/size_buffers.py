"""size-buffers: FIFO depths from the credit loop under the local-memory budget, and a
deterministic memory map (seed 001).

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

resize-operand-fifos{depth=N} re-lays a sized program with every operand FIFO at N pages: depth
is the one buffering choice the cost model cannot score, so it is measured, and this is the
instrument that changes exactly that number between two runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter

from spatial_dialect import sp
from spatial_dialect.passes.common import SectionPattern, module_target, run_sections
from spatial_dialect.sp import Phase, SizesAttr
from spatial_dialect.sp.errors import AccTilesExceeded, LocalMemExceeded, SpatialPassError
from spatial_dialect.targets import Target

Offsets = dict[sp.SitesOp, dict[str, int]]


def credit_depth(target: Target, page_tiles: int) -> int:
    fetch, credit, service = (
        target.fetch_tile_cycles,
        target.credit_return_cycles,
        target.service_page_cycles,
    )
    if fetch is None or credit is None or not service:
        return 2
    return max(2, -(-(page_tiles * fetch + credit) // service))


def operand_fifos(program: sp.ProgramOp) -> list[sp.FifoOp]:
    fifos = [sp.buffer_of(ld.dst) for ld in program.ops_of(sp.LoadOp)]
    return [f for f in dict.fromkeys(fifos) if isinstance(f, sp.FifoOp)]


def memory_buffers(program: sp.ProgramOp) -> list[sp.MemoryBufferOp]:
    return [b for b in program.buffers() if isinstance(b, sp.MemoryBufferOp)]


def site_bytes(
    program: sp.ProgramOp, r: sp.SitesOp, depths: dict[sp.MemoryBufferOp, int] | None = None
) -> int:
    """Bytes of one site of range `r` (aliases share their target's), at `depths` where given."""
    b = r.bindings(program.one(sp.WorkOp).k_block)  # type: ignore[union-attr]
    return buffer_bytes(memory_buffers(program), b, depths)


def buffer_bytes(
    buffers: Sequence[sp.MemoryBufferOp],
    bindings: dict[str, int],
    depths: dict[sp.MemoryBufferOp, int] | None = None,
) -> int:
    """Bytes of a site's buffers (a section's `memory_buffers`) under the size symbols
    `bindings`: what lay_out lays out, and what tile prices a candidate plan of a stream section
    with (one function for both)."""
    total = 0
    for buf in buffers:
        if buf.alias is None:
            depth = (depths or {}).get(buf) or buf.depth.resolve(bindings)[0]
            total += depth * buf.page_tiles(bindings) * buf.tile_bytes
    return total


def check_accumulator(program: sp.ProgramOp, target: Target) -> None:
    k_block = program.one(sp.WorkOp).k_block  # type: ignore[union-attr]
    for acc in program.ops_of(sp.AccOp):
        available = target.acc_tiles(str(acc.elt))
        for r in program.ops_of(sp.SitesOp):
            needed = acc.page_tiles(r.bindings(k_block))
            if needed > available:
                raise AccTilesExceeded(needed, available, str(acc.elt))


def deepen(program: sp.ProgramOp, target: Target) -> None:
    """Operand FIFO depths from the credit loop, shrunk group-wide under the default budget."""
    ranges = program.ops_of(sp.SitesOp)
    k_block = program.one(sp.WorkOp).k_block  # type: ignore[union-attr]
    trial: dict[sp.MemoryBufferOp, int] = {}
    for fifo in operand_fifos(program):
        current = fifo.depth.resolve({})[0]
        want = min(credit_depth(target, fifo.page_tiles(r.bindings(k_block))) for r in ranges)
        trial[fifo] = max(want, current)

    def page_bytes(fifo: sp.MemoryBufferOp) -> int:
        return max(fifo.page_tiles(r.bindings(k_block)) for r in ranges) * fifo.tile_bytes

    while max(site_bytes(program, r, trial) for r in ranges) > target.local_mem_bytes:
        # Give back the page that costs the most bytes, from every instance of its buffer.
        victims = [f for f in trial if trial[f] > 2]
        if not victims:
            return
        trial[max(victims, key=page_bytes)] -= 1
    for fifo, depth in trial.items():
        fifo.properties["depth"] = SizesAttr.of(depth)


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


@dataclass
class SizeSection(SectionPattern):
    target: Target
    pass_name = "size-buffers"
    takes_phase = Phase.FUSED

    def rewrite(self, program: sp.ProgramOp, rewriter: PatternRewriter) -> None:
        check_accumulator(program, self.target)
        plan = program.one(sp.PlanOp)
        assert plan is not None
        # A streaming site holds one tile per page and walks tiles as fast as they come: its
        # double buffering is tt-metal's, and the credit loop is the blocked plans' question.
        if not plan.streaming:
            deepen(program, self.target)
        lay_out(program)
        program.set_phase(Phase.SIZED)


@dataclass
class ResizeSection(SectionPattern):
    depth: int
    pass_name = "resize-operand-fifos"
    takes_phase = Phase.SIZED

    def rewrite(self, program: sp.ProgramOp, rewriter: PatternRewriter) -> None:
        for fifo in operand_fifos(program):
            fifo.properties["depth"] = SizesAttr.of(self.depth)
        lay_out(program)


@dataclass(frozen=True)
class SizeBuffersPass(ModulePass):
    """`size-buffers`: depths and the memory map of every fused section."""

    name = "size-buffers"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        run_sections(op, SizeSection(module_target(op, self.name)))


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
        run_sections(op, ResizeSection(self.depth))
