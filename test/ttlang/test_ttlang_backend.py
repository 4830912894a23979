"""The TT-Lang backend (-t ttlang, spatial-run --backend tt-lang-sim) under tt-lang-sim.

Skipped where tt-lang-sim is not installed (pip install -e '.[ttlang]'). The GEMM sweep runs a
seeded subset by default; SPATIAL_TTLANG_SWEEP=all runs all 32 shapes (about 2.5 minutes).
"""

from __future__ import annotations

import importlib.util
import os
import random
import subprocess
import sys
from pathlib import Path

import pytest
from xdsl.dialects.builtin import AffineMapAttr
from xdsl.ir.affine import AffineExpr, AffineMap

from spatial_dialect import sp
from spatial_dialect.sp import LOOP_VARS, AccessAttr
from spatial_dialect.tools.backends import BackendFailed, BackendUnavailable
from spatial_dialect.tools.emit.ttlang import TTLangUnsupported

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import check, gemm_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
HAVE_SIM = importlib.util.find_spec("ttl") is not None
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="tt-lang-sim not installed")
TENSIX = ["wormhole_n150", "blackhole_p150"]


def runner():
    from spatial_dialect.tools.run_ttlang import run_tt_lang_sim

    return run_tt_lang_sim


def _shapes() -> list[tuple[int, int, int, str, str]]:
    rng = random.Random(11)
    return [
        (rng.randint(1, 300), rng.randint(1, 300), rng.randint(1, 300), dt, TENSIX[i % 2])
        for i, dt in enumerate(["bf16", "f32"] * 16)
    ]


SHAPES = _shapes()
SUBSET = SHAPES if os.environ.get("SPATIAL_TTLANG_SWEEP") == "all" else SHAPES[:4]


@needs_sim
@pytest.mark.parametrize(
    "program,target",
    [
        ("mlp_rope.mlir", "wormhole_n150"),
        ("mlp_rope_f32.mlir", "blackhole_p150"),
        ("rms_wide.mlir", "blackhole_p150"),
    ],
)
def test_mlp_block_with_rope_passes(capsys, program, target):
    """rms_norm, three GEMMs, swiglu, a residual add and a neox rope: prefill rows (bf16) and
    a one-row decode in f32 (rows tensors padded to tiles); a blocked rms_norm (partial,
    combine, rms_apply) over a 1024-wide row."""
    from spatial_dialect.tools.spatial_run import main

    path = ROOT / "test/ttlang/Inputs" / program
    assert main([str(path), "--target", target, "--backend", "tt-lang-sim"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
@pytest.mark.parametrize("target", TENSIX)
def test_gemm_small_example_passes(capsys, target):
    from spatial_dialect.tools.spatial_run import main

    assert (
        main(
            [str(ROOT / "examples/gemm_small.mlir"), "--target", target, "--backend", "tt-lang-sim"]
        )
        == 0
    )
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
@pytest.mark.parametrize(
    "program,target,seed",
    [
        ("tiny_decode.mlir", "wormhole_n150", 0),
        ("tiny_prefill.mlir", "wormhole_n150", 0),
        ("tiny_decode.mlir", "blackhole_p150", 3),
        ("tiny_prefill.mlir", "blackhole_p150", 5),
    ],
)
def test_tiny_model_step_passes(capsys, program, target, seed):
    """A whole greedy step: embedding gather (ids read at run time), KV-cache scatter at pos,
    flash GQA attention with the causal mask from pos, argmax."""
    from spatial_dialect.tools.spatial_run import main

    args = [str(ROOT / "examples" / program), "--target", target, "--backend", "tt-lang-sim"]
    assert main([*args, "--seed", str(seed)]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
@pytest.mark.parametrize("m, k, n, dt, target", SUBSET)
def test_gemm_sweep_passes_or_is_refused_by_name(m, k, n, dt, target):
    try:
        results, _ = check(gemm_text(m, k, n, dt), target, runner())
    except TTLangUnsupported as e:
        assert "section @c" in str(e)
        return
    assert all(r.ok for r in results), results[0].line()


# ── Mutations: refused at emission by name, or FAIL under tt-lang-sim ─────────────────────────
# 256x256x256 bf16 on a 4x4 grid: 2x2-tile blocks, 2 K blocks, A multicast along rows.


def _program():
    from spatial_dialect.tools.spatial_run import compile_function, entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(256, 256, 256, "bf16")))
    module = compile_function(fn, "wormhole_n150", grid="4x4", split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return module, section


def _run(module):
    from spatial_dialect.tools.compare import compare
    from spatial_dialect.tools.inputs import draw_inputs
    from spatial_dialect.tools.reference import evaluate_values, input_names, returned_values
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(256, 256, 256, "bf16")))
    inputs = draw_inputs(fn, 0)
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    (out,) = runner()(module, [inputs[n] for n in input_names(fn)])
    return compare("c", ref, out)


def _stage(section, kind, tensor):
    return next(s for s in section.ops_of(kind) if s.tensor.root_reference.data == tensor)


def _set_origin(op, row, col):
    op.properties["access"] = AccessAttr(
        AffineMapAttr(AffineMap(len(LOOP_VARS), 0, (row, col))), op.access.extent
    )


def _var(name):
    return AffineExpr.dimension(LOOP_VARS.index(name))


@needs_sim
def test_mutation_base_program_passes():
    module, section = _program()
    assert section.ops_of(sp.GroupOp)
    assert _run(module).ok


def test_mutation_two_buffers_at_one_offset_is_refused_by_name():
    module, section = _program()
    for sites in section.ops_of(sp.SitesOp):
        offsets = sites.offsets()
        offsets["in1"] = offsets["in0"]
        sites.set_memory(offsets, sites.depths())
    with pytest.raises(TTLangUnsupported, match="OverlappingOffsets: buffers in0 .* and in1"):
        runner()(module, []) if HAVE_SIM else _emit(module)


def _emit(module):
    import io

    from spatial_dialect.tools.emit.ttlang import print_ttlang

    print_ttlang(module, io.StringIO())


@needs_sim
def test_mutation_wrong_stride_fails():
    module, section = _program()
    _set_origin(_stage(section, sp.LoadOp, "b"), _var("k0"), _var("c0") * 0)
    assert not _run(module).ok


@needs_sim
def test_mutation_stride_leaving_the_tensor_is_the_simulators_failure():
    module, section = _program()
    _set_origin(_stage(section, sp.LoadOp, "a"), _var("r0"), _var("k0") * 2)
    with pytest.raises(BackendFailed):
        _run(module)


@needs_sim
def test_mutation_dropped_store_fails():
    module, section = _program()
    _stage(section, sp.StoreOp, "c").detach()
    assert not _run(module).ok


@needs_sim
def test_mutation_missing_k_tile_fails():
    module, section = _program()
    # A's K origin shifted by one tile: every K block reads A one tile to the right, so one K
    # tile of A is never read (and the last block is refused by the simulator or wrong)
    _set_origin(_stage(section, sp.LoadOp, "a"), _var("r0"), _var("k0") + 1)
    try:
        assert not _run(module).ok
    except BackendFailed:
        pass


# ── Refusals and the runner's messages ────────────────────────────────────────────────────────


# Several sub-blocks per block: a GEMM's sub-block is (R @ A) @ (B @ C) with one-hot selectors
# (docs/backend-ttlang.md#sub-blocks). (m, k, n, dtype, grid, accumulate): sub-blocks per 5x2 block
# over K blocks (f32 partial sums spilled), a boundary range; sub-blocks per 5x2 block over 4 K
# blocks in f32; under accumulate=bf16 (the 16-bit dest's 8 tiles), 3 sub-blocks of 1x3 per 3x3
# block and boundary blocks on a 4x4 grid.
SUB_BLOCK_GEMMS = [
    (160, 64, 224, "bf16", "2x2", "f32"),
    (160, 256, 224, "f32", "2x2", "f32"),
    (320, 128, 320, "bf16", "4x4", "bf16"),
]


@needs_sim
@pytest.mark.parametrize("m, k, n, dt, grid, accumulate", SUB_BLOCK_GEMMS)
def test_gemm_with_several_sub_blocks_per_block_passes(m, k, n, dt, grid, accumulate):
    from spatial_dialect.tools.spatial_run import compile_function, entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, dt)))
    module = compile_function(fn, "wormhole_n150", grid=grid, accumulate=accumulate, split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    k_block = section.one(sp.WorkOp).k_block
    assert max(r.bindings(k_block)["subs"] for r in section.ops_of(sp.SitesOp)) > 1
    assert _run_text(gemm_text(m, k, n, dt), module, accumulate).ok


def _run_text(text, module, accumulate="f32"):
    from spatial_dialect.tools.compare import compare
    from spatial_dialect.tools.inputs import draw_inputs
    from spatial_dialect.tools.reference import evaluate_values, input_names, returned_values
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(text))
    inputs = draw_inputs(fn, 0)
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    (out,) = runner()(module, [inputs[n] for n in input_names(fn)])
    return compare("c", ref, out, accumulate)


def print_example(example: str, accumulate: str = "f32") -> subprocess.CompletedProcess:
    """`spatial-opt examples/EXAMPLE -p spatial-pipeline{target=wormhole_n150} -t ttlang`."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_opt",
            str(ROOT / "examples" / example),
            "-p",
            f"spatial-pipeline{{target=wormhole_n150 accumulate={accumulate} split-k=1 "
            "kv-splits=1}",
            "-t",
            "ttlang",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_gemm_2048_prints_with_its_sub_blocks():
    """Too large to simulate here (2048-cubed); it prints, selectors and all (the 16-bit dest's
    plan: 2x4 sub-blocks of 4x4 blocks)."""
    proc = print_example("gemm_2048.mlir", accumulate="bf16")
    assert proc.returncode == 0, proc.stderr
    assert "sub_rows_dfb" in proc.stdout and "(r_blk @ a_blk)" in proc.stdout


@needs_sim
@pytest.mark.parametrize(
    "program, marks",
    [
        # a one-tile-row rope: 2 sub-blocks of 1x4 per 1x8 block (a column selector)
        ("rope_subs.mlir", ["sub_cols_dfb", "part = full @ c_blk"]),
        # the prefill's rms_apply @h: 2 sub-blocks of 1x4 per 1x8 block (its one-row weight
        # moves one row a tile, so wide blocks that read the f32 statistics once win)
        ("rms_subs.mlir", ["sub_cols_dfb", "part = full @ c_blk"]),
    ],
)
def test_compute_with_several_sub_blocks_per_block_passes(capsys, program, marks):
    """A rope or map with several sub-blocks per block computes the whole block and pushes one
    slice per sub-block through the one-hot selectors (docs/backend-ttlang.md#sub-blocks)."""
    from spatial_dialect.tools.spatial_run import main

    path = ROOT / "test/ttlang/Inputs" / program
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_opt",
            str(path),
            "-p",
            "spatial-pipeline{target=wormhole_n150 accumulate=bf16 split-k=1 kv-splits=1}",
            "-t",
            "ttlang",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    for mark in marks:
        assert mark in proc.stdout
    assert main([str(path), "--target", "wormhole_n150", "--backend", "tt-lang-sim"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@pytest.mark.parametrize(
    "example", ["llama3_8b_decode.mlir", "llama3_8b_prefill.mlir", "qwen3_8b_decode.mlir"]
)
def test_the_real_layers_print_whole(example):
    """The Llama-3-8B and Qwen3-8B layers print every section; their attention serves 2 query
    heads per item, each head's columns picked by a one-hot column selector."""
    proc = print_example(example)
    assert proc.returncode == 0, proc.stderr
    assert "q_1 = q_blk @ c_blk" in proc.stdout


def test_an_unemitted_section_is_refused_by_name_in_one_line():
    """The Q8_0 Llama-3 decode layer stops at its first Q8_0 buffer (the quantized view of the
    normed activations): ttnn has no Q8_0 tile format."""
    proc = print_example("llama3_8b_decode_q8_0.mlir")
    assert proc.returncode == 1
    assert "error: -t ttlang: section @h__q8_0_1: buffer out stores q8_0" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_without_tt_lang_sim_the_backend_names_the_extra(monkeypatch):
    from spatial_dialect.tools import run_ttlang

    monkeypatch.setattr(run_ttlang.importlib.util, "find_spec", lambda name: None)
    module, _ = _program()
    with pytest.raises(BackendUnavailable, match=r"pip install -e '\.\[ttlang\]'"):
        run_ttlang.run_tt_lang_sim(module, [])


def test_the_simulators_message_is_found_before_the_diagnostics_crash():
    from spatial_dialect.tools.run_ttlang import simulator_message

    output = (
        'Traceback (most recent call last):\n  File "p.py", line 3\n'
        "ValueError: Tensor shape (2, 4) (8 tiles) does not match Block shape (2, 2) (4 tiles)\n"
        "\nDuring handling of the above exception, another exception occurred:\n\n"
        'Traceback (most recent call last):\n  File ".../ttl/sim/diagnostics.py", line 9\n'
        "FileNotFoundError: [Errno 2] No such file or directory: '/x/ttl/ttl/diagnostics.py'\n"
    )
    assert simulator_message(output).startswith("ValueError: Tensor shape (2, 4)")


# ── GQA attention (several query heads per item) and a decode step, as front ends write them

# (program, target, pipeline options, several heads per item): the default plans are what
# spatial-run compiles; where the planner serves one head per item on a target, a smaller grid
# (more items per site) makes it serve several. The several-heads cases print each head's
# columns through a column selector (docs/backend-ttlang.md#attention-heads-decision).
ATTENTION_PROGRAMS = [
    ("gqa_prefill.mlir", "wormhole_n150", {}, False),
    ("gqa_prefill.mlir", "blackhole_p150", {}, False),
    ("gqa_heads_prefill.mlir", "wormhole_n150", {}, True),
    ("gqa_heads_prefill.mlir", "blackhole_p150", {}, False),
    ("gqa_heads_decode.mlir", "wormhole_n150", {}, True),
    ("gqa_heads_decode.mlir", "blackhole_p150", {}, True),
    ("decode_step.mlir", "wormhole_n150", {}, False),
    ("decode_step.mlir", "blackhole_p150", {}, False),
    ("decode_step.mlir", "wormhole_n150", {"grid": "1x1"}, True),
]


@needs_sim
@pytest.mark.parametrize("program, target, options, several", ATTENTION_PROGRAMS)
def test_gqa_attention_and_a_decode_step_pass(program, target, options, several):
    from spatial_dialect.tools.run_ttlang import emit

    text = (ROOT / "test/ttlang/Inputs" / program).read_text()
    results, module = check(text, target, runner(), **options)
    assert all(r.ok for r in results), [r.line() for r in results]
    if several:
        assert "q_1 = q_blk @ c_blk" in emit(module)


# ── The Gated DeltaNet ────────────────────────────────────────────────────────────────────────

L2_NORM = """func.func @l2(%x: tensor<40x256xf32>) -> tensor<40x256xf32> {
  %q = tg.l2_norm %x eps 1.0e-06 width 64 : (tensor<40x256xf32>) -> tensor<40x256xf32>
  func.return %q : tensor<40x256xf32>
}
"""


@needs_sim
def test_a_per_head_l2_norm_passes_under_the_simulator(tmp_path, capsys):
    from spatial_dialect.tools.spatial_run import main

    path = tmp_path / "l2.mlir"
    path.write_text(L2_NORM)
    code = main([str(path), "--target", "wormhole_n150", "--backend", "tt-lang-sim"])
    out = capsys.readouterr()
    assert code == 0 and out.out.strip().splitlines()[-1].startswith("PASS"), out.out + out.err


def test_a_delta_layer_is_refused_at_its_convolution_by_name():
    proc = print_example("tiny_qwen3_next_decode.mlir")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert "section @conv: stage sp.causal_conv (tg.causal_conv) has no TT-Lang form" in proc.stderr
