"""bench/model_fidelity.py: its table of published rates parses, every row names its source and
a card we have, and the one-layer extrapolation it predicts with is the L-layer compile's total
(the whole table takes ~45 s and is recorded in bench/README.md#whole-model-fidelity)."""

import sys
from dataclasses import replace
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from bench_loader import load  # noqa: E402

mf = load("model_fidelity")


def test_every_row_parses_and_names_its_source():
    from spatial_dialect.passes.target_choice import mesh_named
    from spatial_dialect.targets import load_target

    models = mf._models()
    assert len(mf.PUBLISHED) >= 10
    for row in mf.PUBLISHED:
        assert row.model in models, row
        assert row.tokens_per_s_user > 0 and row.batch >= 1 and row.context >= 1
        # a file of tenstorrent/tt-metal at a commit
        assert row.source.startswith("tt-metal models/") and " @ " in row.source, row
        assert mesh_named(row.card) is not None or load_target(row.card) is not None
        assert {row.attention, row.mlp} <= set(mf.FIDELITY)
    # no two rows are the same measurement under the same source
    keys = [(r.model, r.card, r.batch, r.context, r.source) for r in mf.PUBLISHED]
    assert len(keys) == len(set(keys))


def test_one_layer_extrapolates_to_the_whole_step():
    import generate
    import model_decode as md

    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    row = mf.Published("tiny", "wormhole_n150", 1.0, "test", batch=3, context=64)
    row = replace(row, attention="bfp8_b", mlp="bfp8_b")
    pred = mf.predict(row, (generate.TINY, 2))
    program = md.decode_step(generate.TINY, 64, 2, "bf16", users=3)
    tool = SpatialOptMain(args=[])
    whole = report(
        md.compile_step(tool, program, "target=wormhole_n150 format=bfp8_b fidelity=hifi2")
    )
    assert pred.predicted_us == pytest.approx(whole["total"]["predicted_us"], rel=1e-6)
    assert pred.roofline_us == pytest.approx(whole["total"]["roofline_us"], rel=1e-6)
    assert pred.ops == len(whole["sections"])
    assert sum(pred.terms.values()) == pytest.approx(pred.predicted_us, rel=1e-9)


def test_unknown_model_is_one_line_on_stderr(capsys):
    assert mf.main(["--only", "nope"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no published row for 'nope'" in err


def test_one_layer_extrapolates_over_a_mesh():
    # the collectives of a layer count once a layer, as the sections do (n300, tiny model)
    import generate
    import model_decode as md

    from spatial_dialect.tools.emit.report import report
    from spatial_dialect.tools.spatial_opt import SpatialOptMain

    row = mf.Published("tiny", "n300", 1.0, "test", batch=2, context=64, mlp="bfp8_b")
    pred = mf.predict(row, (generate.TINY, 2))
    program = md.decode_step(generate.TINY, 64, 2, "bf16", users=2)
    module, _ = md.compile_mesh(
        SpatialOptMain(args=[]), program, "n300", "format=bfp8_b fidelity=hifi2", True
    )
    whole = report(module)
    assert pred.terms["collectives"] > 0
    assert pred.predicted_us == pytest.approx(whole["total"]["predicted_us"], rel=1e-6)
    assert pred.ops == len(whole["sections"]) + len(whole["collectives"])


def test_ff2_is_read_in_its_own_format():
    # tt_transformers keeps FF2 bfp8_b while FF1/FF3 go bfp4_b: the down product is read from the
    # bfp8_b compile, every other section as before. Tiny, 2 layers: the step's weight bytes grow
    # by twice what the down section moves more in bfp8_b, at least its weight's 32 tiles x (1088 -
    # 576) B, and nothing else moves.
    import generate

    row = mf.Published("tiny", "wormhole_n150", 1.0, "test", batch=2, context=64, ff2=None)
    own = mf.predict(replace(row, ff2="bfp8_b"), (generate.TINY, 2))
    same = mf.predict(row, (generate.TINY, 2))
    down = {
        f: next(
            s["dram_bytes"]
            for s in mf.compile_one(generate.TINY, row, f)[0]["sections"]
            if s["name"] == "l0_down"
        )
        for f in ("bfp4_b", "bfp8_b")
    }
    assert own.weight_bytes - same.weight_bytes == 2 * (down["bfp8_b"] - down["bfp4_b"])
    assert down["bfp8_b"] - down["bfp4_b"] >= 32 * (1088 - 576)
    for t in ("attention", "lm_head", "other"):
        assert own.terms[t] == same.terms[t], t
    assert own.terms["weights"] > same.terms["weights"]
    assert mf.ffn_format(row, "down", "bfp4_b") == "bfp4_b"
    assert mf.ffn_format(replace(row, ff2="bfp8_b"), "up", "bfp4_b") == "bfp4_b"
