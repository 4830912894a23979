"""The printed constant DFBs fit beside size-buffers' layout (docs/backend-ttlang.md#memory).

The printer adds DFBs the sized IR does not hold: those made like one of the section's constant
tables (selectors, masks, index tiles; f32). TT-Lang declares one DFB set per operation, so
every node holds all of them, above what size-buffers laid out for its range. The plan is the
compiler's own (tile and link chose it against the local memory), so a program whose constants
do not fit is the printer's fault, not the user's: `check_constants_fit` raises
`ConstantsPastLocalMemory`, an internal error naming the section and the bytes, never a
refusal. The tests print every example and the trace programs through it.

Not counted: a DFB made like an `_f32_page_*` table (a staging DFB that takes only its type:
the spill, split-K's partials), and, still past the budget on some prefill and decode
examples (docs/backend-ttlang.md, "Left"), rope's tables (`_rope_*`), the blocked statistics'
column selectors (`_stat_col_*`: a page of the partials' width, 2 x 256 KiB on a 4 x 8192
layer_norm's `@y__stats` at blackhole_p150) and attention's head selectors (`heads*`). (A stream block of several sub-blocks is computed whole, a GEMM's a sub-block at a time from operand parts: no sub-block selector.)"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spatial_dialect import sp

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines

F32_TILE = 32 * 32 * 4
STAGING = ("_f32_page_",)  # made like: the table gives the DFB its type, nothing is read
LEFT = ("_rope_", "_stat_col_")  # tables, and below DFBs, whose L1 is not yet bounded (docstring)
LEFT_DFBS = ("heads",)

_DECL = re.compile(
    r"(\w+) = ttl\.make_dataflow_buffer_like\((\w+), shape=\((\d+), (\d+)\), block_count=(\d+)\)"
)


class ConstantsPastLocalMemory(AssertionError):
    """An internal error: the printed constant DFBs and the laid-out buffers of a section's
    range pass the site's local memory."""

    def __init__(self, section: str, constants: dict[str, int], laid_out: int, local_mem: int):
        self.section, self.constants = section, constants
        self.laid_out, self.local_mem = laid_out, local_mem
        listed = ", ".join(f"{n} {b} B" for n, b in constants.items())
        super().__init__(
            f"-t ttlang: section @{section}: internal error: constant DFBs of "
            f"{sum(constants.values())} B ({listed}) beside {laid_out} B laid out by "
            f"size-buffers pass the {local_mem}-byte local memory"
        )


def constant_dfb_bytes(sec: OperationWriter, decls: Lines) -> dict[str, int]:
    """The bytes of each declared DFB made like a constant table (page x depth x f32 tile)."""
    out = {}
    for _, text in decls.entries:
        m = _DECL.fullmatch(text)
        if (
            m
            and m.group(2) in sec.consts
            and not m.group(2).startswith(STAGING + LEFT)
            and not m.group(1).startswith(LEFT_DFBS)
        ):
            h, w, depth = (int(m.group(i)) for i in (3, 4, 5))
            out[m.group(1)] = h * w * depth * F32_TILE
    return out


def laid_out_bytes(sec: OperationWriter, r: sp.SitesOp) -> int:
    """The end of size-buffers' layout on a range's sites: the highest offset + bytes."""
    b = r.bindings(sec.work.k_block)
    offsets = r.offsets()
    return max(
        (
            offsets[buf.label.data] + r.bytes_of(buf, b)
            for buf in sec.p.buffers()
            if not isinstance(buf, sp.AccOp) and buf.label.data in offsets
        ),
        default=0,
    )


def check_constants_fit(sec: OperationWriter, decls: Lines) -> None:
    constants = constant_dfb_bytes(sec, decls)
    if not constants:
        return
    local_mem = sec.mesh.local_mem
    for r in sec.ranges:
        laid_out = laid_out_bytes(sec, r)
        if laid_out + sum(constants.values()) > local_mem:
            raise ConstantsPastLocalMemory(sec.name, constants, laid_out, local_mem)
