"""spatial-run on programs the pipeline compiled: examples, the 1024^3 GEMM (speed and a wrong
tile), mutations of compiled programs, and GEMMs of any shape on every preset target."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import AffineMapAttr, IntegerAttr, i64
from xdsl.ir.affine import AffineMap

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.sp import LOOP_VARS, AccessAttr, loop_var
from spatial_dialect.sp.errors import SpatialPassError, SpatialVerifyError
from spatial_dialect.targets import PRESETS
from spatial_dialect.tools import spatial_run
from spatial_dialect.tools.interpreters.compare import compare
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.simulator.machine import (
    AccessOutsideTensor,
    BufferOutsideMemory,
    FifoDeadlock,
    SimulationError,
    UnwrittenOutput,
)
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    main,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def gemm(m: int, k: int, n: int, elt: str):
    a, b, c = (f"tensor<{r}x{s}x{elt}>" for r, s in ((m, k), (k, n), (m, n)))
    return entry_function(
        parse_module(
            f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
        )
    )


def check(fn, module, seed: int = 0, accumulate: str = "f32"):
    """The comparisons of a compiled function's simulated outputs with the reference, at the
    tolerance of the accumulation it was compiled with."""
    inputs = draw_inputs(fn, seed)
    reference, values = reference_outputs(fn, inputs)
    simulated = simulated_outputs(fn, module, inputs)
    return compare_outputs(fn, reference, values, simulated, accumulate)


# ── Examples ────────────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "example, target",
    [
        ("gemm_small.mlir", "wormhole_n150"),
        ("gemm_small.mlir", "blackhole_p150"),
        ("gemm_small.mlir", "plasticine"),
        ("gemm_small.mlir", "h100"),
        ("gemm_2048.mlir", "wormhole_n150"),
    ],
)
def test_examples_small_enough_to_simulate_pass(capsys, example, target):
    status = main([str(EXAMPLES / example), "--target", target, "--timing"])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    last = out.strip().splitlines()[-1]
    assert last.startswith("PASS") and "predicted" in last


@pytest.mark.parametrize(
    "step",
    [
        "tiny_decode",
        "tiny_prefill",
        "tiny_moe_decode",
        "tiny_moe_prefill",
        "tiny_qwen3_next_decode",
        "tiny_qwen3_next_prefill",
    ],
)
@pytest.mark.parametrize("target", sorted(PRESETS))
def test_tiny_steps_pass_on_every_preset(capsys, step, target):
    """The acceptance bar of the decoder-layer work: a whole decode step (embedding, a layer,
    final norm, LM head, arg-max) and a prefill step PASS on every preset target, with a dense
    or a mixture-of-experts FFN, and so do a Qwen3-Next Gated DeltaNet layer's (its output and
    both carried states; the prefill's 40 rows take one chunk of 64 or two of 32); a chip without
    bf16 runs the f32 variant (and refuses the bf16 one by name, below)."""
    suffix = "" if PRESETS[target].has_dtype("bf16") else "_f32"
    status = main([str(EXAMPLES / f"{step}{suffix}.mlir"), "--target", target])
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert out.strip().splitlines()[-1].startswith("PASS: 3 output(s) within tolerance")


def test_tiny_bf16_step_is_refused_by_name_where_the_chip_lacks_bf16(capsys):
    status = main([str(EXAMPLES / "tiny_decode.mlir"), "--target", "plasticine"])
    _, err = capsys.readouterr()
    assert status == 1
    assert err.startswith(
        "spatial-run: compile refused: UnsupportedDatatype: tg.gather_rows: target plasticine "
        "has no datatype 'bf16'"
    )


def test_a_refusal_is_reported_as_such_not_as_fail(capsys, tmp_path):
    path = tmp_path / "g.mlir"
    path.write_text((EXAMPLES / "gemm_small.mlir").read_text().replace("f32", "bf16"))
    status = main([str(path), "--target", "plasticine"])  # plasticine computes no bf16
    out, err = capsys.readouterr()
    assert status == 1
    assert err.startswith("spatial-run: compile refused: UnsupportedDatatype: tg.matmul")
    assert "PASS" not in out and "FAIL" not in out


# ── The 1024^3 bf16 GEMM on wormhole_n150 ───────────────────────────────────────────────────


@pytest.fixture(scope="module")
def gemm_1024():
    fn = gemm(1024, 1024, 1024, "bf16")
    module = compile_module(fn, "wormhole_n150")
    inputs = draw_inputs(fn, 0)
    reference, _ = reference_outputs(fn, inputs)
    simulated = simulated_outputs(fn, module, inputs)
    return inputs, reference["c"], simulated["c"]


def test_gemm_1024_simulates_and_passes(gemm_1024):
    """How long it takes is bench/README.md#simulation-speed's, not a unit test's."""
    _, ref, sim = gemm_1024
    assert compare("c", ref, sim).ok


def test_one_wrong_tile_of_gemm_1024_fails(gemm_1024):
    inputs, ref, sim = gemm_1024
    a, b = (inputs[n].astype(np.float32) for n in ("a", "b"))
    rows, cols = slice(320, 352), slice(640, 672)  # tile (10, 20)
    copied = sim.copy()
    copied[rows, cols] = sim[352:384, 640:672]  # the tile below it
    transposed = sim.copy()
    transposed[rows, cols] = sim[rows, cols].T
    short = sim.copy()  # misses the product of one of its 32 K tiles
    short[rows, cols] = (
        sim[rows, cols].astype(np.float32) - a[rows, 64:96] @ b[64:96, cols]
    ).astype(sim.dtype)
    for wrong in (copied, transposed, short):
        result = compare("c", ref, wrong)
        assert not result.ok
        assert result.first_bad is not None and 320 <= result.first_bad[0] < 352


# ── Mutations of compiled programs ──────────────────────────────────────────────────────────
#
# 384x512x384 bf16 on a 4x4 grid of wormhole_n150: each site computes a 3x3-tile block in three
# 1x3 sub-blocks over 4 K blocks of 4 tiles, partial sums spill in place into the output FIFO, A
# is multicast along rows and B along columns.


@pytest.fixture
def program():
    """The unsplit program the mutations below break (split-K has its own tests at the end)."""
    fn = gemm(384, 512, 384, "bf16")
    module = compile_module(fn, "wormhole_n150", grid="4x4", split_k=1)
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return fn, module, section


def stage(section: sp.ProgramOp, kind, tensor: str):
    return next(s for s in section.ops_of(kind) if s.tensor.root_reference.data == tensor)


def set_origin(op: sp.LoadOp | sp.StoreOp, row, col) -> None:
    origin = AffineMapAttr(AffineMap(len(LOOP_VARS), 0, (row, col)))
    op.properties["access"] = AccessAttr(origin, op.access.extent)


def set_offset(section: sp.ProgramOp, buffer: str, offset_of: str) -> None:
    for sites in section.ops_of(sp.SitesOp):
        offsets = sites.offsets()
        offsets[buffer] = offsets[offset_of]
        sites.set_memory(offsets, sites.depths())


def test_the_program_mutated_below_is_right_as_compiled(program):
    fn, module, section = program
    assert section.one(sp.IntermOp) is not None and len(section.ops_of(sp.GroupOp)) == 2
    (result,) = check(fn, module)
    assert result.ok


def test_mutation_two_buffers_at_one_offset_fails(program):
    fn, module, section = program
    set_offset(section, "in1", "in0")
    (result,) = check(fn, module)
    assert not result.ok


def test_mutation_spill_over_an_operand_fifo_fails(program):
    fn, module, section = program
    set_offset(section, "spill", "in0")
    (result,) = check(fn, module)
    assert not result.ok


def test_mutation_wrong_stride_leaving_the_tensor_is_reported(program):
    fn, module, section = program
    set_origin(stage(section, sp.LoadOp, "a"), loop_var("r0"), loop_var("k0") * 2)
    with pytest.raises(
        AccessOutsideTensor,
        match=r"load @a -> in0 at \(0, 0\) \(item 0, k0 8\): the block "
        r"of 3x4 tiles at tile \(0, 16\) leaves @a, which has 12x16 tiles",
    ):
        check(fn, module)


def test_mutation_wrong_stride_inside_the_tensor_fails(program):
    fn, module, section = program
    set_origin(stage(section, sp.LoadOp, "b"), loop_var("k0"), loop_var("c0") * 0)
    (result,) = check(fn, module)
    # every block column but the first reads the first's B
    assert not result.ok and result.first_bad[1] >= 96


def test_mutation_dropped_store_is_reported(program):
    fn, module, section = program
    stage(section, sp.StoreOp, "c").detach()
    with pytest.raises(UnwrittenOutput, match="output @c: 144 of its 144 tiles never written"):
        check(fn, module)


def test_mutation_dropped_load_deadlocks_naming_who_waits(program):
    fn, module, section = program
    stage(section, sp.LoadOp, "b").detach()
    with pytest.raises(
        FifoDeadlock,
        match=r"matmul_tiles at \(0, 0\) \(item 0, K block 0\) waits for a "
        r"full page in in1@0,0 \(0/3 pages full\)",
    ):
        check(fn, module)


def test_mutation_buffer_past_the_end_of_local_memory_is_reported(program):
    fn, module, section = program
    section.one(sp.MeshOp).properties["local_mem"] = IntegerAttr(40000, i64)
    with pytest.raises(BufferOutsideMemory, match=r"local memory is \[0, 40000\)"):
        check(fn, module)


def test_mutation_missing_spill_is_reported(program):
    fn, module, section = program
    old = section.one(sp.MatmulTilesOp)
    new = sp.MatmulTilesOp(old.in0, old.in1, old.out, old.acc, None, None, old.engine)
    section.body.block.insert_op_before(new, old)
    old.detach()
    with pytest.raises(
        SimulationError,
        match="3 sub-blocks of 1x3 tiles stay in the accumulator "
        "between K blocks without a spill, but it holds 1x3 tiles",
    ):
        check(fn, module)


# ── Any GEMM on any preset ──────────────────────────────────────────────────────────────────


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    m=st.integers(1, 300),
    k=st.integers(1, 300),
    n=st.integers(1, 300),
    elt=st.sampled_from(["bf16", "f32"]),
    target=st.sampled_from(sorted(PRESETS)),
)
def test_any_gemm_on_any_preset_passes_or_is_refused(m, k, n, elt, target):
    fn = gemm(m, k, n, elt)
    try:
        module = compile_module(fn, target)
    except SpatialPassError as e:  # refused by name: a typed diagnostic of link or the target
        # never the compiler refusing its own plan (an sp verifier error on what it built, or a
        # site past its budget under the plan tile chose): docs/passes.md#shared-the-compiler-never-refuses-its-own-output
        assert not isinstance(e, SpatialVerifyError), e
        return
    (result,) = check(fn, module, seed=m * 7 + n)
    assert result.ok, result.line()


@pytest.mark.parametrize(
    "mutate, report",
    [
        (lambda s: stage(s, sp.StoreOp, "c").detach(), "sim: UnwrittenOutput: output @c"),
        (lambda s: set_offset(s, "in1", "in0"), "MISMATCH"),
    ],
)
def test_the_command_ends_in_fail_for_a_wrong_program(
    capsys, tmp_path, monkeypatch, mutate, report
):
    path = tmp_path / "g.mlir"
    a, b, c = "tensor<384x512xbf16>", "tensor<512x384xbf16>", "tensor<384x384xbf16>"
    path.write_text(
        f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
        f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
    )

    def compile_wrong(fn, target, **options):
        module = compile_module(fn, target, grid="4x4", split_k=1, **options)
        mutate(next(op for op in module.walk() if isinstance(op, sp.ProgramOp)))
        return module

    monkeypatch.setattr(spatial_run, "compile_module", compile_wrong)
    status = main([str(path), "--target", "wormhole_n150"])
    out, err = capsys.readouterr()
    assert status == 1 and report in out and not err
    assert out.strip().splitlines()[-1].startswith("FAIL")


@pytest.mark.parametrize(
    "m, k, n, elt, target",
    [
        # Sites whose kernels end on a push the store then needs: a scheduler that did not count
        # a process's last step as progress called this a deadlock.
        (488, 662, 1033, "f32", "wormhole_n150"),
        # A register accumulator's 1x8 sub-block written a tile a lane through a 4-page output
        # FIFO: a push of the whole sub-block at once waited for 8 free pages forever.
        (2048, 512, 2048, "bf16", "rtx3060"),
        # Several blocks a site, dealt unevenly (17 block columns over 6 site columns) with a
        # boundary block row: multicast members with fewer items get only the sender's first.
        (544, 64, 544, "bf16", "wormhole_n150"),
        # A line of 33 sites folded onto the mesh, A multicast along it, the last site one round
        # short.
        (160, 64, 2080, "bf16", "wormhole_n150"),
    ],
)
def test_gemms_that_once_went_wrong(m, k, n, elt, target):
    fn = gemm(m, k, n, elt)
    (result,) = check(fn, compile_module(fn, target))
    assert result.ok, result.line()


def test_i8_gemm_on_plasticine_computes_in_i32_and_passes():
    """docs/passes.md#link-integer-operand-precision-from-intervals: plasticine has no i8, but i32 holds an i8 operand's interval, so the operands
    widen to i32 on load (the DRAM tensors stay i8) and the product is exact."""
    a, b, c = "tensor<40x70xi8>", "tensor<70x50xi8>", "tensor<40x50xi32>"
    fn = entry_function(
        parse_module(
            f"func.func @g(%a: {a}, %b: {b}) -> {c} {{\n"
            f"  %c = tg.matmul %a, %b : ({a}, {b}) -> {c}\n  func.return %c : {c}\n}}"
        )
    )
    module = compile_module(fn, "plasticine")
    (program,) = (op for op in module.walk() if isinstance(op, sp.ProgramOp))
    assert program.attributes["operand_precision"].data == (
        "i32: interval [-128, 127] fits; plasticine has no i8"
    )
    (result,) = check(fn, module)
    assert result.ok, result.line()


# ── Split-K: slices walk their K, partial sums pass slice to slice, the last slice stores ───────


def compiled(m, k, n, elt, target, grid, accumulate="f32"):
    fn = gemm(m, k, n, elt)
    module = compile_module(fn, target, accumulate=accumulate, **({"grid": grid} if grid else {}))
    section = next(op for op in module.walk() if isinstance(op, sp.ProgramOp))
    return fn, module, section


@pytest.mark.parametrize(
    "m, k, n, elt, grid, accumulate, slices, along, over",
    [
        # 4 slices along y, both operands multicast (B's column groups cut at each slice), spill.
        (64, 2048, 96, "f32", None, "f32", 4, "y", None),
        # Slices along x, partial tiles at both edges of the output.
        (100, 256, 100, "f32", "4x4", "f32", 2, "x", None),
        # A bf16 GEMM's f32 partial sums (the tg contract), several sub-blocks a block.
        (64, 2048, 200, "bf16", "4x4", "f32", 4, "y", None),
        # The same with bf16 partial sums (accumulate=bf16: the 16-bit accumulator's type).
        (64, 2048, 200, "bf16", "4x4", "bf16", 4, "y", None),
        # Several blocks a site in rounds, in each slice (384x512x384 planned this until the
        # sub-block write-back and the tile-matmul's issue cycles left it unsplit).
        (320, 1024, 320, "bf16", "4x4", "f32", 4, "x", (1, 4)),
    ],
)
def test_split_k_programs_equal_the_reference(m, k, n, elt, grid, accumulate, slices, along, over):
    fn, module, section = compiled(m, k, n, elt, "wormhole_n150", grid, accumulate)
    work = section.one(sp.WorkOp)
    assert (work.k_slices, work.split_axis, work.over) == (slices, along, over)
    partials = sp.buffer_of(section.one(sp.MatmulTilesOp).partials)
    assert str(partials.elt) == ("bf16" if accumulate == "bf16" else "f32")
    (result,) = check(fn, module, accumulate=accumulate)
    assert result.ok, result.line()


def test_mutation_split_without_its_reduction_is_reported():
    fn, module, section = compiled(64, 2048, 96, "f32", "wormhole_n150", None)
    old = section.one(sp.MatmulTilesOp)
    new = sp.MatmulTilesOp(old.in0, old.in1, old.out, old.acc, old.spill, None, old.engine)
    section.body.block.insert_op_before(new, old)
    old.detach()
    with pytest.raises(SimulationError, match="4 K slices and no partials FIFO"):
        check(fn, module)
