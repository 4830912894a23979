"""`spatial-run --weights CHECKPOINT`: a checkpoint's tensors as the inputs of a program that
spatial-import wrote: a GGUF file here, a Hugging Face directory in hf_weights.py; both fill
arguments by arguments.py (the layouts, `arrange`; the rope tables, `rope_table`).

Each argument with a `gguf.tensor` attribute gets that tensor, laid out by `gguf.layout`
(`arrange`: "kn" transposed from ggml's out x in; "experts" an E x out x in stack of experts, each
transposed, stacked along K; a 1-D tensor becomes 1 x N), rounded to the argument's element type
(Q8_0 dequantized exactly first), or, for an argument with `gguf.q8_0` ("values" / "scales"), that
part of a Q8_0 tensor as stored (i8 values, f16 scales). The rope tables (`gguf.rope` = "cos" /
"sin") are filled from the run's position, the argument the step's rows are written at
(`tg.set_rows`'s pos: `%pos`, or a deployment's `%decode.pos`): row i, column j holds cos / sin of
(pos + i) * base^(-2j/D) (divided by rope_freqs[j] when `gguf.rope_freqs` names that tensor; with
`gguf.rope_dims` = r, a partial rope, base^(-2j/r) for j < r/2 and angle 0 beyond). Other
arguments (ids, pos, the caches) stay as drawn. A qwen3next argument may hold part of its tensor,
permuted or transformed (`gguf.slice`, `gguf.partial_rope`, `gguf.value`: arguments.py's
`selected_rows`, which a Hugging Face step's `hf.` attributes share).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Mapping
from pathlib import Path

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, StringAttr

from spatial_dialect.tools.frontend.arguments import (
    WeightsError,
    argument_attributes,
    arrange,
    attribute_text,
    fitted,
    rope_table,
    run_position,
    selected_rows,
)
from spatial_dialect.tools.frontend.gguf_model import GGUFError, q8_0_parts, tensor_array
from spatial_dialect.tools.frontend.hf_weights import hf_inputs
from spatial_dialect.tools.frontend.next_model import read_checkpoint
from spatial_dialect.tools.interpreters.numerics import value_type
from spatial_dialect.tools.interpreters.reference import input_names

CHECKPOINT_ATTRIBUTES = frozenset({"gguf.tensor", "gguf.rope"})
"""The argument attributes that say which checkpoint tensor (or rope table) fills an argument."""


def _stamp(path: str) -> tuple[int, int]:
    """What tells one version of a file from another: its size and modification time (none for
    a path that cannot be read: read_checkpoint then says why)."""
    try:
        st = Path(path).stat()
    except OSError:
        return -1, -1
    return st.st_size, st.st_mtime_ns


@functools.lru_cache(maxsize=2)
def _opened(path: str, size: int, mtime_ns: int) -> tuple[object, object]:
    """The checkpoint's reader and header, read once per version of the file: spatial-generate
    refills a step's rope tables at every position, and gguf's reader alone spends seconds on a
    real tokenizer's header (about 9.5 s for 150k tokens)."""
    return read_checkpoint(path)


def checkpoint_inputs(
    path: str,
    fn: func.FuncOp,
    inputs: Mapping[str, np.ndarray],
    only: Collection[str] | None = None,
) -> dict[str, np.ndarray]:
    """The inputs of `fn` that the checkpoint at `path` provides, by argument name: a GGUF
    file, or a Hugging Face directory (tools/frontend/hf_weights.py); `only`: of these inputs
    alone (spatial-generate refills a step's rope tables at each position, not its weights). A
    program none of whose arguments names a checkpoint tensor or a rope table (one
    spatial-import did not write) takes nothing from it: that is an error, not a run of drawn
    weights called a check."""
    if Path(path).is_dir():
        return hf_inputs(path, fn, inputs, only)
    fed = [
        i
        for i in range(len(fn.body.block.args))
        if argument_attributes(fn, i).keys() & CHECKPOINT_ATTRIBUTES
    ]
    if not fed:
        raise WeightsError(
            f"--weights: no argument of @{fn.sym_name.data} has a {' or '.join(sorted(CHECKPOINT_ATTRIBUTES))} "
            f"attribute (spatial-import writes them), so {path} would supply nothing"
        )
    try:
        reader, header = _opened(str(Path(path).resolve()), *_stamp(path))
    except GGUFError as e:
        raise WeightsError(f"--weights: {e}") from None
    out: dict[str, np.ndarray] = {}
    cache: dict[str, np.ndarray] = {}
    for i, (name, arg) in enumerate(zip(input_names(fn), fn.body.block.args, strict=True)):
        if only is not None and name not in only:
            continue
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
            array = selected_rows(tname, array, attrs)
            array = arrange(array, attribute_text(attrs.get("gguf.layout", StringAttr("rows"))))
            out[name] = fitted(tname, name, array, shape, dtype, raw=part is not None)
        elif "gguf.rope" in attrs:
            base = attrs.get("gguf.rope_freq_base")
            base_v = float(base.value.data) if isinstance(base, FloatAttr) else header.rope_base
            freqs = None
            if "gguf.rope_freqs" in attrs:
                fname = attribute_text(attrs["gguf.rope_freqs"])
                if fname not in header.tensors:
                    raise WeightsError(f"--weights: {path} has no tensor '{fname}' (for %{name})")
                freqs = tensor_array(reader, header.tensors[fname])
                if freqs.shape != (shape[1],):
                    raise WeightsError(
                        f"--weights: tensor '{fname}' holds {freqs.size} rope factor(s); "
                        f"%{name} has {shape[1]} columns"
                    )
            dims = attrs.get("gguf.rope_dims")
            rotated = dims.value.data if isinstance(dims, IntegerAttr) else None
            table = rope_table(
                attribute_text(attrs["gguf.rope"]),
                shape,
                base_v,
                run_position(fn, inputs),
                freqs,
                rotated,
            )
            out[name] = table.astype(dtype)
    return out
