"""The simulator's GEMM stage, `sp.matmul_tiles` (registry.py's runner for it).

Per item and K block it pops a page of A and of B, adds the tile products of each [sh, sw]
sub-block into an accumulator of the declared precision (machine.accumulate: the reference's
`matmul`, rounded after each tile product when the accumulator is narrower than 32 bits, as the
hardware's dest is), parks the partial sums in the
spill FIFO between K blocks (or holds them, when the accumulator has room for every sub-block),
and pushes each finished sub-block to the output FIFO, whose element type is the one rounding.
Under split-K (sp.work's K slices) a slice's finished sums go unrounded to the site running the
same block in the next slice, which adds them to its own: only the last slice pushes the result.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from spatial_dialect import sp
from spatial_dialect.tools.interpreters.numerics import numpy_dtype, round_to
from spatial_dialect.tools.simulator.machine import (
    Fifo,
    Process,
    Q8Block,
    SimulationError,
    SiteRun,
    Wait,
    accumulate,
    give,
    take,
)
from spatial_dialect.tools.simulator.registry import runs

if TYPE_CHECKING:
    from spatial_dialect.tools.simulator.program import ProgramRun


@runs(sp.MatmulTilesOp)
def run_matmul(
    sec: ProgramRun, op: sp.MatmulTilesOp, run: SiteRun, item: int, k0: int | None
) -> Process:
    b = run.bindings
    h, w, sh, sw, kw = b["h"], b["w"], b["sh"], b["sw"], b["kw"]
    th, tw = sec.tile
    in0, in1 = run.buffers[sp.buffer_of(op.in0)], run.buffers[sp.buffer_of(op.in1)]
    out = run.buffers[sp.buffer_of(op.out)]
    spill = run.buffers[sp.buffer_of(op.spill)] if op.spill is not None else None
    partials = split_k_partials(sec, op, run, item)
    acc_op = sp.buffer_of(op.acc)
    acc_dtype = numpy_dtype(acc_op.elt)
    acc_rows, acc_cols = acc_op.page.resolve(b)
    subs = [(ti, tj) for ti in range(0, h, sh) for tj in range(0, w, sw)]
    k_blocks = sec.slice_tiles // kw
    name = run.where(op.stage_name())
    if spill is None and k_blocks > 1 and len(subs) * sh * sw > acc_rows * acc_cols:
        raise SimulationError(
            f"{name}: {len(subs)} sub-blocks of {sh}x{sw} tiles stay in the accumulator "
            f"between K blocks without a spill, but it holds {acc_rows}x{acc_cols} tiles"
        )
    held: dict[tuple[int, int], np.ndarray] = {}
    # transpose_b: B's page is the w x kw tiles of its block stored N x K, transposed here.
    b_block = (w, kw) if op.transposes_b else (kw, w)
    a_pages = math.prod(in0.pages_of((h, kw), name))
    b_pages = math.prod(in1.pages_of(b_block, name))
    for kb in range(k_blocks):
        who = f"{name} (item {item}, K block {kb})"
        for fifo, pages in ((in0, a_pages), (in1, b_pages)):
            wait = Wait((fifo,), False, pages, who)
            if wait.blocked():
                yield wait
        a, bb = in0.front((h, kw), who), in1.front(b_block, who)
        if op.transposes_b:
            bb = bb.T
        if op.dequantize is not None:  # Q8_0 blocks widened before the product
            a, bb = (widened(x, numpy_dtype(op.dequantize)) for x in (a, bb))
        for ti, tj in subs:
            if kb == 0:
                acc = np.zeros((sh * th, sw * tw), acc_dtype)
            elif spill is not None:
                acc = yield from take(spill, (sh, sw), who)
            else:
                acc = held[(ti, tj)]
            rows, cols = a[ti * th : (ti + sh) * th], bb[:, tj * tw : (tj + sw) * tw]
            if isinstance(rows, Q8Block):  # the int8 dot (both operands Q8_0: verified)
                acc = acc + rows.dot(cols)  # type: ignore[arg-type]
            else:
                acc = accumulate(acc, rows, cols, tw)
            if kb == k_blocks - 1 and partials is not None:
                own, onward = partials
                if own is not None:  # the slice before's sums for this sub-block
                    acc = acc + (yield from take(own, (sh, sw), who))
                if onward is not None:  # to the next slice, unrounded
                    yield from give((onward,), acc, who)
                    continue
            if kb == k_blocks - 1:
                yield from give((out,), acc, who)
            elif spill is not None:
                yield from give((spill,), acc, who)
            else:
                held[(ti, tj)] = acc
        in0.pop(a_pages)
        in1.pop(b_pages)


def split_k_partials(
    sec: ProgramRun, op: sp.MatmulTilesOp, run: SiteRun, item: int
) -> tuple[Fifo | None, Fifo | None] | None:
    """Split-K's partial sums of an item: (this site's FIFO it adds from, in slice s > 0;
    the FIFO of the site running the same block in the next slice, in slice s < S - 1)."""
    if op.partials is None:
        if sec.space.k_slices > 1:
            raise SimulationError(
                f"{run.where(op.stage_name())}: {sec.space.k_slices} K slices and no "
                "partials FIFO to add them through"
            )
        return None
    fifo = sp.buffer_of(op.partials)
    s, last = sec.space.k_slice(item), sec.space.k_slices - 1
    own = run.buffers[fifo] if s > 0 else None
    onward = sec.run_of(item + sec.space.blocks).buffers[fifo] if s < last else None
    return own, onward


def widened(x: np.ndarray | Q8Block, dtype: np.dtype) -> np.ndarray:
    """A Q8_0 operand dequantized and rounded to `dtype` (matmul_tiles' `dequantize`); a float
    operand as it is."""
    return round_to(x.dequantized(), dtype) if isinstance(x, Q8Block) else x
