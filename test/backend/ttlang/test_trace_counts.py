"""Counted, not just equal: what tt-lang-sim's trace says the printed program moved equals what
the cost model prices for the section's plan (issue 11, item 4).

Per case (a GEMM compiled for wormhole_n150 on a sub-grid, so the plan has the named shape):

- tiles read from DRAM per operand = gemm_quantities' a_tiles_dram / b_tiles_dram (what cost.py
  prices as DRAM bytes), tiles written = c_tiles_written, and the bytes = GemmCost.dram_bytes;
- tiles sent into pipes = the DRAM reads of the multicast operands (each block a sender reads is
  multicast once); tiles received from pipes = noc_tile_hops (a rectangle multicast occupies one
  link per member); DRAM reads + pipe receipts = the tiles delivered (noc_tiles less the writes),
  and their bytes = GemmCost.noc_bytes;
- DataflowBuffers per node <= 32, and the bytes of those a node's kernels use = the bytes
  size-buffers laid out for its site, plus a spill that size-buffers aliased onto the output
  FIFO (the printer gives it a DFB of its own: docs/backend-ttlang.md#memory).

The RDU's replicated/broadcast choice does not apply: Tensix multicasts rectangles.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from spatial_dialect import sp

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import gemm_text  # noqa: E402
from test_ttlang_backend import needs_sim  # noqa: E402
from trace_counts import moved, node_buffers, partials_pipes, priced  # noqa: E402

# (m, k, n, grid, what the plan must have): groups, max items per site, distinct block shapes,
# K blocks > 1
CASES = {
    "unicast-rounds-kblocks": (256, 256, 256, "2x2", set(), 2, 1, True),
    "unicast-boundary": (224, 96, 96, "4x4", set(), 1, 2, False),
    "unicast-uneven-rounds": (96, 256, 96, "2x4", set(), 2, 1, False),
    "mcast-rows-kblocks": (256, 256, 256, "4x4", {"rows"}, 1, 1, True),
    "mcast-rows-uneven-rounds": (224, 128, 256, "4x4", {"rows"}, 2, 1, False),
    "mcast-rows-rounds-boundary": (256, 128, 224, "4x4", {"rows"}, 2, 2, False),
    "mcast-columns-boundary-kblocks": (160, 256, 96, "4x2", {"columns"}, 1, 2, True),
    "mcast-both-boundary": (224, 64, 256, "4x4", {"rows", "columns"}, 1, 2, False),
    # 2 sub-blocks of 5x1 per 5x2 block (a boundary range of 5x1), spilled over 2 K blocks
    "subblocks-boundary-kblocks": (160, 64, 224, "2x2", set(), 1, 2, True),
}


def _selector_bytes(sec: sp.ProgramOp, r: sp.SitesOp) -> int:
    """The sub-block selectors' DFBs (f32, block_count 2; not in the sized IR: the printer's
    one-hot form of a sub-block, docs/backend-ttlang.md#sub-blocks)."""
    b = r.bindings(sec.one(sp.WorkOp).k_block)
    if b["subs"] == 1:
        return 0
    tiles = (b["sh"] * b["h"] if b["sh"] != b["h"] else 0) + (
        b["w"] * b["sw"] if b["sw"] != b["w"] else 0
    )
    return 2 * tiles * 4096


# Split-K: (m, k, n, accumulate, split-k option) on the 8x8 grid, and the plan's (slices, axis,
# groups, K blocks a slice, sub-blocks a block)
SPLIT_CASES = {
    "split-x2": ((64, 512, 32, "f32", 2), (2, "x", set(), 1, 1)),
    "split-y4": ((32, 512, 64, "f32", 4), (4, "y", set(), 1, 1)),
    "split-x2-subblocks-columns": ((320, 1024, 64, "f32", 2), (2, "x", {"columns"}, 4, 2)),
    "split-x4-bf16-both": ((256, 1024, 64, "bf16", 4), (4, "x", {"rows", "columns"}, 2, 1)),
}


def _compile(m: int, k: int, n: int, grid: str, accumulate: str = "bf16", split_k: int = 1):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, "bf16")))
    # The 16-bit dest's unsplit plans (accumulate=bf16, split-k=1): the cases were chosen for
    # their kinds.
    module = compile_module(fn, "wormhole_n150", grid=grid, accumulate=accumulate, split_k=split_k)
    return fn, module, next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


def _split_compile(case: str):
    (m, k, n, acc, split), _ = SPLIT_CASES[case]
    return _compile(m, k, n, "8x8", acc, split)


def _split_plan(sec: sp.ProgramOp) -> tuple:
    work = sec.one(sp.WorkOp)
    return (
        work.k_slices,
        work.split_axis,
        {g.axis.data.value for g in sec.ops_of(sp.GroupOp)},
        work.k_blocks,
        max(r.bindings(work.k_block)["subs"] for r in sec.ops_of(sp.SitesOp)),
    )


def test_the_cases_have_the_plans_they_name():
    """Compile only (no simulator): each case's plan is the kind it is named for, so a planner
    change that moves a case off its kind fails here rather than silently counting another."""
    for name, (m, k, n, grid, axes, rounds, shapes, kblocks) in CASES.items():
        _, _, sec = _compile(m, k, n, grid)
        work, ranges = sec.one(sp.WorkOp), list(sec.ops_of(sp.SitesOp))
        got = (
            {g.axis.data.value for g in sec.ops_of(sp.GroupOp)},
            max(r.count for r in ranges),
            len({(r.bindings(work.k_block)["h"], r.bindings(work.k_block)["w"]) for r in ranges}),
            work.k_tiles > work.k_block,
        )
        assert got == (axes, rounds, shapes, kblocks), name
    for name, (_, want) in SPLIT_CASES.items():
        assert _split_plan(_split_compile(name)[2]) == want, name


@needs_sim
@pytest.mark.parametrize("case", list(CASES))
def test_trace_counts_equal_the_cost_models(case):
    m, k, n, grid, *_ = CASES[case]
    _check_counts(*_compile(m, k, n, grid))


@needs_sim
@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_split_k_trace_counts_equal_the_cost_models(case):
    """A split-K plan: its slices' DRAM reads and multicasts as priced, and the hand-over's pipe
    tiles (one per output tile per slice after the first) at the partials' tile bytes equal what
    the cost model adds to the plan's NoC bytes."""
    _check_counts(*_split_compile(case))


def _check_counts(fn, module, sec: sp.ProgramOp) -> None:  # noqa: ANN001
    from spatial_dialect.tools.backend.ttlang.runner import run_traced
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )

    inputs = draw_inputs(fn, 0)
    traced = run_traced(module, [inputs[x] for x in input_names(fn)])
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    work = sec.one(sp.WorkOp)
    assert compare("c", ref, traced.outputs[0]).ok

    got, p = moved(traced, partials_pipes(sec)), priced(module, sec)
    # the sub-block selectors' reads of the identity constant are the printer's, not the plan's
    constants = {t for t in got.dram_read if t.startswith("_")}
    assert constants <= {t for t in got.dram_read if t.startswith("_eye_")}
    for t in constants:
        del got.dram_read[t]
    q = p.q
    # DRAM, per tensor, and the bytes the model prices
    assert got.dram_read == {"a": q.a_tiles_dram, "b": q.b_tiles_dram}
    assert got.dram_written == {"c": q.c_tiles_written}
    dram_bytes = (
        q.a_tiles_dram + q.b_tiles_dram
    ) * p.tile_bytes + q.c_tiles_written * p.out_tile_bytes
    assert dram_bytes == p.cost.dram_bytes
    # multicast: what the IR groups is what the model multicasts
    axes = {g.axis.data.value for g in sec.ops_of(sp.GroupOp)}
    assert (q.mcast_a, q.mcast_b) == ("rows" in axes, "columns" in axes)
    multicast_reads = (q.a_tiles_dram if q.mcast_a else 0) + (q.b_tiles_dram if q.mcast_b else 0)
    assert got.pipe_sent == multicast_reads
    assert got.pipe_received == q.noc_tile_hops
    # split-K's hand-over: every output tile once per slice after the first, each sent once and
    # received once, at the partials FIFO's tile bytes
    handed = q.noc_tiles - q.c_tiles_written - sum(got.dram_read.values()) - got.pipe_received
    assert got.partials_sent == got.partials_received == handed
    assert handed == (work.k_slices - 1) * sec.item_space().tiles_m * sec.item_space().tiles_n
    partial_tb = next((b.tile_bytes for b in sec.buffers() if b.label.data == "partials"), 0)
    delivered = q.noc_tiles - q.c_tiles_written - handed
    noc_bytes = delivered * p.tile_bytes + q.c_tiles_written * p.out_tile_bytes
    assert noc_bytes + handed * partial_tb == p.cost.noc_bytes
    # dataflow buffers per node
    nodes = node_buffers(traced, sec)
    assert nodes and all(nb.declared <= 32 for nb in nodes)
    ranges = list(sec.ops_of(sp.SitesOp))
    for nb in nodes:
        r = next(r for r in ranges if nb.site in r.rect.sites())
        extra = _selector_bytes(sec, r) + _split_bytes(sec, r)
        assert nb.used_bytes == nb.laid_out + nb.aliased + extra, nb


def _split_bytes(sec: sp.ProgramOp, r: sp.SitesOp) -> int:
    """What a split-K site's kernels use beyond size-buffers' layout for its range
    (docs/backend-ttlang.md#split-k): the send DFB (the partials FIFO's page and depth; not in
    the sized IR) on slices s < S - 1, less the partials FIFO on slice 0 (it receives nothing)
    and the output FIFO on slices s < S - 1 (they store nothing): both laid out, never used."""
    work, space = sec.one(sp.WorkOp), sec.item_space()
    if work.k_slices == 1:
        return 0
    s, last = space.k_slice(r.first_item(r.rect.bounds[0], r.rect.bounds[2])), work.k_slices - 1
    b = r.bindings(work.k_block)
    size = {x.label.data: r.bytes_of(x, b) for x in sec.buffers() if not isinstance(x, sp.AccOp)}
    if s == last:
        return 0
    return size["partials"] - size["out"] - (size["partials"] if s == 0 else 0)
