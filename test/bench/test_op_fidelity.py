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

FILE_AT_COMMIT = re.compile(r"^tt-metal \S+ @ [0-9a-f]{12,40}\b")
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
