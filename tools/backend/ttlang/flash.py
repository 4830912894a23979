"""Flash decoding in TT-Lang (`-t ttlang`): the partials page `sp.attention ... splits P` pushes
(its online softmax is indexed.py's) and `sp.attention_combine`, the log-sum-exp merge of the
splits (docs/backend-ttlang.md#flash-decoding-decision; the layout is docs/sp.md's).

A partials tile holds O in row 0 and its head's m and l at (1, 0) and (1, 1). TT-Lang has no
scalar read and no slice of a block, so both sides move these values with block math over
constant 0/1 tiles (exact in f32: one nonzero term per sum):

- **the split** (`partial_page`): its m and l are the (0, 0) elements of the column pages the
  online softmax keeps (row 0 is the one query row), broadcast over the output's tiles and kept
  at (1, 0) and (1, 1) of every tile by two masks (`_flash_ml_*`, read once per item after the
  last K block); O's rows past the first are zero already (the mask `_attn_d` masks every
  padded query row, so their probabilities are zero).
- **the combine**: per split, `ml = U @ X` (U: every row takes row 1) puts (m, l) in columns
  0 and 1 of every row; `ml @ E_m` and `ml @ E_l` spread them over their tile (E: the [w, w]
  tiles of a block-diagonal selector of column 0 or 1 per tile). A block's tiles can only be
  mixed column-wise by a product with a [w, w] block (a broadcast over columns needs a block
  one tile wide), so these are 2 w^2 tile products per split, which the cost model does not
  price (docs/backend-ttlang.md lists them). `Z @ X` (Z: (0, 0) only) keeps row 0's O.

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
    dfb_name,
    input_engine,
    page,
    pages,
    prints,
)

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines


# The host's constants (printed into the program by their source) -----------------------------


def _flash_ml(n):
    """[M | L], each n tiles wide: 1 at (1, 0) of every tile of M and (1, 1) of every tile of
    L, where a partials tile keeps its head's m and l."""
    a = np.zeros((32, 64 * n), np.float32)
    a[1, 0 : 32 * n : 32] = 1.0
    a[1, 32 * n + 1 :: 32] = 1.0
    return a


def _flash_rows():
    """[U | Z]: U takes row 1 into every row (U[i, 1] = 1), Z keeps row 0 (Z[0, 0] = 1)."""
    a = np.zeros((32, 64), np.float32)
    a[:, 1] = 1.0
    a[0, 32] = 1.0
    return a


def _flash_spread(w):
    """[E_m | E_l], each w x w tiles, block-diagonal: X @ E_m puts column 0 of each tile of X
    on every column of that tile, X @ E_l column 1."""
    a = np.zeros((32 * w, 64 * w), np.float32)
    for t in range(w):
        a[32 * t, 32 * t : 32 * t + 32] = 1.0
        a[32 * t + 1, 32 * w + 32 * t : 32 * w + 32 * t + 32] = 1.0
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
    """The four constant pages are read with the first split's page and held over the K loop,
    each through a DFB of its own (the compute holds them all at once)."""

    host = (_flash_ml, _flash_rows, _flash_spread)

    ROLES = (  # (role, constant, page per range bindings, column of its slice in tiles)
        ("up", "rows", lambda b: (1, 1), lambda w: 0),
        ("row0", "rows", lambda b: (1, 1), lambda w: 1),
        ("e_m", "spread", lambda b: (b["w"], b["w"]), lambda w: 0),
        ("e_l", "spread", lambda b: (b["w"], b["w"]), lambda w: w),
    )

    def _names(self, sec: OperationWriter) -> dict[str, str]:
        w = max(r.bindings(sec.work.k_block)["w"] for r in sec.ranges)
        return {"rows": "_flash_rows", "spread": f"_flash_spread_{w}"}

    def constants(self, sec: OperationWriter, s: sp.AttentionCombineOp) -> Consts:  # type: ignore[override]
        w = max(r.bindings(sec.work.k_block)["w"] for r in sec.ranges)
        return {
            "_flash_rows": ((TILE, 2 * TILE), "_flash_rows()"),
            f"_flash_spread_{w}": ((TILE * w, 2 * TILE * w), f"_flash_spread({w})"),
        }

    def _dfb(self, sec: OperationWriter, role: str, page_of, b: dict) -> str:  # noqa: ANN001
        return dfb_name(f"flash_{role}", page_of(b), pages(sec, page_of))

    def buffers(self, sec: OperationWriter, s: sp.AttentionCombineOp, out: Lines) -> None:  # type: ignore[override]
        names = self._names(sec)
        for role, const, page_of, _ in self.ROLES:
            all_pages = pages(sec, page_of)
            for p in all_pages:
                out(
                    f"{dfb_name(f'flash_{role}', p, all_pages)} = ttl.make_dataflow_buffer_like("
                    f"{names[const]}, shape={p}, block_count=1)"
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
        names = self._names(sec)
        d = {role: self._dfb(sec, role, page_of, b) for role, _, page_of, _ in self.ROLES}
        if key != "compute":  # with the first split's page: the compute holds them over the loop
            out("if k0 == 0:")
            with out.indent():
                for role, const, page_of, lo in self.ROLES:
                    ph, pw = page_of(b)
                    c0 = lo(w)
                    const_read(out, d[role], f"{names[const]}[0:{ph}, {c0}:{c0 + pw}]")
            return
        parts = sec.dfb(sp.buffer_of(s.parts), r)
        o = sec.dfb(sp.buffer_of(s.out), r)
        out("with " + ", ".join(f"{d[role]}.wait() as {role}" for role, *_ in self.ROLES) + ":")
        with out.indent():
            out(f"for kb in range({s.splits}):")
            with out.indent():
                out(f"with {parts}.wait() as x_blk:")
                with out.indent():
                    out("ml = up @ x_blk")
                    out("mp, lp, op = ml @ e_m, ml @ e_l, row0 @ x_blk")
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
