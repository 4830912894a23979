"""Operand sharing on a fabric without rectangle multicast (docs/passes.md#fuse-broadcast-or-replicate-on-the-rdu).

Unroll a tiled GEMM over several instances and each wants the same operand panel. Two ways to feed
them: **replicated**, every consumer streams its own copy from DRAM (consumers x the traffic, nothing
on the fabric), or **broadcast**, one copy streamed and fanned out over the vector network (one copy
from DRAM, plus the fabric time of the fan-out). Which is cheaper depends on the panel, the number of
consumers, the distance and the memory, never on a constant, so :func:`share_operand` compares the
DRAM cycles a broadcast saves (at the sustained rate of :mod:`.dram`) with the fabric cycles it adds and keeps both numbers in its answer.

**The fan-out overlaps the DRAM reads** (:func:`memory_cycles`, the one rule the cost model and
fuse-operands both price by). On Plasticine the DRAM is read by address generators with many
requests in flight, not by the PCUs [PLAST], and the vector network's switches are registered, so a
broadcast panel streams: the reader forwards each page (a K tile of the panel, its DRAM pages) across
the fan-out while the DRAM serves the next, of this panel or of any other transfer. Nothing on the fan-out's
path waits for the DRAM or holds it: the two are the stages of a pipeline, whose time is the longer
stage's total plus one fill (the shorter stage of one page: the first page's read before anything is
forwarded, or the last page's fan-out after the DRAM is done). Adding the fan-out's cycles to the
DRAM's, as the cost model did, priced the network as if it stopped the DRAM: on 128x4096x4096 it
charged 1.08 M fabric cycles on top of 1.62 M of DRAM. One link moves a 64-byte word a cycle, more
than the whole chip's DRAM (44.1 B/cycle sustained), so a fan-out hides behind its own reads unless
its hops or its words outgrow them. The fabric is still priced as ONE resource (every broadcast
panel's fan-out summed, never two at once on disjoint links): a bound, not a guess.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable
from dataclasses import dataclass

from .dram import dram_cycles
from .gemm import ceil_div, split_work_ranges
from .spec import Target


class Sharing(enum.StrEnum):
    """How an operand reaches the instances that want it."""

    REPLICATED = "replicated"  # every consumer streams its own copy from memory
    BROADCAST = "broadcast"  # one consumer streams it and fans it out over the fabric

    @property
    def label(self) -> str:
        return self.value


@dataclass(frozen=True)
class OperandStream:
    """One operand panel and the instances that want it: ``bytes`` in one copy, ``consumers``
    instances, ``broadcast_hops`` mesh hops a fan-out crosses to reach the farthest of them.
    ``page_bytes``: what the reader forwards at once (a K tile of the panel: its DRAM pages arrive
    whole); the whole panel where not given."""

    name: str
    bytes: int
    consumers: int
    broadcast_hops: int
    page_bytes: int | None = None


@dataclass(frozen=True)
class SharingDecision:
    """The decision with the costs that produced it. ``copies`` is what DRAM actually serves under
    the chosen arrangement, so the roofline counts exactly these bytes (``copies`` x ``bytes``).
    ``fabric_cycles_added``: the fan-out's occupancy of the fabric (words + hops - 1);
    ``fill_cycles``: the one page the pipeline of reads and fan-out cannot overlap;
    ``fabric_cycles_exposed``: what the broadcast panel takes beyond its one copy's DRAM time under
    :func:`memory_cycles`, the number weighed against ``dram_cycles_saved``."""

    sharing: Sharing
    dram_cycles_saved: int
    fabric_cycles_added: int
    copies: int
    why: str
    fill_cycles: int = 0
    fabric_cycles_exposed: int = 0


def gemm_operand_streams(
    names: tuple[str, str],
    tile_bytes: tuple[int, int],
    block: tuple[int, int],
    k_tiles: int,
    items: tuple[int, int],
    site_of: Callable[[int, int], tuple[int, int]],
) -> tuple[OperandStream, OperandStream]:
    """THE operand streams of a tiled GEMM (A's, then B's), for the cost model and fuse-operands
    alike: one block row of A over all of K (``block[0] x k_tiles`` tiles of ``tile_bytes[0]``),
    wanted by the ``items[1]`` blocks of that row; one block column of B, wanted by the
    ``items[0]`` blocks of that column; each with the hops a fan-out from its first block's site
    crosses to reach the farthest, and its page: one K tile of the block, the DRAM pages (a tile
    each) that arrive together and are forwarded as they arrive, whatever the plan's K block.
    ``site_of(i, j)`` is the site running block (i, j): the placed ranges for the pass, the same
    dealing (:func:`flat_site_of`) for the planner."""
    (block_m, block_n), (items_m, items_n) = block, items

    def hops(blocks: list[tuple[int, int]]) -> int:
        sites = [site_of(i, j) for i, j in blocks]
        x0, y0 = sites[0]
        return max(abs(x - x0) + abs(y - y0) for x, y in sites)

    a = OperandStream(
        names[0],
        block_m * k_tiles * tile_bytes[0],
        items_n,
        hops([(0, j) for j in range(items_n)]),
        block_m * tile_bytes[0],
    )
    b = OperandStream(
        names[1],
        k_tiles * block_n * tile_bytes[1],
        items_m,
        hops([(i, 0) for i in range(items_m)]),
        block_n * tile_bytes[1],
    )
    return a, b


def flat_site_of(grid_x: int, grid_y: int, units: int, unit: int) -> tuple[int, int]:
    """The site that runs ``unit`` of ``units`` dealt flat over a ``grid_x`` x ``grid_y`` grid
    (split_work_to_cores, as place lays them out: a rectangle's sites take consecutive units,
    x fastest)."""
    for (x0, x1, y0, _y1), first, per in split_work_ranges(grid_x, grid_y, units):
        width = x1 - x0 + 1
        index = (unit - first) // per
        if unit >= first and index < width * (_y1 - y0 + 1):
            return x0 + index % width, y0 + index // width
    raise ValueError(f"unit {unit} of {units} is not dealt over {grid_x}x{grid_y}")


def fabric_word_bytes(target: Target) -> int:
    """Bytes one fabric link moves per cycle: the RDU's vector word (4 bytes x PCU lanes), or the
    link width on chips that do not declare a fabric word."""
    return target.fabric_word_bytes or target.link_bytes_per_cycle


def fan_out_cycles(target: Target, nbytes: int, hops: int) -> int:
    """Cycles ``nbytes`` occupy the fabric fanned out over ``hops`` hops. The links are REGISTERED,
    so the bytes stream: the first word arrives after one cycle per hop and every later word one
    cycle behind it, so W words over H hops occupy the net for W + H - 1 cycles, not W * H.

    A bug this rule prevents: the reference compiler once read `words * hops`, store-and-forward,
    as if every switch held the whole panel before passing it on. That over-charged a broadcast by
    about the distance and biased the decision to replication: on a 640^3 A panel it charged
    ~256,000 cycles where the honest figure is ~25,600, enough to fetch one shared operand up to 80
    times from DRAM. The choreography's forward latency (stage latency + hops) and the credit-depth
    solve model the fabric the same way; two passes of one compiler cannot disagree on whether a
    fabric pipelines."""
    words = ceil_div(nbytes, max(1, fabric_word_bytes(target)))
    return words + max(0, hops - 1)


def memory_cycles(dram: float, fabric: float, fill: float) -> float:
    """THE memory time of DRAM traffic and broadcast fan-outs together (the module text says why
    they overlap): a pipeline of the two, its longer stage's total plus one ``fill``; the DRAM
    time alone where nothing is fanned out. The cost model prices a plan's memory by it and
    :func:`share_operand` a broadcast panel, so the two cannot disagree on whether they overlap."""
    if fabric <= 0:
        return dram
    return max(dram, fabric) + fill


def share_operand(
    stream: OperandStream, target: Target, dram_rate: float | None = None
) -> SharingDecision:
    """Broadcast ``stream`` or replicate it on ``target``. Takes the machine and the shape, nothing
    else, so nobody can tell the compiler the answer; moving only a cost of the target (DRAM
    bandwidth) or of the shape (hops) moves the decision. ``dram_rate``: the bytes per cycle the
    GEMM's traffic sustains (``quantities.gemm_dram_rate``), so the copies are priced as the plan's
    DRAM time prices them; without it, traffic spread over every channel."""
    consumers = max(1, stream.consumers)
    # What broadcasting saves: the consumers - 1 copies it does not fetch.
    saved = dram_cycles(target, stream.bytes * (consumers - 1), dram_rate)
    # What it costs: the panel crossing the fan-out (fan_out_cycles), overlapped with the DRAM
    # reads of its one copy (memory_cycles): only the fan-out beyond them, plus one page's fill.
    hops = stream.broadcast_hops
    added = fan_out_cycles(target, stream.bytes, hops)
    page = min(stream.bytes, stream.page_bytes or stream.bytes)
    fill = min(dram_cycles(target, page, dram_rate), fan_out_cycles(target, page, hops))
    one_copy = dram_cycles(target, stream.bytes, dram_rate)
    exposed = math.ceil(memory_cycles(one_copy, added, fill)) - one_copy
    broadcast = consumers > 1 and saved > exposed
    overlap = f"{added} fabric cycles overlapping the copy's {one_copy} DRAM cycles"
    if consumers <= 1:
        why = "one consumer: nothing to share"
    elif broadcast:
        why = f"broadcasting saves {saved} DRAM cycles and exposes {exposed} ({overlap})"
    else:
        why = f"a fan-out would expose {exposed} cycles ({overlap}) to save {saved} DRAM cycles"
    return SharingDecision(
        sharing=Sharing.BROADCAST if broadcast else Sharing.REPLICATED,
        dram_cycles_saved=saved,
        fabric_cycles_added=added,
        copies=1 if broadcast else consumers,
        why=why,
        fill_cycles=fill,
        fabric_cycles_exposed=exposed,
    )
