"""The buffers of a section: `sp.fifo` (a FIFO between stages), `sp.interm` (the K-block spill)
and `sp.acc` (the accumulator). Their common fields are `BufferOp`'s and `MemoryBufferOp`'s
(abstract_ops.py)."""

from __future__ import annotations

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute
from xdsl.irdl import irdl_op_definition

from spatial_dialect.sp.abstract_ops import BufferOp, MemoryBufferOp, section_traits
from spatial_dialect.sp.attrs import BUFFER, SizesAttr
from spatial_dialect.sp.formats import Sizes


@irdl_op_definition
class FifoOp(MemoryBufferOp):
    """`%in0 = sp.fifo "in0" depth 2 page [h, kw] bf16 tile_bytes 2048`.

    A FIFO of `depth` pages between a producer stage and its consumers (once sized, a range's
    memory map may give an operand FIFO its own depth on that range's sites, `SitesOp.depth_of`).
    A push writes the next page in ring order and waits while every page is full; a pop
    releases the oldest. A FIFO that a multicast group fills is written by the group's sender
    on every member site.
    """

    name = "sp.fifo"
    traits = section_traits()


@irdl_op_definition
class IntermOp(MemoryBufferOp):
    """`%spill = sp.interm "spill" depth subs page [sh, sw] f32 tile_bytes 4096 [alias %out]`.

    The K-block spill of a blocked matmul: one page per sub-block holds that sub-block's
    partial sums between K blocks, at the accumulator's precision. Its depth is a correctness
    constraint (every sub-block's partial is parked before the first is reloaded), not a rate
    choice. With `alias` it shares the memory of the output FIFO (an output accumulated in
    place, docs/passes.md#tile-output-depth-and-spill): the last K block packs each sub-block onto the page its partial occupied.
    """

    name = "sp.interm"
    traits = section_traits()


@irdl_op_definition
class AccOp(BufferOp):
    """`%dst = sp.acc "dst" page [sh, sw] f32`: the accumulator (dest registers on Tensix,
    register fragments on a GPU). Not in local memory: it has no depth and no offset."""

    name = "sp.acc"
    traits = section_traits()
    custom_directives = (Sizes,)
    assembly_format = (
        "$label `page` custom<Sizes>($page) $elt (`as` $format^)? attr-dict-with-keyword"
    )

    def __init__(self, label: str, page: SizesAttr, elt: Attribute):
        super().__init__(
            properties={"label": StringAttr(label), "page": page, "elt": elt}, result_types=[BUFFER]
        )
