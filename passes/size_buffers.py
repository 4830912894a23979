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
block of sub-blocks outstanding, and the spill's depth is a correctness constraint. The depth is
per site range, in the range's memory map (`in0 = 0 depth 8`), because the credit loop is a
function of the page and a boundary range's pages are smaller than the interior's: one number
per buffer (the minimum over all ranges) starved the interior of a 7x5-tile GEMM on a 4x4 mesh
to the boundary's 4 pages where its own loop asks for 8. Only the members of one multicast
group must agree (one buffer replicated across a rectangle, landing at one address), and they
take the group's MINIMUM, since a smaller depth is what some member could afford. If a range's
deepened buffers do not fit its default budget, the page with the most bytes is given back
until they do, and the range's group partners give back the same; a range where they never do
keeps its old depths.

Layout. First-fit per site range in buffer order; multicast group buffers first, at one offset
every member can take (the largest cursor among them), because a multicast writes one local
address on every receiver; an alias at its target's offset; the accumulator is not in local
memory. A site over its configurable budget is LocalMemExceeded{site, needed, budget}; a
sub-block holding more accumulator tiles than the target has is AccTilesExceeded.

Traversal: the depths and the layout are whole-section decisions (a walk over the fused
sections), written together as each range's memory map; the buffer ops keep the depth tile
asked for.

resize-operand-fifos{depth=N} re-lays a sized program with every operand FIFO at N pages: depth
is the one buffering choice the cost model cannot score, so it is measured, and this is the
instrument that changes exactly that number between two runs.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from spatial_dialect import sp
from spatial_dialect.passes.phases import refusals_at, sections_taken
from spatial_dialect.passes.site_footprint import (
    k_block,
    memory_buffers,
    operand_fifos,
    single_buffered,
    site_bytes,
)
from spatial_dialect.passes.target_choice import module_target
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import AccTilesExceeded, LocalMemExceeded, SpatialPassError
from spatial_dialect.targets import Target
from spatial_dialect.targets.gemm import ceil_div

Offsets = dict[sp.SitesOp, dict[str, int]]
# Per range, the depth of each operand FIFO (every other buffer keeps its own).
Depths = dict[sp.SitesOp, dict[sp.MemoryBufferOp, int]]


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


def multicast_ranges(program: sp.ProgramOp) -> list[tuple[sp.MemoryBufferOp, list[sp.SitesOp]]]:
    """Each multicast group's buffer with the ranges its members lie in, where there are several:
    those ranges must give the buffer one depth (a multicast lands at one local address)."""
    ranges = program.ops_of(sp.SitesOp)
    range_of = {site: r for r in ranges for site in r.rect.sites()}
    families: dict[tuple[sp.MemoryBufferOp, tuple[sp.SitesOp, ...]], None] = {}
    for group in program.ops_of(sp.GroupOp):
        buf = sp.buffer_of(group.buffer)
        assert isinstance(buf, sp.MemoryBufferOp)
        for _, members in group.groups():
            touched = tuple(dict.fromkeys(range_of[s] for s in members if s in range_of))
            if len(touched) > 1:
                families[buf, touched] = None
    return [(buf, list(rs)) for buf, rs in families]


def unify_groups(
    depths: Depths, families: list[tuple[sp.MemoryBufferOp, list[sp.SitesOp]]]
) -> None:
    """Every member of a multicast group at the group's smallest depth: a smaller depth is what
    some member could afford. Repeated until no group changes (groups of one buffer that share
    a range chain their minimum along)."""
    changed = True
    while changed:
        changed = False
        for buf, rs in families:
            depth = min(depths[r][buf] for r in rs)
            for r in rs:
                if depths[r][buf] != depth:
                    depths[r][buf] = depth
                    changed = True


def give_back(
    program: sp.ProgramOp, r: sp.SitesOp, trial: dict[sp.MemoryBufferOp, int], budget: int
) -> bool:
    """Give back pages of range `r`'s operand FIFOs until its sites fit `budget`; whether they do.

    One page at a time, always from the buffer whose page costs the most bytes here, so that is
    the buffers in that order, each down to 2 before the next: per buffer, the fewest pages given
    back that fit is found by bisection (site bytes grow with depth), so a credit loop of
    millions of pages costs a few dozen layouts, not millions."""
    b = r.bindings(k_block(program))

    def fits() -> bool:
        return site_bytes(program, r, trial) <= budget

    def page_bytes(fifo: sp.MemoryBufferOp) -> int:
        return fifo.page_tiles(b) * fifo.tile_bytes

    for fifo in sorted((f for f in trial if trial[f] > 2), key=page_bytes, reverse=True):
        if fits():
            return True
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
    return fits()


def deepened(program: sp.ProgramOp, target: Target) -> Depths:
    """Operand FIFO depths from the credit loop, per range (a range's pages are its own), each
    multicast group at its members' minimum, shrunk under the default budget range by range
    (a range where even the shallowest do not fit keeps the depths it had), then capped until
    the LAYOUT fits (`capped`)."""
    kw = k_block(program)
    fifos = operand_fifos(program)
    families = [(buf, rs) for buf, rs in multicast_ranges(program) if buf in fifos]
    trial: Depths = {}
    for r in program.ops_of(sp.SitesOp):
        b = r.bindings(kw)
        trial[r] = {f: max(credit_depth(target, f.page_tiles(b)), r.depth_of(f, b)) for f in fifos}
    unify_groups(trial, families)
    for r, depths in trial.items():
        if not give_back(program, r, depths, target.local_mem_bytes):
            b = r.bindings(kw)
            depths.update({f: r.depth_of(f, b) for f in fifos})
        # what this range gave back, its group partners give back too (which only frees memory)
        unify_groups(trial, families)
    return capped(program, trial, families, target.local_mem_bytes)


def capped(
    program: sp.ProgramOp,
    trial: Depths,
    families: list[tuple[sp.MemoryBufferOp, list[sp.SitesOp]]],
    budget: int,
) -> Depths:
    """`trial` with every FIFO at most `cap` pages above the depth tile priced, for the largest cap
    whose layout fits `budget` on every range (or, on a range past it at tile's depths, adds
    nothing there): the uncapped depths where they fit, tile's own depths where none does, which
    tile's footprint makes fit the configurable budget.

    Why: `give_back` fits each range's buffers as a SUM, but a multicast group lands at one
    offset on all its members, the largest cursor among them, so a boundary range that deepened
    its small in0 pages pushes the interior's in1 up by the difference. A 1024x8192x1024 bf16 GEMM
    on blackhole_p150 was refused so (1492992 bytes against 1474560): a plan tile had priced at
    870400. The cursors grow with every depth (sums and maxima of buffer bytes), so the largest
    cap is found by bisection over whole layouts."""
    kw = k_block(program)
    base = {r: {f: r.depth_of(f, r.bindings(kw)) for f in depths} for r, depths in trial.items()}

    def at(cap: int) -> Depths:
        depths = {
            r: {f: min(d, base[r][f] + cap) for f, d in ds.items()} for r, ds in trial.items()
        }
        unify_groups(depths, families)
        return depths

    # A range already past `budget` at tile's depths (a GPU plan in the opt-in shared memory
    # beyond the default) may stay there: deepening must only not push it further.
    allowed = {r: max(budget, end) for r, end in layout(program, at(0))[1].items()}

    def fits(cap: int) -> bool:
        return all(end <= allowed[r] for r, end in layout(program, at(cap))[1].items())

    top = max((d - base[r][f] for r, ds in trial.items() for f, d in ds.items()), default=0)
    if fits(top):
        return trial
    lo, hi = 0, top  # cap hi does not fit; cap lo is the answer if nothing above it fits
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if fits(mid) else (lo, mid)
    return at(lo)


def layout(
    program: sp.ProgramOp, depths: Depths
) -> tuple[Offsets, dict[sp.SitesOp, int], dict[sp.SitesOp, dict[sp.MemoryBufferOp, int]]]:
    """First-fit per range at `depths` (else the range's own), group buffers first at one offset:
    each range's offsets, its end cursor (the bytes its sites need) and the depths laid out."""
    work = program.one(sp.WorkOp)
    assert work is not None
    ranges = program.ops_of(sp.SitesOp)
    bindings = {r: r.bindings(work.k_block) for r in ranges}
    buffers = memory_buffers(program)
    depth = {
        r: {buf: depths.get(r, {}).get(buf) or r.depth_of(buf, bindings[r]) for buf in buffers}
        for r in ranges
    }

    def nbytes(buf: sp.MemoryBufferOp, r: sp.SitesOp) -> int:
        return buf.bytes(bindings[r], depth[r][buf])

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
            cursor[r] = at + nbytes(buf, r)
    for buf in buffers:
        label = buf.label.data
        target = buf.alias_of
        for r in ranges:
            if label in offsets[r]:
                continue
            if target is not None:
                offsets[r][label] = offsets[r][target.label.data]
                continue
            offsets[r][label] = cursor[r]
            cursor[r] += nbytes(buf, r)
    return offsets, cursor, depth


def lay_out(program: sp.ProgramOp, depths: Depths) -> None:
    """The `layout` at `depths`, written as each range's memory map; refuses a site over budget."""
    mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
    assert mesh is not None and work is not None
    ranges = program.ops_of(sp.SitesOp)
    buffers = memory_buffers(program)
    offsets, cursor, depth = layout(program, depths)
    budget = mesh.local_mem
    for r in ranges:
        if cursor[r] > budget:
            x0, _, y0, _ = r.rect.bounds
            raise LocalMemExceeded((x0, y0), cursor[r], budget)
    for r in ranges:
        bindings = r.bindings(work.k_block)
        own = {
            buf.label.data: d for buf, d in depth[r].items() if d != buf.depth.resolve(bindings)[0]
        }
        r.set_memory({b.label.data: offsets[r][b.label.data] for b in buffers}, own)


def size_section(program: sp.ProgramOp, target: Target) -> None:
    """Check the accumulator, deepen the operand FIFOs, lay the buffers out."""
    check_accumulator(program, target)
    plan = program.one(sp.PlanOp)
    assert plan is not None
    # A streaming site holds one tile per page and walks tiles as fast as they come: its
    # double buffering is tt-metal's, and the credit loop is the blocked plans' question.
    # A single-buffered plan is tile's answer to a memory where two pages did not fit: its
    # FIFOs keep their one page.
    deepen = not plan.streaming and not single_buffered(program)
    lay_out(program, deepened(program, target) if deepen else {})
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
                fifos = operand_fifos(program)
                depths = dict.fromkeys(fifos, self.depth)
                lay_out(program, {r: dict(depths) for r in program.ops_of(sp.SitesOp)})
