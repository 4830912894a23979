"""The prelude's layout and interval decisions on small tg functions written out here."""

from __future__ import annotations

from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func, FuncOp
from xdsl.parser import Parser

from spatial_dialect.passes.link.prelude import Interval, Layout, Prelude
from spatial_dialect.tg import TG

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def parse(src: str) -> FuncOp:
    ctx = Context()
    for d in (Builtin, Func, TG):
        ctx.load_dialect(d)
    module = Parser(ctx, src).parse_module()
    module.verify()
    (function,) = [op for op in module.ops if isinstance(op, FuncOp)]
    return function


def by_name(function: FuncOp, prelude: Prelude) -> dict[str, Layout]:
    names = {a.name_hint: a for a in function.body.block.args}
    for op in function.body.walk():
        for r in op.results:
            names[r.name_hint] = r
    return {n: prelude.layouts[v] for n, v in names.items() if v in prelude.layouts}


def test_matmul_operands_with_rows_are_tiled_single_rows_are_not():
    f = parse(
        """func.func @f(%x: tensor<1x64xf32>, %w: tensor<64x32xf32>, %a: tensor<8x64xf32>) {
  %y = tg.matmul %x, %w : (tensor<1x64xf32>, tensor<64x32xf32>) -> tensor<1x32xf32>
  %z = tg.matmul %a, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
  func.return
}"""
    )
    layouts = by_name(f, Prelude.of(f))
    assert layouts == {
        "x": Layout.ROWS,  # one row: the same bytes either way, never bridged
        "w": Layout.TILED,
        "a": Layout.TILED,
        "y": Layout.ROWS,
        "z": Layout.TILED,
    }


def test_row_norm_ties_to_a_fixed_point():
    # n1 reads a matmul result (tiled), n2 reads n1: both norms and their results end tiled,
    # although no rule names n2 directly. The 1-row weight stays rows.
    f = parse(
        """func.func @f(%a: tensor<8x64xf32>, %w: tensor<64x64xf32>, %g: tensor<1x64xf32>,
                 %r: tensor<8x64xf32>, %q: tensor<8x64xf32>) {
  %m = tg.matmul %a, %w : (tensor<8x64xf32>, tensor<64x64xf32>) -> tensor<8x64xf32>
  %n1 = tg.rms_norm %m, %g eps 1.0e-06 : (tensor<8x64xf32>, tensor<1x64xf32>) -> tensor<8x64xf32>
  %n2 = tg.rms_norm %n1, %g, %r eps 1.0e-06 : (tensor<8x64xf32>, tensor<1x64xf32>, tensor<8x64xf32>) -> tensor<8x64xf32>
  %n3 = tg.rms_norm %q, %g eps 1.0e-06 : (tensor<8x64xf32>, tensor<1x64xf32>) -> tensor<8x64xf32>
  func.return
}"""
    )
    layouts = by_name(f, Prelude.of(f))
    for name in ("m", "n1", "n2", "r"):
        assert layouts[name] is Layout.TILED, name
    # A norm that touches nothing tiled stays in rows, the flat form every per-head norm has.
    assert layouts["q"] is Layout.ROWS and layouts["n3"] is Layout.ROWS
    assert layouts["g"] is Layout.ROWS


def test_decode_attention_reads_cache_tiled_and_carries_its_layout():
    f = parse(
        """func.func @f(%q: tensor<1x64xbf16>, %kc: tensor<128x32xbf16>, %vc: tensor<128x32xbf16>,
                 %k: tensor<1x32xbf16>, %pos: tensor<1xi32>) {
  %kc2 = tg.set_rows %kc, %k, %pos : (tensor<128x32xbf16>, tensor<1x32xbf16>, tensor<1xi32>) -> tensor<128x32xbf16>
  %o = tg.attention %q, %kc2, %vc, %pos heads 2 kv_heads 1 head_dim 32 causal true scale 0.17 : (tensor<1x64xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>, tensor<1xi32>) -> tensor<1x64xbf16>
  func.return
}"""
    )
    layouts = by_name(f, Prelude.of(f))
    # Attention wants the updated cache tiled; carried state takes it back to the cache argument.
    assert layouts["kc2"] is Layout.TILED and layouts["kc"] is Layout.TILED
    assert layouts["vc"] is Layout.TILED
    assert layouts["q"] is Layout.ROWS and layouts["o"] is Layout.ROWS


def test_prefill_rope_stays_in_rows_between_tiled_neighbours():
    f = parse((EXAMPLES / "llama3_8b_prefill.mlir").read_text())
    layouts = by_name(f, Prelude.of(f))
    assert layouts["q"] is Layout.TILED  # a matmul result with 128 rows
    assert layouts["qr"] is Layout.TILED  # attention's queries in prefill are tiles of rows
    assert layouts["cos"] is Layout.ROWS  # rope alone wants nothing tiled
    assert layouts["kc"] is Layout.TILED and layouts["k_cache"] is Layout.TILED
    assert layouts["kr"] is Layout.TILED  # a block of 128 rows written into a tiled cache


def test_integer_intervals():
    f = parse(
        """func.func @f(%a: tensor<4x16xi8>, %b: tensor<16x4xi8>, %x: tensor<4x8xf32>) {
  %c = tg.matmul %a, %b : (tensor<4x16xi8>, tensor<16x4xi8>) -> tensor<4x4xi32>
  %r = tg.relu %a : (tensor<4x16xi8>) -> tensor<4x16xi8>
  %i = tg.argmax %x : (tensor<4x8xf32>) -> tensor<4xi32>
  %j = tg.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  func.return
}"""
    )
    prelude = Prelude.of(f)
    got = {v.name_hint: i for v, i in prelude.intervals.items()}
    # i8 x i8 over K = 16: each product in [-128*127, 128*128], sixteen of them.
    assert got["c"] == Interval(16 * -16256, 16 * 16384)
    assert got["r"] == Interval(0, 127)
    assert got["i"] == Interval(0, 7)
    assert got["j"] == Interval(0, 14)
    assert got["j"].bits() == 8 and got["c"].bits() == 32
    assert "x" not in got  # floats have no interval
