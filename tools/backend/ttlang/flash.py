"""Flash decoding in TT-Lang (`-t ttlang`): the partials page `sp.attention ... splits P` pushes
(its online softmax is indexed.py's) and `sp.attention_combine`, the log-sum-exp merge of the
splits (docs/backend-ttlang.md#flash-decoding-decision; the layout is docs/sp.md's).

A partials tile holds O in row 0 and its head's m and l at (1, 0) and (1, 1) (sp's layout).
TT-Lang has no scalar read and no slice of a block, and a block's tiles can be mixed column-wise
only by a product with a [w, w] block (a broadcast over columns needs a block one tile wide):
spreading (1, 0) over its tile would take [w, w]-tile selectors, 2 w^2 products per split and
2 w^2 f32 tiles of L1 (2 MiB at w = 16, past either preset's budget). Rows mix with one-tile
products at any w, so the split also keeps m and l spread over every column of rows 2 and 3 of
each tile: the tile's padding past the tensor's two rows, which only these two kernels write and
read (a tile-layout tensor holds whole tiles in DRAM; reading the result back drops it). Both
sides use block math over constant 0/1 tiles (exact in f32: one nonzero term per sum):

- **the split** (`partial_page`): its m and l are the (0, 0) elements of the column pages the
  online softmax keeps (row 0 is the one query row), broadcast over the output's tiles and kept
  at (1, 0) and over row 2 (m), at (1, 1) and over row 3 (l) of every tile by two masks
  (`_flash_ml_*`, read once per item after the last K block); O's rows past the first are zero
  already (the mask `_attn_d` masks every padded query row, so their probabilities are zero).
- **the combine**: per split, `U_m @ X` and `U_l @ X` (U_m: every row takes row 2, U_l row 3)
  are m and l over every element of their tiles, and `Z @ X` (Z: (0, 0) only) keeps row 0's O:
  3 w tile products per split, which the cost model does not price (docs/backend-ttlang.md
  lists them), and three constant tiles of L1 whatever the block's width.

A wholly masked split (causal, every key past the position) has m = -1e30 (the printer masks by
subtracting 1e30, not with -inf) and l = O = 0: exp(m_p - m) underflows to 0 and it adds nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.backend.ttlang.stage import (
    Consts,
    StagePrinter,
    const_read,
    input_engine,
    page,
    prints,
)
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines


# The host's constants (printed into the program by their source) -----------------------------


def _flash_ml(n):
    """[M | L], each n tiles wide: in every tile of M 1 at (1, 0) and over row 2, in every tile
    of L 1 at (1, 1) and over row 3: where a partials tile keeps its head's m and l (sp's
    layout) and where the combine takes them (rows 2 and 3, the tile's padding)."""
    a = np.zeros((32, 64 * n), np.float32)
    a[1, 0 : 32 * n : 32] = 1.0
    a[2, : 32 * n] = 1.0
    a[1, 32 * n + 1 :: 32] = 1.0
    a[3, 32 * n :] = 1.0
    return a


def _flash_rows():
    """[U_m | U_l | Z]: U_m takes row 2 into every row (U_m[i, 2] = 1), U_l row 3, Z keeps row 0
    (Z[0, 0] = 1)."""
    a = np.zeros((32, 96), np.float32)
    a[:, 2] = 1.0
    a[:, 32 + 3] = 1.0
    a[0, 64] = 1.0
    return a


# The split's partials page (called by indexed._attention) ---------------------------------


def ml_name(s: sp.AttentionOp) -> str:
    return f"_flash_ml_{s.v_head_dim // TILE}"


def split_constants(s: sp.AttentionOp) -> Consts:
    n = s.v_head_dim // TILE
    return {ml_name(s): ((TILE, 2 * TILE * n), f"_flash_ml({n})")}


def split_buffers(sec: OperationWriter, s: sp.AttentionOp, out: Lines) -> None:
    """Two DFBs made like the masks' constant: the compute holds both at once (a second wait on
    one DFB while its first block is held is not a valid dataflow step)."""
    for role in ("m", "l"):
        out(
            f"flash_{role}_dfb = ttl.make_dataflow_buffer_like({ml_name(s)}, "
            f"shape=(1, {s.v_head_dim // TILE}), block_count=1)"
        )


def split_mask_reads(sec: OperationWriter, s: sp.AttentionOp, out: Lines, b: dict) -> None:
    """In the movement kernel's K loop, after the last K block: the two masks."""
    n = s.v_head_dim // TILE
    out(f"if k0 == {sec.k_tiles - b['kw']}:")
    with out.indent():
        for role, lo in (("m", 0), ("l", n)):
            const_read(out, f"flash_{role}_dfb", f"{ml_name(s)}[0:1, {lo}:{lo + n}]")


def partial_page(sec: OperationWriter, s: sp.AttentionOp, out: Lines, g: int, b: dict) -> None:
    """After the last K block: `part_j`, head j's page of partials (O in row 0, m and l at
    (1, 0) and (1, 1) of each tile)."""
    so = f"({b['h']}, {s.v_head_dim // TILE})"
    out("with flash_m_dfb.wait() as m_mask, flash_l_dfb.wait() as l_mask:")
    with out.indent():
        for j in range(g):
            out(
                f"part_{j} = o_{j} + ttl.block.broadcast(m_{j}, dims=[0, -1], shape={so}) * "
                f"m_mask + ttl.block.broadcast(l_{j}, dims=[0, -1], shape={so}) * l_mask"
            )


# The combine ----------------------------------------------------------------------------------


@prints(sp.AttentionCombineOp)
class AttentionCombinePrinter(StagePrinter):
    """The three constant tiles are read with the first split's page and held over the K loop,
    each through a DFB of its own (the compute holds them all at once)."""

    host = (_flash_ml, _flash_rows)

    ROLES = ("u_m", "u_l", "row0")  # `_flash_rows`' tiles, in column order

    def check(self, sec: OperationWriter, s: sp.AttentionCombineOp) -> None:  # type: ignore[override]
        if (
            s.query_rows > 1 and s.sum is None
        ):  # U_m, U_l and row0 take one query row's (sp.attention_combine)
            raise TTLangUnsupported(
                sec.name,
                f"sp.attention_combine rows {s.query_rows}: the merge is printed for one query "
                "row's partials",
            )

    def constants(self, sec: OperationWriter, s: sp.AttentionCombineOp) -> Consts:  # type: ignore[override]
        if s.sum is not None:  # splits by users: a sum of their pages needs no selector
            return {}
        return {"_flash_rows": ((TILE, 3 * TILE), "_flash_rows()")}

    def buffers(self, sec: OperationWriter, s: sp.AttentionCombineOp, out: Lines) -> None:  # type: ignore[override]
        if s.sum is not None:
            return
        for role in self.ROLES:
            out(
                f"flash_{role}_dfb = ttl.make_dataflow_buffer_like(_flash_rows, shape=(1, 1), "
                "block_count=1)"
            )

    def engines(self, sec: OperationWriter, s: sp.AttentionCombineOp) -> list[str]:  # type: ignore[override]
        return [input_engine(sec, s.parts)]

    def in_k_loop(self, s: sp.StageOp, key: str) -> bool:
        return key != "compute"

    def emit(  # type: ignore[override]
        self,
        sec: OperationWriter,
        out: Lines,
        s: sp.AttentionCombineOp,
        key: str,
        r: sp.SitesOp,
        b: dict,
    ) -> None:
        w = page(s.parts, b)[1]
        if s.sum is not None:
            if key == "compute":
                self._sum(sec, out, s, r, w)
            return
        if key != "compute":  # with the first split's page: the compute holds them over the loop
            out("if k0 == 0:")
            with out.indent():
                for c, role in enumerate(self.ROLES):
                    const_read(out, f"flash_{role}_dfb", f"_flash_rows[0:1, {c}:{c + 1}]")
            return
        parts = sec.dfb(sp.buffer_of(s.parts), r)
        o = sec.dfb(sp.buffer_of(s.out), r)
        out("with " + ", ".join(f"flash_{role}_dfb.wait() as {role}" for role in self.ROLES) + ":")
        with out.indent():
            out(f"for kb in range({s.splits}):")
            with out.indent():
                out(f"with {parts}.wait() as x_blk:")
                with out.indent():
                    out("mp, lp, op = u_m @ x_blk, u_l @ x_blk, row0 @ x_blk")
                    out.branch(
                        "kb == 0",
                        ["m_run, l_run, acc = mp, lp, op"],
                        [
                            "m_new = ttl.math.max(m_run, mp)",
                            "a, c = ttl.math.exp(m_run - m_new), ttl.math.exp(mp - m_new)",
                            "m_run, l_run = m_new, l_run * a + lp * c",
                            "acc = acc * a + op * c",
                        ],
                    )
            out(f"full = acc / (l_run + ttl.block.fill(1e-30, (1, {w})))")
            out(f"with {o}.reserve() as o_blk:")
            with out.indent():
                out("o_blk.store(full)")

    def _sum(self, sec: OperationWriter, out: Lines, s: sp.AttentionCombineOp, r, w: int) -> None:
        """Splits by users (sp.attention_combine `sum`): each row's result is whole in its
        user's split and zero in the others, so the pages are added."""
        parts = sec.dfb(sp.buffer_of(s.parts), r)
        o = sec.dfb(sp.buffer_of(s.out), r)
        out(f"acc = ttl.block.fill(0.0, (1, {w}))")
        out(f"for kb in range({s.splits}):")
        with out.indent():
            out(f"with {parts}.wait() as x_blk:")
            with out.indent():
                out("acc = acc + x_blk")
        out(f"with {o}.reserve() as o_blk:")
        with out.indent():
            out("o_blk.store(acc)")
