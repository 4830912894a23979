"""Every consumer of the IR covers every op and kind it can meet, or refuses it by name.

One matrix for the whole project: the tg ops against what gives them meaning (the reference's
`@impl`s) and what lowers them (link's table); the sp stage ops against the simulator; the map
kinds and row reductions against the simulator and both printers; the section kinds against the
Triton printer. A cell is one registration (a decorator next to the code, keyed by the op class
or the kind's enum) or one refusal with its reason: never both, never neither. Each room also
tests its own table in depth (test/interpreters, test/simulator, test/backend/*/test_*_coverage.py);
this test is where a new op or kind shows every place it still needs, in one run.
"""

from __future__ import annotations

import pytest

from spatial_dialect import sp, tg
from spatial_dialect.passes.link import LINKERS, REFUSED
from spatial_dialect.sp.kinds import MapKindName, RowForm, RowKindName
from spatial_dialect.tools import simulator
from spatial_dialect.tools.backend import triton, ttlang
from spatial_dialect.tools.interpreters import REFUSED_OPS, TgFunctions
from spatial_dialect.tools.interpreters.tg_functions import implemented_ops

TG_OPS = list(tg.TG.operations)
STAGE_OPS = [op for op in sp.SP.operations if issubclass(op, sp.StageOp)]


def _reference_ops() -> set[type]:
    return set(implemented_ops(TgFunctions))


def _simulated_row_kinds() -> set[RowKindName]:
    return {
        kind
        for kind in RowKindName
        if kind in simulator.ROW_KINDS
        and all(simulator.ROW_KINDS[kind].computes(form) for form in RowForm)
    }


# consumer -> (the keys it must cover, the keys it covers, the keys it refuses with a reason)
CONSUMERS = {
    "reference": (TG_OPS, _reference_ops, lambda: REFUSED_OPS),
    "link": (TG_OPS, lambda: set(LINKERS), lambda: REFUSED),
    "simulator stages": (
        STAGE_OPS,
        lambda: set(simulator.STAGE_RUNNERS),
        lambda: simulator.REFUSED_STAGES,
    ),
    "simulator maps": (
        list(MapKindName),
        lambda: set(simulator.MAP_KINDS),
        lambda: simulator.REFUSED_MAP_KINDS,
    ),
    "simulator rows": (
        list(RowKindName),
        _simulated_row_kinds,
        lambda: {k: why for (k, _), why in simulator.REFUSED_ROW_FORMS.items()},
    ),
    "ttlang maps": (
        list(MapKindName),
        lambda: set(ttlang.MAP_PRINTERS),
        lambda: ttlang.REFUSED_MAP_KINDS,
    ),
    "ttlang rows": (
        list(RowKindName),
        lambda: set(ttlang.ROW_PRINTERS),
        lambda: ttlang.REFUSED_ROW_KINDS,
    ),
    "triton maps": (
        list(MapKindName),
        lambda: set(triton.MAP_PRINTERS),
        lambda: triton.REFUSED_MAP_KINDS,
    ),
    "triton rows": (
        list(RowKindName),
        lambda: set(triton.ROW_PRINTERS),
        lambda: triton.REFUSED_ROW_KINDS,
    ),
    "triton sections": (
        list(sp.SectionKind),
        lambda: set(triton.SECTION_PRINTERS),
        lambda: triton.REFUSED_SECTION_KINDS,
    ),
}


def _name(key: object) -> str:
    return key.name if isinstance(key, type) and hasattr(key, "name") else str(key)


@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_every_key_is_covered_or_refused_by_name(consumer):
    keys, covered_of, refused_of = CONSUMERS[consumer]
    covered, refused = covered_of(), refused_of()
    neither = [_name(k) for k in keys if k not in covered and k not in refused]
    both = [_name(k) for k in keys if k in covered and k in refused]
    silent = [_name(k) for k, why in refused.items() if not str(why).strip()]
    assert (neither, both, silent) == ([], [], []), consumer


@pytest.mark.parametrize("consumer", list(CONSUMERS))
def test_no_consumer_covers_a_key_that_does_not_exist(consumer):
    """A table keyed by something the IR does not have (a string, a removed kind) is dead code
    that looks like coverage."""
    keys, covered_of, refused_of = CONSUMERS[consumer]
    strays = [_name(k) for k in (*covered_of(), *refused_of()) if k not in keys]
    assert strays == []


def test_the_reference_table_is_read_as_xdsl_builds_it():
    """`implemented_ops` reads the table xDSL's `@register_impls` fills: tg.matmul has an
    `@impl` there, an sp op (which the reference never evaluates) has none."""
    assert tg.MatmulOp in _reference_ops()
    assert sp.MapOp not in _reference_ops()
