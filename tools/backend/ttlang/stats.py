"""The two-statistic row reductions blocked (layer_norm, softmax: `sp.row_reduce partial` and
`combine`) and the apply maps that read them (`layer_apply`, `softmax_apply`), in TT-Lang block
math.

sp's contract puts a row's two statistics in columns 0 and 1 of an [h, 1] page's tiles
(docs/sp.md, RowReduceOp). TT-Lang's block math has no column shift within a tile, but it has
what reaches column 1 without one, all hardware-real (the spec's compiler column): an
elementwise product by a constant 0/1 tile and `reduce_sum` over the columns (which lands in
column 0), and `broadcast` of column 0 over a tile's columns. So:

- write (a, b) into columns 0 and 1: `wide(a) * S0 + wide(b) * S1`, S_c the host's tile with
  ones in column c (`_stat_col`), wide() the broadcast of column 0;
- read column 1: `reduce_sum(stats * S1)` (the row's only non-zero is column 1's value);
- a combine's page of kw partial tiles: layer_norm's sums and deviations need only masked
  reductions (`p * S0`, `p * S1` over the page); softmax's sum of s_j exp(a_j - max) pairs
  column 1 of tile j with column 0 of the same tile, which only a product moves: the host's
  gathers G_c ([kw, ceil(kw / 32)] tiles, 1 at (32 j + c, j)) put a_j and s_j in column j of
  a tile row (`p @ G0`, `p @ G1`: 2 h kw ceil(kw / 32) tile-matmuls a page).

The constants are the host's, read once per range like rope's (blocks.Constant). Every block
of a group must be whole (`width % block == 0`, so each partial's count is `block`): a group
whose last block is partial needs that block's count, which depends on the item's column;
it is refused by the numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.sp.kinds import MapKindName, RowForm, RowKindName
from spatial_dialect.targets.gemm import TILE
from spatial_dialect.tools.backend.ttlang.blocks import Constant, fill, page_of, with_blocks
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines

APPLY_KINDS = (MapKindName.LAYER_APPLY, MapKindName.SOFTMAX_APPLY)
"""The maps that read a pair's column 1."""

BIG = 1e30  # below every real value: a masked column never wins a maximum


def col_name(col: int, tiles: int) -> str:
    return f"_stat_col_{col}_{tiles * TILE}"


def gather_name(col: int, kw: int) -> str:
    return f"_stat_gather_{col}_{kw}"


def _col(col: int, pages: dict[int, tuple[int, int]]) -> tuple[str, Constant]:
    tiles = max(p[1] for p in pages.values())
    return col_name(col, tiles), Constant(
        (TILE, tiles * TILE), f"_stat_col({col}, {tiles * TILE})", pages
    )


def pair_constants(sec: OperationWriter, s: sp.StageOp) -> dict[str, Constant]:
    """The selector tiles a pair's partial, combine or apply stage reads."""
    one = {i: (1, 1) for i, _ in enumerate(sec.ranges)}
    if isinstance(s, sp.MapOp):
        return dict([_col(1, one)])
    out = dict([_col(0, one), _col(1, one)])
    if s.form.data == RowForm.COMBINE:
        kws = {i: r.bindings(sec.work.k_block)["kw"] for i, r in enumerate(sec.ranges)}
        kw = max(kws.values())
        if s.kind.data == RowKindName.LAYER_NORM:
            # the page's masks: one tile row of the range's kw tiles (a prefix of the widest);
            # the store's: one tile
            wide = {i: (1, k) for i, k in kws.items()}
            out.update([_col(0, wide), _col(1, wide)])
        else:
            g = _tiles(kw)
            for c in (0, 1):
                pages = {i: (k, g) for i, k in kws.items()}
                out[gather_name(c, kw)] = Constant(
                    (kw * TILE, g * TILE), f"_stat_gather({c}, {kw})", pages
                )
            if kw % TILE:  # the gathered tile row's columns past kw, kept out of the maximum
                keep = {i: (1, g) for i in kws}
                out[_keep_name(kw)] = Constant(
                    (TILE, g * TILE), f"_col_keep({kw}, {g * TILE})", keep
                )
    return out


def _tiles(n: int) -> int:
    return -(-n // TILE)


def _keep_name(kw: int) -> str:
    return f"_keep_{kw}_{_tiles(kw) * TILE}"


def check_pair(section: str, s: sp.RowReduceOp) -> None:
    """Refuse, by the numbers, a blocked pair reduction whose blocks are not all whole."""
    block = s.block
    if s.cols % TILE or block is None or s.width % block:
        raise TTLangUnsupported(
            section,
            f"sp.row_reduce {s.form.data} {s.kind.data} width {s.width} in blocks of {block} "
            f"over {s.cols} columns: the last block of a group holds fewer columns, whose "
            "count depends on the item's column (every block must be whole)",
        )


def _sel(name: str, h: int, w: int = 1) -> str:
    """A selector tile row, broadcast down the block's h tile rows (its 32 rows are alike)."""
    blk = f"{name}_blk"
    return blk if h == 1 else f"ttl.block.broadcast({blk}, dims=[0], shape=({h}, {w}))"


def _pair(a: str, b: str, h: int) -> str:
    """(a, b), column statistics in column 0 of [h, 1] blocks, into columns 0 and 1."""
    col = f"({h}, 1)"
    wa = f"ttl.block.broadcast({a}, dims=[-1], shape={col})"
    wb = f"ttl.block.broadcast({b}, dims=[-1], shape={col})"
    return f"{wa} * {_sel(col_name(0, 1), h)} + {wb} * {_sel(col_name(1, 1), h)}"


def column_1(out: Lines, stats: str, h: int) -> str:
    """Column 1 of a stats block, moved to column 0 (masked, then summed over the columns)."""
    col = f"({h}, 1)"
    out(
        f"second = ttl.math.reduce_sum({stats} * {_sel(col_name(1, 1), h)}, dims=[-1], shape={col})"
    )
    return "second"


def emit_pair(sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict) -> None:
    check_pair(sec.name, s)
    if s.form.data == RowForm.PARTIAL:
        _partial(sec, out, s, r, b)
    else:
        _combine(sec, out, s, r, b)


def _partial(sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict) -> None:
    ins = list(s.ins)
    h, w = page_of(ins[0], b)
    if w * TILE != s.block:
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce partial {s.kind.data}: a {w}-tile page is not one block of "
            f"{s.block} columns",
        )
    full, col = f"({h}, {w})", f"({h}, 1)"
    head, (x,) = with_blocks(sec, ins, s.out, r)
    out(head)
    with out.indent():
        if s.kind.data == RowKindName.LAYER_NORM:  # the sum, the squared deviations from its mean
            out(f"a = ttl.math.reduce_sum({x}, dims=[-1], shape={col})")
            mean = f"a / {fill(float(s.block), col)}"
            out(f"d = {x} - ttl.block.broadcast({mean}, dims=[-1], shape={full})")
            out(f"b = ttl.math.reduce_sum(d * d, dims=[-1], shape={col})")
        else:  # the maximum, the sum of exp(x - maximum)
            out(f"a = ttl.math.reduce_max({x}, dims=[-1], shape={col})")
            e = f"ttl.math.exp({x} - ttl.block.broadcast(a, dims=[-1], shape={full}))"
            out(f"b = ttl.math.reduce_sum({e}, dims=[-1], shape={col})")
        out(f"o_blk.store({_pair('a', 'b', h)})")


def _combine(sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict) -> None:
    """The partials of a group page by page (kw of them a page, unrolled): layer_norm merges
    each page's (sum, M2) into the running ones by Chan et al.'s update (every count is known
    here: `block` columns a partial); softmax rescales its running sum to the new maximum."""
    h, kw = page_of(s.ins[0], b)
    pages = sec.k_tiles // kw
    if pages * kw != sec.k_tiles:
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce combine {s.kind.data}: {sec.k_tiles} partials in pages of {kw}",
        )
    col, page = f"({h}, 1)", f"({h}, {kw})"
    p = sec.dfb(sp.buffer_of(s.ins[0]), r)
    layer = s.kind.data == RowKindName.LAYER_NORM
    # the constants are sized by the widest page of the section's ranges
    kw_max = max(rr.bindings(sec.work.k_block)["kw"] for rr in sec.ranges)
    if not layer and kw != kw_max:
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce combine softmax: pages of {kw} and {kw_max} partials in one "
            "section (the gathers are one constant a section)",
        )
    c = float(s.block)  # the columns of every partial (check_pair)
    for kb in range(pages):
        out(f"with {p}.wait() as p_blk:")
        with out.indent():
            if layer:
                n_page = kw * c
                s0, s1 = _sel(col_name(0, kw_max), h, kw), _sel(col_name(1, kw_max), h, kw)
                if h > 1:
                    out(f"s0w = {s0}")
                    s0 = "s0w"
                out(f"pa = ttl.math.reduce_sum(p_blk * {s0}, dims=[-1], shape={col})")
                out(f"pm = ttl.math.reduce_sum(p_blk * {s1}, dims=[-1], shape={col})")
                mean = f"pa / {fill(n_page, col)}"
                out(
                    f"dev = (p_blk / {fill(c, page)} - "
                    f"ttl.block.broadcast({mean}, dims=[-1], shape={page})) * {s0}"
                )
                out(
                    "pm = pm + ttl.math.reduce_sum(dev * dev, dims=[-1], "
                    f"shape={col}) * {fill(c, col)}"
                )
                if kb == 0:
                    out("t1 = pa")
                    out("t2 = pm")
                else:
                    n_prev = kb * n_page
                    out(f"dl = pa / {fill(n_page, col)} - t1 / {fill(n_prev, col)}")
                    weight = n_prev * n_page / (n_prev + n_page)
                    out(f"t2 = t2 + pm + dl * dl * {fill(weight, col)}")
                    out("t1 = t1 + pa")
            else:
                g = f"({h}, {_tiles(kw)})"
                out(f"ga = p_blk @ {gather_name(0, kw)}_blk")
                out(f"gs = p_blk @ {gather_name(1, kw)}_blk")
                if kw % TILE:  # padding columns past kw: -1e30 for the maximum and exp
                    kp = _sel(_keep_name(kw), h, _tiles(kw))
                    out(f"ga = ga + ({kp} - {fill(1.0, g)}) * {fill(BIG, g)}")
                out(f"pk = ttl.math.reduce_max(ga, dims=[-1], shape={col})")
                e = f"ttl.math.exp(ga - ttl.block.broadcast(pk, dims=[-1], shape={g}))"
                out(f"ps = ttl.math.reduce_sum(gs * {e}, dims=[-1], shape={col})")
                if kb == 0:
                    out("t1 = pk")
                    out("t2 = ps")
                else:
                    out("top = ttl.math.max(t1, pk)")
                    out("t2 = t2 * ttl.math.exp(t1 - top) + ps * ttl.math.exp(pk - top)")
                    out("t1 = top")
    o = sec.dfb(sp.buffer_of(s.out), r)
    out(f"with {o}.reserve() as o_blk:")
    with out.indent():
        if layer:
            n = fill(float(s.width), col)
            eps = s.eps.value.data if s.eps is not None else 0.0  # type: ignore[union-attr]
            out(f"inv = ttl.math.rsqrt(t2 / {n} + {fill(eps, col)})")
            out(f"mean = t1 / {n}")
            out(f"o_blk.store({_pair('inv', 'mean', h)})")
        else:
            out("inv = ttl.math.recip(t2)")
            out(f"o_blk.store({_pair('t1', 'inv', h)})")
