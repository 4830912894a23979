"""Every TT-Lang program the printer emits reads as code a person would write: pyflakes finds
nothing in it (no unused import or helper, no undefined name, no unused local, no f-string
without a placeholder) and no line is longer than 100 characters.

The programs: every example on both Tensix presets as `spatial-opt -p spatial-pipeline -t ttlang`
compiles it (a program the printer refuses, with TTLangUnsupported, is skipped: that refusal is
the printer's answer), and as `spatial-run --backend tt-lang-sim` compiles it (split-K and flash
decoding as planned); the backend tests' own inputs (the attention
heads, sub-blocks, rope) and a few GEMM shapes. The qwen3_next 80B prefill is left out (about
90 s to compile); its layers are the tiny qwen3_next example's.
"""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported, print_ttlang
from spatial_dialect.tools.spatial_run import entry_function, parse_module

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import gemm_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
TENSIX = ["wormhole_n150", "blackhole_p150"]
WIDTH = 100

EXAMPLES = sorted(
    p.name for p in (ROOT / "examples").glob("*.mlir") if "qwen3_next_80b_a3b_prefill" not in p.name
)
INPUTS = sorted(p.name for p in (ROOT / "test/backend/ttlang/Inputs").glob("*.mlir"))


def _emit(text: str, target: str, **options: int | str) -> str:
    module = compile_module(entry_function(parse_module(text)), target, **options)
    out = io.StringIO()
    try:
        print_ttlang(module, out)
    except TTLangUnsupported as refused:
        pytest.skip(f"refused by name: {refused.what}")
    return out.getvalue()


def assert_reads_as_written(program: str, name: str) -> None:
    warnings, errors = io.StringIO(), io.StringIO()
    check(program, name, Reporter(warnings, errors))
    assert not errors.getvalue(), errors.getvalue()
    assert not warnings.getvalue(), warnings.getvalue()
    long = [f"{i}: {line}" for i, line in enumerate(program.splitlines(), 1) if len(line) > WIDTH]
    assert not long, "\n".join(long[:5])


def test_the_check_catches_what_it_checks():
    """The check itself: an unused import, an undefined name and a long line each fail it."""
    for bad in ("import os\n", "print(missing)\n", f"x = {'1 + ' * 40}1\nprint(x)\n"):
        with pytest.raises(AssertionError):
            assert_reads_as_written(bad, "bad.py")


@pytest.mark.parametrize("target", TENSIX)
@pytest.mark.parametrize("example", EXAMPLES)
def test_an_example_as_spatial_opt_prints_it(example, target):
    text = (ROOT / "examples" / example).read_text()
    assert_reads_as_written(_emit(text, target), example)


@pytest.mark.parametrize("target", TENSIX)
@pytest.mark.parametrize("program", INPUTS)
def test_a_backend_test_input(program, target):
    text = (ROOT / "test/backend/ttlang/Inputs" / program).read_text()
    assert_reads_as_written(_emit(text, target), program)


@pytest.mark.parametrize(
    "m, k, n, dt, target",
    [
        (96, 200, 160, "f32", "wormhole_n150"),
        (256, 256, 256, "bf16", "wormhole_n150"),
        (300, 17, 250, "bf16", "blackhole_p150"),
    ],
)
def test_a_gemm(m, k, n, dt, target):
    assert_reads_as_written(_emit(gemm_text(m, k, n, dt), target), "gemm.py")
