"""The reference covers tg: every op of the tg dialect has an `@impl` on `TgFunctions` or is
refused by name, with a reason, in `REFUSED_OPS`; and a refused or foreign op stops an evaluation
in words before anything runs."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import Builtin
from xdsl.dialects.func import Func
from xdsl.dialects.test import Test
from xdsl.ir import Operation
from xdsl.parser import Parser

from spatial_dialect import tg
from spatial_dialect.tg import TG
from spatial_dialect.tools.interpreters import REFUSED_OPS, TgFunctions
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.interpreters.tg_functions import implemented_ops
from spatial_dialect.tools.spatial_run import entry_function, parse_module


def coverage_gaps(
    ops: list[type[Operation]],
    implemented: frozenset[type[Operation]],
    refused: dict[type[Operation], str],
) -> list[str]:
    """One line per op that is neither implemented nor refused with a reason, or is both."""
    gaps = []
    for op in ops:
        if op not in implemented and not refused.get(op):
            gaps.append(f"{op.name}: no @impl on TgFunctions and no reason in REFUSED_OPS")
        if op in implemented and op in refused:
            gaps.append(f"{op.name}: both implemented and refused")
    return gaps


def test_every_tg_op_is_implemented_or_refused_by_name():
    assert coverage_gaps(list(TG.operations), implemented_ops(TgFunctions), REFUSED_OPS) == []


def test_the_reference_implements_only_tg_ops():
    assert implemented_ops(TgFunctions) <= set(TG.operations)


def test_the_coverage_check_names_a_missing_or_doubled_op():
    implemented = implemented_ops(TgFunctions) - {tg.SoftmaxOp}
    gaps = coverage_gaps(list(TG.operations), implemented, {})
    assert gaps == ["tg.softmax: no @impl on TgFunctions and no reason in REFUSED_OPS"]
    assert coverage_gaps([tg.SoftmaxOp], implemented, {tg.SoftmaxOp: ""}) == gaps
    doubled = coverage_gaps([tg.AddOp], implemented, {tg.AddOp: "why"})
    assert doubled == ["tg.add: both implemented and refused"]


SOFTMAX = """func.func @f(%x: tensor<1x2xf32>) -> tensor<1x2xf32> {
  %y = tg.softmax %x : (tensor<1x2xf32>) -> tensor<1x2xf32>
  func.return %y : tensor<1x2xf32>
}"""


def test_a_refused_op_stops_the_evaluation_with_its_reason(monkeypatch):
    fn = entry_function(parse_module(SOFTMAX))
    x = {"x": np.zeros((1, 2), np.float32)}
    np.testing.assert_array_equal(evaluate(fn, x)[0], [[0.5, 0.5]])
    monkeypatch.setitem(REFUSED_OPS, tg.SoftmaxOp, "a test refuses it")
    with pytest.raises(EvaluationError, match="tg.softmax has no reference semantics: a test"):
        evaluate(fn, x)


def test_an_op_of_another_dialect_is_refused_by_name():
    src = """func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %y = "test.op"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  func.return %y : tensor<4xf32>
}"""
    ctx = Context()
    for dialect in (Builtin, Func, Test, TG):
        ctx.load_dialect(dialect)
    fn = entry_function(Parser(ctx, src).parse_module())
    with pytest.raises(EvaluationError, match=r"test.op has no reference semantics \(only tg"):
        evaluate(fn, {"x": np.zeros(4, np.float32)})
