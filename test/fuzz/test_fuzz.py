"""A seeded subset of the fuzz suite (issue 16), in-process: every mutated program and broken
target ends in exit 0 or exit 1 with a diagnostic; never an internal error, never a hang.
The full run (>= 500 programs on three targets, >= 100 targets three ways) is bench/fuzz.py."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
import fuzzlib  # noqa: E402

SEED = 16
LIMIT_S = 60


@pytest.fixture(scope="module")
def work():
    return fuzzlib.workdir()


def test_the_generators_make_enough_cases():
    assert len(fuzzlib.program_mutants(300, SEED)) == 300
    assert len({k for _, k, _ in fuzzlib.program_mutants(300, SEED)}) >= 12
    assert len(fuzzlib.target_mutants(100, SEED)) == 100


@pytest.mark.parametrize("case", fuzzlib.program_mutants(40, SEED), ids=lambda c: f"{c[0]}-{c[1]}")
def test_program_mutant(case, work):
    name, kind, text = case
    o = fuzzlib.opt_case(name, kind, text, "wormhole_n150", work, LIMIT_S)
    assert o.verdict in ("success", "diagnostic"), o.stderr[-2000:]
    if o.verdict == "success" and int(name.split("#")[1]) % 4 == 0:
        r = fuzzlib.run_case(name, kind, text, "blackhole_p150", work, LIMIT_S)
        assert r.verdict in ("success", "diagnostic"), r.stderr[-2000:]


@pytest.mark.parametrize("case", fuzzlib.target_mutants(30, SEED), ids=lambda c: f"{c[0]}-{c[1]}")
def test_broken_target(case, work):
    name, kind, text = case
    o = fuzzlib.target_case(name, kind, text, "opt", work, LIMIT_S)
    assert o.verdict in ("success", "diagnostic"), o.stderr[-2000:]
