"""bench/model_decode.py: a smoke run of the whole-step decode bench on a 2-layer tiny model, on one
chip and over n300 (the Llama-3.1-8B rows and the 70B and Qwen3-30B-A3B mesh rows take minutes and
are recorded in bench/README.md; SPATIAL_MESH_FULL=1 runs the Llama-3.1-70B t3k rows)."""

import json
import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

md = load("model_decode")


def test_smoke_tiny_step():
    import generate

    program = md.decode_step(generate.TINY, 64, 2)
    row = md.measure(program, "tiny", "wormhole_n150", "bf16", 64, 2)
    # the embedding; 2 layers of 19 sections (norm, q/k/v, q/k norms, 2 ropes, 2 cache writes,
    # attention, o, residual, norm, gate/up, swiglu, down, residual: d = 128 fits one norm
    # section); the final norm, the LM head, the arg-max
    assert row.sections == 1 + 2 * 19 + 1 + 1 + 1
    assert row.needs is None and row.dram_bytes > 0
    # Every section's prediction is at least its roofline, so the step's is too.
    assert row.predicted_us >= row.roofline_us > 0
    assert abs(row.tokens_per_s * row.predicted_us - 1e6) < 1e-6
    lines = md.table([row])
    assert len(lines) == 3 and "| wormhole_n150 | bf16 | 64 |" in lines[-1]
    assert lines[-1].endswith("| 26.0 |")  # tt-metal's published n150 rate beside it


def test_q8_0_weights_add_one_activation_view_per_value_and_read_fewer_bytes():
    import generate

    bf16 = md.measure(md.decode_step(generate.TINY, 64, 2), "tiny", "wormhole_n150", "bf16", 64, 2)
    q8 = md.measure(
        md.decode_step(generate.TINY, 64, 2, "q8_0"), "tiny", "wormhole_n150", "q8_0", 64, 2
    )
    # One Q8_0 view per value a Q8_0 matmul reads: a layer's attention norm (q, k, v share it),
    # attention's output (o), the FFN norm (gate, up) and swiglu (down); then the final norm (LM head).
    assert q8.sections == bf16.sections + 2 * 4 + 1
    assert q8.needs is None and 0 < q8.dram_bytes < bf16.dram_bytes
    assert "| wormhole_n150 | q8_0 | 64 |" in md.table([q8])[-1]


def test_the_model_is_llama_3_1_8b():
    import generate

    m = generate.LLAMA31_8B
    assert (m.d, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab) == (
        4096,
        32,
        8,
        128,
        14336,
        128256,
    )
    assert md.TT_METAL_TOKENS_PER_S_USER == {"wormhole_n150": 26.0, "blackhole_p150": 33.1}


def test_the_mesh_models_and_published_rates():
    import generate

    m = generate.LLAMA31_70B
    assert (m.d, m.heads, m.kv_heads, m.head_dim, m.ffn, m.vocab) == (
        8192,
        64,
        8,
        128,
        28672,
        128256,
    )
    q = generate.QWEN3_30B_A3B
    assert (q.d, q.heads, q.kv_heads, q.vocab, q.moe.experts, q.moe.top_k, q.moe.ffn) == (
        2048,
        32,
        4,
        151936,
        128,
        8,
        768,
    )
    assert md.MESH_LAYERS == {"llama3_1_70b": 80, "qwen3_30b_a3b": 48}
    assert md.TT_METAL_MESH_TOKENS_PER_S_USER == {
        ("llama3_1_70b", "t3k"): 15.9,
        ("llama3_1_70b", "galaxy"): 72.5,
    }


def test_the_mesh_rows_are_issue_23s():
    """Issue 23's rows at batch 1 and at tt-metal's batch 32 (the same rows at both), context 128."""
    rows = [
        (m.name, layers, mesh, w, context, sharded, batch)
        for m, layers, mesh, w, context, sharded, batch in md.mesh_rows_plan(smoke=False)
    ]
    per_batch = [
        ("llama3_1_70b", 80, "t3k", "bfp8_b"),
        ("llama3_1_70b", 80, "t3k", "bf16"),
        ("llama3_1_70b", 80, "galaxy", "bfp8_b"),
        ("qwen3_30b_a3b", 48, "n300", "bf16"),
        ("qwen3_30b_a3b", 48, "n300", "bfp8_b"),
        ("qwen3_30b_a3b", 48, "p150x4", "bf16"),
        ("qwen3_30b_a3b", 48, "p150x4", "bfp8_b"),
    ]
    assert rows == [(*r, 128, False, b) for b in (1, 32) for r in per_batch]


def test_smoke_batched_tiny_step_over_n300_serves_three_users():
    """The batched step over a mesh: 3 users' step, split by heads (prefer-sharded), costs less
    than three single-user steps; the row carries its batch and how the attention was priced."""
    import generate

    one = md.measure_mesh(generate.TINY, 2, "n300", "bf16", 64, prefer_sharded=True)
    three = md.measure_mesh(generate.TINY, 2, "n300", "bf16", 64, prefer_sharded=True, batch=3)
    assert (three.batch, three.refusal) == (3, None) and one.attention is None
    assert "priced at every user's full capacity" in three.attention
    assert three.plans["attn"] == {"heads": 2} and three.plans["kc"] == {"heads": 2}
    assert one.predicted_us < three.predicted_us < 3 * one.predicted_us
    line = md.mesh_table([three])[-1]
    assert line.startswith("| tiny | n300 (2) | bf16 | 3 | 64 |")
    assert f"| {3 * three.tokens_per_s:.0f} |" in line


def _tiny_deployment_report():
    """The tiny step over n300 compiled by spatial-opt's own pipeline, as a person would: the
    numbers the bench's row must agree with."""
    import generate
    from xdsl.parser import Parser
    from xdsl.passes import PassPipeline

    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    tool = SpatialOptMain(args=[])
    module = Parser(tool.ctx, md.decode_step(generate.TINY, 64, 2)).parse_module()
    spec = "tensor-parallel{mesh=n300 prefer-sharded=true},spatial-pipeline{target=n300}"
    PassPipeline.parse_spec(tool.available_passes, spec).apply(tool.ctx, module)
    return report(module)


def test_smoke_tiny_step_over_n300():
    import generate

    from spatial_dialect.passes.dram_layout import dram_layout
    from spatial_dialect.passes.target_choice import chip_target
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    row = md.measure_mesh(generate.TINY, 2, "n300", "bf16", 64, prefer_sharded=True)
    r = _tiny_deployment_report()
    assert (row.card, row.chips, row.batch, row.context, row.layers) == ("n300", 2, 1, 64, 2)
    # Collectives are steps between sections, not sections: one chip runs the single-chip step's
    # sections (test_smoke_tiny_step) on its shards, less the arg-max, which the vocab-split LM
    # head's (value, index) pick (mesh.argmax_gather, a step) replaces.
    assert row.sections == 1 + 2 * 19 + 1 + 1
    assert row.plans["logits"] == {"vocab": 1}
    assert len(row.collectives) == len(r["collectives"]) > 0
    # The step is one chip's sections plus every collective: the report's total.
    assert abs(row.predicted_us - r["total"]["predicted_us"]) < 1e-6
    assert abs(row.collectives_us - sum(c["us"] for c in r["collectives"])) < 1e-6
    assert 0 < row.collective_share < 1 and row.predicted_us >= row.roofline_us > 0
    # Each chip holds its shards: less than the whole step's tensors, more than half of them (the
    # tiny model's norms, embedding and LM head stay replicated).
    program = md.decode_step(generate.TINY, 64, 2)
    single = md.compile_step(SpatialOptMain(args=[]), program, "target=wormhole_n150")
    layout = dram_layout(single, chip_target("wormhole_n150"))
    whole = layout[-1].offset + layout[-1].bytes
    assert whole / 2 < row.bytes_per_chip < whole and row.fits
    # Every product's decision is read: seven a layer and the LM head.
    assert sum(n for c in row.plans.values() for n in c.values()) == 2 * 7 + 1
    assert set(row.plans) == {"q", "k", "v", "o", "gate", "up", "down", "logits"}
    line = md.mesh_table([row])[-1]
    assert line.startswith("| tiny | n300 (2) | bf16 | 1 | 64 |") and line.endswith("| - |")


def test_json_rows_carry_issue_24s_fields(capsys):
    assert md.main(["--smoke", "--json"]) == 0
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r["model"], r["card"], r["batch"]) for r in rows] == [
        ("tiny", "wormhole_n150", 1),
        ("tiny", "wormhole_n150", 3),
        ("tiny", "n300", 1),
        ("tiny", "n300", 3),
    ]
    mesh_batched = rows.pop(3)
    assert mesh_batched["tokens_per_s"] == pytest.approx(
        3 * mesh_batched["tokens_per_s_user"], rel=1e-6
    )
    batched = rows.pop(1)
    assert (batched["context"], batched["format"], batched["fits"]) == (64, "bfp8_b", True)
    assert batched["tokens_per_s"] == pytest.approx(3 * batched["tokens_per_s_user"], rel=1e-6)
    for r in rows:
        assert list(r) == [
            "model",
            "card",
            "batch",
            "context",
            "format",
            "tokens_per_s_user",
            "tokens_per_s",
            "step_over_roofline",
            "fits",
        ]
        assert (r["batch"], r["context"], r["format"], r["fits"]) == (1, 64, "bf16", True)
        assert r["tokens_per_s"] == r["tokens_per_s_user"] > 0
        assert r["step_over_roofline"] >= 1


def _tiny_batched(users: int):
    import generate

    program = md.decode_step(generate.TINY, 64, 2, "bfp8_b", users=users)
    return program, md.measure(program, "tiny", "wormhole_n150", "bfp8_b", 64, 2, users)


def test_smoke_batched_tiny_step_serves_three_users_for_less_than_three_steps():
    program, three = _tiny_batched(3)
    _, one = _tiny_batched(1)
    # The batched step spatial-import --batch writes: per-user cache writes and attention.
    assert "tg.batch_set_rows" in program and "tg.batch_attention" in program
    assert three.batch == 3 and one.batch == 1
    # The weights are read once for the three users: one step for three costs less than three
    # steps for one, and moves less than three times the bytes.
    assert one.predicted_us < three.predicted_us < 3 * one.predicted_us
    assert one.dram_bytes < three.dram_bytes < 3 * one.dram_bytes
    # The row says how the report priced the attention over the users' caches.
    assert "priced at every user's full capacity" in three.attention
    line = md.batched_table([three])[-1]
    assert line.startswith("| wormhole_n150 | bfp8_b | 3 | 64 |") and line.endswith("| - |")


def test_the_batched_rows_are_issue_24s():
    plan = md.batched_rows_plan(smoke=False)
    # the vLLM row: its published figure is at batch 8 on one H200
    assert plan.pop() == ("h200", "bf16", 8, 128)
    assert len(plan) == 3 * 2 * 3 * 2
    assert {b for _, _, b, _ in plan} == {1, 8, 32} and {c for *_, c in plan} == {128, 4096}
    assert {(c, w) for c, w, _, _ in plan} == {
        ("wormhole_n150", "bfp8_b"),
        ("wormhole_n150", "q8_0"),
        ("blackhole_p150", "bfp8_b"),
        ("blackhole_p150", "q8_0"),
        ("h100", "bf16"),
        ("h100", "q8_0"),
    }
    assert md.batched_rows_plan(smoke=True) == [("wormhole_n150", "bfp8_b", 3, 64)]


def _row(card: str, batch: int, context: int, excess=()) -> "md.Row":
    return md.Row(
        "m", card, "bfp8_b", context, 1, 1, 120.0, 100.0, 1, 0.0, batch=batch, excess=excess
    )


def test_published_rates_beside_the_batched_rows():
    # tt-metal's rates are at batch 32 and context 128 only.
    assert md.published(_row("wormhole_n150", 32, 128)) == "tt-metal 26.0"
    assert md.published(_row("blackhole_p150", 32, 128)) == "tt-metal 33.1"
    assert md.published(_row("blackhole_p150", 32, 4096)) == "-"
    assert md.published(_row("wormhole_n150", 8, 128)) == "-"
    # NIM's H100 table: 1000 / 4.63 ms at concurrency 1; batch 32 between concurrency 25
    # (1000 / 5.19 ms) and 50 (1000 / 5.91 ms), never interpolated.
    assert md.published(_row("h100", 1, 128)) == "NIM 216"
    assert md.published(_row("h100", 32, 128)) == "NIM c=25: 193, c=50: 169"
    assert md.published(_row("h100", 8, 4096)) == "NIM c=5: 218, c=25: 193"
    # vLLM's latency test, batch 8: 128 steps (and a 32-token prefill) in 833.421 ms on an H200,
    # 997.542 ms on an H100, at contexts 32 to 160 (so not beside a 4096-row context)
    assert md.published(_row("h200", 8, 128)) == "vLLM >= 154 (e2e, 32 in + 128 out)"
    assert md.published(_row("h200", 32, 128)) == "-"
    assert md.published(_row("h100", 8, 128)) == (
        "vLLM >= 128 (e2e, 32 in + 128 out); NIM c=5: 218, c=25: 193"
    )


def test_excess_ranks_names_over_the_layers_by_time_past_roofline():
    sections = [
        {"name": "l0_attn", "op": "tg.batch_attention", "predicted_us": 30.0, "roofline_us": 10.0},
        {"name": "l1_attn", "op": "tg.batch_attention", "predicted_us": 30.0, "roofline_us": 10.0},
        {"name": "l0_gate", "op": "tg.matmul", "predicted_us": 110.0, "roofline_us": 100.0},
        {"name": "token", "op": "tg.argmax", "predicted_us": 16.0, "roofline_us": 1.0},
    ]
    assert md.excess(sections, 2) == (
        ("attn", "tg.batch_attention", 60.0, 20.0),
        ("token", "tg.argmax", 16.0, 1.0),
    )
    row = _row("wormhole_n150", 32, 128, md.excess(sections, 1))
    assert md.batched_findings(row) == (
        "wormhole_n150 bfp8_b B=32 S=128: step/roofline 1.200 (PAST 1.15); most time over "
        "roofline: attn (tg.batch_attention) 0.06 ms vs 0.02 ms roofline (3.00x)"
    )


@pytest.mark.skipif(
    os.environ.get("SPATIAL_MESH_FULL") != "1", reason="80 layers: SPATIAL_MESH_FULL=1"
)
def test_llama_3_1_70b_over_t3k():
    import generate

    fp8 = md.measure_mesh(generate.LLAMA31_70B, 80, "t3k", "bfp8_b", md.MESH_CONTEXT)
    bf16 = md.measure_mesh(generate.LLAMA31_70B, 80, "t3k", "bf16", md.MESH_CONTEXT)
    # By hand: a layer's products hold 2 x 8192^2 (q, o) + 2 x 8192 x 1024 (k, v) + 3 x 8192 x
    # 28672 (gate, up, down) = 855.6M weights, 80 layers over 8 chips 8.56G a chip; the embedding
    # table (128256 x 8192 = 1.05G) is replicated. In bfp8_b (1088 bytes a 1024-element tile)
    # that is at least 10.2 GB a chip, under a Wormhole's 12 GiB; in bf16 over 19 GB, past it.
    per_chip = (80 * (2 * 8192**2 + 2 * 8192 * 1024 + 3 * 8192 * 28672)) / 8 + 128256 * 8192
    assert fp8.fits and per_chip * 1088 / 1024 < fp8.bytes_per_chip <= 12 * 2**30
    assert not bf16.fits and bf16.bytes_per_chip > per_chip * 2 > 12 * 2**30
    assert fp8.chips == 8 and fp8.sections > 80 * 19
    # FF2 is 2d in every layer (K over one axis, N over the other), its partial sums
    # all_reduced over one axis.
    assert fp8.plans["down"] == {"2d": 80}
    assert sum(1 for k, t, _ in fp8.collectives if (k, t) == ("all_reduce", "down_1")) == 80
