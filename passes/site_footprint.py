"""The bytes a site's buffers take in local memory: one function for every pass that asks.

Size-buffers lays a section's buffers out in each site's local memory, and tile and link price a
candidate plan by whether those same buffers fit: were these two computations apart, a plan could
be chosen that the layout then refuses. So both call `buffer_bytes` (a site's buffers under the
plan's size symbols) and `site_bytes` (one site of a range at its FIFO depths), over the buffers
`memory_buffers` lists; `operand_fifos` names the FIFOs the loads fill, which size-buffers deepens.
"""

from __future__ import annotations

from collections.abc import Sequence

from spatial_dialect import sp


def memory_buffers(program: sp.ProgramOp) -> list[sp.MemoryBufferOp]:
    return [b for b in program.buffers() if isinstance(b, sp.MemoryBufferOp)]


def operand_fifos(program: sp.ProgramOp) -> list[sp.FifoOp]:
    """The FIFOs the section's loads fill (what size-buffers deepens), each once."""
    fifos = [sp.buffer_of(ld.dst) for ld in program.ops_of(sp.LoadOp)]
    return [f for f in dict.fromkeys(fifos) if isinstance(f, sp.FifoOp)]


def dram_fifos(program: sp.ProgramOp) -> list[sp.FifoOp]:
    """The FIFOs between DRAM and the compute stage (those loads fill and those stores drain),
    each once: what a single-buffered stream plan keeps at one page."""
    ends = [sp.buffer_of(ld.dst) for ld in program.ops_of(sp.LoadOp)]
    ends += [sp.buffer_of(st.src) for st in program.ops_of(sp.StoreOp)]
    return [f for f in dict.fromkeys(ends) if isinstance(f, sp.FifoOp)]


def single_buffered(program: sp.ProgramOp) -> bool:
    """Whether tile gave the section a single-buffered plan: every FIFO between DRAM and the
    compute stage at one page (stream_plans.StreamPlanner.rank: no double-buffered plan fit).
    size-buffers keeps such a plan's FIFOs at one page and the report prices it serial."""
    fifos = dram_fifos(program)
    return bool(fifos) and all(f.depth.resolve({})[0] == 1 for f in fifos)


def buffer_bytes(
    buffers: Sequence[sp.MemoryBufferOp],
    bindings: dict[str, int],
    depths: dict[sp.MemoryBufferOp, int] | None = None,
) -> int:
    """Bytes of a site's buffers (a section's `memory_buffers`) under the size symbols
    `bindings`: what size-buffers lays out, and what tile prices a candidate plan of a stream
    section with (one function for both)."""
    total = 0
    for buf in buffers:
        if buf.alias is None:
            depth = (depths or {}).get(buf) or buf.depth.resolve(bindings)[0]
            total += depth * buf.page_tiles(bindings) * buf.tile_bytes
    return total


def site_bytes(
    program: sp.ProgramOp, r: sp.SitesOp, depths: dict[sp.MemoryBufferOp, int] | None = None
) -> int:
    """Bytes of one site of range `r` (aliases share their target's), at `depths` where given,
    else at the range's own (`SitesOp.depth_of`)."""
    bindings = r.bindings(k_block(program))
    buffers = memory_buffers(program)
    if depths is None:
        depths = {buf: r.depth_of(buf, bindings) for buf in buffers}
    return buffer_bytes(buffers, bindings, depths)


def k_block(program: sp.ProgramOp) -> int:
    work = program.one(sp.WorkOp)
    assert work is not None, "a tiled section has its work"
    return work.k_block
