"""What the pipeline plans, the backends print: a program compiled with the default pipeline
(split-K, flash decoding and every other form as the cost model chose them) prints with
`-t ttlang` on both Tensix presets and with `-t triton` on the GPU presets, or is refused by
name for what the program is (an integer map on TT-Lang: REFUSED_MAP_KINDS), never for the
plan (docs/passes.md#no-backend-restricts-the-plan-space).

Every one-op case of test_run_ops.py in both float types, random one-op shapes, GEMMs whose plans
split K, and decode attentions whose keys link splits."""

from __future__ import annotations

import io

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_run_ops import CASES, attention, programs

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.tools.backend.triton.printer import print_triton
from spatial_dialect.tools.backend.ttlang.printer import print_ttlang

PRINTERS = {
    "wormhole_n150": print_ttlang,
    "blackhole_p150": print_ttlang,
    "h100": print_triton,
    "rtx3060": print_triton,
}


def prints(text: str, target: str, **options: int) -> sp.ProgramOp | None:
    """Compile with the default pipeline and print with the target's backend; a compile refused
    by name (a typed pass diagnostic: no legal plan, no datatype) is not the printer's business.
    Returns the module's sections for the caller's checks."""
    try:
        module = compile_module(text, target, **options)
    except SpatialPassError:
        return None
    PRINTERS[target](module, io.StringIO())  # raises TTLangUnsupported / TritonNotEmitted
    return module


@pytest.mark.parametrize("target", sorted(PRINTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_op_case_prints_as_planned(case, target):
    for element in ("bf16", "f32"):
        prints(CASES[case](element), target)


def gemm(m: int, k: int, n: int, element: str) -> str:
    a, b, c = (f"tensor<{s}x{element}>" for s in (f"{m}x{k}", f"{k}x{n}", f"{m}x{n}"))
    return (
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
    )


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150"])
def test_split_k_plans_print(target):
    """Small outputs over long K: the shapes tile splits K for (docs/passes.md#tile-split-k-
    where-the-grid-does-not-fill); the test fails if none of them is planned split."""
    split = 0
    for m, k, n in [(32, 4096, 128), (64, 2048, 256), (32, 8192, 64), (128, 1024, 96)]:
        module = prints(gemm(m, k, n, "bf16"), target)
        assert module is not None
        split += any(w.k_slices > 1 for w in module.walk() if isinstance(w, sp.WorkOp))
    assert split > 0


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150", "h100"])
def test_flash_decoding_plans_print(target):
    """One query row over a long cache: link splits the keys where it pays; the test fails if
    no program is planned split."""
    split = 0
    for keys, heads, kv in [(2048, 8, 2), (4096, 4, 4), (1000, 2, 1)]:
        module = prints(attention(1, keys, heads, kv, 64, True, True)("bf16"), target)
        assert module is not None
        split += any(isinstance(s, sp.AttentionCombineOp) for s in module.walk())
    assert split > 0


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=programs(), target=st.sampled_from(sorted(PRINTERS)))
def test_any_shape_prints_as_planned(text, target):
    prints(text, target)
