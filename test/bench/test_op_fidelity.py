"""bench/op_fidelity.py: every measured row names its source (a tt-metal file at a commit, or a
tt-metal pull request) and one measured quantity, and every section of a decoder layer is laid to
a role a measured op can name (the whole table takes ~25 s and is recorded in
bench/README.md#op-by-op-fidelity-issue-26)."""

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

of = load("op_fidelity")

FILE_AT_COMMIT = re.compile(r"^(tt-metal|tenstorrent/[\w.-]+) \S+ @ [0-9a-f]{12,40}\b")
PULL_REQUEST = re.compile(r"^tenstorrent/tt-metal pull request #\d+\b")


def test_every_measured_row_has_a_source_and_one_quantity():
    assert len([m for m in of.MEASURED if m.us is not None]) >= 10
    for m in of.MEASURED:
        assert FILE_AT_COMMIT.match(m.source) or PULL_REQUEST.match(m.source), m
        assert m.case in of.CASES, m
        assert m.roles and set(m.roles) <= set(of.ROLES) - {"other"}, m
        assert (m.us is None) != (m.gbps is None), m  # a duration or a rate, not both
        assert (m.us or m.gbps) > 0 and m.per_layer >= 1, m
    for case, _, source, (lo, hi), rate_source in of.STEPS:
        assert case in of.CASES and 0 < lo <= hi
        for s in (source, rate_source):
            assert FILE_AT_COMMIT.match(s) or PULL_REQUEST.match(s), s
    for case, role in of.TT_BYTES:
        assert case in of.CASES and role in of.ROLES


def test_cases_are_models_and_cards_we_have():
    from spatial_dialect.passes.target_choice import mesh_named
    from spatial_dialect.targets import load_target

    models = of.mf._models()
    for case in of.CASES.values():
        assert case.model in models
        assert mesh_named(case.card) is not None or load_target(case.card) is not None
        assert {case.attention, case.mlp} <= set(of.mf.FIDELITY)


def test_every_layer_section_has_a_role():
    # a tiny decoder layer on one chip: each section is laid to a role, none to "other", and the
    # roles add up to the layer's sections
    import generate

    case = of.Case("tiny", "wormhole_n150", batch=2, context=64, mlp="bfp8_b")
    layer = of.ours(case, (generate.TINY, 2))
    assert layer.us["other"] == 0
    for role in set(of.ROLES) - {"other", "ccl", "heads"}:  # the tail's roles too
        assert layer.us[role] > 0, role
    # two layers: the step is the sections outside the layers plus twice one layer, and the
    # step's weights are twice the layer's projections plus the LM head
    assert layer.step_us > 2 * sum(v for r, v in layer.us.items() if r not in of.TAIL_ROLES)
    projections = sum(layer.us[r] for r in of.WEIGHT_ROLES)
    assert 2 * projections < layer.weights_us < layer.step_us


def test_every_single_chip_step_has_a_source():
    chip = of.chip
    for s in (chip.FIDELITY_PR, chip.READER_CORES):
        assert FILE_AT_COMMIT.match(s) or PULL_REQUEST.match(s), s
    for f in chip.FIDELITY_STEPS:
        assert FILE_AT_COMMIT.match(f.source) or PULL_REQUEST.match(f.source), f
        assert f.case in of.CASES and set(f.roles) <= set(of.ROLES) - {"other"}, f
        assert 0 < f.before < f.after, f  # each change made the step faster
        assert f.per_step == (set(f.roles) <= set(of.TAIL_ROLES)), f


def test_reader_core_math_by_hand():
    # Llama-3.1-8B (hidden 4096, 32 heads and 8 kv heads of 128, FFN 14336, vocab 128256): tile
    # counts of one 32-row activation tile, by hand
    chip = of.chip
    model, layers = of.mf._models()["llama3_1_8b"]
    counts = {r: chip.tile_matmuls(model, r) for r in ("qkv", "wo", "ff1_ff3", "ff2", "lm_head")}
    assert counts == {
        "qkv": 128 * 192,
        "wo": 128 * 128,
        "ff1_ff3": 2 * 128 * 448,
        "ff2": 448 * 128,
        "lm_head": 128 * 4008,
    }
    # FF2 on a P150's 8 reader cores at 1.35 GHz, HiFi2 (32 cycles a tile) less LoFi (16):
    # 57344 * 16 / 8 / 1350 = 84.95 us; on an N150's 12 at 1 GHz, LoFi: 57344 * 16 / 12 / 1000
    hi = chip.reader_math_us("blackhole_p150", model, "ff2", "hifi2")
    lo = chip.reader_math_us("blackhole_p150", model, "ff2", "lofi")
    assert abs(hi - lo - 84.954) < 0.01
    assert abs(chip.reader_math_us("wormhole_n150", model, "ff2", "lofi") - 76.459) < 0.01
    # PR #50662's FF2 step, 40.8 -> 45.4 t/s/u over 32 layers: (24509.80 - 22026.43) / 32 us
    ff2 = next(f for f in chip.FIDELITY_STEPS if f.roles == ("ff2",))
    assert abs(ff2.saved_us(layers) - 77.605) < 0.01
