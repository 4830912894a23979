"""The TT-Lang printer's tables cover every kind: each map kind and each row-reduction kind is
printed (MAP_PRINTERS, ROW_PRINTERS) or refused by name with a reason (REFUSED_MAP_KINDS,
REFUSED_ROW_KINDS), never both and never neither, and a refused kind is refused with its reason
when a section holds it."""

from __future__ import annotations

import pytest

from spatial_dialect.sp.kinds import MAP_KINDS, ROW_KINDS, MapKindName, RowKindName
from spatial_dialect.tools.backend.ttlang import (
    MAP_PRINTERS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_KINDS,
    ROW_PRINTERS,
    SECTION_PRINTERS,
)
from spatial_dialect.tools.backend.ttlang.compute import check_compute
from spatial_dialect.tools.backend.ttlang.stage import StagePrinter
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported


def test_the_enums_are_the_kinds():
    assert {k.value for k in MapKindName} == set(MAP_KINDS)
    assert {k.value for k in RowKindName} == set(ROW_KINDS)


@pytest.mark.parametrize("kind", list(MapKindName))
def test_every_map_kind_is_printed_or_refused_by_name(kind):
    printed, refused = kind in MAP_PRINTERS, kind in REFUSED_MAP_KINDS
    assert printed != refused, f"map kind {kind}: printed {printed}, refused {refused}"
    if refused:
        assert REFUSED_MAP_KINDS[kind].strip()


@pytest.mark.parametrize("kind", list(RowKindName))
def test_every_row_kind_is_printed_or_refused_by_name(kind):
    printed, refused = kind in ROW_PRINTERS, kind in REFUSED_ROW_KINDS
    assert printed != refused, f"row kind {kind}: printed {printed}, refused {refused}"


def test_the_tables_are_keyed_by_the_enums():
    """Not by strings: a key's type is the enum, so a misspelt kind cannot register."""
    for table in (MAP_PRINTERS, REFUSED_MAP_KINDS):
        assert all(type(k) is MapKindName for k in table)
    for table in (ROW_PRINTERS, REFUSED_ROW_KINDS):
        assert all(type(k) is RowKindName for k in table)
    assert SECTION_PRINTERS and all(isinstance(p, StagePrinter) for p in SECTION_PRINTERS.values())


class _Map:
    """The part of an sp.map check_compute reads (its kind), for a kind no example holds."""

    def __init__(self, kind: MapKindName):
        self.kind = type("KindAttr", (), {"data": kind})()
        self.group = None


@pytest.mark.parametrize("kind", list(REFUSED_MAP_KINDS))
def test_a_refused_map_kind_is_refused_with_its_reason(kind, monkeypatch):
    from spatial_dialect import sp

    stage = _Map(kind)
    monkeypatch.setattr(sp, "MapOp", _Map)  # check_compute dispatches on the class
    with pytest.raises(TTLangUnsupported, match=f"sp.map {kind}: "):
        check_compute("s", stage)  # type: ignore[arg-type]


def test_the_two_statistic_kinds_print_in_every_form():
    """Blocked layer_norm and softmax and their apply maps are printed (stats.py), the integer
    maps refused: the tables are not vacuous."""
    assert {MapKindName.LAYER_APPLY, MapKindName.SOFTMAX_APPLY} <= set(MAP_PRINTERS)
    assert ROW_PRINTERS[RowKindName.LAYER_NORM].pairs and ROW_PRINTERS[RowKindName.SOFTMAX].pairs
    assert not ROW_PRINTERS[RowKindName.RMS_NORM].pairs
    assert {MapKindName.REQUANT, MapKindName.CLAMP} <= set(REFUSED_MAP_KINDS)
