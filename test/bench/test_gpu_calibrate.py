"""bench/gpu_calibrate.py's CPU side (rows, the CSV, the refusal without a GPU) and the published
GPU data it is read beside (targets/data/gpu_gemm_throughput.csv, the presets' DRAM fractions).

The timing itself needs a CUDA GPU and is not run here; a run on one is recorded in
bench/README.md#gpu-calibration."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import BENCH, load  # noqa: E402

from spatial_dialect.targets import load_target  # noqa: E402

cal = load("gpu_calibrate")
published = load("gpu_gemm_calibration")


def test_row_takes_the_median_and_the_ratio():
    row = cal.make_row(
        "NVIDIA H200", "h200", "gemm", (1, 2, 3), [30.0, 10.0, 20.0], 8.0, "2026-12-01"
    )
    assert (row.measured_us, row.predicted_us, row.reps) == (20.0, 8.0, 3)
    assert (row.m, row.k, row.n) == (1, 2, 3)
    assert row.ratio == 2.5


@pytest.mark.parametrize(
    "times, predicted, says", [([], 1.0, "no timed calls"), ([1.0], 0.0, "not positive")]
)
def test_row_refuses_what_it_cannot_state(times, predicted, says):
    with pytest.raises(ValueError, match=says) as e:
        cal.make_row("d", "h200", "tiny_decode", None, times, predicted)
    assert "tiny_decode" in str(e.value)


def test_csv_has_one_header_and_appends(tmp_path):
    out = tmp_path / "sub" / "gpu.csv"
    first = cal.make_row("dev", "h100", "a", (4, 5, 6), [2.0], 1.0, "2026-12-01")
    second = cal.make_row("dev", "h100", "tiny_decode", None, [9.0, 11.0], 5.0, "2026-12-01")
    cal.write_rows(out, [first])
    cal.write_rows(out, [second])
    lines = out.read_text().splitlines()
    assert lines[0].split(",") == cal.COLUMNS
    rows = list(csv.DictReader(lines))
    assert [r["case"] for r in rows] == ["a", "tiny_decode"]
    assert rows[0]["ratio"] == "2.0" and rows[1]["m"] == "" and rows[1]["measured_us"] == "10.0"


def test_device_names_pick_their_preset():
    assert cal.target_for("NVIDIA H200") == "h200"
    assert cal.target_for("NVIDIA H100 80GB HBM3") == "h100"
    assert cal.target_for("NVIDIA GeForce RTX 3060") == "rtx3060"
    assert cal.target_for("Tesla V100-SXM2-16GB") is None


def test_without_a_gpu_it_says_so_in_one_line(tmp_path):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA GPU is here: the refusal is not reachable")
    out = tmp_path / "rows.csv"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "gpu_calibrate.py"), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1
    assert proc.stderr.strip().splitlines() == [
        "gpu_calibrate: no CUDA GPU here (torch.cuda.is_available() is False)"
    ]
    assert not out.exists()


def test_a_gemm_case_compiles_to_one_predicted_section():
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import predicted_us

    module = compile_module(cal.gemm_text(256, 512, 128), "h200")
    (name, us), *rest = predicted_us(module, load_target("h200"))
    assert not rest and us > 0


def test_published_gemm_rows_name_their_source_and_role():
    rows = published.read_rows(published.DEFAULT_CSV)
    assert len(rows) >= 10
    for r in rows:
        assert r.source.startswith("https://"), r
        assert r.role in ("calibration", "validation"), r
        load_target(r.target)
    for target in {r.target for r in rows}:
        roles = [r.role for r in rows if r.target == target]
        assert roles.count("calibration") == 1 and "validation" in roles, target


def test_gpu_dram_fractions_are_the_cited_measurements():
    # targets/presets.py [BABEL]: BabelStream's Dot (read-only) on Azure's ND H100 v5 and ND H200 v5,
    # over the datasheet peak; [GPUSTREAM]: te42kyfo/gpu-benches at 1c36d509, an A40's read stream.
    assert load_target("h100").dram_efficiency == pytest.approx(3180 / 3350)
    assert load_target("h200").dram_efficiency == pytest.approx(4480 / 4800)
    assert load_target("rtx3060").dram_efficiency == pytest.approx(679 / 696)
