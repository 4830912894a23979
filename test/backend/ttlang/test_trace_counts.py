"""Counted, not just equal: what tt-lang-sim's trace says the printed program moved and computed
equals what the cost model prices for the section's plan (issue 22, item 4), for every section
kind the TT-Lang printer prints, on both Tensix presets.

Per section (trace_counts.py: `counted` the trace, `price` the model, `differences` the two):

- tiles read from DRAM per tensor and written per tensor = the plan's (gemm_quantities'
  a/b_tiles_dram and c_tiles_written for a GEMM; StreamPlanner.tiles_per_item x items for the
  rest), but where the printer's form is stated to differ (`printed_dram`: a gather or scatter
  moves a tile per indexed row);
- tiles received through pipes per family = the printed form of the IR's groups
  (`pipe_receipts`: rectangle multicast, or one unicast pipe per member for a line or members
  with fewer items, each receiving its own items' blocks), and the IR's multicast =
  noc_tile_hops;
- tile-matmuls on the plan's operands = the model's whole-tile count (`printed_matmuls`: the delta
  rule's forward substitution stated); products with a constant table (selectors) = the stated
  count (`printed_selectors`: gather, scatter; none for a GEMM, whose blocks of several
  sub-blocks are computed whole), and only in the kinds listed;
- per node, DFBs <= 32 and the bytes of those its kernels use = size-buffers' layout for its site
  (+ an aliased spill, + the printer's own staging DFBs, - IR buffers it keeps as block values:
  `printed_l1`); a GEMM reads no constant table.

The programs are compiled as spatial-run compiles for tt-lang-sim (executors.COMPILE_OPTIONS).
SPATIAL_TTLANG_TRACES=all adds the prefill steps (about 4 minutes more on the loaded two cores).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from spatial_dialect import sp

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import gemm_text  # noqa: E402
from test_ttlang_backend import ROOT, TENSIX, needs_sim  # noqa: E402
from trace_counts import (  # noqa: E402
    counted,
    differences,
    operations,
    price,
    sections,
)

# (m, k, n, grid, target, what the plan must have): groups, max items per site, distinct block
# shapes, K blocks > 1, a line plan
WH, BH = "wormhole_n150", "blackhole_p150"
CASES = {
    "unicast-rounds-kblocks": (256, 256, 256, "2x2", WH, set(), 2, 1, True),
    "unicast-boundary": (224, 96, 96, "4x4", WH, set(), 1, 2, False),
    "unicast-uneven-rounds": (96, 256, 96, "2x4", WH, set(), 2, 1, False),
    "mcast-rows-kblocks": (256, 256, 256, "4x4", WH, {"rows"}, 1, 1, True),
    "mcast-rows-uneven-rounds": (224, 128, 256, "4x4", WH, {"rows"}, 2, 1, False),
    "mcast-rows-rounds-boundary": (256, 128, 224, "4x4", WH, {"rows"}, 2, 2, False),
    "mcast-columns-boundary-kblocks": (160, 256, 96, "4x2", WH, {"columns"}, 1, 2, True),
    "mcast-both-boundary": (224, 64, 256, "4x4", WH, {"rows", "columns"}, 1, 2, False),
    # 2 sub-blocks of 5x1 per 5x2 block (a boundary range of 5x1), spilled over 2 K blocks: the
    # whole block computed, no selector product
    "subblocks-boundary-kblocks": (160, 64, 224, "2x2", WH, set(), 1, 2, True),
    # rows groups whose members run 2 or 1 items: unicast pipes, a member receiving only its
    # own items' blocks (120 tiles; the model's multicast delivers 144)
    "uneven-members-unicast": (384, 64, 448, "4x4", WH, {"rows"}, 2, 1, False),
    "bh-mcast-columns": (192, 128, 96, "3x3", BH, {"columns"}, 1, 1, False),
    # a 4-site line folded onto the 2x2 mesh: A read once, sent to 3 members by unicast pipes
    "bh-line": (32, 32, 512, "2x2", BH, {"line"}, 1, 1, False),
}

# the cases the printer gives unicast pipes (a line; members with fewer items than the sender)
UNICAST_CASES = {"bh-line", "uneven-members-unicast"}


def _compile_gemm(m: int, k: int, n: int, grid: str, target: str):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, "bf16")))
    # The 16-bit dest's unsplit plans (accumulate=bf16, split-k=1): the cases were chosen for
    # their kinds.
    module = compile_module(fn, target, grid=grid, accumulate="bf16", split_k=1)
    return fn, module, sections(module)[0]


def test_the_cases_have_the_plans_they_name():
    """Compile only (no simulator): each case's plan is the kind it is named for, so a planner
    change that moves a case off its kind fails here rather than silently counting another."""
    for name, (m, k, n, grid, target, axes, rounds, shapes, kblocks) in CASES.items():
        _, _, sec = _compile_gemm(m, k, n, grid, target)
        work, ranges = sec.one(sp.WorkOp), list(sec.ops_of(sp.SitesOp))
        got = (
            {g.axis.data.value for g in sec.ops_of(sp.GroupOp)},
            max(r.count for r in ranges),
            len({(r.bindings(work.k_block)["h"], r.bindings(work.k_block)["w"]) for r in ranges}),
            work.k_tiles > work.k_block,
        )
        assert got == (axes, rounds, shapes, kblocks), name


def _traced(fn, module):  # noqa: ANN001
    from spatial_dialect.tools.backend.ttlang.runner import run_traced
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import input_names, output_names
    from spatial_dialect.tools.spatial_run import compare_outputs, reference_outputs

    inputs = draw_inputs(fn, 0)
    traced = run_traced(module, [inputs[x] for x in input_names(fn)])
    reference, values = reference_outputs(fn, inputs)
    simulated = dict(zip(output_names(fn), traced.outputs, strict=True))
    assert all(c.ok for c in compare_outputs(fn, reference, values, simulated))
    return traced


@needs_sim
@pytest.mark.parametrize("case", list(CASES))
def test_gemm_trace_counts_equal_the_cost_models(case):
    m, k, n, grid, target, *_ = CASES[case]
    fn, module, sec = _compile_gemm(m, k, n, grid, target)
    traced = _traced(fn, module)
    (events,) = operations(traced)
    p = price(module, sec)
    assert differences(traced, sec, 0, events, p) == []
    # the bytes: what the tiles come to is what cost.py prices
    q, d = p.detail["q"], p.detail
    dram = (q.a_tiles_dram + q.b_tiles_dram) * d["tile_bytes"]
    assert dram + q.c_tiles_written * d["out_tile_bytes"] == d["cost"].dram_bytes
    c = counted(events)
    delivered = q.noc_tiles - q.c_tiles_written
    assert sum(c.dram_read.values()) + c.pipe_tiles == delivered
    assert delivered * d["tile_bytes"] + q.c_tiles_written * d["out_tile_bytes"] == (
        d["cost"].noc_bytes
    )
    # multicast: what the IR groups is what the model multicasts; a sender sends each block it
    # reads once into a rectangle pipe, or once per member into a line's unicast pipes
    axes = {g.axis.data.value for g in sec.ops_of(sp.GroupOp)}
    assert (q.mcast_a, q.mcast_b) == (bool(axes & {"rows", "line"}), "columns" in axes)
    shared = (q.a_tiles_dram if q.mcast_a else 0) + (q.b_tiles_dram if q.mcast_b else 0)
    assert ("unicast" in c.pipe_received) == (case in UNICAST_CASES)
    if "unicast" in c.pipe_sent:  # one send per member: what is sent is what is received
        assert c.pipe_sent == c.pipe_received
    else:
        assert c.pipe_sent.get("multicast", 0) == shared


# Each program with the section kinds it must cover (so the test proves its reach).
PROGRAMS = {
    # a blocked rms_norm over a 1024-wide row
    "test/backend/ttlang/Inputs/rms_wide.mlir": {"partial", "combine", "rms_apply"},
    # a rope of 1x16 blocks of four sub-blocks: one whole block in its 2-page output FIFO
    "test/backend/ttlang/Inputs/rope_subs4.mlir": {"rope"},
    "tiny_decode.mlir": {
        "gather",
        "rms_norm",
        "gemm",
        "rope",
        "scatter",
        "attention",
        "add",
        "swiglu",
        "argmax",
    },
    "tiny_moe_decode.mlir": {"route", "gemm", "scatter", "attention"},
    "tiny_qwen3_next_decode.mlir": {"causal_conv", "gated_delta", "l2_norm", "route"},
}
SLOW = {
    "tiny_prefill.mlir": {"gather", "scatter", "attention", "tilize", "untilize"},
    "tiny_moe_prefill.mlir": {"route", "gemm"},
    "tiny_qwen3_next_prefill.mlir": {"causal_conv", "gated_delta"},
}
if os.environ.get("SPATIAL_TTLANG_TRACES") == "all":
    PROGRAMS = {**PROGRAMS, **SLOW}


@needs_sim
@pytest.mark.parametrize("target", TENSIX)
@pytest.mark.parametrize("program", list(PROGRAMS))
def test_every_sections_trace_equals_its_price(program, target):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.backend.executors import COMPILE_OPTIONS
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    path = ROOT / program if "/" in program else ROOT / "examples" / program
    fn = entry_function(parse_module(path.read_text()))
    module = compile_module(fn, target, **COMPILE_OPTIONS["tt-lang-sim"][0])
    traced = _traced(fn, module)
    secs, ops = sections(module), operations(traced)
    assert len(ops) == len(secs)  # one operation per section, in the module's order
    found, kinds = [], set()
    for i, (sec, events) in enumerate(zip(secs, ops, strict=True)):
        p = price(module, sec)
        kinds.add(p.kind)
        found += differences(traced, sec, i, events, p)
    assert found == []
    assert PROGRAMS[program] <= kinds
