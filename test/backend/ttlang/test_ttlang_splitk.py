"""Split-K GEMMs printed for TT-Lang run under tt-lang-sim and agree with numpy
(docs/backend-ttlang.md#split-k): K slices along x and along y, 2 and 4 of them, with several K
blocks a slice, a spill, several sub-blocks a block and multicast operands.

Each case first checks that the plan has the split it is named for, so a planner change that
moves a case off its kind fails here rather than running an unsplit plan.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from spatial_dialect import sp

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import check, gemm_text  # noqa: E402
from test_ttlang_backend import needs_sim, runner  # noqa: E402

# name: (m, k, n, accumulate, split-k option) and what the plan must have:
# (slices, axis, K blocks a slice, sub-blocks a block, spill)
CASES = {
    "x2": ((64, 512, 32, "f32", 2), (2, "x", 1, 1, False)),
    "x4": ((64, 512, 32, "f32", 4), (4, "x", 1, 1, False)),
    "y2": ((32, 512, 64, "f32", 2), (2, "y", 1, 1, False)),
    "y4": ((32, 512, 64, "f32", 4), (4, "y", 1, 1, False)),
    # 2 sub-blocks of 1x1 a 2x1 block (A in two sub-block-row DFBs, each sub-block's sums
    # handed over and stored on their own), 2 K blocks a slice through the f32 spill, A and B
    # multicast
    "x2-subblocks-spill": ((320, 1024, 64, "f32", 2), (2, "x", 2, 2, True)),
    # bf16 partial sums (the 16-bit accumulator), 2 K blocks a slice, A and B multicast
    "x4-bf16-spill": ((256, 1024, 64, "bf16", 4), (4, "x", 2, 1, True)),
}


def _plan(sec: sp.ProgramOp) -> tuple[int, str | None, int, int, bool]:
    work = sec.one(sp.WorkOp)
    subs = {r.bindings(work.k_block)["subs"] for r in sec.ops_of(sp.SitesOp)}
    spill = any(isinstance(m, sp.MatmulTilesOp) and m.spill is not None for m in sec.stages())
    return work.k_slices, work.split_axis, work.k_blocks, max(subs), spill


def _compile(case: str):
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    (m, k, n, acc, split), _ = CASES[case]
    fn = entry_function(parse_module(gemm_text(m, k, n, "bf16")))
    module = compile_module(fn, "wormhole_n150", grid="8x8", accumulate=acc, split_k=split)
    return module, next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


@pytest.mark.parametrize("case", list(CASES))
def test_the_cases_have_the_splits_they_name(case):
    _, sec = _compile(case)
    assert _plan(sec) == CASES[case][1]


@pytest.mark.parametrize("case", ["x4-bf16-spill"])
def test_partials_keep_the_accumulators_precision(case):
    """The partials FIFO and its send DFB are the accumulator's type: bf16 under accumulate=bf16
    (f32 elsewhere: split_k.mlir)."""
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang

    module, sec = _compile(case)
    partials = next(b for b in sec.buffers() if b.label.data == "partials")
    assert str(partials.elt) == "bf16"
    stream = io.StringIO()
    print_ttlang(module, stream)
    text = stream.getvalue()
    # like a bf16 tensor, not an f32 constant
    assert "partials_send_dfb = ttl.make_dataflow_buffer_like(t_b," in text
    assert "_f32_page" not in text


@needs_sim
@pytest.mark.parametrize("case", list(CASES))
def test_split_k_runs_and_agrees_with_numpy(case):
    (m, k, n, acc, split), want = CASES[case]
    results, module = check(
        gemm_text(m, k, n, "bf16"),
        "wormhole_n150",
        runner(),
        grid="8x8",
        accumulate=acc,
        split_k=split,
    )
    sec = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    assert _plan(sec) == want  # what ran is the split plan
    assert results and all(r.ok for r in results), [str(r) for r in results]


@needs_sim
def test_the_send_ring_is_planned_laid_out_and_runs_in_a_full_local_memory():
    """The partials FIFO holds the received and the sent sums (depth subs * 2): tile prices both
    rings and size-buffers lays them out, so under a 32768-byte budget the plan fills it exactly
    (A, B 2 x 4096; out 2 x 2048; the f32 spill 4096; partials 2 x 4096) and the printer
    declares the receive and the send DFB inside it, one f32 tile each, instead of refusing its
    own plan for 4096 bytes more (docs/backend-ttlang.md#split-k)."""
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang

    results, module = check(
        gemm_text(32, 512, 64, "bf16"),
        "wormhole_n150",
        runner(),
        grid="8x8",
        split_k=2,
        local_mem=32768,
    )
    sec = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    assert sec.one(sp.WorkOp).k_slices == 2
    for r in sec.ops_of(sp.SitesOp):
        assert r.offsets() == {
            "in0": 0,
            "in1": 8192,
            "out": 16384,
            "spill": 20480,
            "partials": 24576,
        }
    stream = io.StringIO()
    print_ttlang(module, stream)
    text = stream.getvalue()
    for dfb in ("partials_dfb", "partials_send_dfb"):
        assert (
            f"{dfb} = ttl.make_dataflow_buffer_like(_f32_page_1x1, shape=(1, 1), block_count=1)"
            in text
        )
    assert results and all(r.ok for r in results), [str(r) for r in results]


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150"])
def test_the_default_pipelines_split_k_plans_print(target):
    """The tile pass splits K by default on Tensix (tiny_decode's @l0_down): -t ttlang prints the
    plan it chose, with its hand-over, instead of refusing it."""
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    root = Path(__file__).resolve().parents[3]
    fn = entry_function(parse_module((root / "examples/tiny_decode.mlir").read_text()))
    module = compile_module(fn, target)
    split = [
        op.sym_name.data
        for op in module.walk()
        if isinstance(op, sp.ProgramOp) and op.one(sp.WorkOp) and op.one(sp.WorkOp).k_slices > 1
    ]
    assert "l0_down" in split
    stream = io.StringIO()
    print_ttlang(module, stream)
    assert stream.getvalue().count("partials_net = ttl.PipeNet(") == len(split)
