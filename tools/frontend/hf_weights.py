"""`spatial-run --weights DIR`: a Hugging Face checkpoint's tensors as the inputs of a program
that `spatial-import DIR` wrote.

Each argument with `hf.tensor` gets that tensor, mapped from its safetensors file (np.memmap:
only the tensors the program names are read), laid out by `hf.layout` exactly as a GGUF
step's argument by `gguf.layout` (weights.arrange), and rounded to the argument's element type;
an "experts" pattern (`...experts.{e}...`) stacks the experts' tensors first. `hf.rope` tables
are arguments.rope_table of `hf.rope_theta` at the run's position (of `hf.rope_dims` rotated
columns when the rope is partial). A Qwen3-Next argument may hold part of its tensor, permuted or
mapped (`hf.slice`, `hf.partial_rope`, `hf.value`: arguments.selected_rows, as from GGUF). The directory is read again and
checked (hf_model.read_header_dir), so a file changed since the import is refused, not misread;
a program with no `hf.` arguments (one imported from elsewhere) is refused, since filling
nothing from the checkpoint would run on drawn weights.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import FloatAttr, IntegerAttr

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
from spatial_dialect.tools.frontend.hf_model import HFError, HFHeader, read_header_dir
from spatial_dialect.tools.frontend.safetensors_header import SafetensorsError, tensor_data
from spatial_dialect.tools.interpreters.numerics import value_type
from spatial_dialect.tools.interpreters.reference import input_names


def _tensor(h: HFHeader, pattern: str, name: str) -> np.ndarray:
    """The tensor `pattern` names (an experts pattern: the E x out x in stack of them), f32."""
    names = [pattern.format(e=e) for e in range(h.experts)] if "{e}" in pattern else [pattern]
    parts = []
    for n in names:
        t = h.tensors.get(n)
        if t is None:
            raise WeightsError(f"--weights: {h.path} has no tensor '{n}' (for %{name})")
        try:
            parts.append(np.asarray(tensor_data(t), dtype=np.float32))
        except SafetensorsError as e:
            raise WeightsError(f"--weights: {e}") from None
    return np.stack(parts) if "{e}" in pattern else parts[0]


def hf_inputs(
    path: str,
    fn: func.FuncOp,
    inputs: Mapping[str, np.ndarray],
    only: Collection[str] | None = None,
) -> dict[str, np.ndarray]:
    """The inputs of `fn` that the Hugging Face checkpoint directory `path` provides (`only`: of
    these inputs alone, as weights.checkpoint_inputs)."""
    try:
        h = read_header_dir(path)
    except HFError as e:
        raise WeightsError(f"--weights: {e}") from None
    out: dict[str, np.ndarray] = {}
    for i, (name, arg) in enumerate(zip(input_names(fn), fn.body.block.args, strict=True)):
        if only is not None and name not in only:
            continue
        attrs = argument_attributes(fn, i)
        shape, dtype = value_type(arg)
        if "hf.tensor" in attrs:
            tname = attribute_text(attrs["hf.tensor"])
            array = selected_rows(tname, _tensor(h, tname, name), attrs, "hf")
            array = arrange(array, attribute_text(attrs.get("hf.layout", "rows")))
            out[name] = fitted(tname, name, array, shape, dtype)
        elif "hf.rope" in attrs:
            theta = attrs.get("hf.rope_theta")
            base = float(theta.value.data) if isinstance(theta, FloatAttr) else h.rope_theta
            part = attribute_text(attrs["hf.rope"])
            dims = attrs.get("hf.rope_dims")
            rotated = dims.value.data if isinstance(dims, IntegerAttr) else None
            table = rope_table(part, shape, base, run_position(fn, inputs), rotated=rotated)
            out[name] = table.astype(dtype)
    if not any("hf.tensor" in argument_attributes(fn, i) for i in range(len(fn.body.block.args))):
        raise WeightsError(
            f"--weights: @{fn.sym_name.data} has no argument with an hf.tensor attribute: it was "
            f"not imported from a Hugging Face checkpoint, and {path} would supply nothing"
        )
    return out
