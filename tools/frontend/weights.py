"""`spatial-run --weights CHECKPOINT`: a checkpoint's tensors as the inputs of a program that
spatial-import wrote: a GGUF file here, a Hugging Face directory in hf_weights.py, which shares
this module's layouts (`arrange`) and rope tables (`rope_table`).

Each argument with a `gguf.tensor` attribute gets that tensor, laid out by `gguf.layout`
(`arrange`: "kn" transposed from ggml's out x in; "experts" an E x out x in stack of experts, each
transposed, stacked along K; a 1-D tensor becomes 1 x N), rounded to the argument's element type
(Q8_0 dequantized exactly first), or, for an argument with `gguf.q8_0` ("values" / "scales"), that
part of a Q8_0 tensor as stored (i8 values, f16 scales). The rope tables (`gguf.rope` = "cos" /
"sin") are filled from the run's position, the argument the step's rows are written at
(`tg.set_rows`'s pos: `%pos`, or a deployment's `%decode.pos`): row i, column j holds cos / sin of
(pos + i) * base^(-2j/D) (divided by rope_freqs[j] when `gguf.rope_freqs` names that tensor).
Other arguments (ids, pos, the caches) stay as drawn.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, FloatAttr, StringAttr

from spatial_dialect import tg
from spatial_dialect.tools.frontend.gguf_model import (
    GGUFError,
    q8_0_parts,
    read_header,
    tensor_array,
)
from spatial_dialect.tools.interpreters.numerics import EvaluationError, value_type
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
) -> np.ndarray:
    """f32 cos or sin (`part`) of (pos + i) * base^(-2j/D) (/ freqs[j]), rows x D/2 = `shape`."""
    rows, half = shape
    theta = base ** (-2.0 * np.arange(half, dtype=np.float64) / (2 * half))
    if freqs is not None:
        theta = theta / freqs.astype(np.float64)
    angles = (pos + np.arange(rows, dtype=np.float64))[:, None] * theta[None, :]
    return (np.cos(angles) if part == "cos" else np.sin(angles)).astype(np.float32)


def checkpoint_inputs(
    path: str, fn: func.FuncOp, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The inputs of `fn` that the checkpoint at `path` provides, by argument name: a GGUF
    file, or a Hugging Face directory (tools/frontend/hf_weights.py)."""
    if Path(path).is_dir():
        from spatial_dialect.tools.frontend.hf_weights import hf_inputs

        return hf_inputs(path, fn, inputs)
    try:
        reader, header = read_header(path)
    except GGUFError as e:
        raise WeightsError(f"--weights: {e}") from None
    out: dict[str, np.ndarray] = {}
    cache: dict[str, np.ndarray] = {}
    for i, (name, arg) in enumerate(zip(input_names(fn), fn.body.block.args, strict=True)):
        attrs = argument_attributes(fn, i)
        shape, dtype = value_type(arg)
        if "gguf.tensor" in attrs:
            tname = attribute_text(attrs["gguf.tensor"])
            info = header.tensors.get(tname)
            if info is None:
                raise WeightsError(f"--weights: {path} has no tensor '{tname}' (for %{name})")
            try:
                if tname not in cache:
                    cache[tname] = tensor_array(reader, info)
            except GGUFError as e:
                raise WeightsError(f"--weights: {e}") from None
            array = cache[tname]
            part = attribute_text(attrs["gguf.q8_0"]) if "gguf.q8_0" in attrs else None
            if part is not None:  # a Q8_0 weight kept Q8_0: its values or its scales, raw
                if info.type != "Q8_0":
                    raise WeightsError(
                        f"--weights: %{name} holds the Q8_0 {part} of '{tname}', which is "
                        f"{info.type}"
                    )
                array = q8_0_parts(np.asarray(reader.tensors[info.index].data), info.shape)[
                    part == "scales"
                ]
            array = arrange(array, attribute_text(attrs.get("gguf.layout", StringAttr("rows"))))
            if array.shape != shape:
                raise WeightsError(
                    f"--weights: tensor '{tname}' gives %{name} the shape {array.shape}; "
                    f"the function declares {shape}"
                )
            if part is None:
                array = array.astype(np.float32)
            out[name] = np.ascontiguousarray(array.astype(dtype))
        elif "gguf.rope" in attrs:
            base = attrs.get("gguf.rope_freq_base")
            base_v = float(base.value.data) if isinstance(base, FloatAttr) else header.rope_base
            freqs = None
            if "gguf.rope_freqs" in attrs:
                fname = attribute_text(attrs["gguf.rope_freqs"])
                freqs = tensor_array(reader, header.tensors[fname])
            table = rope_table(
                attribute_text(attrs["gguf.rope"]), shape, base_v, run_position(fn, inputs), freqs
            )
            out[name] = table.astype(dtype)
    return out
