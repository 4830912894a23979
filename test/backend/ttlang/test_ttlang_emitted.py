"""Every TT-Lang program the printer emits reads as code a person would write: pyflakes finds
nothing in it (no unused import or helper, no undefined name, no unused local, no f-string
without a placeholder) and no line is longer than 100 characters. And it is a program a chip
compiles: inside its kernels only the API the TT-Lang specification lists (api_check.py), no
simulator-only construct (`.to_torch()`, torch, a host helper).

The programs: every example on both Tensix presets as `spatial-opt -p spatial-pipeline -t ttlang`
compiles it (a program the printer refuses, with TTLangUnsupported, is skipped: that refusal is
the printer's answer), and as `spatial-run --backend tt-lang-sim` compiles it (split-K and flash
decoding as planned); the backend tests' own inputs (the attention
heads, sub-blocks, rope) and a few GEMM shapes. The qwen3_next 80B prefill is left out (about
90 s to compile); its layers are the tiny qwen3_next example's. The Qwen3-30B-A3B prefills (about
12 s each to compile) are read on wormhole_n150 only unless SPATIAL_EMITTED_FULL=1, to keep CI in
its 30 minutes on 2 cores.
"""

from __future__ import annotations

import io
import os
import sys
from pathlib import Path

import pytest
from pyflakes.api import check
from pyflakes.reporter import Reporter

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.backend.ttlang.api_check import kernel_violations, kernels
from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported, print_ttlang
from spatial_dialect.tools.spatial_run import entry_function, parse_module

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import gemm_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
TENSIX = ["wormhole_n150", "blackhole_p150"]
WIDTH = 100
FULL = os.environ.get("SPATIAL_EMITTED_FULL") == "1"
SLOW = "qwen3_30b_a3b_prefill"

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
    # the check sees every kernel: three per operation (compute, dm0, dm1)
    assert len(kernels(program)) == 3 * program.count("@ttl.operation(")
    violations = kernel_violations(program)
    assert not violations, "\n".join(violations[:5])
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


KERNEL = """import ttl


@ttl.operation(grid=(1, 1))
def section_0_y(t_x, t_ids, t_y):
    x_dfb = ttl.make_dataflow_buffer_like(t_x, shape=(1, 1), block_count=2)

    @ttl.compute()
    def compute():
        with x_dfb.wait() as x_blk, x_dfb.reserve() as o_blk:
            o_blk.store(ttl.math.exp(x_blk))

    @ttl.datamovement()
    def dm0():
        pass

    @ttl.datamovement()
    def dm1():
        for t in range(2):
            r0 = t // 2
            with x_dfb.reserve() as blk:
                tx = ttl.copy(t_x[r0:r0 + 1, 0:1], blk)
                tx.wait()
"""


def test_the_kernel_check_accepts_the_specification():
    """The check's baseline: a kernel of DFBs, copies, block math and integer arithmetic."""
    assert [k.name for k in kernels(KERNEL)] == ["compute", "dm0", "dm1"]
    assert kernel_violations(KERNEL) == []


@pytest.mark.parametrize(
    "line, why",
    [
        ("r0 = int(t_ids.to_torch()[0, t])", ".to_torch(), which is no method"),
        ("r0 = torch.argmax(t).item()", "the host module torch"),
        ("r0 = _index(t_ids, t)", "a call of _index()"),
        ("r0 = max(0, t)", "a call of max()"),
        ("r0 = [i for i in range(t)][0]", "ListComp"),
        ("raise RuntimeError('id outside the table')", "Raise"),
    ],
)
def test_the_kernel_check_refuses_what_no_chip_compiles(line, why):
    """The simulator-only constructs the printer once used (a scalar read of a DRAM tensor by
    `.to_torch()` in a datamovement kernel, `_index`) and other host Python, each in a kernel."""
    bad = KERNEL.replace("            r0 = t // 2", f"            {line}")
    assert bad != KERNEL
    found = kernel_violations(bad)
    assert any(why in f and "kernel dm1" in f for f in found), found


def test_the_kernel_check_refuses_a_block_function_the_specification_lacks():
    bad = KERNEL.replace("ttl.math.exp(x_blk)", "ttl.math.gt(x_blk, x_blk)")
    assert kernel_violations(bad) == [
        "line 11, kernel compute: ttl.math.gt, which the TT-Lang specification lacks"
    ]


def test_host_code_outside_kernels_is_not_the_kernel_checks():
    """The host steps (a ttnn op between operations) and the helpers are host code."""
    host = KERNEL + "\n\ndef section_1_x(t_ids):\n    return int(t_ids.to_torch()[0, 0])\n"
    assert kernel_violations(host) == []


@pytest.mark.parametrize("target", TENSIX)
@pytest.mark.parametrize("example", EXAMPLES)
def test_an_example_as_spatial_opt_prints_it(example, target):
    if example.startswith(SLOW) and target != TENSIX[0] and not FULL:
        pytest.skip(f"{example} is read on {TENSIX[0]} only; SPATIAL_EMITTED_FULL=1 for both")
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
