"""tg.moe in TT-Lang (`-t ttlang`): the router (sp.route) and the indexed expert loads
(`sp.load ... by @id stride N`); the expert GEMMs are plain GEMMs and `moe_combine` a map
(compute.py). docs/backend-ttlang.md#mixture-of-experts.

- **route**: block math only. Per item the compute pops the [h, kw] page of f32 logits (whole
  rows: one K block) and ranks each row's experts k times: the row maximum, `eq` against it,
  the least column index of a hit (cp - reduce_max(hit * (cp - idx)), idx a constant column-index
  tensor, cp the padded width: small integers, exact), the one-hot of that column; its score is
  the masked row sum of the scores (softmax or sigmoid) and the column is knocked out (-1e30)
  for the next rank.
  Column 0 of the pushed [h, 1] page holds the `at`-th id or weight, or expert `at`'s weight
  (the chosen scores times a constant column selector, summed), divided by the k weights' sum
  with `renormalize`; a row mask zeroes the rows past `rows`. Compilable constructs.
- **indexed load**: no kernel reads the id (TT-Lang has no scalar read in a kernel and no
  runtime argument). The stacked expert tensor is allocated as one DRAM tensor per expert
  (the program's EXPERTS table) and the host passes the routed expert's tensor to the section
  (host.py's `_arg` reads the id back from the route section's output), so the load is a plain
  load of that tensor from row 0. The bytes a section moves are the priced expert's rows; the
  host's read of the id (one tile) is not priced.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from spatial_dialect import sp
from spatial_dialect.tools.backend.ttlang.stage import (
    TILE,
    Consts,
    StagePrinter,
    const_buffers,
    const_dfb,
    const_read,
    eq,
    expr,
    gt,
    input_engine,
    load_into,
    pad,
    page,
    prints,
    rows_mask,
)
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

if TYPE_CHECKING:
    from spatial_dialect.tools.backend.ttlang.section import OperationWriter
    from spatial_dialect.tools.backend.ttlang.text import Lines

BIG = 1e30


def expert_picks(stages: list[sp.StageOp]) -> dict[str, str]:
    """The section's indexed loads: stacked expert tensor -> the id tensor that routes it. The
    host passes the routed expert's own DRAM tensor (host.py's `_arg`), so the kernel reads it
    from row 0, as a plain load."""
    return {
        s.tensor.root_reference.data: s.index.root_reference.data
        for s in stages
        if isinstance(s, sp.LoadOp) and s.index is not None and s.stride is not None
    }


def index_only(stages: list[sp.StageOp]) -> set[str]:
    """The id tensors no stage reads but as an indexed load's index: not the operation's."""
    ids = set(expert_picks(stages).values())
    read = {s.tensor.root_reference.data for s in stages if isinstance(s, sp.LoadOp | sp.StoreOp)}
    return ids - read


def experts_table(sections: list[OperationWriter]) -> dict[str, int]:
    """EXPERTS of the printed program: stacked expert tensor -> its rows per expert, so the
    host allocates one DRAM tensor per expert."""
    out: dict[str, int] = {}
    for sec in sections:
        for s in sec.stages:
            if isinstance(s, sp.LoadOp) and s.index is not None and s.stride is not None:
                name = s.tensor.root_reference.data
                rows, total = s.stride * TILE, sec.tensors[name].type.get_shape()[0]
                if total % rows:
                    raise TTLangUnsupported(
                        sec.name, f"@{name}'s {total} rows are not whole experts of {rows}"
                    )
                if out.setdefault(name, rows) != rows:
                    raise TTLangUnsupported(
                        sec.name, f"@{name} read as experts of {out[name]} and {rows} rows"
                    )
    return out


@prints(sp.RouteOp)
class RoutePrinter(StagePrinter):
    def check(self, sec: OperationWriter, s: sp.RouteOp) -> None:  # type: ignore[override]
        for r in sec.ranges:
            b = r.bindings(sec.work.k_block)
            _, kw = page(s.x, b)
            if kw != sec.k_tiles or kw * TILE < s.cols:
                raise TTLangUnsupported(
                    sec.name,
                    f"sp.route over a {kw}-tile page of {s.cols} experts in {sec.k_tiles} "
                    "tiles: printed for whole rows in one K block",
                )

    def constants(self, sec: OperationWriter, s: sp.RouteOp) -> Consts:  # type: ignore[override]
        cp = pad(s.cols)
        out: Consts = {
            # the column indices and the -1e30 past `cols` are argmax's (host.py)
            f"_route_idx_{s.cols}_{cp}": ((TILE, cp), f"_argmax_idx({s.cols}, {cp})"),
            f"_route_neg_{s.cols}_{cp}": ((TILE, cp), f"_argmax_neg({s.cols}, {cp})"),
        }
        out.update([rows_mask(sec, s.rows, s.x)])
        if s.pick.data == "expert" and s.first is None:
            out[f"_route_at_{s.at}_{cp}"] = (
                (TILE, cp),
                f"np.repeat((np.arange({cp}) == {s.at})[None, :], {TILE}, 0).astype(np.float32)",
            )
        return out

    def _consts(self, sec: OperationWriter, s: sp.RouteOp, b: dict) -> list[tuple[str, str]]:
        """(constant, its DFB) for the range with bindings `b`, in reading order."""
        h, kw = page(s.x, b)
        names = [n for n in self.constants(sec, s) if not n.startswith("_rows_")]
        row = [(n, const_dfb(sec, n, lambda bb: (1, page(s.x, bb)[1]), b)) for n in names]
        mask = rows_mask(sec, s.rows, s.x)[0]
        return [*row, (mask, const_dfb(sec, mask, lambda bb: (page(s.x, bb)[0], 1), b))]

    def buffers(self, sec: OperationWriter, s: sp.RouteOp, out: Lines) -> None:  # type: ignore[override]
        for n in self.constants(sec, s):
            if n.startswith("_rows_"):
                const_buffers(sec, out, n, lambda bb: (page(s.x, bb)[0], 1))
            else:
                const_buffers(sec, out, n, lambda bb: (1, page(s.x, bb)[1]))

    def engines(self, sec: OperationWriter, s: sp.RouteOp) -> list[str]:  # type: ignore[override]
        return [input_engine(sec, s.x)]

    def emit(  # type: ignore[override]
        self, sec: OperationWriter, out: Lines, s: sp.RouteOp, key: str, r: sp.SitesOp, b: dict
    ) -> None:
        h, kw = page(s.x, b)
        consts = self._consts(sec, s, b)
        if key != "compute":
            row = expr(load_into(sec.stages, s.x).access.origin.data.results[0])
            for n, d in consts:
                view = (
                    f"{n}[{row}:{row + h}, 0:1]" if n.startswith("_rows_") else f"{n}[0:1, 0:{kw}]"
                )
                const_read(out, d, view)
            return
        full, col = f"({h}, {kw})", f"({h}, 1)"

        def fill(v: float, shape: str = full) -> str:
            return f"ttl.block.fill({v!r}, {shape})"

        def across(blk: str) -> str:  # a [1, kw] constant row to every row of the page
            return f"ttl.block.broadcast({blk}, dims=[0], shape={full})"

        def wide(blk: str, shape: str = full) -> str:  # column 0 to every column
            return f"ttl.block.broadcast({blk}, dims=[-1], shape={shape})"

        held = s.first is not None
        at_row = s.pick.data == "expert" and not held
        blks = ["i_row", "n_row"] + (["e_row"] if at_row else []) + ["m_blk"]
        waits = [f"{d}.wait() as {n}" for (_, d), n in zip(consts, blks, strict=True)]
        if held:
            waits.append(f"{sec.dfb(sp.buffer_of(s.first), r)}.wait() as f_blk")
        x = sec.dfb(sp.buffer_of(s.x), r)
        o = sec.dfb(sp.buffer_of(s.out), r)
        out(f"with {x}.wait() as x_blk, " + ", ".join(waits) + f", {o}.reserve() as o_blk:")
        with out.indent():
            if held:
                # a chip of the experts plan: columns counted from its first held expert (its
                # own input's element [0, 0] to every element), so `at` below is the chip's id
                out(
                    f"idx = {across('i_row')} - ttl.block.broadcast(f_blk, dims=[0, -1], "
                    f"shape={full})"
                )
            else:
                out(f"idx = {across('i_row')}")
            if held and s.pick.data != "expert":
                # 1 on the columns the chip holds (0 <= idx < held), 0 elsewhere
                out(f"mine = {gt('idx', fill(-0.5))} * {gt(fill(s.held - 0.5), 'idx')}")
            out(f"lg = x_blk + {across('n_row')}")
            if s.scores.data == "softmax":
                out(
                    f"ex = ttl.math.exp(lg - {wide(f'ttl.math.reduce_max(lg, dims=[-1], shape={col})')})"
                )
                out(f"sc = ex / {wide(f'ttl.math.reduce_sum(ex, dims=[-1], shape={col})')}")
            else:
                out("sc = ttl.math.sigmoid(x_blk)")
            # cp - column index: positive on every column, the lowest column the largest (exact:
            # small integers), so the least index of a hit is cp - max(hit * rev)
            out(f"rev = {fill(float(pad(s.cols)))} - idx")
            out(f"total = {fill(0.0, col)}")
            out(f"chosen = {fill(0.0)}")
            # the simulator records every source of a temporary, so each rank's lg carries the
            # previous one's record as often as it uses it: three times here (max, eq and the
            # knock-out), where a select of lg and a second candidate block made it nine
            out(f"for j in range({s.top_k}):")
            with out.indent():
                top = wide(f"ttl.math.reduce_max(lg, dims=[-1], shape={col})")
                out(f"hit = {eq('lg', top, full)}")
                out(
                    f"at = {fill(float(pad(s.cols)), col)} - ttl.math.reduce_max(hit * rev, "
                    f"dims=[-1], shape={col})"
                )
                out(f"one = {eq('idx', wide('at'), full)}")
                out(f"w = ttl.math.reduce_sum(one * sc, dims=[-1], shape={col})")
                out("total = total + w")
                out("chosen = chosen + one * sc")
                out(f"lg = lg - one * {fill(BIG)}")  # |logit| << 1e30: the chosen become -1e30
                if s.pick.data in ("id", "weight"):
                    out(f"if j == {s.at}:")
                    with out.indent():
                        picked = "at" if s.pick.data == "id" else "w"
                        if held:  # an expert the chip does not hold: id 0, weight 0
                            own = f"ttl.math.reduce_sum(one * mine, dims=[-1], shape={col})"
                            picked = f"{picked} * {own}"
                        out(f"picked = {picked}")
            if s.pick.data == "expert":
                sel = f"({eq('idx', fill(float(s.at)), full)})" if held else across("e_row")
                out(f"picked = ttl.math.reduce_sum(chosen * {sel}, dims=[-1], shape={col})")
            if s.pick.data != "id" and s.renormalized():
                # total's column 0 to every column: the zeros beside column 0 stay 0, not 0 / 0
                out(f"picked = picked / {wide('total', col)}")
            out("o_blk.store(picked * m_blk)")
