"""Mutated GGUF files (issue 25, item 6) through spatial-import and `spatial-run --weights`, each
in a forked child under a memory limit and a time limit: every run ends in exit 0 or in exit 1
with one error line of our own (not a library's exception); never a traceback, a hang, or a memory
blow-up. 210 mutants here (70 of each
base file); bench/fuzz.py --gguf N runs more and prints how long each took."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parent))
import fuzzlib  # noqa: E402
import gguf_mutants  # noqa: E402

SEED = 25
COUNT = 210
LIMIT_S = 30  # a guard against a hang, not a timing check: a case takes milliseconds
MEMORY = 2 << 30  # bytes a case may map beyond the test process's own


@pytest.fixture(scope="module")
def fuzz():
    work = fuzzlib.workdir()
    mutants = gguf_mutants.gguf_mutants(work, COUNT, SEED)
    return work, mutants, gguf_mutants.programs(work)


def test_the_mutants_cover_every_kind(fuzz):
    _, mutants, _ = fuzz
    kinds = {kind.split(":")[0] for _, kind, _ in mutants}
    assert len(mutants) == COUNT and len(kinds) == 18, sorted(kinds)


@pytest.mark.parametrize("chunk", range(10))
def test_mutated_ggufs_end_in_one_line_or_success(fuzz, chunk):
    work, mutants, steps = fuzz
    bad = []
    for name, kind, data in mutants[chunk::10]:
        for run in gguf_mutants.gguf_case(name, kind, data, work, steps, LIMIT_S, MEMORY):
            if run.verdict not in ("success", "diagnostic"):
                bad.append(f"{run.verdict}: {run.tool} {name} ({kind}): {run.stderr[-1500:]}")
    assert not bad, "\n\n".join(bad)
