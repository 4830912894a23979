"""Every kind the Triton printer can meet is printed or refused by name: each map kind, row
reduction and section kind is in exactly one of the printer's table and its refusals, so a kind
added to the IR without a Triton form fails here, not as a KeyError while printing."""

from __future__ import annotations

import pytest

from spatial_dialect.sp.enums import SectionKind
from spatial_dialect.sp.kinds import MapKindName, RowKindName
from spatial_dialect.tools.backend.triton import (
    MAP_PRINTERS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_KINDS,
    REFUSED_SECTION_KINDS,
    ROW_PRINTERS,
    SECTION_PRINTERS,
)

TABLES = {
    "map": (MapKindName, MAP_PRINTERS, REFUSED_MAP_KINDS),
    "row": (RowKindName, ROW_PRINTERS, REFUSED_ROW_KINDS),
    "section": (SectionKind, SECTION_PRINTERS, REFUSED_SECTION_KINDS),
}


@pytest.mark.parametrize("consumer", sorted(TABLES))
def test_every_kind_is_printed_or_refused_by_name(consumer: str) -> None:
    kinds, printed, refused = TABLES[consumer]
    assert set(printed).isdisjoint(refused), set(printed) & set(refused)
    missing = [k.value for k in kinds if k not in printed and k not in refused]
    assert not missing, f"{consumer} kinds with neither a Triton printer nor a refusal: {missing}"
    assert all(isinstance(k, kinds) for k in (*printed, *refused))
    assert all(reason.strip() for reason in refused.values())


def test_the_refusals_are_those_triton_cannot_print() -> None:
    """The tables are not vacuous in what they claim: every map kind, the integer ones
    included, and every section kind, flash decoding's combine included, is printed."""
    assert not REFUSED_MAP_KINDS
    assert {MapKindName.REQUANT, MapKindName.CLAMP} <= set(MAP_PRINTERS)
    assert REFUSED_SECTION_KINDS == {}
    assert MapKindName.DECAY in MAP_PRINTERS and RowKindName.L2_NORM in ROW_PRINTERS
