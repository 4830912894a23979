"""The GEMM compute stage, `sp.matmul_tiles`, in a compute kernel (docs/sp.md#matmul_tiles):
per K block one A and one B page, the product added to the partial sums kept in dest (one
sub-block) or parked in the spill FIFO (several K blocks), pushed to the output FIFO on the last
K block. A block of several sub-blocks is computed whole, `a_blk @ b_blk` over [h, kw] x
[kw, w]: its output and spill DFBs hold whole blocks (OperationWriter.declared) and TT-Lang's
compiler splits the product into dest-sized pieces. Split-K's last K block (the previous
slice's sums added, the result pushed on to the next slice) is splitk.py's `partials_ends`.
A mixin of OperationWriter (section.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.ttlang.text import Lines

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


class MatmulCompute:
    """`emit_matmul`: one item's GEMM compute."""

    def emit_matmul(
        self: OperationWriter, out: Lines, s: sp.MatmulTilesOp, r: sp.SitesOp, b: dict
    ) -> None:
        in0 = self.dfb(sp.buffer_of(s.in0), r)
        in1 = self.dfb(sp.buffer_of(s.in1), r)
        # split-K: the last K block adds the previous slice's sums (`add`) and pushes to the
        # output FIFO or, before the last slice, to the send DFB (`o`) (splitk.py)
        add, o = self.partials_ends(r, self.dfb(sp.buffer_of(s.out), r))
        k_blocks = self.work.k_blocks
        spill = self.dfb(sp.buffer_of(s.spill), r) if s.spill is not None else None
        # transpose_b: B's page is B^T's block (w x kw tiles of the N x K tensor), transposed
        # in the compute stage as tt-metal's matmul_tiles transposes in1's tile
        bb = "ttl.block.transpose(b_blk)" if s.transposes_b else "b_blk"
        take = f", {add}.wait() as q_blk" if add else ""
        plus = " + q_blk" if add else ""
        if k_blocks == 1:
            out(f"with {in0}.wait() as a_blk, {in1}.wait() as b_blk{take}, {o}.reserve() as o_blk:")
            with out.indent():
                out(f"o_blk.store(a_blk @ {bb}{plus})")
            return
        last = [f"with {take[2:]}{', ' if add else ''}{o}.reserve() as o_blk:"]
        last.append(f"    o_blk.store(part{plus})")
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {in0}.wait() as a_blk, {in1}.wait() as b_blk:")
            with out.indent():
                if spill is None:
                    # one sub-block: the partial stays in the accumulator (dest) between K blocks
                    out(f"part = a_blk @ {bb} if kb == 0 else acc + a_blk @ {bb}")
                    out.branch(f"kb == {k_blocks - 1}", last, ["acc = part"])
                else:
                    out.branch(
                        "kb == 0",
                        [f"part = a_blk @ {bb}"],
                        [f"with {spill}.wait() as p_blk:", f"    part = p_blk + a_blk @ {bb}"],
                    )
                    if add:  # the previous slice's sums join on the last K block only
                        spilled = [f"with {spill}.reserve() as o_blk:", "    o_blk.store(part)"]
                        out.branch(f"kb == {k_blocks - 1}", last, spilled)
                    else:
                        out(f"with ({o} if kb == {k_blocks - 1} else {spill}).reserve() as o_blk:")
                        with out.indent():
                            out("o_blk.store(part)")
