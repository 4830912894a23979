"""spatial-opt's speed-ups keep every byte and every answer (bench/compile_speed.py says why they
exist): FastPrinter prints what xDSL's Printer prints, a site range's compiled `first` map gives
what the map's own evaluation gives, and main() leaves the garbage collector as it found it."""

from __future__ import annotations

import gc
from io import StringIO
from pathlib import Path

from xdsl.dialects.builtin import AffineMapAttr, ModuleOp, StringAttr
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.printer import Printer

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp import SitesOp
from spatial_dialect.sp.attrs import RectAttr
from spatial_dialect.tools import spatial_opt
from spatial_dialect.tools.frontend.fast_printer import FastPrinter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def printed(printer_class: type[Printer], module: ModuleOp, **options: bool) -> str:
    out = StringIO()
    printer_class(stream=out, **options).print_op(module)
    return out.getvalue()


def test_fast_printer_prints_what_xdsl_prints_on_a_compiled_layer():
    module = compile_module((EXAMPLES / "tiny_decode.mlir").read_text(), target="wormhole_n150")
    for generic in (False, True):
        ours = printed(FastPrinter, module, print_generic_format=generic)
        assert ours == printed(Printer, module, print_generic_format=generic)
        assert "sp.program" in ours


def test_fast_printer_escapes_what_xdsl_escapes():
    # every escape print_bytes_literal knows: a quote, a backslash, a control byte, non-ASCII
    texts = ["plain", 'a "quoted" word', "back\\slash", "tab\there", "line\nbreak", "µs", ""]
    module = ModuleOp([])
    module.attributes.update({f"s{i}": StringAttr(t) for i, t in enumerate(texts)})
    ours = printed(FastPrinter, module)
    assert ours == printed(Printer, module)
    assert r'"a \22quoted\22 word"' in ours and r'"back\\slash"' in ours


def site_range(first: AffineMap) -> SitesOp:
    return SitesOp(RectAttr.of(0, 3, 0, 2), AffineMapAttr(first), 1, (1, 1), (1, 1))


def test_compiled_first_map_agrees_with_the_map():
    x, y = AffineExpr.dimension(0), AffineExpr.dimension(1)
    maps = [
        AffineMap(2, 0, (x + y * 8,)),  # linear: read off by coefficients
        AffineMap(2, 0, (x * 14 + (y * 80 + 58),)),
        AffineMap(2, 0, (AffineExpr.constant(5),)),
        AffineMap(2, 0, (x % 2 + (y // 3) * 4,)),  # not linear: the map's own evaluation
        AffineMap(2, 0, (x.ceil_div(2) + y,)),
    ]
    for m in maps:
        r = site_range(m)
        for sx in range(6):
            for sy in range(5):
                assert r.first_item(sx, sy) == m.eval([sx, sy], [])[0], (m, sx, sy)


def test_a_new_first_map_is_compiled_afresh():
    x, y = AffineExpr.dimension(0), AffineExpr.dimension(1)
    r = site_range(AffineMap(2, 0, (x + y * 8,)))
    assert r.first_item(1, 2) == 17
    r.properties["first"] = AffineMapAttr(AffineMap(2, 0, (x * 2 + y,)))
    assert r.first_item(1, 2) == 4


def test_main_restores_the_collector(tmp_path: Path):
    before = gc.get_threshold()
    out = tmp_path / "out.mlir"
    src = str(EXAMPLES / "tiny_decode.mlir")
    assert (
        spatial_opt.main([src, "-p", "spatial-pipeline{target=wormhole_n150}", "-o", str(out)]) == 0
    )
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    assert "sp.program" in out.read_text()
