"""Every tg op's sections, compiled and simulated against the reference, on shapes that are not
whole tiles and on targets whose accumulators and memories force each form: Tensix (an f32
accumulator of 4 tiles: rows of more than 128 columns take the blocked form), Plasticine (one
tile: every row wider than a tile is blocked; f32 only), a GPU (16 tiles, 99 KiB of shared
memory). And a runtime index out of range is the simulator's report, never a silent read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp import Layout, LayoutAttr
from spatial_dialect.sp.errors import SpatialPassError, SpatialVerifyError
from spatial_dialect.targets import PRESETS
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.simulator.machine import IndexOutOfRange
from spatial_dialect.tools.simulator.program import SimulationError, simulate
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
TARGETS = [("wormhole_n150", "bf16"), ("plasticine", "f32"), ("rtx3060", "bf16")]


def t(shape: str, elt: str) -> str:
    return f"tensor<{shape}x{elt}>"


def unary(op: str, props: str = "") -> Callable[[str], str]:
    def program(e: str) -> str:
        x = t("40x72", e)
        return (
            f"func.func @f(%x: {x}) -> {x} {{\n  %y = {op} %x {props}: ({x}) -> {x}\n"
            f"  func.return %y : {x}\n}}"
        )

    return program


def binary(op: str, b_shape: str, a_shape: str = "40x72") -> Callable[[str], str]:
    def program(e: str) -> str:
        a, b = t(a_shape, e), t(b_shape, e)
        return (
            f"func.func @f(%a: {a}, %b: {b}) -> {a} {{\n  %y = {op} %a, %b : ({a}, {b}) -> {a}\n"
            f"  func.return %y : {a}\n}}"
        )

    return program


def rms(
    cols: int, width: int | None = None, residual: bool = False, rows: int = 5
) -> Callable[[str], str]:
    def program(e: str) -> str:
        x = t(f"{rows}x{cols}", e)
        w = t(f"1x{width or cols}", e)
        args = f"%x: {x}, %w: {w}" + (f", %r: {x}" if residual else "")
        operands = "%x, %w" + (", %r" if residual else "")
        types = f"{x}, {w}" + (f", {x}" if residual else "")
        group = f" width {width}" if width else ""
        return (
            f"func.func @f({args}) -> {x} {{\n"
            f"  %y = tg.rms_norm {operands} eps 1.0e-05{group} : ({types}) -> {x}\n"
            f"  func.return %y : {x}\n}}"
        )

    return program


def layer_norm(cols: int) -> Callable[[str], str]:
    def program(e: str) -> str:
        x, w = t(f"5x{cols}", e), t(f"1x{cols}", e)
        return (
            f"func.func @f(%x: {x}, %w: {w}, %b: {w}) -> {x} {{\n"
            f"  %y = tg.layer_norm %x, %w, %b eps 1.0e-05 : ({x}, {w}, {w}) -> {x}\n"
            f"  func.return %y : {x}\n}}"
        )

    return program


def softmax(cols: int) -> Callable[[str], str]:
    return unary_shape("tg.softmax", f"5x{cols}")


def unary_shape(op: str, shape: str) -> Callable[[str], str]:
    def program(e: str) -> str:
        x = t(shape, e)
        return f"func.func @f(%x: {x}) -> {x} {{\n  %y = {op} %x : ({x}) -> {x}\n  func.return %y : {x}\n}}"

    return program


def rope(rows: int, heads: int, d: int, style: str) -> Callable[[str], str]:
    def program(e: str) -> str:
        x, cs = t(f"{rows}x{heads * d}", e), t(f"{rows}x{d // 2}", e)
        return (
            f"func.func @f(%x: {x}, %c: {cs}, %s: {cs}) -> {x} {{\n"
            f'  %y = tg.rope %x, %c, %s head_dim {d} style "{style}" : ({x}, {cs}, {cs}) -> {x}\n'
            f"  func.return %y : {x}\n}}"
        )

    return program


def attention(
    q_rows: int, keys: int, h: int, kv: int, d: int, causal: bool, pos: bool
) -> Callable[[str], str]:
    def program(e: str) -> str:
        q, k = t(f"{q_rows}x{h * d}", e), t(f"{keys}x{kv * d}", e)
        p = ", %p" if pos else ""
        pt = ", tensor<1xi32>" if pos else ""
        props = f"heads {h} kv_heads {kv} head_dim {d} causal {str(causal).lower()} scale 0.125"
        return (
            f"func.func @f(%q: {q}, %k: {k}, %v: {k}{', %p: tensor<1xi32>' if pos else ''}) -> {q} {{\n"
            f"  %y = tg.attention %q, %k, %v{p} {props} : ({q}, {k}, {k}{pt}) -> {q}\n"
            f"  func.return %y : {q}\n}}"
        )

    return program


def gather(rows: int) -> Callable[[str], str]:
    def program(e: str) -> str:
        table, y = t("100x72", e), t(f"{rows}x72", e)
        ids = f"tensor<{rows}xi32>"
        return (
            f"func.func @f(%table: {table}, %ids: {ids}) -> {y} {{\n"
            f"  %y = tg.gather_rows %table, %ids : ({table}, {ids}) -> {y}\n"
            f"  func.return %y : {y}\n}}"
        )

    return program


def set_rows(rows: int, keep_old: bool = False) -> Callable[[str], str]:
    def program(e: str) -> str:
        cache, new = t("64x72", e), t(f"{rows}x72", e)
        results = f"{cache}, {cache}" if keep_old else cache
        values = "%c2, %cache" if keep_old else "%c2"
        return (
            f"func.func @f(%cache: {cache}, %rows: {new}, %pos: tensor<1xi32>) -> ({results}) {{\n"
            f"  %c2 = tg.set_rows %cache, %rows, %pos : ({cache}, {new}, tensor<1xi32>) -> {cache}\n"
            f"  func.return {values} : {results}\n}}"
        )

    return program


def argmax(rows: int, cols: int) -> Callable[[str], str]:
    def program(e: str) -> str:
        x = t(f"{rows}x{cols}", e)
        return (
            f"func.func @f(%x: {x}) -> tensor<{rows}xi32> {{\n"
            f"  %y = tg.argmax %x : ({x}) -> tensor<{rows}xi32>\n  func.return %y : tensor<{rows}xi32>\n}}"
        )

    return program


CASES = {
    "silu": unary("tg.silu"),
    "relu": unary("tg.relu"),
    "sigmoid": unary("tg.sigmoid"),
    "softplus": unary("tg.softplus"),
    "gelu": unary("tg.gelu"),
    "gelu_tanh": unary("tg.gelu", 'approximate "tanh" '),
    "scale": unary("tg.scale", "factor 0.5 "),
    "softcap": unary("tg.softcap", "cap 3.0 "),
    "add": binary("tg.add", "40x72"),
    "sub_row_broadcast": binary("tg.sub", "1x72"),
    "mul": binary("tg.mul", "40x72"),
    "swiglu": binary("tg.swiglu", "40x72"),
    "transpose": lambda e: (
        f"func.func @f(%x: {t('40x72', e)}) -> {t('72x40', e)} {{\n"
        f"  %y = tg.transpose %x : ({t('40x72', e)}) -> {t('72x40', e)}\n"
        f"  func.return %y : {t('72x40', e)}\n}}"
    ),
    "rms_norm_whole": rms(100),
    "rms_norm_blocked_residual": rms(300, residual=True),
    "rms_norm_per_head": rms(256, width=64),
    "layer_norm_whole": layer_norm(100),
    "layer_norm_blocked": layer_norm(300),
    "softmax_whole": softmax(100),
    "softmax_blocked": softmax(300),
    "rope_neox_two_tile_heads": rope(5, 2, 64, "neox"),
    "rope_interleaved_two_heads_a_tile": rope(40, 4, 16, "interleaved"),
    "attention_decode_gqa": attention(1, 100, 4, 2, 32, True, True),
    "attention_prefill_causal": attention(8, 64, 4, 1, 32, True, True),
    "attention_default_position": attention(40, 72, 2, 2, 64, True, False),
    "attention_not_causal": attention(8, 64, 2, 1, 32, False, False),
    "gather_rows": gather(40),
    "set_rows_in_place": set_rows(5),
    "set_rows_copy": set_rows(40, keep_old=True),
    "argmax": argmax(40, 600),
}


def run(text: str, target: str, seed: int = 0):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    return (
        fn,
        module,
        inputs,
        compare_outputs(fn, reference, values, simulated_outputs(fn, module, inputs)),
    )


@pytest.mark.parametrize("target, elt", TARGETS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_op_simulates_to_the_reference(case, target, elt):
    *_, comparisons = run(CASES[case](elt), target)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


def test_integer_add_is_exact():
    *_, comparisons = run(binary("tg.add", "1x72")("i32"), "wormhole_n150")
    assert all(c.ok and c.max_abs == 0 for c in comparisons)


def test_out_of_range_id_is_reported_by_the_simulator():
    fn, module, inputs, _ = run(gather(5)("f32"), "plasticine")
    inputs["ids"][3] = 100  # the table has 100 rows
    with pytest.raises(IndexOutOfRange, match=r"id 100 at ids\[3\] outside \[0, 100\) of @table"):
        simulate(module, [inputs["table"], inputs["ids"]])


@pytest.mark.parametrize("case, bad", [("set_rows", 60), ("attention", 58)])
def test_out_of_range_position_is_reported_by_the_simulator(case, bad):
    program = (
        set_rows(5)("f32") if case == "set_rows" else attention(8, 64, 2, 1, 32, True, True)("f32")
    )
    fn, module, inputs, _ = run(program, "plasticine")
    inputs[[n for n in inputs if n.startswith("p")][0]][:] = bad
    names = [a.name_hint for a in fn.body.block.args]
    with pytest.raises(IndexOutOfRange, match=f"position {bad} outside"):
        simulate(module, [inputs[n] for n in names])


def test_set_rows_updates_the_cache_in_place_and_keeps_every_other_row():
    fn, module, inputs, comparisons = run(set_rows(5)("f32"), "plasticine")
    assert all(c.ok for c in comparisons)
    (out,) = simulate(module, [inputs[n] for n in ("cache", "rows", "pos")])
    p = int(inputs["pos"][0])
    assert np.array_equal(out[p : p + 5], inputs["rows"])
    keep = np.ones(64, bool)
    keep[p : p + 5] = False
    assert np.array_equal(out[keep], inputs["cache"][keep])


# ── Any shape on any target ─────────────────────────────────────────────────────────────────


@st.composite
def programs(draw) -> str:
    """A one-op program of a random op and shape (elements a float type the target may lack)."""
    e = draw(st.sampled_from(["bf16", "f32"]))
    rows, cols = draw(st.integers(1, 70)), draw(st.integers(1, 300))
    kind = draw(st.sampled_from(["unary", "binary", "rows", "transpose", "argmax", "attention"]))
    if kind == "unary":
        op = draw(st.sampled_from(["tg.silu", "tg.sigmoid", "tg.gelu", "tg.relu"]))
        return unary_shape(op, f"{rows}x{cols}")(e)
    if kind == "binary":
        b = draw(st.sampled_from([f"{rows}x{cols}", f"1x{cols}"]))
        return binary(draw(st.sampled_from(["tg.add", "tg.sub", "tg.mul"])), b, f"{rows}x{cols}")(e)
    if kind == "rows":
        return draw(st.sampled_from([rms(cols, rows=rows), layer_norm(cols), softmax(cols)]))(e)
    if kind == "transpose":
        x, y = t(f"{rows}x{cols}", e), t(f"{cols}x{rows}", e)
        return f"func.func @f(%x: {x}) -> {y} {{\n  %y = tg.transpose %x : ({x}) -> {y}\n  func.return %y : {y}\n}}"
    if kind == "argmax":
        return argmax(rows, cols)(e)
    kv = draw(st.integers(1, 2))
    heads = kv * draw(st.integers(1, 2))
    keys = draw(st.integers(1, 100))
    q_rows = draw(st.integers(1, keys))
    return attention(q_rows, keys, heads, kv, 32, draw(st.booleans()), draw(st.booleans()))(e)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=programs(), target=st.sampled_from(sorted(PRESETS)))
def test_any_shape_compiles_and_simulates_or_is_refused_by_name(text, target):
    try:
        *_, comparisons = run(text, target)
    except SpatialPassError as e:  # refused by name: a typed diagnostic of link or the target
        # never the compiler refusing its own plan (an sp verifier error on what it built, or a
        # site past its budget under the plan tile chose): docs/passes.md#shared-the-compiler-never-refuses-its-own-output
        assert not isinstance(e, SpatialVerifyError), e
        return
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


def test_a_tensor_declared_in_two_layouts_is_reported_by_the_simulator():
    """One layout per tensor for the whole program: a section that declares another than the
    section before (instead of reading a twin made by a bridge) is a wrong program."""
    text = unary("tg.silu")("f32").replace(
        "func.return %y",
        "%z = tg.relu %y : (tensor<40x72xf32>) -> tensor<40x72xf32>\n  func.return %z",
    )
    fn, module, inputs, comparisons = run(text, "h100")
    assert all(c.ok for c in comparisons)
    last = [p for p in module.walk() if isinstance(p, sp.ProgramOp)][-1]
    last.tensor("y").properties["layout"] = LayoutAttr(Layout.ROWS)
    with pytest.raises(
        SimulationError, match="declares @y in rows layout, an earlier section in tiled"
    ):
        simulate(module, [inputs["x"]])


def test_attention_on_one_site_with_one_movement_engine(tmp_path):
    """Everything moves on one engine: the queries (before the K loop in program order) are
    loaded before the K and V blocks, so the K loop never waits behind a query. On one site an
    item serves several query heads of its kv head, reading K and V once for all of them."""
    toml = (EXAMPLES / "targets" / "tensix_4x4.toml").read_text()
    toml = toml.replace("movement_engines = 2", "movement_engines = 1")
    toml = toml.replace("mesh_x = 4", "mesh_x = 1").replace("mesh_y = 4", "mesh_y = 1")
    path = tmp_path / "one_site.toml"
    path.write_text(toml)
    fn, module, _, comparisons = run(attention(8, 1024, 8, 2, 32, True, True)("f32"), str(path))
    assert all(c.ok for c in comparisons)
    (work,) = [op for op in module.walk() if isinstance(op, sp.WorkOp)]
    assert work.block[1] > 1  # an item serves several heads of its kv head
