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
from spatial_dialect.tools.backend.executors import BackendFailed, BackendUnavailable
from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported

sys.path.insert(0, str(Path(__file__).parent))
from gemm_cases import check, gemm_text  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
HAVE_SIM = importlib.util.find_spec("ttl") is not None
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="tt-lang-sim not installed")
TENSIX = ["wormhole_n150", "blackhole_p150"]


def runner():
    from spatial_dialect.tools.backend.ttlang.runner import run_tt_lang_sim

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

    path = ROOT / "test/backend/ttlang/Inputs" / program
    assert main([str(path), "--target", target, "--backend", "tt-lang-sim"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
@pytest.mark.parametrize("target", TENSIX)
def test_a_tied_head_reads_the_table_transposed(capsys, target):
    """transpose_b: B's page is the table's [w, kw] block, ttl.block.transpose'd before the
    product (one K block on blackhole, several with a spill on wormhole)."""
    from spatial_dialect.tools.spatial_run import main

    path = ROOT / "test/run/Inputs/tied_head.mlir"
    assert main([str(path), "--target", target, "--backend", "tt-lang-sim"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
def test_a_tied_gguf_model_passes(tmp_path, capsys):
    """A Qwen3 model without output.weight: one table argument for the gather and the head."""
    pytest.importorskip("gguf")
    sys.path.insert(0, str(ROOT / "test" / "frontend"))
    from tiny_gguf import write_tiny

    from spatial_dialect.tools.spatial_import import main as spatial_import
    from spatial_dialect.tools.spatial_run import main

    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", True)
    out = tmp_path / "decode.mlir"
    argv = [str(model), "--step", "decode", "--dtype", "bf16", "-o", str(out)]
    assert spatial_import(argv) == 0
    run = [str(out), "--target", "wormhole_n150", "--backend", "tt-lang-sim"]
    assert main([*run, "--weights", str(model)]) == 0
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
        ("tiny_moe_decode.mlir", "wormhole_n150", 0),
        ("tiny_moe_prefill.mlir", "blackhole_p150", 1),
    ],
)
def test_tiny_model_step_passes(capsys, program, target, seed):
    """A whole greedy step: embedding gather (ids read at run time), KV-cache scatter at pos,
    flash GQA attention with the causal mask from pos, argmax; with a mixture of experts as
    the FFN (decode: the router's ids pick the expert blocks; prefill: every expert)."""
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
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(256, 256, 256, "bf16")))
    module = compile_module(fn, "wormhole_n150", grid="4x4", split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return module, section


def _run(module):
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )
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

    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang

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


# Several sub-blocks per block: a GEMM computes the whole block, its output and spill DFBs holding
# whole blocks in the bytes size-buffers laid out for the sub-block pages
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
    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(m, k, n, dt)))
    module = compile_module(fn, "wormhole_n150", grid=grid, accumulate=accumulate, split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    k_block = section.one(sp.WorkOp).k_block
    assert max(r.bindings(k_block)["subs"] for r in section.ops_of(sp.SitesOp)) > 1
    assert _run_text(gemm_text(m, k, n, dt), module, accumulate).ok


@needs_sim
def test_gemm_with_sub_block_rows_and_columns_passes():
    """Sub-blocks cut from both sides of the block (no plan of the suite's shapes picks them;
    the range's sub-block set to 2x2 by hand, in the same bytes: the FIFO pages are `subs` deep):
    256x32x256 bf16 on 2x2, 4x4 blocks of four 2x2 sub-blocks, A in two sub-block-row DFBs, B in
    two sub-block-column DFBs, products a0 @ b0, a0 @ b1, a1 @ b0, a1 @ b1 in the writer's
    row-major order; the writer stores each row's two sub-blocks together (writes_in_pairs).
    (K of one tile: with K = 64 the planner now picks 4x2 blocks of 4x1 sub-blocks.)"""
    import io

    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.sp.syntax import pair_attr
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    text = gemm_text(256, 32, 256, "bf16")
    module = compile_module(
        entry_function(parse_module(text)),
        "wormhole_n150",
        grid="2x2",
        accumulate="bf16",
        split_k=1,
    )
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    (r,) = section.ops_of(sp.SitesOp)
    assert (r.block, r.sub_block) == ((4, 4), (2, 4))
    r.properties["sub_block"] = pair_attr((2, 2))
    stream = io.StringIO()
    print_ttlang(module, stream)
    printed = stream.getvalue()
    products = [f"o_blk.store(a{i} @ b{j})" for i in (0, 1) for j in (0, 1)]
    assert all(p in printed for p in products)
    at = [printed.index(p) for p in products]
    assert at == sorted(at)
    assert "for ti in range(0, 4, 2):" in printed and "tj in" not in printed
    assert "tx1 = ttl.copy(blk1, t_c[r0 + ti:r0 + ti + 2, c0 + 2:c0 + 4])" in printed
    assert _run_text(text, module, "bf16").ok


def test_a_gemm_output_fifo_keeps_its_sub_block_pages():
    """A GEMM of several sub-blocks per block stores a sub-block at a time
    (docs/backend-ttlang.md#sub-blocks): its output FIFO is the IR's pages, even fewer than the
    block has sub-blocks, and A comes in one DFB per sub-block row. Here: 3x4 blocks of 3 1x4
    sub-blocks, the FIFO set to 2 pages (the sub-block set by hand: the planner picks four 3x1
    sub-blocks, written two at a time; three are written one at a time)."""
    import io

    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.sp.syntax import pair_attr
    from spatial_dialect.tools.backend.ttlang.printer import print_ttlang
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(gemm_text(160, 64, 224, "bf16")))
    module = compile_module(fn, "wormhole_n150", grid="2x2", split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    r = section.ops_of(sp.SitesOp)[0]
    assert r.block == (3, 4)
    r.properties["sub_block"] = pair_attr((1, 4))
    r.set_memory(r.offsets(), {**r.depths(), "out": 2})
    stream = io.StringIO()
    print_ttlang(module, stream)
    text = stream.getvalue()
    assert "= ttl.make_dataflow_buffer_like(t_c, shape=(1, 4), block_count=2)" in text
    # the boundary ranges keep their planned 3x1 / 2x1 sub-blocks: A's DFBs named by page
    assert "in0_dfb_1x2_2 = ttl.make_dataflow_buffer_like(t_a, shape=(1, 2), block_count=2)" in text
    assert "o_blk.store(a2 @ b_blk)" in text


def test_a_sub_block_fifo_shallower_than_its_block_holds_one_block():
    """A stream section's output FIFO of fewer sub-block pages than the block has sub-blocks
    holds one whole block: L1 beyond the layout, refused by name, with the bytes, where it does
    not fit. Here the Llama-3-8B prefill's rope: 2 [1, 4] pages under 1x16 blocks of 4
    sub-blocks, one [1, 16] block: 2 pages more than laid out."""
    import io

    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported, print_ttlang
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    text = (ROOT / "test/backend/ttlang/Inputs/rope_subs4.mlir").read_text()
    fn = entry_function(parse_module(text))
    module = compile_module(fn, "wormhole_n150", accumulate="bf16", split_k=1, kv_splits=1)
    section = next(
        op
        for op in module.walk()
        if isinstance(op, sp.ProgramOp) and any(isinstance(s, sp.RopeOp) for s in op.stages())
    )
    r = section.ops_of(sp.SitesOp)[0]
    assert (r.block, r.sub_block) == ((1, 16), (1, 4))
    b = r.bindings(section.one(sp.WorkOp).k_block)
    out = next(buf for buf in section.buffers() if buf.label.data == "out")
    page, laid = out.tile_bytes * 4, r.bytes_of(out, b)
    assert laid == 2 * page
    budget = section.one(sp.MeshOp).local_mem
    r.set_memory({**r.offsets(), "out": budget - laid}, r.depths())
    with pytest.raises(TTLangUnsupported) as err:
        print_ttlang(module, io.StringIO())
    assert str(err.value).endswith(
        f"LocalMemExceeded: range {r.rect.bounds} holds whole 1x16 blocks in {2 * page} bytes "
        f"more than the {budget} bytes size-buffers laid out for their sub-block pages: "
        f"{budget + 2 * page} > the {budget}-byte local memory"
    )


def _run_text(text, module, accumulate="f32"):
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(text))
    inputs = draw_inputs(fn, 0)
    ref = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    (out,) = runner()(module, [inputs[n] for n in input_names(fn)])
    return compare("c", ref, out, accumulate)


def print_example(
    example: str, accumulate: str = "f32", target: str = "wormhole_n150", more: str = ""
) -> subprocess.CompletedProcess:
    """`spatial-opt examples/EXAMPLE -p spatial-pipeline{target=TARGET ...} -t ttlang`."""
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_opt",
            str(ROOT / "examples" / example),
            "-p",
            f"spatial-pipeline{{target={target} accumulate={accumulate} split-k=1 "
            f"kv-splits=1{more}}}",
            "-t",
            "ttlang",
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_gemm_2048_prints_its_sub_blocks():
    """Too large to simulate here (2048-cubed); it prints (the 16-bit dest's plan: 4 sub-blocks
    of 1x4 per 4x4 block, 8 K blocks) a sub-block at a time: A's [4, 8] page as four
    [1, 8] DFBs, the output FIFO (4 pages, as two DFBs of 2 that the sub-blocks alternate
    between) and the spill at the sub-block [1, 4], one product a sub-block, the writer storing
    them two at a time (targets/gemm.py writes_in_pairs); no selector."""
    proc = print_example("gemm_2048.mlir", accumulate="bf16")
    assert proc.returncode == 0, proc.stderr
    for line in (
        "in0_dfb_3 = ttl.make_dataflow_buffer_like(t_a, shape=(1, 8), block_count=5)",
        "in1_dfb = ttl.make_dataflow_buffer_like(t_b, shape=(8, 4), block_count=5)",
        "out_dfb_0 = ttl.make_dataflow_buffer_like(t_c, shape=(1, 4), block_count=2)",
        "out_dfb_1 = ttl.make_dataflow_buffer_like(t_c, shape=(1, 4), block_count=2)",
        "spill_dfb = ttl.make_dataflow_buffer_like(t_a, shape=(1, 4), block_count=4)",
        "part = p_blk + a3 @ b_blk",
        "tx3 = ttl.copy(t_a[r0 + 3:r0 + 4, k0:k0 + 8], blk3)",
        "for ti in range(0, 4, 2):",
        "tx1 = ttl.copy(blk1, t_c[r0 + ti + 1:r0 + ti + 2, c0:c0 + 4])",
    ):
        assert line in proc.stdout
    assert "_eye" not in proc.stdout and "tj in" not in proc.stdout


@needs_sim
@pytest.mark.parametrize(
    "program, marks",
    [
        # a one-tile-row rope: 2 sub-blocks of 1x4 per 1x8 block (output depth 2: one block)
        (
            "rope_subs.mlir",
            ["out_dfb = ttl.make_dataflow_buffer_like(t_qr, shape=(1, 8), block_count=1)"],
        ),
        # the prefill's rms_apply @h: 2 sub-blocks of 1x4 per 1x8 block (its one-row weight
        # moves one row a tile, so wide blocks that read the f32 statistics once win)
        (
            "rms_subs.mlir",
            ["out_dfb = ttl.make_dataflow_buffer_like(t_h, shape=(1, 8), block_count=1)"],
        ),
        # the Llama-3-8B prefill's rope: 4 sub-blocks of 1x4 per 1x16 block through a 2-page
        # output FIFO: one whole block, 2 pages beyond the layout
        (
            "rope_subs4.mlir",
            ["out_dfb = ttl.make_dataflow_buffer_like(t_qr, shape=(1, 16), block_count=1)"],
        ),
    ],
)
def test_compute_with_several_sub_blocks_per_block_passes(capsys, program, marks):
    """A rope or map with several sub-blocks per block computes and pushes the whole block, the
    writer storing it whole: no selector (docs/backend-ttlang.md#sub-blocks)."""
    from spatial_dialect.tools.spatial_run import main

    path = ROOT / "test/backend/ttlang/Inputs" / program
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
    assert "_eye" not in proc.stdout and "ti in" not in proc.stdout
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


@pytest.mark.parametrize(
    "example, marks",
    [
        ("qwen3_30b_a3b_decode.mlir", ["'moe__id7')", "for j in range(8):"]),
        (
            "qwen3_next_80b_a3b_decode.mlir",
            ["'moe__id9')", "for j in range(10):", "tri = (eye + ", "keep = c_blk"],
        ),
    ],
)
def test_the_moe_and_delta_layers_print_whole(example, marks):
    """The real-shape MoE decodes print every section: the router's top-8 / top-10 ranks, each
    slot's expert GEMMs given the routed expert's tensor by the host (an (experts, ids) pair in
    SECTIONS), the causal conv and the delta rule."""
    proc = print_example(example)
    assert proc.returncode == 0, proc.stderr
    for mark in marks:
        assert mark in proc.stdout


@pytest.mark.parametrize("target", ["wormhole_n150", "blackhole_p150"])
def test_the_q8_0_layer_prints_its_weights_as_bfp8_b(target):
    """The Q8_0 Llama-3 decode layer prints whole: each Q8_0 weight is a bfp8_b tensor the host
    converts at load from its values and scales (blocks of 32 along K, axis 0), each quantized
    activation view a bfp8_b tensor; no Q8_0 scale reaches a kernel."""
    proc = print_example("llama3_8b_decode_q8_0.mlir", target=target)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    for w in ("wq", "wk", "wv", "wo", "w_gate", "w_up", "w_down"):
        assert f"'{w}': (_q8_0_as_bfp8_b, '{w}_scales', 0)," in out
    assert "'wq': ((4096, 4096), 'bfp8_b')" in out
    assert "'h__q8_0_1': ((1, 4096), 'bfp8_b')" in out
    assert "_scales" not in out.split("TENSORS = ")[0]


def test_an_unemitted_section_is_refused_by_name_in_one_line():
    """Block-float storage of the float tensors (format=bfp8_b) stops the Llama-3 decode layer
    at its first section, naming the buffer."""
    proc = print_example("llama3_8b_decode.mlir", more=" format=bfp8_b")
    assert proc.returncode == 1
    assert "error: -t ttlang: section @h__partials: buffer in0 stores bfp8_b" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert "Traceback" not in proc.stderr


def test_without_tt_lang_sim_the_backend_names_the_extra(monkeypatch):
    from spatial_dialect.tools.backend.ttlang import runner as run_ttlang

    monkeypatch.setattr(run_ttlang.importlib.util, "find_spec", lambda name: None)
    module, _ = _program()
    with pytest.raises(BackendUnavailable, match=r"pip install -e '\.\[ttlang\]'"):
        run_ttlang.run_tt_lang_sim(module, [])


def test_the_simulators_message_is_found_before_the_diagnostics_crash():
    from spatial_dialect.tools.backend.ttlang.runner import simulator_message

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
    from spatial_dialect.tools.backend.ttlang.runner import emit

    text = (ROOT / "test/backend/ttlang/Inputs" / program).read_text()
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


@needs_sim
@pytest.mark.parametrize(
    "t, e, k, scores, renormalize, shared, elt, target",
    [
        (1, 8, 3, "sigmoid", False, 4, "f32", "blackhole_p150"),
        (6, 4, 2, "softmax", True, 3, "f32", "wormhole_n150"),
        (1, 16, 10, "softmax", True, 0, "f32", "wormhole_n150"),
    ],
)
def test_a_moe_block_passes(tmp_path, capsys, t, e, k, scores, renormalize, shared, elt, target):
    """tg.moe alone, its output compared in f32 to the reference's rounding (the bf16 decode is
    tiny_moe_decode's): decode routes one token and loads its experts' blocks by the routed ids
    (an indexed load, the id read at run time); a prefill of 6 tokens runs every expert with
    each row's weight for it (zero where not chosen); sigmoid scores without renormalization
    and gated and plain shared experts; Qwen3-Next's top-10 (ten ranks in one route)."""
    from spatial_dialect.tools.spatial_run import main

    path = tmp_path / "moe.mlir"
    path.write_text(_moe_program(t, 64, e, 32, k, scores, renormalize, shared, elt=elt))
    code = main([str(path), "--target", target, "--backend", "tt-lang-sim", "--seed", "1"])
    out = capsys.readouterr()
    assert code == 0 and out.out.strip().splitlines()[-1].startswith("PASS"), out.out + out.err


def _moe_test(name: str):
    """A helper of test/run/test_run_moe.py: its MoE programs and cases serve both backends."""
    sys.path.insert(0, str(ROOT / "test/run"))
    import test_run_moe

    return getattr(test_run_moe, name)


def _moe_program(*args, **kw) -> str:
    return _moe_test("program")(*args, **kw)


@needs_sim
def test_equal_logits_go_to_the_lower_expert():
    """x = ones and router columns 1 and 3 equal and largest: one slot, expert 1 wins (expert 3
    would give another result); the route's least-index-of-a-hit picks it."""
    import numpy as np

    from spatial_dialect.passes.pipeline import compile_module
    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    fn = entry_function(parse_module(_moe_program(1, 64, 4, 32, 1, "sigmoid", False)))
    inputs = draw_inputs(fn, 0)
    inputs["x"] = np.ones((1, 64), np.float32)
    r = np.zeros((64, 4), np.float32)
    r[:, 1] = r[:, 3] = 0.0625
    inputs["r"] = r
    module = compile_module(fn, "wormhole_n150", split_k=1)
    (got,) = runner()(module, [inputs[n] for n in input_names(fn)])
    want = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    result = compare("y", want, got)
    assert result.ok, result.line()
    inputs["r"][:, 1] = 0.0  # expert 3 alone: the output moves beyond the tolerance
    other = evaluate_values(fn, inputs)[returned_values(fn)[0]]
    assert not compare("y", other, got).ok


@needs_sim
def test_an_expert_id_out_of_range_is_refused_before_any_read():
    """The router's id of slot 0 replaced by an entry input holding 4, of experts 0..3: the
    host, picking the expert tensor of the first GEMM that loads by it, raises, naming the id,
    the range and the tensor (host.py's `_arg`), before that GEMM runs."""
    module, inputs = _moe_test("routed_by_an_out_of_range_id")(split_k=1)
    with pytest.raises(BackendFailed, match=r"id 4 in @y__id0 outside \[0, 4\) experts of @g"):
        runner()(module, inputs)


@needs_sim
@pytest.mark.parametrize(
    "program,target",
    [
        ("tiny_qwen3_next_decode.mlir", "blackhole_p150"),
        ("tiny_qwen3_next_prefill_f32.mlir", "wormhole_n150"),
    ],
)
def test_tiny_qwen3_next_layer_passes(capsys, program, target):
    """The hybrid layer whole: the causal conv and the chunked delta rule carrying their
    states out (decode: one row; prefill: 40 rows, two chunks, the second partial), decay,
    the per-head l2 norms, and the MoE block with a gated shared expert; f32 to the
    reference's rounding."""
    from spatial_dialect.tools.spatial_run import main

    args = [str(ROOT / "examples" / program), "--target", target, "--backend", "tt-lang-sim"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


@needs_sim
def test_the_delta_norms_and_decay_pass(capsys):
    """decay (softplus as logaddexp), a per-head l2_norm, and a 4096-wide one blocked
    (partial, combine, l2_apply)."""
    from spatial_dialect.tools.spatial_run import main

    path = ROOT / "test/run/Inputs/delta_norms.mlir"
    assert main([str(path), "--target", "blackhole_p150", "--backend", "tt-lang-sim"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("PASS")


CONV = """func.func @cv(%x: tensor<70x64xf32>, %w: tensor<4x64xf32>, %s: tensor<3x64xf32>) -> (tensor<70x64xf32>, tensor<3x64xf32>) {
  %o, %n = tg.causal_conv %x, %w, %s activation "silu" : (tensor<70x64xf32>, tensor<4x64xf32>, tensor<3x64xf32>) -> (tensor<70x64xf32>, tensor<3x64xf32>)
  func.return %o, %n : tensor<70x64xf32>, tensor<3x64xf32>
}
"""

DELTA = """func.func @gd(%q: tensor<100x32xf32>, %k: tensor<100x32xf32>, %v: tensor<100x64xf32>, %a: tensor<100x2xf32>, %b: tensor<100x2xf32>, %al: tensor<1x2xf32>, %dt: tensor<1x2xf32>, %s: tensor<64x32xf32>) -> (tensor<100x64xf32>, tensor<64x32xf32>) {
  %qn = tg.l2_norm %q eps 1.0e-06 width 32 : (tensor<100x32xf32>) -> tensor<100x32xf32>
  %kn = tg.l2_norm %k eps 1.0e-06 width 32 : (tensor<100x32xf32>) -> tensor<100x32xf32>
  %g = tg.decay %a, %al, %dt : (tensor<100x2xf32>, tensor<1x2xf32>, tensor<1x2xf32>) -> tensor<100x2xf32>
  %beta = tg.sigmoid %b : (tensor<100x2xf32>) -> tensor<100x2xf32>
  %o, %n = tg.gated_delta %qn, %kn, %v, %g, %beta, %s heads 2 k_heads 1 head_dim 32 scale 1.767767e-01 : (tensor<100x32xf32>, tensor<100x32xf32>, tensor<100x64xf32>, tensor<100x2xf32>, tensor<100x2xf32>, tensor<64x32xf32>) -> (tensor<100x64xf32>, tensor<64x32xf32>)
  func.return %o, %n : tensor<100x64xf32>, tensor<64x32xf32>
}
"""


def _opt(text: str, pipeline: str) -> str:
    return subprocess.run(
        [sys.executable, "-m", "spatial_dialect.tools.spatial_opt", "-", "-p", pipeline],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@needs_sim
@pytest.mark.parametrize(
    "program, section, k_block",
    [(CONV, "n", 1), (DELTA, "n", 2)],
    ids=["conv_blocks_of_32_rows", "delta_chunks_of_64_rows"],
)
def test_time_blocks_other_than_the_plans_carry_the_state(program, section, k_block):
    """The K block of time is a plan decision (tile's), so the printers take any: the conv over
    70 rows in three blocks (the window carried, the last block 6 rows) and the delta rule in
    chunks of 64 rows (C = 2 tiles: T's product runs to A^63), the second of 36; the plan is
    re-tiled by hand and re-sized, then compared with the reference in f32."""
    import re

    from spatial_dialect.tools.interpreters.compare import compare
    from spatial_dialect.tools.interpreters.inputs import draw_inputs
    from spatial_dialect.tools.interpreters.reference import (
        evaluate_values,
        input_names,
        returned_values,
    )
    from spatial_dialect.tools.spatial_run import entry_function, parse_module

    tiled = _opt(program, "link{target=wormhole_n150},tile{split-k=1}")
    work = re.compile(rf"(sp.work @{section} block \S+ k \d+ by )\d+")
    assert work.search(tiled) is not None
    sized = _opt(work.sub(rf"\g<1>{k_block}", tiled), "place,fuse-operands,size-buffers")
    assert f"by {k_block}" in work.search(sized).group(0)  # type: ignore[union-attr]
    fn = entry_function(parse_module(program))
    inputs = draw_inputs(fn, 3)
    ref = evaluate_values(fn, inputs)
    outs = runner()(parse_module(sized), [inputs[n] for n in input_names(fn)])
    for value, got in zip(returned_values(fn), outs, strict=True):
        result = compare(value.name_hint or "out", ref[value], got)
        assert result.ok, result.line()
