"""What `-t ttlang` refuses, by name, before it prints a section: storage formats TT-Lang has no
tile for, split-K ranges and L1 (splitk.py), stages without a printer, several sub-blocks per
block in a stage that is not printed over whole blocks, and a memory map that is not a valid
sized program (docs/backend-ttlang.md#what-is-printed-and-what-is-refused). A mixin of
OperationWriter (printer.py). The kinds a map or row reduction cannot print are
refused from compute.py's tables (REFUSED_MAP_KINDS, REFUSED_ROW_KINDS)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.sp.kinds import Q8_0_FORMATS, RowForm
from spatial_dialect.tools.backend.ttlang.compute import check_compute
from spatial_dialect.tools.backend.ttlang.indexed import INDEXED, check_indexed
from spatial_dialect.tools.backend.ttlang.registry import printer_of
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


class OperationChecks:
    """The refusals of one section (`check`), run before anything is printed."""

    def check(self: OperationWriter) -> None:
        # storage formats first: a block-float format other than Q8_0's is refused before
        # the stages that read it
        for buf in self.p.buffers():
            fmt = getattr(buf, "format", None)
            if fmt is None:
                continue
            if fmt.data in Q8_0_FORMATS:
                continue  # stored as bfp8_b (Target.q8_0_storage; host.py converts at load)
            raise TTLangUnsupported(
                self.name,
                f"buffer {buf.label.data} stores {fmt.data}: block-float storage is not emitted "
                "(compile with format=bf16)",
            )
        self.check_splitk()
        for stage in self.stages:
            if isinstance(stage, sp.LoadOp | sp.StoreOp | sp.MatmulTilesOp):
                continue
            if isinstance(stage, sp.MapOp | sp.RowReduceOp | sp.RopeOp):
                check_compute(self.name, stage)
                continue
            if isinstance(stage, INDEXED):
                check_indexed(self, stage)
                continue
            if (pr := printer_of(stage)) is not None:
                pr.check(self, stage)
                continue
            raise TTLangUnsupported(
                self.name,
                f"stage {stage.name} ({self.p.source_op.data}) has no TT-Lang form in this "
                "printer yet (printed: sp.load, sp.store, sp.matmul_tiles, sp.map, "
                "sp.row_reduce, sp.rope, sp.gather, sp.scatter, sp.attention, sp.argmax)",
            )
        # A `rows` tensor (decode activations) is printed as a tile-layout tensor padded to
        # whole tiles: sp already counts its pages in tiles (docs/backend-ttlang.md#rows).
        gemm = all(isinstance(st, sp.LoadOp | sp.StoreOp | sp.MatmulTilesOp) for st in self.stages)
        # a map, a whole row_reduce, a rope or an attention computes and pushes the whole block
        # where it holds several sub-blocks (OperationWriter.declared)
        sliced = all(
            isinstance(
                st,
                sp.LoadOp
                | sp.StoreOp
                | sp.MapOp
                | sp.RopeOp
                | sp.AttentionOp
                | sp.AttentionCombineOp,
            )
            or (isinstance(st, sp.RowReduceOp) and st.form.data == RowForm.WHOLE)
            for st in self.stages
        )
        for r in self.ranges:
            b = r.bindings(self.work.k_block)
            if b["subs"] != 1 and not gemm and not sliced:
                raise TTLangUnsupported(
                    self.name,
                    f"range {r.rect.text() if hasattr(r.rect, 'text') else r.rect} has "
                    f"{b['subs']} sub-blocks of {b['sh']}x{b['sw']} tiles per {b['h']}x{b['w']} "
                    "block: TT-Lang blocks are whole units (no sub-block view of a block); "
                    "a GEMM, map, whole row_reduce, rope or attention computes and pushes the "
                    "whole block, this stage has no such form here "
                    "(docs/backend-ttlang.md#sub-blocks)",
                )
        self.check_memory_map()
        # A spill that aliases the output FIFO (accumulated in place) gets a DFB of its own:
        # a TT-Lang DFB has one consumer order, and the writer would pop the partials. Its bytes
        # are then counted twice against L1 (docs/backend-ttlang.md#memory).

    def check_memory_map(self: OperationWriter) -> None:
        """TT-Lang places DFBs itself, so the memory map size-buffers laid out is checked here
        rather than ignored: buffers of a site overlapping or past the budget are refused."""
        budget = self.mesh.local_mem
        for r in self.ranges:
            b = r.bindings(self.work.k_block)
            offsets = r.offsets()
            spans = []
            for buf in self.p.buffers():
                if (
                    isinstance(buf, sp.AccOp)
                    or buf.label.data not in offsets
                    or buf.alias_of is not None
                ):
                    continue
                lo = offsets[buf.label.data]
                spans.append((lo, lo + r.bytes_of(buf, b), buf.label.data))
            spans.sort()
            for (lo0, hi0, n0), (lo1, hi1, n1) in zip(spans, spans[1:], strict=False):
                if lo1 < hi0:
                    raise TTLangUnsupported(
                        self.name,
                        f"OverlappingOffsets: buffers {n0} [{lo0}, {hi0}) and {n1} [{lo1}, {hi1}) "
                        f"overlap on range {r.rect.bounds}: the program is not a valid sized "
                        "program",
                    )
            for lo, hi, n in spans:
                if hi > budget:
                    raise TTLangUnsupported(
                        self.name,
                        f"LocalMemExceeded: buffer {n} [{lo}, {hi}) ends past the "
                        f"{budget}-byte local memory",
                    )
            # a whole block where a FIFO was laid out with fewer sub-block pages takes L1 that
            # size-buffers did not lay out (OperationWriter.declared)
            excess = self.whole_block_excess(r)
            end = max((hi for _, hi, _ in spans), default=0)
            if excess > 0 and end + excess > budget:
                raise TTLangUnsupported(
                    self.name,
                    f"LocalMemExceeded: range {r.rect.bounds} holds whole {b['h']}x{b['w']} "
                    f"blocks in {excess} bytes more than the {end} bytes size-buffers laid out "
                    f"for their sub-block pages: {end + excess} > the {budget}-byte local memory",
                )
