"""tg.moe: its reference against a plain loop written here independently (routing by sorting
Python floats, one expert at a time), the tie rule, the simulator against the reference on the
forms link makes (decode: indexed loads; prefill: every expert; a gated shared expert), an
indexed load's id out of range, and the report's expert bytes: k experts in decode, E in
prefill."""

from __future__ import annotations

import json
import math
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.interpreters import numerics as ref
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.simulator.machine import IndexOutOfRange
from spatial_dialect.tools.simulator.program import simulate
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)


def program(
    t: int,
    d: int,
    e: int,
    f: int,
    k: int,
    scores: str = "softmax",
    renormalize: bool = True,
    shared: int = 0,
    shared_ffn: int = 48,
    elt: str = "f32",
) -> str:
    """One tg.moe over T x D rows with E experts of FFN width F; `shared`: 0, 3 or 4 operands."""
    shapes = [("x", (t, d)), ("r", (d, e)), ("g", (e * d, f)), ("u", (e * d, f)), ("d", (e * f, d))]
    extra = [
        ("sg", (d, shared_ffn)),
        ("su", (d, shared_ffn)),
        ("sd", (shared_ffn, d)),
        ("sw", (d, 1)),
    ]
    shapes += extra[:shared]
    ty = {n: f"tensor<{a}x{b}x{elt}>" for n, (a, b) in shapes}
    args = ", ".join(f"%{n}: {ty[n]}" for n, _ in shapes)
    operands = ", ".join(f"%{n}" for n, _ in shapes)
    types = ", ".join(ty[n] for n, _ in shapes)
    props = f'top_k {k} scores "{scores}"' + (" renormalize true" if renormalize else "")
    return (
        f"func.func @f({args}) -> {ty['x']} {{\n"
        f"  %y = tg.moe {operands} {props} : ({types}) -> {ty['x']}\n"
        f"  func.return %y : {ty['x']}\n}}"
    )


def plain_moe(inputs: dict, k: int, scores: str, renormalize: bool, shared: int) -> np.ndarray:
    """The MoE block as a loop over tokens and experts (f32 inputs): route by sorting (logit,
    index) pairs in Python floats, weigh by the scores, run each chosen expert's SwiGLU FFN."""
    x, r = inputs["x"].astype(np.float64), inputs["r"].astype(np.float64)
    t, d = x.shape
    f = inputs["g"].shape[1]

    def ffn(row, gate, up, down):
        g, u = row @ gate, row @ up
        return (g / (1 + np.exp(-g)) * u) @ down

    out = np.zeros((t, d))
    for i in range(t):
        logits = [float(v) for v in x[i] @ r]
        ranked = sorted(range(len(logits)), key=lambda e: (-logits[e], e))[:k]
        if scores == "softmax":
            top = max(logits)
            total = sum(math.exp(v - top) for v in logits)
            score = [math.exp(v - top) / total for v in logits]
        else:
            score = [1 / (1 + math.exp(-v)) for v in logits]
        weights = [score[e] for e in ranked]
        if renormalize:
            weights = [w / sum(weights) for w in weights]
        for e, w in zip(ranked, weights, strict=True):
            gate = inputs["g"][e * d : (e + 1) * d].astype(np.float64)
            up = inputs["u"][e * d : (e + 1) * d].astype(np.float64)
            down = inputs["d"][e * f : (e + 1) * f].astype(np.float64)
            out[i] += w * ffn(x[i], gate, up, down)
        if shared:
            s = ffn(x[i], *(inputs[n].astype(np.float64) for n in ("sg", "su", "sd")))
            if shared == 4:
                s = s / (1 + math.exp(-float(x[i] @ inputs["sw"].astype(np.float64)[:, 0])))
            out[i] += s
    return out


def reference(text: str, inputs: dict) -> np.ndarray:
    return evaluate(entry_function(parse_module(text)), inputs)[0]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    t=st.integers(1, 5),
    d=st.sampled_from([8, 32]),
    e=st.integers(1, 6),
    f=st.sampled_from([4, 32]),
    data=st.data(),
    scores=st.sampled_from(["softmax", "sigmoid"]),
    renormalize=st.booleans(),
    shared=st.sampled_from([0, 3, 4]),
    seed=st.integers(0, 2**16),
)
def test_reference_is_the_plain_loop(t, d, e, f, data, scores, renormalize, shared, seed):
    k = data.draw(st.integers(1, e))
    text = program(t, d, e, f, k, scores, renormalize, shared, shared_ffn=8)
    inputs = draw_inputs(entry_function(parse_module(text)), seed)
    got = reference(text, inputs)
    want = plain_moe(inputs, k, scores, renormalize, shared)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4 * max(1.0, np.abs(want).max()))


def test_equal_logits_go_to_the_lower_expert():
    # x = ones and router columns 1 and 3 equal (and largest): both score alike, expert 1 wins
    # the one slot; expert 3 alone would give another result.
    text = program(1, 8, 4, 4, 1, "sigmoid", renormalize=False)
    inputs = draw_inputs(entry_function(parse_module(text)), 0)
    inputs["x"] = np.ones((1, 8), np.float32)
    r = np.zeros((8, 4), np.float32)
    r[:, 1] = r[:, 3] = 0.5
    inputs["r"] = r
    ids, weights = ref.moe_route(inputs["x"] @ r, 1, "sigmoid", False)
    assert ids.tolist() == [[1]]
    assert weights[0, 0] == pytest.approx(1 / (1 + math.exp(-4.0)))
    got = reference(text, inputs)
    np.testing.assert_allclose(got, plain_moe(inputs, 1, "sigmoid", False, 0), rtol=1e-5)


def test_routing_weights_sum_to_one_when_renormalized():
    logits = np.array([[3.0, -1.0, 2.0, 0.5]], np.float32)
    ids, weights = ref.moe_route(logits, 2, "softmax", True)
    assert ids.tolist() == [[0, 2]]
    assert weights.sum() == pytest.approx(1.0)
    assert weights[0, 0] / weights[0, 1] == pytest.approx(math.exp(1.0))


def run(text: str, target: str, seed: int = 0):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, target)
    inputs = draw_inputs(fn, seed)
    reference_values, values = reference_outputs(fn, inputs)
    simulated = simulated_outputs(fn, module, inputs)
    return compare_outputs(fn, reference_values, values, simulated)


CASES = {
    # T = 1: the k chosen experts by indexed loads
    "decode": dict(t=1, d=64, e=4, f=32, k=2),
    "decode_sigmoid_gated_shared": dict(t=1, d=64, e=5, f=64, k=3, scores="sigmoid", shared=4),
    # T > 1: every expert once, rows that did not choose one weighted zero; partial tiles
    "prefill": dict(t=40, d=64, e=4, f=32, k=2),
    "prefill_shared": dict(t=8, d=32, e=3, f=32, k=1, renormalize=False, shared=3),
}


@pytest.mark.parametrize(
    "target,elt", [("wormhole_n150", "bf16"), ("plasticine", "f32"), ("h100", "bf16")]
)
@pytest.mark.parametrize("case", sorted(CASES))
def test_moe_simulates_to_the_reference(case, target, elt):
    comparisons = run(program(**CASES[case], elt=elt), target)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]


def routed_by_an_out_of_range_id(**options: str | int) -> tuple[ModuleOp, list[np.ndarray]]:
    """A one-row MoE of experts 0..3, top-2, compiled for wormhole_n150 (with `options`), whose
    router section for slot 0 (`y__id0`) is replaced by an entry input; returns the module and its
    inputs, that id holding 4. The simulator and the TT-Lang backend both must refuse it at the
    first GEMM that loads by it, before any read."""
    fn = entry_function(parse_module(program(1, 64, 4, 32, 2)))
    module = compile_module(fn, "wormhole_n150", **options)
    block = module.body.block
    route = next(
        op for op in block.ops if isinstance(op, sp.ProgramOp) and op.sym_name.data == "y__id0"
    )
    entry = next(op for op in block.ops if isinstance(op, sp.EntryOp))
    names = [a.data for a in entry.inputs.data]
    block.insert_op_before(
        sp.EntryOp(entry.function.data, [*names, "y__id0"], [o.data for o in entry.outputs.data]),
        entry,
    )
    block.erase_op(entry)
    block.erase_op(route)
    drawn = draw_inputs(fn, 0)
    return module, [*(drawn[n] for n in names), np.array([[4]], np.int32)]


def test_an_expert_id_out_of_range_is_reported_before_any_read():
    module, inputs = routed_by_an_out_of_range_id()
    with pytest.raises(
        IndexOutOfRange, match=r"id 4 in @y__id0 outside \[0, 4\) blocks of 2 tile rows of @g"
    ):
        simulate(module, inputs)


def test_the_report_counts_k_experts_in_decode_and_every_expert_in_prefill(tmp_path):
    """-t report's DRAM bytes of the stacked weights: one expert is 3 matrices of 2 x 1 tiles of
    2048 bytes (bf16, D = 64, F = 32); decode reads k = 2 of the 4 experts, prefill all 4."""
    expert = 3 * 2 * 2048
    for t, experts in ((1, 2), (8, 4)):
        path = tmp_path / f"moe{t}.mlir"
        path.write_text(program(t, 64, 4, 32, 2, elt="bf16"))
        out = subprocess.run(
            [
                sys.executable,
                "-m",
                "spatial_dialect.tools.spatial_opt",
                str(path),
                "-p",
                "spatial-pipeline{target=wormhole_n150}",
                "-t",
                "report",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        weights = sum(
            n
            for row in json.loads(out)["sections"]
            for name, n in row.get("dram_bytes_by_tensor", {}).items()
            if name in ("g", "u", "d")
        )
        assert weights == experts * expert, (t, weights)
