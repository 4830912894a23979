"""spatial-import --batch B [--paged BLOCK]: the batched decode of a tiny GGUF checkpoint, under the
reference with the checkpoint's weights, is its users' single-user decodes (spatial-import
without --batch) run one by one: the same token per user, the same logits, each user's cache rows
written where its position (and its block table) says. Within f32 rounding, not bitwise: a
single-user step attends over its whole cache with the rows past its position masked, the batched
one over exactly its positions (docs/tg.md#batched-decode), and a product of 1 row and of B rows
may accumulate in different orders."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import write_tiny  # noqa: E402

from spatial_dialect.tools.frontend.weights import checkpoint_inputs  # noqa: E402
from spatial_dialect.tools.interpreters.reference import evaluate, output_names  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import entry_function, parse_module  # noqa: E402

CACHE, LAYERS, WIDTH = 32, 2, 64  # the tiny qwen3's rows per user, layers, kv_heads x head_dim
POS = [5, 17, 0, 31]  # four users, each at its own position (31: the last row it holds)


def imported(model: Path, out: Path, *extra: str):
    args = ["--step", "decode", "--cache", str(CACHE), "--dtype", "f32", "--logits", *extra]
    assert import_main([str(model), "-o", str(out), *args]) == 0
    return entry_function(parse_module(out.read_text()))


def run(model: Path, fn, given: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    inputs = {**given, **checkpoint_inputs(str(model), fn, given)}
    return dict(zip(output_names(fn), evaluate(fn, inputs), strict=True))


@pytest.mark.parametrize("paged", [None, 8])
def test_a_batched_decode_is_its_users_single_decodes(tmp_path, paged):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    layout = [] if paged is None else ["--paged", str(paged)]
    batched = imported(model, tmp_path / "b.mlir", "--batch", str(len(POS)), *layout)
    single = imported(model, tmp_path / "one.mlir")
    rng = np.random.default_rng(0)
    users = len(POS)
    ids = rng.integers(0, 256, users).astype(np.int32)
    # each user's cache, contiguous: CACHE rows per user per layer
    mine = {
        f"l{i}_{kv}_cache": rng.standard_normal((users, CACHE, WIDTH)).astype(np.float32)
        for i in range(LAYERS)
        for kv in ("k", "v")
    }
    given = {"ids": ids, "pos": np.array(POS, np.int32)}
    if paged is None:
        given |= {n: c.reshape(users * CACHE, WIDTH) for n, c in mine.items()}
        rows_of = [np.arange(CACHE) + b * CACHE for b in range(users)]
    else:
        per_user = CACHE // paged
        table = rng.permutation(users * per_user).reshape(users, per_user).astype(np.int32)
        given["block_table"] = table
        rows_of = [
            table[b, np.arange(CACHE) // paged] * paged + np.arange(CACHE) % paged
            for b in range(users)
        ]
        for n, c in mine.items():
            pool = np.zeros((users * CACHE, WIDTH), np.float32)
            for b in range(users):
                pool[rows_of[b]] = c[b]
            given[n] = pool
    out = run(model, batched, given)
    for b, at in enumerate(POS):
        one = {"ids": ids[b : b + 1], "pos": np.array([at], np.int32)}
        one |= {n: c[b] for n, c in mine.items()}
        want = run(model, single, one)
        assert out["token"][b] == want["token"][0], b
        np.testing.assert_allclose(out["logits"][b], want["logits"][0], rtol=1e-5, atol=1e-4)
        for i in range(LAYERS):
            for kv in ("k", "v"):
                got = out[f"l{i}_{kv}c"][rows_of[b]]
                np.testing.assert_allclose(got, want[f"l{i}_{kv}c"], rtol=1e-5, atol=1e-4)


def test_bad_batch_options_are_one_line(tmp_path, capsys):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    out = tmp_path / "o.mlir"
    for extra, message in [
        (["--batch", "0"], "--batch 0: a batch has at least 1 user"),
        (["--paged", "8"], "--paged 8 needs --batch"),
        (["--batch", "2", "--paged", "5"], "--paged 5: a block holds >= 1 rows and the cache's 32"),
    ]:
        argv = [str(model), "-o", str(out), "--step", "decode", "--cache", "32", *extra]
        assert import_main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err


def test_a_hugging_face_directory_batches_too_and_qwen3next_is_refused(tmp_path, capsys):
    from tiny_hf import write_tiny_hf

    out = tmp_path / "o.mlir"
    qwen3 = write_tiny_hf(tmp_path / "qwen3", "qwen3")
    argv = [str(qwen3), "-o", str(out), "--step", "both", "--cache", "16", "--tokens", "3"]
    assert import_main([*argv, "--batch", "2", "--paged", "4"]) == 0
    text = out.read_text()
    assert "%decode.block_table: tensor<2x4xi32>" in text
    assert "%prefill.block_table: tensor<1x4xi32>" in text
    next_model = write_tiny_hf(tmp_path / "next", "qwen3next")
    argv = [str(next_model), "-o", str(out), "--step", "decode", "--batch", "2"]
    assert import_main(argv) == 1
    err = capsys.readouterr().err
    assert (
        err
        == "spatial-import: error: qwen3next: --batch has no batched form of its recurrent layers\n"
    )
