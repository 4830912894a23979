"""The calibration bench runs, and the model stays within the issue's aims on the public rows."""

import importlib.util
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "bench" / "calibration.py"


def load_bench():
    spec = importlib.util.spec_from_file_location("calibration_bench", BENCH)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # dataclasses look their module up while the class is built
    spec.loader.exec_module(mod)
    return mod


bench = load_bench()


def test_the_csv_is_the_repository_copy():
    assert bench.DEFAULT_CSV == REPO / "targets" / "data" / "tt_gemm_flops_calibration.csv"
    assert bench.DEFAULT_CSV.is_file()


def test_tt_subblock_choice():
    # tt-metal's SUBBLOCK_HW_CHOICES order: 8x8 output -> (4, 2); sharded output forces h = 1 -> (1, 8).
    assert bench.tt_subblock(8, 8, False) == (4, 2)
    assert bench.tt_subblock(8, 8, True) == (1, 8)
    assert bench.tt_subblock(2, 6, True) == (1, 6)


def test_calibration_meets_the_aims():
    errors = []
    for row in bench.read_rows(bench.DEFAULT_CSV):
        res = bench.predict(row)
        assert res is not None, row
        _, _, us, _ = res
        errors.append((us - row.measured_us) / row.measured_us)
    assert len(errors) >= 280
    # 2026-12-02: 5.9% and 86% (bench/README.md#calibration); a change to the model that loses
    # more than a little of either fails here
    assert statistics.median(abs(e) for e in errors) <= 0.065
    assert sum(abs(e) <= 0.15 for e in errors) / len(errors) >= 0.84


def test_out_of_box_rows_price_ttnns_own_config():
    # The row measured the program ttnn picks without a config; N150 512x1024x1024 bf16 HiFi2:
    # a 1-D line of 32 cores multicasting in0, out block 16x1 (bench/ttnn_default.py), 90.92 us
    # measured. Our own plan on the 8x8 grid is predicted at about a quarter of that.
    (row,) = [
        r
        for r in bench.read_rows(bench.DEFAULT_CSV)
        if (r.card, r.config, r.m, r.k, r.n, r.dtype, r.trace)
        == ("N150", "out_of_box", 512, 1024, 1024, "BFLOAT16", False)
    ]
    plan, _, us, how = bench.predict(row)
    assert how == "ttnn" and (plan.grid_x, plan.grid_y, plan.per_site_m, plan.per_site_n) == (
        32,
        1,
        16,
        1,
    )
    assert abs(us - row.measured_us) / row.measured_us <= 0.15
    _, _, ours_us, ours_how = bench.predict(row, ours=True)
    assert ours_how == "ours" and ours_us < 0.5 * row.measured_us


def test_main_prints_a_summary(capsys):
    assert bench.main(["--quiet", "--card", "P150", "--config", "tuned"]) == 0
    out = capsys.readouterr().out
    assert "median |err|" in out and "P150 tuned" in out


def test_missing_csv_is_reported(tmp_path, capsys):
    assert bench.main(["--csv", str(tmp_path / "none.csv")]) == 2
    assert "not found" in capsys.readouterr().err


def test_dram_bound_rows_are_held_out_and_sourced():
    rows = bench.read_dram_rows()
    assert len(rows) >= 6
    calibration = {(r.m, r.k, r.n) for r in bench.read_rows(bench.DEFAULT_CSV)}
    for r in rows:
        assert (r.m, r.k, r.n) not in calibration  # kept apart from the calibration rows
        assert r.source.startswith("tenstorrent/tt-metal tech_reports/") and " @ " in r.source
        assert len(r.source.split(" @ ")[1]) == 40 and r.shape_from
        assert 0 < r.gbps_low <= r.gbps_high


def test_dram_bound_rows_meet_the_aim():
    # issue 26's aim for held-out rows: within 15%; every row's weight bytes over its predicted
    # time stays under the DRAM's spec rate (288 GB/s on an N150 at 12 GBps).
    for r in bench.read_dram_rows():
        us, section = bench.predict_dram(r)
        assert abs(us - r.measured_us) / r.measured_us <= 0.15, r
        assert r.weight_bytes / us / 1e3 < 288, r
        assert section["op"] == "tg.matmul"


def test_main_prints_the_dram_bound_summary(capsys):
    assert bench.main(["--quiet", "--card", "P150", "--config", "tuned", "--dram-bound"]) == 0
    out = capsys.readouterr().out
    assert "DRAM-bound (held)" in out and "all + DRAM-bound" in out
