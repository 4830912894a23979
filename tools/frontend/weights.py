"""`spatial-run --weights MODEL.gguf`: a checkpoint's tensors as the inputs of a program that
spatial-import wrote.

Each argument with a `gguf.tensor` attribute gets that tensor ("kn" layout: transposed from
ggml's out x in; "experts": an E x out x in stack of experts, each transposed, stacked along
K; a 1-D tensor becomes 1 x N), rounded to the argument's element type (Q8_0
dequantized exactly first), or, for an argument with `gguf.q8_0` ("values" / "scales"), that
part of a Q8_0 tensor as stored (i8 values, f16 scales). The rope tables (`gguf.rope` = "cos" / "sin") are filled from the
run's position, the argument the step's rows are written at (`tg.set_rows`'s pos: `%pos`, or a
deployment's `%decode.pos`): row i, column j holds cos / sin of (pos + i) * base^(-2j/D)
(divided by rope_freqs[j] when `gguf.rope_freqs` names that tensor). Other arguments (ids, pos,
the caches) stay as drawn.
"""

from __future__ import annotations

from collections.abc import Mapping

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

FED_BY = frozenset({"gguf.tensor", "gguf.rope"})
"""The argument attributes that say which checkpoint tensor (or rope table) fills an argument."""


class WeightsError(EvaluationError):
    """The checkpoint does not fit the program (spatial-run reports it as one error line)."""


def _attrs(fn: func.FuncOp, i: int) -> dict[str, object]:
    if fn.arg_attrs is None:
        return {}
    d = fn.arg_attrs.data[i]
    return dict(d.data) if isinstance(d, DictionaryAttr) else {}


def _str(v: object) -> str:
    return v.data if isinstance(v, StringAttr) else str(v)


def position(fn: func.FuncOp) -> str | None:
    """The argument the step's rows sit at: the position its caches are written at."""
    names = dict(zip(fn.body.block.args, input_names(fn), strict=True))
    writes = (op.pos for op in fn.body.walk() if isinstance(op, tg.SetRowsOp))
    return next((names[p] for p in writes if p in names), None)


def checkpoint_inputs(
    path: str, fn: func.FuncOp, inputs: Mapping[str, np.ndarray]
) -> dict[str, np.ndarray]:
    """The inputs of `fn` that the checkpoint at `path` provides, by argument name. A program
    none of whose arguments names a checkpoint tensor or a rope table (one spatial-import did not
    write) takes nothing from it: that is an error, not a run of drawn weights called a check."""
    fed = [i for i in range(len(fn.body.block.args)) if _attrs(fn, i).keys() & FED_BY]
    if not fed:
        raise WeightsError(
            f"--weights: no argument of @{fn.sym_name.data} has a {' or '.join(sorted(FED_BY))} "
            f"attribute (spatial-import writes them), so {path} would supply nothing"
        )
    try:
        reader, header = read_header(path)
    except GGUFError as e:
        raise WeightsError(f"--weights: {e}") from None
    out: dict[str, np.ndarray] = {}
    cache: dict[str, np.ndarray] = {}
    for i, (name, arg) in enumerate(zip(input_names(fn), fn.body.block.args, strict=True)):
        attrs = _attrs(fn, i)
        shape, dtype = value_type(arg)
        if "gguf.tensor" in attrs:
            tname = _str(attrs["gguf.tensor"])
            info = header.tensors.get(tname)
            if info is None:
                raise WeightsError(f"--weights: {path} has no tensor '{tname}' (for %{name})")
            try:
                if tname not in cache:
                    cache[tname] = tensor_array(reader, info)
            except GGUFError as e:
                raise WeightsError(f"--weights: {e}") from None
            array = cache[tname]
            part = _str(attrs["gguf.q8_0"]) if "gguf.q8_0" in attrs else None
            if part is not None:  # a Q8_0 weight kept Q8_0: its values or its scales, raw
                if info.type != "Q8_0":
                    raise WeightsError(
                        f"--weights: %{name} holds the Q8_0 {part} of '{tname}', which is "
                        f"{info.type}"
                    )
                array = q8_0_parts(np.asarray(reader.tensors[info.index].data), info.shape)[
                    part == "scales"
                ]
            layout = _str(attrs.get("gguf.layout", StringAttr("rows")))
            if layout == "kn":
                array = array.T
            elif layout == "experts":  # E x out x in -> each expert's in x out, stacked
                array = array.transpose(0, 2, 1).reshape(-1, array.shape[1])
            if array.ndim == 1:
                array = array.reshape(1, -1)
            if array.shape != shape:
                raise WeightsError(
                    f"--weights: tensor '{tname}' gives %{name} the shape {array.shape}; "
                    f"the function declares {shape}"
                )
            if part is None:
                array = array.astype(np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                cast = np.ascontiguousarray(array.astype(dtype))
            if part is None and not np.isfinite(cast.astype(np.float32)).all():
                big = float(np.abs(array).max())
                raise WeightsError(
                    f"--weights: tensor '{tname}' holds {big:g}, past the range of %{name}'s "
                    f"element type {np.dtype(dtype).name}"
                )
            out[name] = cast
        elif "gguf.rope" in attrs:
            base = attrs.get("gguf.rope_freq_base")
            base_v = float(base.value.data) if isinstance(base, FloatAttr) else header.rope_base
            rows, half = shape
            theta = base_v ** (-2.0 * np.arange(half, dtype=np.float64) / (2 * half))
            if "gguf.rope_freqs" in attrs:
                fname = _str(attrs["gguf.rope_freqs"])
                if fname not in header.tensors:
                    raise WeightsError(f"--weights: {path} has no tensor '{fname}' (for %{name})")
                factors = tensor_array(reader, header.tensors[fname]).astype(np.float64)
                if factors.shape != theta.shape:
                    raise WeightsError(
                        f"--weights: tensor '{fname}' holds {factors.size} rope factor(s); "
                        f"%{name} has {half} columns"
                    )
                theta = theta / factors
            at = position(fn)
            pos = int(np.asarray(inputs[at])[0]) if at in inputs else 0
            angles = (pos + np.arange(rows, dtype=np.float64))[:, None] * theta[None, :]
            values = np.cos(angles) if _str(attrs["gguf.rope"]) == "cos" else np.sin(angles)
            out[name] = values.astype(np.float32).astype(dtype)
    return out
