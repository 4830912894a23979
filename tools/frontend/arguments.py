"""What both kinds of checkpoint share when `spatial-run --weights` fills a program's arguments
(weights.py: GGUF; hf_weights.py: Hugging Face): the arguments' attributes, the run's position,
what a layout means (`arrange`), the rope tables (`rope_table`) and the load-time transforms of a
Qwen3-Next argument (`selected_rows`: a part of a fused tensor, the partial-rope permutation, a
value map), each defined once. The transforms' attributes are the same in both formats but for
their namespace (`gguf.slice` / `hf.slice`, ...), which says which file the numbers refer to.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseArrayBase, DictionaryAttr, StringAttr

from spatial_dialect import tg
from spatial_dialect.tools.frontend.next_model import rope_permutation
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
    """The argument the step's rows sit at: the position its caches are written at (a batched
    step's: one entry per user)."""
    names = dict(zip(fn.body.block.args, input_names(fn), strict=True))
    writes = (op.pos for op in fn.body.walk() if isinstance(op, tg.SetRowsOp | tg.BatchSetRowsOp))
    return next((names[p] for p in writes if p in names), None)


def run_position(fn: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> int | np.ndarray:
    """The position this run's rows sit at (0 when the step writes no cache); for a batched
    step (tg.batch_set_rows), each user's: its T rows sit from there."""
    names = dict(zip(fn.body.block.args, input_names(fn), strict=True))
    batched = (op.pos for op in fn.body.walk() if isinstance(op, tg.BatchSetRowsOp))
    users = next((names[p] for p in batched if p in names), None)
    if users in inputs:
        return np.asarray(inputs[users]).astype(np.int64)
    at = position(fn)
    return int(np.asarray(inputs[at])[0]) if at in inputs else 0


def arrange(array: np.ndarray, layout: str) -> np.ndarray:
    """A checkpoint tensor (numpy order: a weight out x in) as the argument of `layout` holds it:
    "kn" transposed (the right operand of tg.matmul); "experts" an E x out x in stack as each
    expert's in x out stacked along K (tg.moe's); "conv" a depthwise Conv1d's channels x 1 x taps
    kernel (torch's) as taps x channels (tg.causal_conv's); "rows" as stored; a 1-D tensor as
    1 x N."""
    if layout == "kn":
        array = array.T
    elif layout == "conv":
        if array.ndim != 3 or array.shape[1] != 1:
            raise WeightsError(f'a "conv" kernel is channels x 1 x taps, got {list(array.shape)}')
        array = array[:, 0, :].T
    elif layout == "experts":
        array = array.transpose(0, 2, 1).reshape(-1, array.shape[1])
    return array.reshape(1, -1) if array.ndim == 1 else array


def rope_table(
    part: str,
    shape: tuple[int, ...],
    base: float,
    pos: int | np.ndarray,
    freqs: np.ndarray | None = None,
    rotated: int | None = None,
) -> np.ndarray:
    """f32 cos or sin (`part`) of (pos + i) * base^(-2j/D) (/ freqs[j]), rows x D/2 = `shape`
    (`pos` one per user of a batched step: user b's rows b*T + i at pos[b] + i);
    a partial rope of `rotated` columns (r < D) takes base^(-2j/r) for j < r/2 and angle 0 (cos 1,
    sin 0) in the unrotated columns beyond."""
    rows, half = shape
    rotated = 2 * half if rotated is None else rotated
    theta = base ** (-2.0 * np.arange(half, dtype=np.float64) / rotated)
    theta[rotated // 2 :] = 0.0
    if freqs is not None:
        theta = theta / freqs.astype(np.float64)
    starts = np.maximum(np.atleast_1d(np.asarray(pos, np.float64)), 0)  # an idle user's -1: 0
    rows_of = np.arange(rows // starts.size, dtype=np.float64)  # each user's rows in order
    at = (starts[:, None] + rows_of[None, :]).reshape(-1)
    angles = at[:, None] * theta[None, :]
    return (np.cos(angles) if part == "cos" else np.sin(angles)).astype(np.float32)


VALUES = {
    "log(-x)": "A_log from GGUF's ssm_a = -exp(A_log)",
    "1+x": "the effective weight of a zero-centred rms norm (x * (1 + w)) stored as w",
}
"""The value maps a `*.value` attribute names (what each is for)."""


def selected_rows(
    name: str, array: np.ndarray, attrs: Mapping[str, object], fmt: str = "gguf"
) -> np.ndarray:
    """The tensor's rows (the out axis; a 1-D tensor's elements) the argument holds, by the
    attributes of namespace `fmt` ("gguf" or "hf"): `fmt.slice` = [G, start, n, ...] takes rows
    start .. start + n of each group of G (one half of Qwen3-Next's per-head [query | gate] or
    per key head [b | a]), and with several triples the concatenation of their selections (a
    fused projection's parts of every group, in order: HF's per key head [q | k | v | z] as
    [q of all heads | k | v]); `fmt.partial_rope` = [D, r] permutes each head of D rows by
    `rope_permutation` (transformers' partial rope pairs onto tg.rope's neox pairs);
    `fmt.value` one of VALUES. A bad attribute or a tensor that does not split so is a
    WeightsError naming the tensor."""
    rows = array.shape[0] if array.ndim else 0

    def groups_of(size: int, what: str) -> None:
        if size <= 0 or rows % size:
            raise WeightsError(f"--weights: '{name}' has {rows} rows, not whole {what} of {size}")

    cut = attrs.get(f"{fmt}.slice")
    if isinstance(cut, DenseArrayBase):
        values = [int(v) for v in cut.get_values()]
        if not values or len(values) % 3:
            raise WeightsError(
                f"--weights: {fmt}.slice of '{name}' is not (group, start, n) triples"
            )
        parts = []
        for group, start, n in zip(values[::3], values[1::3], values[2::3], strict=True):
            groups_of(group, "groups")
            if not (0 <= start and n > 0 and start + n <= group):
                raise WeightsError(
                    f"--weights: {fmt}.slice of '{name}' takes rows {start} .. {start + n} of "
                    f"groups of {group}"
                )
            grouped = array.reshape(rows // group, group, *array.shape[1:])
            parts.append(grouped[:, start : start + n].reshape(-1, *array.shape[1:]))
        array = np.concatenate(parts)
        rows = array.shape[0]
    rope = attrs.get(f"{fmt}.partial_rope")
    if isinstance(rope, DenseArrayBase):
        head, rotated = (int(v) for v in rope.get_values())
        groups_of(head, "heads")
        if not (0 < rotated <= head and rotated % 2 == 0 and head % 2 == 0):
            raise WeightsError(f"--weights: {fmt}.partial_rope of '{name}' is [{head}, {rotated}]")
        heads = array.reshape(rows // head, head, *array.shape[1:])
        array = heads[:, rope_permutation(head, rotated)].reshape(array.shape)
    value = attribute_text(attrs.get(f"{fmt}.value", ""))
    if value == "log(-x)":
        if not np.all(array < 0):
            raise WeightsError(f"--weights: '{name}' must be negative (-exp(A_log)) for log(-x)")
        array = np.log(-array.astype(np.float64))
    elif value == "1+x":
        array = 1.0 + array.astype(np.float64)
    elif value:
        raise WeightsError(
            f"--weights: {fmt}.value {value!r} of '{name}' is not one of {', '.join(VALUES)}"
        )
    return array


def fitted(
    tname: str, name: str, array: np.ndarray, shape: tuple[int, ...], dtype, raw: bool = False
) -> np.ndarray:
    """The checkpoint tensor `tname`, laid out, as argument %name of `shape` and element type
    `dtype` holds it: the shapes must agree, and a float weight (not `raw`, a Q8_0 part kept as
    stored) is widened to f32 and rounded once to `dtype`, which must hold every value (a weight
    past the type's range would run as inf and every output as NaN)."""
    if array.shape != shape:
        raise WeightsError(
            f"--weights: tensor '{tname}' gives %{name} the shape {array.shape}; "
            f"the function declares {shape}"
        )
    if not raw:
        array = array.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        cast = np.ascontiguousarray(array.astype(dtype))
    if not raw and not np.isfinite(cast.astype(np.float32)).all():
        big = float(np.abs(array).max())
        raise WeightsError(
            f"--weights: tensor '{tname}' holds {big:g}, past the range of %{name}'s "
            f"element type {np.dtype(dtype).name}"
        )
    return cast
