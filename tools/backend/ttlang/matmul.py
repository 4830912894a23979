"""The GEMM compute stage, `sp.matmul_tiles`, in a compute kernel (docs/sp.md#matmul_tiles):
per K block one A and one B page, the product added to the partial sums kept in dest (one
sub-block) or parked in the spill FIFO (several K blocks), pushed to the output FIFO on the last
K block. Split-K's last K block (the previous slice's sums added, the result pushed on to the
next slice) is splitk.py's `partials_ends`. A mixin of OperationWriter (section.py).

A block of several sub-blocks is printed a sub-block at a time, as the IR pages it and the cost
model prices it (docs/backend-ttlang.md#sub-blocks): the output FIFO, the spill and split-K's
partials keep the IR's sub-block page [sh, sw], so each sub-block goes to the writer as soon as
its last K block is accumulated and is stored while the next one computes
(targets/write_back.py `write_back_cycles`). A TT-Lang block is a whole unit (no view of part of a
block), so the operands come in sub-block pages too: A's [h, kw] page as h / sh DFBs of one
sub-block row [sh, kw] each, B's [kw, w] as w / sw DFBs of one sub-block column [kw, sw] (its
[w, kw] page of B^T in rows under transpose_b). Their pages together are the IR's page, in the
bytes size-buffers laid out; one DFB per part because a DFB gives out one block at a time and
the compute holds all of a K block's parts, and the reader waits for all of them at once (one
round trip a step, as priced). The compute runs sub-block (i, j) as `a{i} @ b{j}`, row-major:
the order the writer stores the output pages and the spill returns them; where the writer
keeps two writes in flight (section.py `out_pairs`) the output pages alternate between its two
DFBs."""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.ttlang.text import Lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter


class MatmulCompute:
    """`emit_matmul`: one item's GEMM compute; `operand_split`: its operands' sub-block pages."""

    def operand_split(self: OperationWriter, buf: sp.BufferOp, r: sp.SitesOp) -> tuple[int, int]:
        """(axis, parts) of a GEMM operand's page on range `r`: A's rows cut into h / sh
        sub-block rows (axis 0), B's columns (its rows under transpose_b) into w / sw; (0, 1)
        for any other buffer, a range of one sub-block, or a section without a GEMM."""
        b = r.bindings(self.work.k_block)
        if b["subs"] == 1:
            return 0, 1
        if b["h"] % b["sh"] or b["w"] % b["sw"]:
            raise TTLangUnsupported(
                self.name,
                f"range {r.rect.bounds}: {b['sh']}x{b['sw']} sub-blocks do not tile its "
                f"{b['h']}x{b['w']} block (a GEMM operand is printed in sub-block parts)",
            )
        for m in self.stages:
            if not isinstance(m, sp.MatmulTilesOp):
                continue
            if sp.buffer_of(m.in0) is buf:
                return 0, b["h"] // b["sh"]
            if sp.buffer_of(m.in1) is buf:
                return (0 if m.transposes_b else 1), b["w"] // b["sw"]
        return 0, 1

    def emit_matmul(
        self: OperationWriter, out: Lines, s: sp.MatmulTilesOp, r: sp.SitesOp, b: dict
    ) -> None:
        in0 = self.dfbs(sp.buffer_of(s.in0), r)
        in1 = self.dfbs(sp.buffer_of(s.in1), r)
        a = ["a_blk"] if len(in0) == 1 else [f"a{i}" for i in range(len(in0))]
        bs = ["b_blk"] if len(in1) == 1 else [f"b{j}" for j in range(len(in1))]
        # split-K: the last K block adds the previous slice's sums (`add`) and pushes to the
        # output FIFO or, before the last slice, to the send DFB (`o`) (splitk.py)
        outs = self.dfbs(sp.buffer_of(s.out), r)
        add, o = self.partials_ends(r, outs[0])
        # a paired output's pages alternate between its two DFBs (`out_pairs`: never split-K's)
        targets = outs if len(outs) > 1 else [o]
        k_blocks = self.work.k_blocks
        spill = self.dfb(sp.buffer_of(s.spill), r) if s.spill is not None else None
        waits = ", ".join(
            [f"{d}.wait() as {n}" for d, n in zip(in0, a, strict=True)]
            + [f"{d}.wait() as {n}" for d, n in zip(in1, bs, strict=True)]
        )
        # sub-block (i, j), row-major: the order the writer stores them and the spill keeps them
        products = [
            # transpose_b: B's page is B^T's block (w x kw tiles of the N x K tensor), transposed
            # in the compute stage as tt-metal's matmul_tiles transposes in1's tile
            f"{ai} @ " + (f"ttl.block.transpose({bj})" if s.transposes_b else bj)
            for ai in a
            for bj in bs
        ]
        take = f", {add}.wait() as q_blk" if add else ""
        plus = " + q_blk" if add else ""
        if k_blocks == 1:
            if len(products) == 1:
                out(f"with {waits}{take}, {o}.reserve() as o_blk:")
                with out.indent():
                    out(f"o_blk.store({products[0]}{plus})")
                return
            out(f"with {waits}:")
            with out.indent():
                for p, prod in enumerate(products):
                    o = targets[p % len(targets)]
                    out(f"with {take[2:]}{', ' if add else ''}{o}.reserve() as o_blk:")
                    with out.indent():
                        out(f"o_blk.store({prod}{plus})")
            return
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {waits}:")
            with out.indent():
                if spill is None:
                    # one sub-block: the partial stays in the accumulator (dest) between K blocks
                    assert len(products) == 1  # the verifier: several sub-blocks spill
                    prod = products[0]
                    last = [f"with {take[2:]}{', ' if add else ''}{o}.reserve() as o_blk:"]
                    last.append(f"    o_blk.store(part{plus})")
                    out(f"part = {prod} if kb == 0 else acc + {prod}")
                    out.branch(f"kb == {k_blocks - 1}", last, ["acc = part"])
                    return
                for p, prod in enumerate(products):
                    o = targets[p % len(targets)]
                    last = [f"with {take[2:]}{', ' if add else ''}{o}.reserve() as o_blk:"]
                    last.append(f"    o_blk.store(part{plus})")
                    out.branch(
                        "kb == 0",
                        [f"part = {prod}"],
                        [f"with {spill}.wait() as p_blk:", f"    part = p_blk + {prod}"],
                    )
                    if add:  # the previous slice's sums join on the last K block only
                        spilled = [f"with {spill}.reserve() as o_blk:", "    o_blk.store(part)"]
                        out.branch(f"kb == {k_blocks - 1}", last, spilled)
                    else:
                        out(f"with ({o} if kb == {k_blocks - 1} else {spill}).reserve() as o_blk:")
                        with out.indent():
                            out("o_blk.store(part)")
