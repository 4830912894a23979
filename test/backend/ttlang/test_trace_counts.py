"""Counted, not just equal: what tt-lang-sim's trace says the printed program moved and computed
equals what the cost model prices for the section's plan (issue 22, item 4), for every section
kind the TT-Lang printer prints, on both Tensix presets.

Per section (trace_counts.py: `counted` the trace, `price` the model, `differences` the two):

- tiles read from DRAM per tensor and written per tensor = the plan's (gemm_quantities'
  a/b_tiles_dram and c_tiles_written for a GEMM; StreamPlanner.tiles_per_item x items for the
  rest); a lone gather or scatter is a host step (a ttnn op between operations), not traced;
- tiles received through pipes per family = the printed form of the IR's groups
  (`pipe_receipts`: rectangle multicast, or one unicast pipe per member for a line or members
  with fewer items, each receiving its own items' blocks), and the IR's multicast =
  noc_tile_hops; split-K's hand-over (family `partials`) = the model's (S - 1) x output tiles
  = what the IR's later slices receive, at the partials' tile bytes completing noc_bytes;
- tile-matmuls on the plan's operands = the model's whole-tile count (`printed_matmuls`: the delta
  rule's forward substitution stated); products with a constant table (selectors) = the stated
  count (`printed_selectors`: the flash combine; none for a GEMM, whose blocks of several
  sub-blocks are computed whole), and only in the kinds listed;
- per node, DFBs <= 32 and the bytes of those its kernels use = size-buffers' layout for its site
  (+ an aliased spill, + the printer's own staging DFBs, - the FIFOs and partials rings a
  split-K slice leaves unused, - IR buffers it keeps as block values, +/- blocks of several
  sub-blocks declared whole: `printed_l1`); a GEMM holds no constant DFB, the combine's =
  `combine_l1`; used and constant DFBs within the local memory.

The programs are compiled as spatial-run compiles them (the default pipeline options, split-K
and flash decoding as planned); flash decoding is forced on one program (`OPTIONS`).
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
    partials_pipes,
    price,
    sections,
    traced_sections,
)

# (m, k, n, grid, target, what the plan must have): groups, max items per site, distinct block
# shapes, K blocks > 1, a line plan
WH, BH = "wormhole_n150", "blackhole_p150"
CASES = {
    "unicast-rounds-kblocks": (256, 256, 256, "2x2", WH, set(), 2, 1, True),
    "unicast-boundary": (224, 96, 96, "4x4", WH, set(), 1, 2, False),
    # 1x1 blocks, sites running 2 or 1 (96x256x96 on 2x4 now plans 1x2 blocks of two 1x1
    # sub-blocks, written two at a time, and a boundary range)
    "unicast-uneven-rounds": (96, 256, 160, "3x3", WH, set(), 2, 1, False),
    "mcast-rows-kblocks": (256, 256, 256, "4x4", WH, {"rows"}, 1, 1, True),
    # A rows, 2 rounds on every site (no plan of the per-sub-block write-back gives a multicast
    # case rounds of 2 and 1 here; uneven-members-unicast has them)
    # (96x128x512 now plans one round; here 1x2 blocks of two 1x1 sub-blocks, written in pairs)
    "mcast-rows-rounds": (128, 64, 512, "4x4", WH, {"rows"}, 2, 1, False),
    # (224x128x224 now plans 4 block shapes and K blocks; here 2x2 blocks of two 1x2 sub-blocks)
    "mcast-rows-rounds-boundary": (224, 128, 512, "4x4", WH, {"rows"}, 2, 2, False),
    "mcast-columns-boundary-kblocks": (160, 256, 96, "4x2", WH, {"columns"}, 1, 2, True),
    "mcast-both-boundary": (224, 64, 256, "4x4", WH, {"rows", "columns"}, 1, 2, False),
    # 2 sub-blocks of 1x2 per 2x2 block (a boundary range of 2x1 blocks, two 1x1 sub-blocks),
    # spilled over 2 K blocks: A in one DFB per sub-block row
    "subblocks-boundary-kblocks": (64, 256, 160, "2x2", WH, set(), 1, 2, True),
    # rows groups whose members run 2 or 1 items: unicast pipes, a member receiving only its
    # own items' blocks (120 tiles; the model's multicast delivers 144)
    "uneven-members-unicast": (384, 64, 448, "4x4", WH, {"rows"}, 2, 1, False),
    "bh-mcast-columns": (192, 128, 96, "3x3", BH, {"columns"}, 1, 1, False),
    # a 4-site line folded onto the 2x2 mesh: A read once, sent to 3 members by unicast pipes
    "bh-line": (32, 32, 512, "2x2", BH, {"line"}, 1, 1, False),
}

# the cases the printer gives unicast pipes (a line; members with fewer items than the sender)
UNICAST_CASES = {"bh-line", "uneven-members-unicast"}

# Split-K (docs/backend-ttlang.md#split-k): (m, k, n, target, accumulate, split-k option) on the
# 8x8 grid, and the plan's (slices, axis, groups, K blocks a slice, sub-blocks a block)
SPLIT_CASES = {
    "split-x2": ((64, 512, 32, WH, "f32", 2), (2, "x", set(), 1, 1)),
    "split-y4": ((32, 512, 64, WH, "f32", 4), (4, "y", set(), 1, 1)),
    "split-x2-subblocks-both": ((320, 1024, 64, WH, "f32", 2), (2, "x", {"rows", "columns"}, 2, 2)),
    "split-x4-bf16-both": ((256, 1024, 64, WH, "bf16", 4), (4, "x", {"rows", "columns"}, 2, 1)),
    "bh-split-y2": ((32, 1024, 64, BH, "f32", 2), (2, "y", set(), 1, 1)),
}


def _compile_gemm(
    m: int, k: int, n: int, grid: str, target: str, accumulate: str = "bf16", split_k: int = 1
):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, "bf16")))
    # The 16-bit dest's unsplit plans (accumulate=bf16, split-k=1) unless a split case says
    # otherwise: the cases were chosen for their kinds.
    module = compile_module(fn, target, grid=grid, accumulate=accumulate, split_k=split_k)
    return fn, module, sections(module)[0]


def _split_compile(case: str):
    (m, k, n, target, accumulate, split), _ = SPLIT_CASES[case]
    return _compile_gemm(m, k, n, "8x8", target, accumulate, split)


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
    for name, (_, want) in SPLIT_CASES.items():
        assert _split_plan(_split_compile(name)[2]) == want, name


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
    c = _check_gemm(*_compile_gemm(m, k, n, grid, target))
    assert ("unicast" in c.pipe_received) == (case in UNICAST_CASES)
    assert "partials" not in c.pipe_received


@needs_sim
@pytest.mark.parametrize("case", list(SPLIT_CASES))
def test_split_k_trace_counts_equal_the_cost_models(case):
    """A split-K plan: its slices' DRAM reads and multicasts as priced, and the hand-over's pipe
    tiles (one per output tile per slice after the first, through the pipes `partials_pipes`
    names from the plan) at the partials' tile bytes equal what the cost model adds to the
    plan's NoC bytes."""
    fn, module, sec = _split_compile(case)
    c = _check_gemm(fn, module, sec)
    space, slices = sec.item_space(), sec.one(sp.WorkOp).k_slices
    handed = (slices - 1) * space.tiles_m * space.tiles_n
    assert c.pipe_sent["partials"] == c.pipe_received["partials"] == handed
    assert "unicast" not in c.pipe_received


def _check_gemm(fn, module, sec: sp.ProgramOp):  # noqa: ANN001
    traced = _traced(fn, module)
    (events,) = operations(traced)
    p = price(module, sec)
    assert differences(traced, sec, 0, events, p) == []
    # the bytes: what the tiles come to is what cost.py prices
    q, d = p.detail["q"], p.detail
    dram = (q.a_tiles_dram + q.b_tiles_dram) * d["tile_bytes"]
    assert dram + q.c_tiles_written * d["out_tile_bytes"] == d["cost"].dram_bytes
    c = counted(events, partials_pipes(sec))
    delivered = q.noc_tiles - q.c_tiles_written
    assert sum(c.dram_read.values()) + c.pipe_tiles == delivered
    # split-K's partials travel at the partials FIFO's tile bytes (the accumulator's type)
    handed = c.pipe_received.get("partials", 0)
    partial_tb = next((b.tile_bytes for b in sec.buffers() if b.label.data == "partials"), 0)
    assert (delivered - handed) * d["tile_bytes"] + handed * partial_tb + q.c_tiles_written * d[
        "out_tile_bytes"
    ] == d["cost"].noc_bytes
    # multicast: what the IR groups is what the model multicasts; a sender sends each block it
    # reads once into a rectangle pipe, or once per member into a line's unicast pipes
    axes = {g.axis.data.value for g in sec.ops_of(sp.GroupOp)}
    assert (q.mcast_a, q.mcast_b) == (bool(axes & {"rows", "line"}), "columns" in axes)
    shared = (q.a_tiles_dram if q.mcast_a else 0) + (q.b_tiles_dram if q.mcast_b else 0)
    if "unicast" in c.pipe_sent:  # one send per member: what is sent is what is received
        assert c.pipe_sent == c.pipe_received
    else:
        assert c.pipe_sent.get("multicast", 0) == shared
    return c


# Each program with the section kinds it must cover (so the test proves its reach).
PROGRAMS = {
    # a blocked rms_norm over a 1024-wide row
    "test/backend/ttlang/Inputs/rms_wide.mlir": {"partial", "combine", "rms_apply"},
    # a rope of 1x16 blocks of four sub-blocks: one whole block in its 2-page output FIFO
    "test/backend/ttlang/Inputs/rope_subs4.mlir": {"rope"},
    "tiny_decode.mlir": {
        "gather host step",
        "rms_norm",
        "gemm",
        "split_k",
        "rope",
        "scatter host step",
        "attention",
        "add",
        "swiglu",
        "argmax",
    },
    "tiny_moe_decode.mlir": {"route", "gemm", "scatter host step", "attention"},
    "tiny_qwen3_next_decode.mlir": {"causal_conv", "gated_delta", "l2_norm", "route"},
    # flash decoding (16 heads of 128, a 256-row cache): 4 splits, 2 heads an item; the combine
    # in blocks of 8 tiles, 2 sub-blocks each
    "test/backend/ttlang/Inputs/gqa_heads_decode.mlir": {"attention", "attention_combine"},
}
# pipeline options a program is compiled with beyond spatial-run's (the planner chooses no KV
# split for so short a cache; the 4x2 grid gives the combine blocks wider than a tile)
OPTIONS = {"test/backend/ttlang/Inputs/gqa_heads_decode.mlir": {"kv_splits": 4, "grid": "4x2"}}
SLOW = {
    "tiny_prefill.mlir": {
        "gather host step",
        "scatter host step",
        "attention",
        "tilize",
        "untilize",
    },
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
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    path = ROOT / program if "/" in program else ROOT / "examples" / program
    fn = entry_function(parse_module(path.read_text()))
    module = compile_module(fn, target, **OPTIONS.get(program, {}))
    traced = _traced(fn, module)
    found, kinds = [], set()
    # one operation per section, in the module's order, but the host steps' (traced_sections)
    for sec, op, events in traced_sections(module, traced):
        if op is None:  # a ttnn op between operations: nothing traced to compare
            assert sec.kind in (sp.SectionKind.GATHER, sp.SectionKind.SCATTER), sec.sym_name
            kinds.add(f"{sec.kind.value} host step")
            continue
        p = price(module, sec)
        kinds.add(p.kind if sec.one(sp.WorkOp).k_slices == 1 else "split_k")
        found += differences(traced, sec, op, events, p)
    assert found == []
    assert PROGRAMS[program] <= kinds
