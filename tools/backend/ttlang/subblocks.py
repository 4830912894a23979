"""Several sub-blocks per block in TT-Lang, where blocks cannot be sliced: sub-block (ti, tj) of a
block is `R_ti @ X @ C_tj`, with one-hot row and column selectors read from an identity constant
(exact in any precision), so every IR buffer keeps the page and depth size-buffers gave it
(docs/backend-ttlang.md, "Sub-blocks"). A mixin of `OperationWriter`."""

from __future__ import annotations

from spatial_dialect import sp
from spatial_dialect.tools.backend.ttlang.text import Lines


class SubBlockSelectors:
    """The selector buffers, loops and slices of an `OperationWriter` whose blocks hold several
    sub-blocks."""

    def sub_dfb(self, which: int, page: tuple[int, int] | None) -> str | None:
        if page is None:
            return None
        pages = {p[which] for p in self.sub_pages.values()} - {None}
        name = ("sub_rows", "sub_cols")[which]
        return f"{name}_dfb" if len(pages) == 1 else f"{name}_dfb_{page[0]}x{page[1]}"

    def emit_sub_buffers(self, out: Lines) -> None:
        for which in (0, 1):
            for page in sorted({p[which] for p in self.sub_pages.values()} - {None}):
                out(
                    f"{self.sub_dfb(which, page)} = ttl.make_dataflow_buffer_like({self.eye}, "
                    f"shape=({page[0]}, {page[1]}), block_count=2)"
                )

    def sub_loops(self, out: Lines, b: dict) -> None:
        out(f"for ti in range(0, {b['h']}, {b['sh']}):")
        out.depth += 1
        out(f"for tj in range(0, {b['w']}, {b['sw']}):")
        out.depth += 1

    def sub_compute(self, r: sp.SitesOp) -> bool:
        """A range of a map / whole row_reduce / rope / attention whose block holds several
        sub-blocks (its compute pushes slices of the whole block's result)."""
        return self.ranges.index(r) in self.sub_pages and not any(
            isinstance(m, sp.MatmulTilesOp) for m in self.stages
        )

    def emit_sub_selectors(self, out: Lines, r: sp.SitesOp) -> None:
        """The selectors of the current sub-block (ti, tj), one copy per selector DFB."""
        rows, cols = self.sub_pages[self.ranges.index(r)]
        if rows is not None:
            self._selector_copy(
                out, self.sub_dfb(0, rows), f"{self.eye}[ti:ti + {rows[0]}, 0:{rows[1]}]"
            )
        if cols is not None:
            self._selector_copy(
                out, self.sub_dfb(1, cols), f"{self.eye}[0:{cols[0]}, tj:tj + {cols[1]}]"
            )

    def _selector_copy(self, out: Lines, dfb: str | None, view: str) -> None:
        out(f"with {dfb}.reserve() as blk:")
        with out.indent():
            out(f"tx = ttl.copy({view}, blk)")
            out("tx.wait()")

    def emit_sub_slices(self, out: Lines, r: sp.SitesOp, b: dict, full: str, o: str) -> None:
        """Compute side of a sub-blocked map/row_reduce/rope/attention: the whole block's result
        `full` ([h, w]) pushed as one [sh, sw] slice per sub-block, R_ti @ full @ C_tj (one-hot f32
        selectors: exact), in sp's row-major order."""
        rows, cols = self.sub_pages[self.ranges.index(r)]
        rsel, csel = self.sub_dfb(0, rows), self.sub_dfb(1, cols)
        self.sub_loops(out, b)
        waits = [f"{d}.wait() as {n}" for d, n in ((rsel, "r_blk"), (csel, "c_blk")) if d]
        expr = full
        if rsel:
            expr = f"r_blk @ {expr}"
        if csel:
            expr = f"{expr} @ c_blk" if not rsel else f"({expr}) @ c_blk"
        out(f"with {', '.join(waits)}:")
        with out.indent():
            out(f"part = {expr}")
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out("o_blk.store(part)")
        out.depth -= 2

    def emit_selector_reads(self, out: Lines, r: sp.SitesOp, b: dict) -> None:
        """After A's page: the selectors of each sub-block, in the compute's order."""
        ri = self.ranges.index(r)
        rows, cols = self.sub_pages[ri]
        self.sub_loops(out, b)
        views = []
        if rows is not None:
            views.append((self.sub_dfb(0, rows), f"{self.eye}[ti:ti + {rows[0]}, 0:{rows[1]}]"))
        if cols is not None:
            views.append((self.sub_dfb(1, cols), f"{self.eye}[0:{cols[0]}, tj:tj + {cols[1]}]"))
        for dfb, view in views:
            out(f"with {dfb}.reserve() as blk:")
            with out.indent():
                out(f"tx = ttl.copy({view}, blk)")
                out("tx.wait()")
        out.depth -= 2

    def emit_matmul_subs(
        self,
        out: Lines,
        dfbs: tuple[str, str, str, str | None, str | None],
        k_blocks: int,
        ri: int,
        b: dict,
        bb: str = "b_blk",
    ) -> None:
        """Per K block, per sub-block in row-major order: (R @ A) @ (B @ C), added to the
        sub-block's partial from the spill (K blocks after the first), pushed to the spill or,
        on the last K block, to the output FIFO: sp.matmul_tiles' order exactly. `bb`: B's
        block as the product reads it (transposed where matmul_tiles transposes it). Split-K
        (splitk.py): `o` is where the last K block pushes (the output FIFO or the send DFB), and
        `add`, where given, the previous slice's sums it first adds, one page per sub-block."""
        in0, in1, o, spill, add = dfbs
        rows, cols = self.sub_pages[ri]
        rsel, csel = self.sub_dfb(0, rows), self.sub_dfb(1, cols)
        out(f"for kb in range({k_blocks}):")
        with out.indent():
            out(f"with {in0}.wait() as a_blk, {in1}.wait() as b_blk:")
            with out.indent():
                self.sub_loops(out, b)
                waits = [f"{d}.wait() as {n}" for d, n in ((rsel, "r_blk"), (csel, "c_blk")) if d]
                lhs = "(r_blk @ a_blk)" if rsel else "a_blk"
                rhs = f"({bb} @ c_blk)" if csel else bb
                out(f"with {', '.join(waits)}:")
                with out.indent():
                    out(f"part = {lhs} @ {rhs}")
                if k_blocks > 1:
                    assert spill is not None  # the verifier: several sub-blocks and K blocks
                    out("if kb > 0:")
                    with out.indent():
                        out(f"with {spill}.wait() as p_blk:")
                        with out.indent():
                            out("part = p_blk + part")
                if add is not None:  # on the last K block only
                    last = k_blocks > 1
                    if last:
                        out(f"if kb == {k_blocks - 1}:")
                    out.depth += last
                    out(f"with {add}.wait() as q_blk:")
                    with out.indent():
                        out("part = part + q_blk")
                    out.depth -= last
                if k_blocks > 1:
                    out(f"with ({o} if kb == {k_blocks - 1} else {spill}).reserve() as o_blk:")
                else:
                    out(f"with {o}.reserve() as o_blk:")
                with out.indent():
                    out("o_blk.store(part)")
                out.depth -= 2
