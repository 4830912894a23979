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
from trace_counts import moved, node_buffers, priced  # noqa: E402

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


def _compile(m: int, k: int, n: int, grid: str):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, "bf16")))
    # The 16-bit dest's unsplit plans (accumulate=bf16, split-k=1): the cases were chosen for
    # their kinds.
    module = compile_module(fn, "wormhole_n150", grid=grid, accumulate="bf16", split_k=1)
    return fn, module, next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


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


@needs_sim
@pytest.mark.parametrize("case", list(CASES))
def test_trace_counts_equal_the_cost_models(case):
    from spatial_dialect.tools.backend.ttlang.runner import run_traced
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )

    m, k, n, grid, *_ = CASES[case]
    fn, module, sec = _compile(m, k, n, grid)
    inputs = draw_inputs(fn, 0)
    traced = run_traced(module, [inputs[x] for x in input_names(fn)])
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    assert compare("c", ref, traced.outputs[0]).ok

    got, p = moved(traced), priced(module, sec)
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
    delivered = q.noc_tiles - q.c_tiles_written
    assert sum(got.dram_read.values()) + got.pipe_received == delivered
    assert delivered * p.tile_bytes + q.c_tiles_written * p.out_tile_bytes == p.cost.noc_bytes
    # dataflow buffers per node
    nodes = node_buffers(traced, sec)
    assert nodes and all(nb.declared <= 32 for nb in nodes)
    ranges = list(sec.ops_of(sp.SitesOp))
    for nb in nodes:
        r = next(r for r in ranges if nb.site in r.rect.sites())
        assert nb.used_bytes == nb.laid_out + nb.aliased + _selector_bytes(sec, r), nb
