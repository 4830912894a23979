"""bench/model_decode.py: a smoke run of the whole-step decode bench on a 2-layer tiny model (the
Llama-3.1-8B rows take minutes and are recorded in bench/README.md)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

md = load("model_decode")


def test_smoke_tiny_step():
    import generate

    program = md.decode_step(generate.TINY, 64, 2)
    row = md.measure(program, "wormhole_n150", "bf16", 64, 2)
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

    bf16 = md.measure(md.decode_step(generate.TINY, 64, 2), "wormhole_n150", "bf16", 64, 2)
    q8 = md.measure(md.decode_step(generate.TINY, 64, 2, "q8_0"), "wormhole_n150", "q8_0", 64, 2)
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
