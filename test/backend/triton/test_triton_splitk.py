"""Split-K GEMMs printed for Triton run under Triton's interpreter and agree with numpy
(docs/backend-triton.md#split-k): K slices along x and along y, 2 and 4 of them, on both Tensix
presets and as h200 plans it for a small-M, long-K GEMM, with edge blocks clipped, several K
blocks a slice and several items a site.

Each case first checks that the plan has the split it is named for, so a planner change that
moves a case off its kind fails here rather than running an unsplit plan.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter

pytest.importorskip("triton")
pytest.importorskip("torch")

from spatial_dialect import sp  # noqa: E402
from spatial_dialect.passes.pipeline import compile_module  # noqa: E402
from spatial_dialect.tools.backend.triton.printer import emit_module  # noqa: E402
from spatial_dialect.tools.interpreters.inputs import draw_inputs  # noqa: E402
from spatial_dialect.tools.spatial_run import (  # noqa: E402
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)
from spatial_dialect.tools.spatial_run import main as spatial_run  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "test/backend/ttlang"))
from gemm_cases import gemm_text  # noqa: E402

# name: (target, m, k, n, dtype, split-k option, grid) and what the plan must have:
# (slices, axis, K blocks a slice, most items a site)
CASES = {
    "wh-x2": (("wormhole_n150", 64, 512, 32, "bf16", 2, "8x8"), (2, "x", 1, 1)),
    "wh-x4": (("wormhole_n150", 64, 512, 32, "bf16", 4, "8x8"), (4, "x", 1, 1)),
    "wh-y2": (("wormhole_n150", 32, 512, 64, "bf16", 2, "8x8"), (2, "y", 1, 1)),
    "wh-x2-f32": (("wormhole_n150", 64, 512, 32, "f32", 2, "8x8"), (2, "x", 1, 1)),
    # edge blocks clipped (200 and 72 are no multiples of 32), 4 and 2 K blocks a slice
    "wh-x2-edges": (("wormhole_n150", 200, 2048, 72, "bf16", 2, "4x4"), (2, "x", 4, 1)),
    "wh-y4-edges": (("wormhole_n150", 72, 1024, 200, "bf16", 4, "4x4"), (4, "y", 2, 1)),
    "bh-x2": (("blackhole_p150", 96, 2048, 160, "bf16", 2, "4x4"), (2, "x", 4, 1)),
    "bh-x4": (("blackhole_p150", 64, 512, 32, "bf16", 4, "8x8"), (4, "x", 1, 1)),
    "bh-y4": (("blackhole_p150", 72, 1024, 200, "bf16", 4, "4x4"), (4, "y", 2, 1)),
    # 7 items a site: the sum kernel walks the last slice's items site by site
    "bh-y2-rounds": (("blackhole_p150", 200, 2048, 200, "bf16", 2, "4x2"), (2, "y", 1, 7)),
    # a GPU's own choice (no forced grid): attention's PV at decode, 4 output tiles over K = 4096
    "h200-x4": (("h200", 32, 4096, 128, "bf16", 4, None), (4, "x", 2, 1)),
}


def _compile(case: str):
    (target, m, k, n, dt, split, grid), _ = CASES[case]
    fn = entry_function(parse_module(gemm_text(m, k, n, dt)))
    module = compile_module(fn, target, grid=grid, split_k=split)
    return fn, module, next(op for op in module.walk() if isinstance(op, sp.ProgramOp))


def _plan(sec: sp.ProgramOp) -> tuple[int, str | None, int, int]:
    work = sec.one(sp.WorkOp)
    per_site = max(len(r.items(x, y)) for r in sec.ops_of(sp.SitesOp) for x, y in r.rect.sites())
    return work.k_slices, work.split_axis, work.k_blocks, per_site


@pytest.mark.parametrize("case", list(CASES))
def test_split_k_runs_and_agrees_with_numpy(case):
    fn, module, sec = _compile(case)
    assert _plan(sec) == CASES[case][1]
    inputs = draw_inputs(fn, 3)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, "triton-interpret")
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


@pytest.mark.parametrize("case", list(CASES))
def test_the_printed_program_lints_clean(case):
    """test_triton_emitted.py's check (pyflakes, 100 columns) on split-K programs, which the
    examples it walks seldom plan."""
    source = emit_module(_compile(case)[1]).source
    messages = io.StringIO()
    assert check(source, f"{case}.py", Reporter(messages, messages)) == 0, messages.getvalue()
    assert max(len(line) for line in source.splitlines()) <= 100


def test_the_last_to_arrive_adds_in_one_kernel():
    """One kernel: the scratch holds one [M, N] slice of f32 sums per K slice and one arrival
    counter per block; the item that arrives last adds the slices and zeroes its counter."""
    _, module, sec = _compile("bh-y2-rounds")
    emitted = emit_module(module)
    (s,) = emitted.sections
    assert emitted.source.count("@triton.jit\ndef c_") == 1
    assert "'c.partials': ((400, 200), torch.float32, (2, 200, 200))" in emitted.source
    assert f"'c.arrivals': ((1, {s.blocks}), torch.int32, ({s.blocks},))" in emitted.source
    assert f"if arrived == {s.k_slices - 1}:" in emitted.source


RELAUNCH = """
import importlib.util, sys, torch
spec = importlib.util.spec_from_file_location("prog", sys.argv[1])
prog = importlib.util.module_from_spec(spec)
spec.loader.exec_module(prog)
t = prog.run(prog._draw(0), device="cpu", every=True)
first = t["c"].clone()
assert not t["c.arrivals"].any(), t["c.arrivals"]
prog.launch(t, "cpu")
assert torch.equal(t["c"], first) and not t["c.arrivals"].any()
"""


def test_a_second_launch_finds_the_counters_zeroed(tmp_path):
    """The adder zeroes its block's counter, so launching the program again over the same
    tensors (what a benchmark does) adds again and stores the same result."""
    path = tmp_path / "program.py"
    path.write_text(emit_module(_compile("h200-x4")[1]).source)
    env = dict(os.environ, TRITON_INTERPRET="1")
    proc = subprocess.run(
        [sys.executable, "-c", RELAUNCH, str(path)], capture_output=True, text=True, env=env
    )
    assert proc.returncode == 0, proc.stderr[-2000:]


def test_spatial_run_checks_the_priced_split(capsys):
    """spatial-run compiles for triton-interpret with no forced option: tiny_decode on
    wormhole_n150 splits K (as `-t report` prices it) and passes."""
    path = ROOT / "examples/tiny_decode.mlir"
    fn = entry_function(parse_module(path.read_text()))
    module = compile_module(fn, "wormhole_n150")
    assert any(w.k_slices > 1 for w in module.walk() if isinstance(w, sp.WorkOp))
    code = spatial_run([str(path), "--target", "wormhole_n150", "--backend", "triton-interpret"])
    text = "".join(capsys.readouterr())
    assert code == 0, text
    assert "compiles with" not in text
    assert text.strip().splitlines()[-1].startswith("PASS"), text


Q8_0 = """
func.func @mm(%x: tensor<32x1024xbf16>, %wv: tensor<1024x64xi8>, %ws: tensor<32x64xf16>) -> (tensor<32x64xbf16>, tensor<32x64xbf16>) {
  %y = tg.matmul_q8_0 %x, %wv, %ws activation "q8_0" : (tensor<32x1024xbf16>, tensor<1024x64xi8>, tensor<32x64xf16>) -> tensor<32x64xbf16>
  %z = tg.matmul_q8_0 %x, %wv, %ws activation "float" : (tensor<32x1024xbf16>, tensor<1024x64xi8>, tensor<32x64xf16>) -> tensor<32x64xbf16>
  func.return %y, %z : tensor<32x64xbf16>, tensor<32x64xbf16>
}
"""


def test_q8_0_products_split_k():
    """Both Q8_0 GEMM forms walk their slice's K: the int8 dot (per block of 32 within the
    slice) and the `dequantize` one, split 2 ways on wormhole_n150."""
    fn = entry_function(parse_module(Q8_0))
    module = compile_module(fn, "wormhole_n150", grid="8x8", split_k=2)
    slices = {
        p.sym_name.data: p.one(sp.WorkOp).k_slices
        for p in module.walk()
        if isinstance(p, sp.ProgramOp) and p.kind == sp.SectionKind.GEMM
    }
    assert slices == {"y": 2, "z": 2}
    inputs = draw_inputs(fn, 0)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, "triton-interpret")
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
