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

The constants are the host's, read once per range like rope's (blocks.Constant). A row that
is not whole tiles ends in a short block (link's blocks divide the row's tiles, so only the
row's last tile is part padding):

- the partial reads the row's column mask (`_col_keep`) at its own columns, per item
  (Constant.per_item): layer_norm's count is `reduce_sum` of that slice (a tile: no scalar
  read) and its centred padding is masked to 0; softmax's padding goes to -1e30, so it adds
  nothing to the maximum or the sum, and the combine needs no count;
- layer_norm's combine knows every block's count when printing (pages unrolled): a page
  holding the short block divides by the host's counts tile (`_stat_counts`: n_j in column 0
  of tile j) instead of a fill;
- softmax_apply reads the mask too: its padding's exp(0 - max) would overflow where the
  logits are far below 0, and sp zeroes a map's padding (a GEMM reading inf there makes NaN).
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
    """The selector tiles a pair's partial, combine or apply stage reads; a partial over a row
    that is not whole tiles also reads the row's column mask at its own columns (per item), and
    a layer_norm combine whose page mixes counts reads them (`_stat_counts`)."""
    one = {i: (1, 1) for i, _ in enumerate(sec.ranges)}
    if isinstance(s, sp.MapOp):
        out = dict([_col(1, one)])
        if s.kind.data == MapKindName.SOFTMAX_APPLY and s.valid[1] % TILE:
            out.update(_item_keep(sec, s, s.valid[1]))
        return out
    out = dict([_col(0, one), _col(1, one)])
    if s.form.data == RowForm.PARTIAL and s.cols % TILE:
        out.update(_item_keep(sec, s, s.cols))
    if s.form.data == RowForm.COMBINE:
        kws = {i: r.bindings(sec.work.k_block)["kw"] for i, r in enumerate(sec.ranges)}
        kw = max(kws.values())
        if s.kind.data == RowKindName.LAYER_NORM:
            # the page's masks: one tile row of the range's kw tiles (a prefix of the widest);
            # the store's: one tile
            wide = {i: (1, k) for i, k in kws.items()}
            out.update([_col(0, wide), _col(1, wide)])
            counts = _page_counts(s, sec.k_tiles, kw)[-1]
            if len(set(counts)) > 1:  # the last page: whole blocks, then the short last one
                out[_counts_name(s, kw)] = Constant(
                    (TILE, kw * TILE), f"_stat_counts({kw}, {s.block}, {counts[-1]})", wide
                )
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


def _item_keep(sec: OperationWriter, s: sp.StageOp, cols: int) -> dict[str, Constant]:
    """The row's column mask, read per item at the columns of the stage's first input."""
    cpad = _tiles(cols) * TILE
    widths = {
        i: (1, page_of(s.ins[0], r.bindings(sec.work.k_block))[1]) for i, r in enumerate(sec.ranges)
    }
    return {_keep_name(cols): Constant((TILE, cpad), f"_col_keep({cols}, {cpad})", widths, True)}


def masked_logits(out: Lines, s: sp.MapOp, x: str, rows: int, shape: str) -> str:
    """softmax_apply's x, its padding columns at -1e30 where the row is not whole tiles: their
    exp(x - max) is then 0, as sp zeroes a map's padding (exp(0 - max) overflows to inf when
    the logits are far below 0, and a GEMM reading the padding would make it NaN)."""
    cols = s.valid[1]
    if cols % TILE == 0:
        return x
    keep = f"{_keep_name(cols)}_blk"
    if rows > 1:  # the mask's 32 rows are alike: broadcast down the block
        keep = f"ttl.block.broadcast({keep}, dims=[0], shape={shape})"
    out(f"xm = {x} + ({keep} - {fill(1.0, shape)}) * {fill(BIG, shape)}")
    return "xm"


def _tiles(n: int) -> int:
    return -(-n // TILE)


def _keep_name(cols: int) -> str:
    """The mask of a row of `cols` columns (host `_col_keep`), as compute.py names it too."""
    return f"_keep_{cols}_{_tiles(cols) * TILE}"


def _counts_name(s: sp.RowReduceOp, kw: int) -> str:
    return f"_stat_counts_{kw}_{s.block}_{_block_counts(s)[-1]}"


def _block_counts(s: sp.RowReduceOp) -> list[int]:
    """The real columns of each block of a group, in order: `block`, but the last block of a
    row that is not whole blocks (only where the group is the whole row: link cuts a group
    of several per row into whole tiles, and its blocks divide it)."""
    block = s.block
    assert block is not None
    return [min(block, s.width - lo) for lo in range(0, s.width, block)]


def _page_counts(s: sp.RowReduceOp, k_tiles: int, kw: int) -> list[list[int]]:
    """The blocks' counts a combine's K loop pops, page by page."""
    counts = _block_counts(s)
    return [counts[k : k + kw] for k in range(0, k_tiles, kw)]


def check_pair(section: str, s: sp.RowReduceOp) -> None:
    """Refuse, by the numbers, a blocked pair reduction over groups (several a row) that its
    blocks do not divide: a block would straddle two groups. link never builds one (a group
    of several a row is whole tiles, and the blocks divide it); a row of one group may end in
    a short block (its count and its column mask are the printer's)."""
    block = s.block
    if block is None or (s.width != s.cols and s.width % block):
        raise TTLangUnsupported(
            section,
            f"sp.row_reduce {s.form.data} {s.kind.data} width {s.width} in blocks of {block} "
            f"over {s.cols} columns: the groups are not whole blocks",
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
        keep = None
        if s.cols % TILE:  # the row's last tile is part padding: the item's columns of the mask
            keep = _sel(_keep_name(s.cols), h, w)
            if h > 1:
                out(f"keep = {keep}")
                keep = "keep"
        if s.kind.data == RowKindName.LAYER_NORM:  # the sum, the squared deviations from its mean
            out(f"a = ttl.math.reduce_sum({x}, dims=[-1], shape={col})")
            if keep:  # the block's real columns, in every column of its [h, 1] tile
                n = f"ttl.math.reduce_sum({keep}, dims=[-1], shape={col})"
                out(f"n = ttl.block.broadcast({n}, dims=[-1], shape={col})")
                mean = "a / n"
            else:
                mean = f"a / {fill(float(s.block), col)}"
            d = f"{x} - ttl.block.broadcast({mean}, dims=[-1], shape={full})"
            out(f"d = ({d}) * {keep}" if keep else f"d = {d}")
            out(f"b = ttl.math.reduce_sum(d * d, dims=[-1], shape={col})")
        else:  # the maximum, the sum of exp(x - maximum)
            if keep:  # the padding at -1e30: never the maximum, exp 0 (exact: x on real columns)
                out(f"xm = {x} + ({keep} - {fill(1.0, full)}) * {fill(BIG, full)}")
                x = "xm"
            out(f"a = ttl.math.reduce_max({x}, dims=[-1], shape={col})")
            e = f"ttl.math.exp({x} - ttl.block.broadcast(a, dims=[-1], shape={full}))"
            out(f"b = ttl.math.reduce_sum({e}, dims=[-1], shape={col})")
        out(f"o_blk.store({_pair('a', 'b', h)})")


def _combine(sec: OperationWriter, out: Lines, s: sp.RowReduceOp, r: sp.SitesOp, b: dict) -> None:
    """The partials of a group page by page (kw of them a page, unrolled): layer_norm merges
    each page's (sum, M2) into the running ones by Chan et al.'s update (every count is known
    here: `block` columns a partial, the short last block's its own); softmax rescales its
    running sum to the new maximum (its short block's padding added nothing)."""
    h, kw = page_of(s.ins[0], b)
    if sec.k_tiles % kw:
        raise TTLangUnsupported(
            sec.name,
            f"sp.row_reduce combine {s.kind.data}: {sec.k_tiles} partials in pages of {kw}",
        )
    col, page = f"({h}, 1)", f"({h}, {kw})"
    p = sec.dfb(sp.buffer_of(s.ins[0]), r)
    layer = s.kind.data == RowKindName.LAYER_NORM
    # one kw a section (sp.work's k_block): the constants are one tile row of kw tiles
    n_prev = 0.0
    for kb, counts in enumerate(_page_counts(s, sec.k_tiles, kw)):
        out(f"with {p}.wait() as p_blk:")
        with out.indent():
            if layer:
                n_page = float(sum(counts))
                s0, s1 = _sel(col_name(0, kw), h, kw), _sel(col_name(1, kw), h, kw)
                if h > 1:
                    out(f"s0w = {s0}")
                    s0 = "s0w"
                out(f"pa = ttl.math.reduce_sum(p_blk * {s0}, dims=[-1], shape={col})")
                out(f"pm = ttl.math.reduce_sum(p_blk * {s1}, dims=[-1], shape={col})")
                # the spread of the blocks' means about the page's: sum_j n_j (a_j / n_j -
                # mean)^2, n_j `block` but the short last block's (the host's counts tile
                # then: n_j in column 0 of tile j, 1 elsewhere, where dev is masked to 0)
                if len(set(counts)) == 1:
                    cn, spread = fill(float(counts[0]), page), f" * {fill(float(counts[0]), col)}"
                else:
                    cn, spread = _sel(_counts_name(s, kw), h, kw), ""
                mean = f"pa / {fill(n_page, col)}"
                out(
                    f"dev = (p_blk / {cn} - "
                    f"ttl.block.broadcast({mean}, dims=[-1], shape={page})) * {s0}"
                )
                weighted = "dev * dev" if spread else f"dev * dev * {cn}"
                out(f"pm = pm + ttl.math.reduce_sum({weighted}, dims=[-1], shape={col}){spread}")
                if kb == 0:
                    out("t1 = pa")
                    out("t2 = pm")
                else:
                    out(f"dl = pa / {fill(n_page, col)} - t1 / {fill(n_prev, col)}")
                    weight = n_prev * n_page / (n_prev + n_page)
                    out(f"t2 = t2 + pm + dl * dl * {fill(weight, col)}")
                    out("t1 = t1 + pa")
                n_prev += n_page
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
