"""The tensor-parallel pass on what spatial-import writes: tiny GGUF checkpoints (written here,
nothing downloaded; Q8_0 and F16 weights, tied and untied LM heads, one module of prefill and
decode) keep their meaning over n300 and t3k."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parents[1] / "frontend"))
from tiny_gguf import write_tiny  # noqa: E402

from spatial_dialect.passes.tensor_parallel import TensorParallelPass  # noqa: E402
from spatial_dialect.tools.interpreters.compare import compare, q8_0_downstream  # noqa: E402
from spatial_dialect.tools.interpreters.inputs import draw_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.mesh_reference import run_deployment  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate, returned_values  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import parse_module  # noqa: E402

MODELS = {"llama_q8_0": ("llama", "Q8_0", False), "qwen3_f16": ("qwen3", "F16", True)}


@pytest.mark.parametrize("prefer_sharded", [False, True], ids=["priced", "sharded"])
@pytest.mark.parametrize("mesh", ["n300", "t3k"])
@pytest.mark.parametrize("name", sorted(MODELS))
def test_imported_steps_keep_their_meaning(tmp_path, name, mesh, prefer_sharded):
    arch, wtype, tied = MODELS[name]
    model = write_tiny(tmp_path / f"{name}.gguf", arch, wtype, tied)
    out = tmp_path / "step.mlir"
    assert import_main([str(model), "--step", "both", "--hidden", "-o", str(out)]) == 0
    module = parse_module(out.read_text())
    wholes = [f for f in module.body.block.ops if isinstance(f, func.FuncOp)]
    assert len(wholes) == 2
    expected = []
    for fn in wholes:
        inputs = draw_inputs(fn, 0)
        quantized = q8_0_downstream(fn)
        flags = [v in quantized for v in returned_values(fn)]
        expected.append((inputs, evaluate(fn, inputs), flags))
    TensorParallelPass(mesh, prefer_sharded).apply(Context(), module)
    per_chip = [f for f in module.body.block.ops if isinstance(f, func.FuncOp)]
    for fn, (inputs, ref, flags) in zip(per_chip, expected, strict=True):
        got = run_deployment(fn, inputs)
        for i, (r, g, q) in enumerate(zip(ref, got, flags, strict=True)):
            if r.dtype.kind in "iu":
                assert np.array_equal(r, g), f"@{fn.sym_name.data} result {i}"
            else:
                c = compare(f"result{i}", r, g, quantized=q)
                assert c.ok, c.line()
