"""What both kinds of checkpoint share when `spatial-run --weights` fills a program's arguments
(weights.py: GGUF; hf_weights.py: Hugging Face): the arguments' attributes, the run's position,
what a layout means (`arrange`) and the rope tables (`rope_table`), each defined once.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, StringAttr

from spatial_dialect import tg
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import input_names


class WeightsError(EvaluationError):
    """The checkpoint does not fit the program (spatial-run reports it as one error line)."""


def argument_attributes(fn: func.FuncOp, i: int) -> dict[str, object]:
    if fn.arg_attrs is None:
        return {}
    d = fn.arg_attrs.data[i]
    return dict(d.data) if isinstance(d, DictionaryAttr) else {}


def attribute_text(v: object) -> str:
    return v.data if isinstance(v, StringAttr) else str(v)


def position(fn: func.FuncOp) -> str | None:
    """The argument the step's rows sit at: the position its caches are written at."""
    names = dict(zip(fn.body.block.args, input_names(fn), strict=True))
    writes = (op.pos for op in fn.body.walk() if isinstance(op, tg.SetRowsOp))
    return next((names[p] for p in writes if p in names), None)


def run_position(fn: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> int:
    """The position this run's rows sit at (0 when the step writes no cache)."""
    at = position(fn)
    return int(np.asarray(inputs[at])[0]) if at in inputs else 0


def arrange(array: np.ndarray, layout: str) -> np.ndarray:
    """A checkpoint tensor (numpy order: a weight out x in) as the argument of `layout` holds it:
    "kn" transposed (the right operand of tg.matmul); "experts" an E x out x in stack as each
    expert's in x out stacked along K (tg.moe's); "rows" as stored; a 1-D tensor as 1 x N."""
    if layout == "kn":
        array = array.T
    elif layout == "experts":
        array = array.transpose(0, 2, 1).reshape(-1, array.shape[1])
    return array.reshape(1, -1) if array.ndim == 1 else array


def rope_table(
    part: str,
    shape: tuple[int, ...],
    base: float,
    pos: int,
    freqs: np.ndarray | None = None,
    rotated: int | None = None,
) -> np.ndarray:
    """f32 cos or sin (`part`) of (pos + i) * base^(-2j/D) (/ freqs[j]), rows x D/2 = `shape`;
    a partial rope of `rotated` columns (r < D) takes base^(-2j/r) for j < r/2 and angle 0 (cos 1,
    sin 0) in the unrotated columns beyond."""
    rows, half = shape
    rotated = 2 * half if rotated is None else rotated
    theta = base ** (-2.0 * np.arange(half, dtype=np.float64) / rotated)
    theta[rotated // 2 :] = 0.0
    if freqs is not None:
        theta = theta / freqs.astype(np.float64)
    angles = (pos + np.arange(rows, dtype=np.float64))[:, None] * theta[None, :]
    return (np.cos(angles) if part == "cos" else np.sin(angles)).astype(np.float32)
