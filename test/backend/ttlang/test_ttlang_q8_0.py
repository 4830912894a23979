"""Q8_0 under `-t ttlang` (docs/backend-ttlang.md#q8_0-weights): a Q8_0 tensor is stored as
bfp8_b, the format Tensix has for it. What is checked:

- the tile bytes the cost model prices for a Q8_0 tile are bfp8_b's, one fact
  (Target.q8_0_storage), and equal to what the format holds by its own count (a byte a value, an
  exponent byte per 16) and to Q8_0's 34 bytes per 32 values;
- the host's conversion at load is ggml's dequantization rounded by our bfp8_b rounding;
- the printed program moves those bytes: the weight's DataflowBuffer holds 1088 bytes a tile
  (tt-lang-sim's own accounting of ttnn.bfloat8_b) and the tiles read from DRAM are the priced
  ones;
- tiny imported Q8_0 models (unseen by the printer's authors: drawn weights, GGUF layout) PASS
  under tt-lang-sim.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from spatial_dialect import sp
from spatial_dialect.sp.kinds import Q8_0_BLOCK
from spatial_dialect.targets import load_target
from spatial_dialect.targets.spec import q8_0_bytes
from spatial_dialect.tools.backend.ttlang.host import _q8_0_as_bfp8_b
from spatial_dialect.tools.interpreters.bfp8 import round_bfp8_b
from spatial_dialect.tools.interpreters.q8_0 import dequantize, quantize

sys.path.insert(0, str(Path(__file__).parent))
from test_ttlang_backend import needs_sim  # noqa: E402
from trace_counts import moved, priced  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
TENSIX = ["wormhole_n150", "blackhole_p150"]

PRODUCT = """
func.func @mm(%x: tensor<4x64xbf16>, %wv: tensor<64x96xi8>, %ws: tensor<2x96xf16>) -> tensor<4x96xbf16> {
  %z = tg.matmul_q8_0 %x, %wv, %ws activation "float" : (tensor<4x64xbf16>, tensor<64x96xi8>, tensor<2x96xf16>) -> tensor<4x96xbf16>
  func.return %z : tensor<4x96xbf16>
}
"""


@pytest.mark.parametrize("target", TENSIX)
def test_a_q8_0_tile_is_priced_as_the_bfp8_b_tile_it_is_stored_in(target):
    t = load_target(target)
    assert t.q8_0_storage == "bfp8_b"
    by_count = 32 * 32 + 32 * 32 // 16  # a sign-and-magnitude byte a value, an exponent per 16
    for fmt in ("q8_0", "q8_0_kn"):
        assert t.tile_bytes(fmt) == t.tile_bytes("bfp8_b") == by_count
    assert by_count == q8_0_bytes(32 * 32)  # the same bytes as ggml's blocks: 34 per 32


def test_a_chip_without_bfp8_b_stores_q8_0_as_ggml_does():
    t = load_target("h100")
    assert t.q8_0_storage == "q8_0"
    assert t.tile_bytes("q8_0") == 32 * 32 // Q8_0_BLOCK * 34


@pytest.mark.parametrize("axis", [0, 1])
def test_the_host_converts_ggml_values_then_rounds_to_bfp8_b(axis):
    rng = np.random.default_rng(axis)
    w = (rng.standard_t(3, (64, 96)) * 0.02).astype(np.float32)
    values, scales = quantize(w, axis)
    got = _q8_0_as_bfp8_b(values, scales, axis)
    np.testing.assert_array_equal(got, round_bfp8_b(dequantize(values, scales, axis)))
    assert not np.array_equal(got, dequantize(values, scales, axis))  # the rounding is not void


@needs_sim
def test_the_program_moves_the_bytes_priced_for_a_q8_0_weight():
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.backend.ttlang.runner import run_traced
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(PRODUCT))
    module = compile_module(fn, "wormhole_n150", split_k=1)
    sec = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    inputs = draw_inputs(fn, 0)
    traced = run_traced(module, [inputs[x] for x in input_names(fn)])
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    assert compare("z", ref, traced.outputs[0], bfp8_b=True).ok

    fifo = next(b for b in sec.buffers() if isinstance(b, sp.FifoOp) and b.label.data == "in1")
    # the weight's DFB (page [kw, w] = 2x1 tiles, 2 deep) as the simulator counts ttnn.bfloat8_b,
    # the activation's and the output's bf16 (2048 a tile)
    per_tile = {
        tuple(d["page"]): d["bytes"] // (d["page"][0] * d["page"][1] * d["block_count"])
        for d in traced.dfbs
        if d["node"] is None
    }
    assert fifo.tile_bytes == p_tile(module) == per_tile[(2, 1)] == 1088
    assert per_tile[(1, 2)] == 2048
    got, p = moved(traced), priced(module, sec)
    assert got.dram_read["wv"] == p.q.b_tiles_dram
    assert got.dram_written == {"z": p.q.c_tiles_written}
    # the DRAM bytes: each tensor's traced tiles at its DFB's bytes a tile, as priced
    traced_bytes = (
        got.dram_read["x"] * per_tile[(1, 2)]
        + got.dram_read["wv"] * per_tile[(2, 1)]
        + got.dram_written["z"] * 2048
    )
    assert traced_bytes == p.cost.dram_bytes


def p_tile(module) -> int:  # noqa: ANN001
    """What the cost model prices a tile of the weight at: the target's Q8_0 tile bytes."""
    from spatial_dialect.passes.target_choice import recorded_target

    return recorded_target(module, "test").tile_bytes("q8_0_kn")


@pytest.fixture(scope="module")
def models(tmp_path_factory) -> dict[str, Path]:
    pytest.importorskip("gguf")
    sys.path.insert(0, str(ROOT / "test" / "frontend"))
    from tiny_gguf import write_tiny

    d = tmp_path_factory.mktemp("q8_0")
    return {
        "llama": write_tiny(d / "llama.gguf", "llama", "Q8_0", tied=False),
        "qwen3": write_tiny(d / "qwen3.gguf", "qwen3", "Q8_0", tied=True),
    }


@needs_sim
@pytest.mark.parametrize("arch", ["llama", "qwen3"])
def test_a_tiny_q8_0_model_decodes_under_tt_lang_sim(models, tmp_path, capsys, arch):
    """Every weight and the embedding table converted at load to bfp8_b; the Q8_0 views pushed
    into bfp8_b buffers; checked with the bfp8_b term downstream of the weights."""
    from spatial_dialect.tools.spatial_import import main as spatial_import
    from spatial_dialect.tools.spatial_run import main as spatial_run

    out = tmp_path / "decode.mlir"
    assert spatial_import([str(models[arch]), "--step", "decode", "-o", str(out)]) == 0
    code = spatial_run(
        [str(out), "--target", "wormhole_n150", "--backend", "tt-lang-sim"]
        + ["--weights", str(models[arch])]
    )
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and lines[-1].startswith("PASS"), "\n".join(lines)
    assert any("+bfp8_b storage" in line for line in lines)
