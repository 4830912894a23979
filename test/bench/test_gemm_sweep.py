"""No plan that tile chooses fails size-buffers: random GEMMs on every preset, both accumulations.

The CI size (30 seeded shapes and the issue's two, every preset, accumulate=f32 and bf16) runs
always; SPATIAL_SWEEP=1 runs bench/gemm_sweep.py's full 500 (minutes on a shared core). A
LocalMemExceeded here is the compiler refusing its own plan (docs/passes.md#size-deepening-never-costs-the-plan-its-layout).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

sweep = load("gemm_sweep")

SHAPES = 500 if os.environ.get("SPATIAL_SWEEP") == "1" else 30


def test_no_plan_the_compiler_chose_is_refused_by_size_buffers():
    res = sweep.sweep(SHAPES, 22, list(sweep.PRESETS), list(sweep.ACCUMULATIONS))
    assert res.self_refusals == []
    # the sweep did compile: most programs end in a plan, not a refusal of another kind
    assert res.counts["ok"] > sum(res.counts.values()) // 2


def test_the_issues_gemm_is_laid_out_on_blackhole():
    """1024x8192x1024 bf16 on blackhole_p150 needed 1492992 of 1474560 bytes before the layout
    capped the credit-loop depths."""
    res = sweep.sweep(0, 22, ["blackhole_p150"], ["f32"])
    assert res.self_refusals == [] and res.counts == {"ok": len(sweep.ISSUE)}
