"""bench/collectives.py's acceptance: our Wormhole line all_reduce prices within 15% of the CCL
report's fit for 2 and 8 chips, and its reference values worked by hand."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

bench = load("collectives")


def test_the_acceptance_holds(capsys):
    assert bench.main() == 0
    out = capsys.readouterr().out
    assert "acceptance (within 15% for 2 and 8 chips, 4 KiB..1 GiB): PASS" in out


def test_the_fits_as_published():
    # The 512 KiB 2-chip all_reduce: 9.07 + 5.82 + 524288 / 10,900 B/us = 63.0 us.
    assert bench.wh_fit_all_reduce_line(2, 524288) == pytest.approx(9.07 + 5.82 + 524288 / 10_900)
    # Blackhole ring all_gather of 8: 3.7 + 1.6 x 4 + 7/8 x 1 MiB / 95,000 B/us.
    assert bench.bh_fit("all_gather", bench.RING, 8, 1 << 20) == pytest.approx(
        3.7 + 6.4 + 7 / 8 * 1048576 / 95_000
    )
    # Blackhole line all_to_all of 8: 1.8 + 1.4 x 7 + 4 x 4 / 8 x 1 MiB / 33,000 B/us.
    assert bench.bh_fit("all_to_all", bench.LINE, 8, 1 << 20) == pytest.approx(
        1.8 + 9.8 + 2 * 1048576 / 33_000
    )
