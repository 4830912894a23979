"""The simulator's three dispatch tables, each filled by a decorator placed on the code it names.

- `STAGE_RUNNERS`: sp stage op class -> how one work item of one instance of that stage runs
  (`@runs(sp.RopeOp)`), the data movement (load, store, gather, scatter) and the GEMM's
  `sp.matmul_tiles` included.
- `MAP_KINDS`: `MapKindName` -> the elementwise math of an `sp.map` of that kind
  (`@map_kind(MapKindName.SILU)`).
- `ROW_KINDS`: `RowKindName` -> the math of an `sp.row_reduce` of that kind, one `RowKind`
  object whose methods are the forms (`@row_kind(RowKindName.SOFTMAX)`).

Why tables keyed by the op class and the kind's enum, not by strings and `isinstance` chains: an
op or a kind then has exactly one place that says how it is simulated, a decorator beside its
code, and a reader (or a test) can list what is covered. A key registered twice is an error at
import, so a second implementation cannot silently shadow the first.

Why the lookups (`runner_of`, `map_function_of`, `row_kind_of`) refuse by name: a program that
uses an op or a kind the simulator does not execute must be `NotSimulated` with that name, never
a KeyError from deep inside a stage. What is refused on purpose is listed, with the reason, in
the `REFUSED_*` dicts below: the one explicit place for it. test/simulator/test_simulator_coverage.py
checks that the tables and the refused dicts together cover every stage op the sp dialect
defines, every `MapKindName` and every `RowKindName` x `RowForm`.

The runner modules (movement, matmul, maps, rows, stages) fill the tables when imported; the
package (tools/simulator/__init__.py) imports them all, so importing any simulator module fills
every table.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

import numpy as np

from spatial_dialect import sp
from spatial_dialect.sp.kinds import MapKindName, RowForm, RowKindName
from spatial_dialect.tools.simulator.machine import NotSimulated, Process, SiteRun

if TYPE_CHECKING:
    # A runner gets the section it runs in (program.py imports the runners, not the reverse).
    from spatial_dialect.tools.simulator.program import ProgramRun

StageRunner = Callable[["ProgramRun", Any, SiteRun, int, "int | None"], Process]
"""Runs one work item of one stage instance: (section, op, site, item, k0). `k0` is the first K
tile of the K block a K-looped movement stage streams (ProgramRun's kernel order); None for a
stage that runs its whole item at once."""

MapFunction = Callable[..., np.ndarray]
"""(op, *operand blocks) -> the unrounded f32 (or exact integer) result block of an sp.map."""

STAGE_RUNNERS: dict[type[sp.StageOp], StageRunner] = {}
"""Each sp stage op class the simulator executes and how one item of it runs."""

MAP_KINDS: dict[MapKindName, MapFunction] = {}
"""Each map kind the simulator computes and its math on the item's operand blocks."""

ROW_KINDS: dict[RowKindName, RowKind] = {}
"""Each row-reduction kind the simulator computes and its math, by form."""

REFUSED_STAGES: dict[type[sp.StageOp], str] = {}
"""Stage op classes the simulator does not execute, each with the reason (none today)."""

REFUSED_MAP_KINDS: dict[MapKindName, str] = {}
"""Map kinds the simulator does not compute, each with the reason (none today)."""

REFUSED_ROW_FORMS: dict[tuple[RowKindName, RowForm], str] = {
    (RowKindName.SUM_SQUARES, RowForm.WHOLE): (
        "the dialect has none (sp.RowReduceOp: a sum of squares is a statistic, not a row)"
    ),
}
"""(row kind, form) pairs the simulator does not compute, each with the reason."""


# ── Row reductions ────────────────────────────────────────────────────────────────────────────


class RowKind:
    """The math of one row-reduction kind (sp.row_reduce), one method per step of its forms:

    whole    `whole(x, rows, eps)`: each row of x (its real columns) normalized, given the
             [1, cols] row operands (weight, bias) the kind reads
    partial  `partial(x)`: the two per-row statistics of a block of real columns
    combine  `merge(first, second, a, s, n, count)`: the running statistics (first, second)
             over `n` columns merged with a block's partials (a, s) over `count` columns;
             `finish(first, second, n, eps, stats)`: the statistics the apply map reads, written
             into the columns of `stats`

    A kind that lacks a form's methods does not compute that form (`computes`). Every method
    is f32 numpy on whole blocks and keeps the order of operations the reference uses, so the
    simulator's numbers are the reference's bit for bit where the reference does the same.
    """

    row_operands: ClassVar[int] = 0
    """The [1, w] row pages the whole form pops after the streamed blocks (weight, bias); the
    inputs before them are streamed and summed (an rms_norm's x and residual)."""
    first_start: ClassVar[float] = 0.0
    """The combine form's starting value of the first statistic."""

    def whole(self, x: np.ndarray, rows: list[np.ndarray], eps: np.float32) -> np.ndarray:
        raise NotImplementedError

    def partial(self, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def merge(
        self,
        first: np.ndarray,
        second: np.ndarray,
        a: np.ndarray,
        s: np.ndarray,
        n: np.ndarray,
        count: np.float32,
    ) -> tuple[np.ndarray, np.ndarray]:
        raise NotImplementedError

    def finish(
        self,
        first: np.ndarray,
        second: np.ndarray,
        n: np.ndarray,
        eps: np.float32,
        stats: np.ndarray,
    ) -> None:
        raise NotImplementedError

    def computes(self, form: RowForm) -> bool:
        """Whether this kind defines every method `form` needs (FORM_STEPS)."""
        return all(
            getattr(type(self), step) is not getattr(RowKind, step) for step in FORM_STEPS[form]
        )


FORM_STEPS: dict[RowForm, tuple[str, ...]] = {
    RowForm.WHOLE: ("whole",),
    RowForm.PARTIAL: ("partial",),
    RowForm.COMBINE: ("merge", "finish"),
}
"""The RowKind methods each form of sp.row_reduce runs."""


# ── Registration ──────────────────────────────────────────────────────────────────────────────

Runner = TypeVar("Runner", bound=StageRunner)
Function = TypeVar("Function", bound=MapFunction)
Kind = TypeVar("Kind", bound=type[RowKind])


def _register(table: dict, key: object, value: object) -> None:
    if key in table:
        raise ValueError(f"simulator: {key} is registered twice ({table[key]} and {value})")
    table[key] = value


def runs(*ops: type[sp.StageOp]) -> Callable[[Runner], Runner]:
    """Registers the decorated function as the runner of the stage op classes `ops`."""

    def register(runner: Runner) -> Runner:
        for op in ops:
            _register(STAGE_RUNNERS, op, runner)
        return runner

    return register


def map_kind(*kinds: MapKindName) -> Callable[[Function], Function]:
    """Registers the decorated function as the math of the map kinds `kinds`."""

    def register(function: Function) -> Function:
        for kind in kinds:
            _register(MAP_KINDS, MapKindName(kind), function)
        return function

    return register


def row_kind(kind: RowKindName) -> Callable[[Kind], Kind]:
    """Registers (an instance of) the decorated RowKind class as the math of `kind`."""

    def register(cls: Kind) -> Kind:
        _register(ROW_KINDS, RowKindName(kind), cls())
        return cls

    return register


# ── Lookups ───────────────────────────────────────────────────────────────────────────────────


def runner_of(stage: sp.StageOp, where: str) -> StageRunner:
    """The runner of `stage`'s class; NotSimulated naming the op when it has none."""
    runner = STAGE_RUNNERS.get(type(stage))
    if runner is None:
        reason = REFUSED_STAGES.get(type(stage), "no simulator runner is registered for it")
        raise NotSimulated(f"{where}: stage {stage.name} is not simulated: {reason}")
    return runner


def map_function_of(kind: MapKindName, where: str) -> MapFunction:
    """The math of map kind `kind`; NotSimulated naming the kind when it has none."""
    function = MAP_KINDS.get(kind)
    if function is None:
        reason = REFUSED_MAP_KINDS.get(kind, "no simulator function is registered for it")
        raise NotSimulated(f'{where}: map kind "{kind}" is not simulated: {reason}')
    return function


def row_kind_of(kind: RowKindName, form: RowForm, where: str) -> RowKind:
    """The math of row kind `kind`, which must compute `form`; NotSimulated naming both when it
    does not."""
    math = ROW_KINDS.get(kind)
    if math is None or not math.computes(form):
        reason = REFUSED_ROW_FORMS.get(
            (kind, form), "no simulator implementation is registered for it"
        )
        raise NotSimulated(f'{where}: row reduction {form} "{kind}" is not simulated: {reason}')
    return math
