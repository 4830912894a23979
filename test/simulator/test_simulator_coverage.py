"""The simulator covers the whole sp vocabulary, or refuses a piece of it by name.

Three tables say what the simulator executes (tools/simulator/registry.py), each filled by a
decorator beside the code: STAGE_RUNNERS (sp stage op class -> runner), MAP_KINDS (MapKindName ->
math) and ROW_KINDS (RowKindName -> a RowKind, one method per step of each form). The REFUSED_*
dicts name, with a reason, what it does not execute on purpose.

Why these tests fail when an entry goes missing: each walks the dialect's own vocabulary (the
stage ops `sp.SP` registers, every member of `MapKindName`, every `RowKindName` x `RowForm`),
not the simulator's tables, and asserts that each element is either implemented or refused.
Deleting `@runs(sp.RopeOp)` from stages.py leaves RopeOp in `sp.SP` but in neither
STAGE_RUNNERS nor REFUSED_STAGES, so `test_every_stage_op_has_a_runner_or_is_refused` lists
it; deleting `@map_kind(MapKindName.SILU)` does the same for "silu"; deleting
`RmsNorm.finish` makes `ROW_KINDS[RMS_NORM].computes(COMBINE)` false, so
`test_every_row_kind_and_form_is_computed_or_refused` lists (rms_norm, combine). Adding an op or
a kind to the dialect without a simulator entry fails the same way. The tests that delete an
entry on purpose (monkeypatch) then check that a program using it is `NotSimulated` with its
name, never a KeyError.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp.kinds import MAP_KINDS as MAP_KIND_SPECS
from spatial_dialect.sp.kinds import MapKindName, RowForm, RowKindName
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import input_names
from spatial_dialect.tools.simulator import (
    FORM_STEPS,
    MAP_KINDS,
    REFUSED_MAP_KINDS,
    REFUSED_ROW_FORMS,
    REFUSED_STAGES,
    ROW_KINDS,
    STAGE_RUNNERS,
    RowKind,
)
from spatial_dialect.tools.simulator.machine import NotSimulated
from spatial_dialect.tools.simulator.program import simulate
from spatial_dialect.tools.simulator.registry import map_kind, row_kind, runs
from spatial_dialect.tools.spatial_run import entry_function, parse_module

STAGE_OPS = [op for op in sp.SP.operations if issubclass(op, sp.StageOp)]
"""Every stage op the sp dialect registers."""


def _defined_stage_ops(cls: type) -> set[type]:
    """The concrete StageOp subclasses the sp package defines (an op definition has its own
    `name`; ComputeStage and IndexedStage are bases and have none)."""
    found = set()
    for sub in cls.__subclasses__():
        if sub.__module__.startswith("spatial_dialect.sp") and "name" in vars(sub):
            found.add(sub)
        found |= _defined_stage_ops(sub)
    return found


# ── Coverage ──────────────────────────────────────────────────────────────────────────────────


def test_the_dialect_registers_every_stage_op_it_defines():
    """The walk below is over sp.SP; a stage op defined but left out of the dialect would escape
    it, so the two lists must agree (and hold the GEMM's stages, so neither is empty)."""
    assert set(STAGE_OPS) == _defined_stage_ops(sp.StageOp)
    assert {sp.LoadOp, sp.StoreOp, sp.MatmulTilesOp, sp.MapOp} <= set(STAGE_OPS)


def test_every_stage_op_has_a_runner_or_is_refused():
    missing = [op.name for op in STAGE_OPS if op not in STAGE_RUNNERS and op not in REFUSED_STAGES]
    assert missing == []


def test_every_map_kind_is_computed_or_refused():
    missing = [k.value for k in MapKindName if k not in MAP_KINDS and k not in REFUSED_MAP_KINDS]
    assert missing == []


def test_every_row_kind_and_form_is_computed_or_refused():
    missing = [
        (kind.value, form.value)
        for kind in RowKindName
        for form in RowForm
        if (kind, form) not in REFUSED_ROW_FORMS
        and not (kind in ROW_KINDS and ROW_KINDS[kind].computes(form))
    ]
    assert missing == []


def test_nothing_is_both_implemented_and_refused_and_every_refusal_says_why():
    assert not set(REFUSED_STAGES) & set(STAGE_RUNNERS)
    assert not set(REFUSED_MAP_KINDS) & set(MAP_KINDS)
    assert not [
        key
        for key in REFUSED_ROW_FORMS
        if key[0] in ROW_KINDS and ROW_KINDS[key[0]].computes(key[1])
    ]
    reasons = [*REFUSED_STAGES.values(), *REFUSED_MAP_KINDS.values(), *REFUSED_ROW_FORMS.values()]
    assert all(isinstance(r, str) and r.strip() for r in reasons)


def test_the_tables_are_keyed_by_class_and_enum_not_by_string():
    assert all(isinstance(op, type) and issubclass(op, sp.StageOp) for op in STAGE_RUNNERS)
    assert all(type(k) is MapKindName for k in MAP_KINDS)
    assert all(type(k) is RowKindName for k in ROW_KINDS)
    assert all(isinstance(v, RowKind) for v in ROW_KINDS.values())


@pytest.mark.parametrize("kind", sorted(MAP_KINDS, key=str))
def test_each_map_function_takes_the_operands_its_kind_declares(kind):
    """A function registered under the wrong kind usually takes another number of operands:
    (op, *blocks) must bind for every arity the kind allows (sp.kinds.MAP_KINDS)."""
    signature = inspect.signature(MAP_KINDS[kind])
    for arity in MAP_KIND_SPECS[kind].arities():
        signature.bind(None, *[None] * arity)


def test_a_row_kind_without_a_forms_steps_does_not_compute_it():
    class OnlyWhole(RowKind):
        def whole(self, x, rows, eps):
            return x

    assert OnlyWhole().computes(RowForm.WHOLE)
    assert not OnlyWhole().computes(RowForm.PARTIAL)
    assert not OnlyWhole().computes(RowForm.COMBINE)
    assert set(FORM_STEPS) == set(RowForm)


# ── One registration each ─────────────────────────────────────────────────────────────────────


def test_a_second_registration_is_an_error():
    with pytest.raises(ValueError, match="registered twice"):
        runs(sp.RopeOp)(lambda *args: None)
    with pytest.raises(ValueError, match="registered twice"):
        map_kind(MapKindName.SILU)(lambda op, x: x)
    with pytest.raises(ValueError, match="registered twice"):
        row_kind(RowKindName.SOFTMAX)(RowKind)
    assert STAGE_RUNNERS[sp.RopeOp].__name__ == "run_rope"
    assert MAP_KINDS[MapKindName.SILU].__name__ == "silu"
    assert type(ROW_KINDS[RowKindName.SOFTMAX]).__name__ == "Softmax"


# ── What has no entry is refused by name ──────────────────────────────────────────────────────


def _simulate(text: str) -> list[np.ndarray]:
    fn = entry_function(parse_module(text))
    module = compile_module(fn, "wormhole_n150")
    inputs = draw_inputs(fn, 0)
    return simulate(module, [inputs[n] for n in input_names(fn)])


X = "tensor<8x64xf32>"
SILU = (
    f"func.func @f(%x: {X}) -> {X} {{\n  %y = tg.silu %x : ({X}) -> {X}\n  func.return %y : {X}\n}}"
)
SOFTMAX = SILU.replace("tg.silu", "tg.softmax")


def test_the_programs_below_simulate_with_every_entry_in_place():
    assert _simulate(SILU)[0].shape == (8, 64)
    assert _simulate(SOFTMAX)[0].shape == (8, 64)


def test_a_stage_op_without_a_runner_is_not_simulated_by_name(monkeypatch):
    monkeypatch.delitem(STAGE_RUNNERS, sp.MapOp)
    with pytest.raises(NotSimulated, match=r"stage sp\.map is not simulated: no simulator runner"):
        _simulate(SILU)


def test_a_refused_stage_op_says_why(monkeypatch):
    monkeypatch.delitem(STAGE_RUNNERS, sp.MapOp)
    monkeypatch.setitem(REFUSED_STAGES, sp.MapOp, "maps are off today")
    with pytest.raises(NotSimulated, match=r"stage sp\.map is not simulated: maps are off today"):
        _simulate(SILU)


def test_a_map_kind_without_math_is_not_simulated_by_name(monkeypatch):
    monkeypatch.delitem(MAP_KINDS, MapKindName.SILU)
    monkeypatch.setitem(REFUSED_MAP_KINDS, MapKindName.SILU, "no silu here")
    with pytest.raises(NotSimulated, match='map kind "silu" is not simulated: no silu here'):
        _simulate(SILU)


def test_a_row_kind_without_math_is_not_simulated_by_name(monkeypatch):
    monkeypatch.delitem(ROW_KINDS, RowKindName.SOFTMAX)
    with pytest.raises(NotSimulated, match='row reduction whole "softmax" is not simulated'):
        _simulate(SOFTMAX)
