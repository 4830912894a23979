"""Reference semantics of tg: an evaluator of a `func.func` of tg ops, the meaning the compiler
must preserve (spatial-run compares what the simulator computes from a compiled program against
it).

The function runs on xDSL's interpreter (`xdsl.interpreter.Interpreter`) with xDSL's func
implementations and ours of every tg op (`TgFunctions`, tg_functions.py), so the evaluator adds
nothing of its own but the checks a run needs in words: inputs of the declared shape and
element type, and an op without semantics named before anything runs. The precision rules and
the per-op math are numerics.py's, and the simulator computes with them from there: one
definition of each op's arithmetic.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, PythonValues
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation, SSAValue

from spatial_dialect.tools.interpreters.numerics import EvaluationError, value_type
from spatial_dialect.tools.interpreters.tg_functions import (
    REFUSED_OPS,
    TgFunctions,
    implemented_ops,
)

EVALUATED_OPS = implemented_ops(TgFunctions) | implemented_ops(FuncFunctions)
"""The ops a function may hold: tg's and func's (func.return, func.call)."""


def input_names(fn: func.FuncOp) -> list[str]:
    """Argument names as written (%ids -> "ids"); `arg<i>` for an unnamed one."""
    return [a.name_hint or f"arg{i}" for i, a in enumerate(fn.body.block.args)]


def returned_values(fn: func.FuncOp) -> list[SSAValue]:
    ret = fn.body.block.last_op
    if not isinstance(ret, func.ReturnOp):
        raise EvaluationError(f"@{fn.sym_name.data} does not end in func.return")
    return list(ret.arguments)


def output_names(fn: func.FuncOp) -> list[str]:
    """The names of the returned values (func.return %token -> "token"), made unique by
    position; `result<i>` for an unnamed one."""
    names: list[str] = []
    for i, v in enumerate(returned_values(fn)):
        name = v.name_hint or f"result{i}"
        names.append(name if name not in names else f"{name}#{i}")
    return names


def check_inputs(fn: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The arguments in order, each checked against its declared shape and element type."""
    args = []
    for name, arg in zip(input_names(fn), fn.body.block.args, strict=True):
        if name not in inputs:
            raise EvaluationError(f"no value for input %{name}")
        shape, dtype = value_type(arg)
        array = np.asarray(inputs[name])
        if array.shape != shape or array.dtype != dtype:
            raise EvaluationError(
                f"input %{name} must be {shape} {dtype}, got {array.shape} {array.dtype}"
            )
        args.append(array)
    return args


def check_ops(fn: func.FuncOp) -> None:
    """Every op of `fn` has semantics: checked before the run, so that a function holding, say,
    an sp op fails in words rather than as the interpreter's missing implementation halfway."""
    returned_values(fn)
    for op in fn.body.block.ops:
        if type(op) in REFUSED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics: {REFUSED_OPS[type(op)]}")
        if type(op) not in EVALUATED_OPS:
            raise EvaluationError(f"{op.name} has no reference semantics (only tg ops do)")


@dataclass
class ValueRecorder(Interpreter.Listener):
    """Keeps the value of every op result the interpreter computes (the interpreter drops a
    function's scope when it returns)."""

    values: dict[SSAValue, Any] = field(default_factory=dict)

    def did_interpret_op(self, op: Operation, results: PythonValues) -> None:
        self.values.update(zip(op.results, results, strict=True))


def interpret(
    fn: func.FuncOp, args: list[np.ndarray], listeners: tuple[Interpreter.Listener, ...] = ()
) -> PythonValues:
    """The results of calling `fn` on checked arguments, on xDSL's interpreter."""
    module = fn.parent_op()
    interpreter = Interpreter(
        module if isinstance(module, ModuleOp) else ModuleOp([]), listeners=listeners
    )
    interpreter.register_implementations(FuncFunctions())
    interpreter.register_implementations(TgFunctions())
    with np.errstate(over="ignore", under="ignore"):  # inf is a float result like any other
        return interpreter.call_op(fn, tuple(args))


def evaluate_values(
    fn: func.FuncOp, inputs: Mapping[str, np.ndarray]
) -> dict[SSAValue, np.ndarray]:
    """Every value of the function (arguments and op results) under the reference semantics."""
    args = check_inputs(fn, inputs)
    check_ops(fn)
    recorder = ValueRecorder(dict(zip(fn.body.block.args, args, strict=True)))
    interpret(fn, args, (recorder,))
    return recorder.values


def evaluate(fn: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> list[np.ndarray]:
    """The function's results under the reference semantics, in return order."""
    args = check_inputs(fn, inputs)
    check_ops(fn)
    return list(interpret(fn, args))
