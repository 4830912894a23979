"""The batched decode step printed for TT-Lang (docs/backend-ttlang.md#indexed) under tt-lang-sim:
the batched KV-cache write (a host step: ttnn's paged_update_cache with the positions and the
block table) and the batched attention (kernels; a paged cache is first gathered contiguous by
a host step, ttnn.embedding over row ids the host computes from the block table), for B = 1, 3,
8 users at different positions (user 1 idle where there are 3 or more), each user's blocks a
shuffled share of the pool, against the reference (tools/interpreters, its own implementation);
a position past a user's cache or a block id past the pool raises before anything is written;
what is not printed is refused by name.

By default a few cases (about 45 s); SPATIAL_MESH_FULL=1 runs every B, layout and card.
"""

from __future__ import annotations

import importlib.util
import io
import os
from pathlib import Path

import numpy as np
import pytest
import torch

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.backend.executors import BackendFailed
from spatial_dialect.tools.backend.ttlang import host
from spatial_dialect.tools.backend.ttlang.printer import TTLangUnsupported, print_ttlang
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import input_names
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    output_names,
    parse_module,
    reference_outputs,
)

HAVE_SIM = importlib.util.find_spec("ttl") is not None
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="tt-lang-sim not installed")
FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"
S, W, BLOCK = 16, 64, 4  # positions a user holds, the cache's width, a paged block's rows
HEADS, KV, D = 4, 2, 32


def _layout(users: int, paged: bool) -> tuple[str, str, str, str]:
    """(extra argument, operands, their types, block_size clause) of the positions/table."""
    pos = f"tensor<{users}xi32>"
    if not paged:
        return "", "%pos", pos, ""
    table = f"tensor<{users}x{S // BLOCK}xi32>"
    return f", %table: {table}", "%pos, %table", f"{pos}, {table}", f" block_size {BLOCK}"


def write(users: int, paged: bool, tokens: int = 1) -> str:
    """`tokens` rows per user written into its cache."""
    cache, rows = f"tensor<{users * S}x{W}xf32>", f"tensor<{users * tokens}x{W}xf32>"
    extra, operands, types, block = _layout(users, paged)
    return (
        f"func.func @w(%c: {cache}, %r: {rows}, %pos: tensor<{users}xi32>{extra}) -> {cache} {{\n"
        f"  %c2 = tg.batch_set_rows %c, %r, {operands}{block} : ({cache}, {rows}, {types}) -> "
        f"{cache}\n  func.return %c2 : {cache}\n}}"
    )


def step(users: int, paged: bool, elt: str) -> str:
    """One layer's batched step: each user's k and v rows written, then its query attends."""
    q, kd = f"tensor<{users}x{HEADS * D}x{elt}>", f"tensor<{users}x{KV * D}x{elt}>"
    cache = f"tensor<{users * S}x{KV * D}x{elt}>"
    extra, operands, types, block = _layout(users, paged)
    w = f"({cache}, {kd}, {types}) -> {cache}"
    return (
        f"func.func @step(%q: {q}, %k: {kd}, %v: {kd}, %c: {cache}, %vc: {cache}, "
        f"%pos: tensor<{users}xi32>{extra}) -> ({q}, {cache}, {cache}) {{\n"
        f"  %c2 = tg.batch_set_rows %c, %k, {operands}{block} : {w}\n"
        f"  %vc2 = tg.batch_set_rows %vc, %v, {operands}{block} : {w}\n"
        f"  %o = tg.batch_attention %q, %c2, %vc2, {operands} heads {HEADS} kv_heads {KV} "
        f"head_dim {D} scale 0.25{block} : ({q}, {cache}, {cache}, {types}) -> {q}\n"
        f"  func.return %o, %c2, %vc2 : {q}, {cache}, {cache}\n}}"
    )


def inputs_for(fn, users: int, seed: int, tokens: int = 1) -> dict[str, np.ndarray]:
    """Drawn values; user b at its own position (user 1 idle where there are 3 or more), each
    user's blocks a shuffled share of the pool."""
    inputs = draw_inputs(fn, seed)
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, S - tokens + 1, users).astype(np.int32)
    if users >= 3:
        pos[1] = -1
    inputs["pos"] = pos
    if "table" in inputs:
        inputs["table"] = rng.permutation(users * S // BLOCK).reshape(users, -1).astype(np.int32)
    return inputs


def run_both(text: str, target: str, users: int, seed: int = 0, tokens: int = 1, **options):
    """(reference outputs, tt-lang-sim's outputs, comparisons) of the program on drawn inputs."""
    from spatial_dialect.tools.backend.ttlang.runner import run_tt_lang_sim

    fn = entry_function(parse_module(text))
    module = compile_module(fn, target, **options)
    if options:  # the splits by users (test below) are what runs
        assert "by_users" in str(module) and "splits" in str(module)
    inputs = inputs_for(fn, users, seed, tokens)
    reference, values = reference_outputs(fn, inputs)
    outs = run_tt_lang_sim(module, [inputs[n] for n in input_names(fn)])
    got = dict(zip(output_names(fn), outs, strict=True))
    return inputs, reference, got, compare_outputs(fn, reference, values, got)


WRITES = [
    (1, False, 1, "wormhole_n150"),
    (3, True, 1, "wormhole_n150"),
    (8, True, 1, "blackhole_p150"),
    (3, True, 2, "blackhole_p150"),
]
STEPS = [
    (3, False, "f32", "wormhole_n150"),
    (8, False, "bf16", "blackhole_p150"),
    (3, True, "f32", "wormhole_n150"),
    (8, True, "bf16", "blackhole_p150"),
]
if FULL:
    cards = ["wormhole_n150", "blackhole_p150"]
    WRITES = [(b, p, n, t) for b in (1, 3, 8) for p in (False, True) for n in (1, 2) for t in cards]
    STEPS = [
        (b, p, e, t)
        for b in (1, 3, 8)
        for p in (False, True)
        for e in ("f32", "bf16")
        for t in cards
    ]


@needs_sim
@pytest.mark.parametrize("users, paged, tokens, target", WRITES)
def test_batched_write_passes_bitwise(users, paged, tokens, target):
    text = write(users, paged, tokens)
    inputs, reference, got, comparisons = run_both(text, target, users, tokens=tokens)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    # a write moves the rows it is given: exact, and the rows written are new ones
    np.testing.assert_array_equal(got["c2"], reference["c2"])
    assert not np.array_equal(reference["c2"], inputs["c"])


@needs_sim
@pytest.mark.parametrize("users, paged, elt, target", STEPS)
def test_batched_step_passes(users, paged, elt, target):
    _, _, got, comparisons = run_both(step(users, paged, elt), target, users, seed=users)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    assert np.abs(got["o"][0].astype(np.float32)).max() > 0  # user 0 attends
    if users >= 3:  # the idle user's row is zero
        assert not got["o"][1].astype(np.float32).any()


@needs_sim
@pytest.mark.parametrize(
    "users, paged, elt, target, splits",
    [(8, False, "bf16", "wormhole_n150", 4), (8, True, "f32", "blackhole_p150", 2)],
)
def test_a_batched_attention_split_by_users_passes(users, paged, elt, target, splits):
    """Each split walks its users' caches only (sp.attention `by_users`, all of a kv head's
    query heads in an item) and pushes their rows' results; the combine adds the pages."""
    _, _, got, comparisons = run_both(
        step(users, paged, elt), target, users, seed=users, kv_splits=splits
    )
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    assert np.abs(got["o"][0].astype(np.float32)).max() > 0
    assert not got["o"][1].astype(np.float32).any()  # the idle user's row


class _Sim:
    """tt-lang-sim's ttnn as the shims see it: to_torch gives the backing tensor, and no
    `experimental` (so the shims move rows by torch)."""

    @staticmethod
    def to_torch(t):
        return t


@pytest.mark.parametrize(
    "paged, bad, message",
    [
        (False, ("pos", 2, S), rf"position {S} of user 2 \(pos\[2\]\) outside \[0, {S - 1}\]"),
        (True, ("pos", 0, -2), r"position -2 of user 0 \(pos\[0\]\) outside"),
        (True, ("table", 2, 99), r"block id 99 of user 2 \(table\[2, \d\]\) outside \[0, 24\)"),
    ],
)
def test_a_bad_position_or_block_id_writes_nothing(monkeypatch, paged, bad, message):
    users = 6
    monkeypatch.setattr(host, "ttnn", _Sim, raising=False)
    monkeypatch.setattr(host, "torch", torch, raising=False)
    cache = torch.arange(users * S * 2, dtype=torch.float32).reshape(users * S, 2)
    old = cache.clone()
    src = -torch.ones(users, 2)
    pos = torch.arange(users, dtype=torch.int32)[None, :]  # user b at position b
    table = torch.arange(users * S // BLOCK, dtype=torch.int32).reshape(users, -1)
    name, user, value = bad
    (table[user, :] if name == "table" else pos[0, user : user + 1]).fill_(value)
    with pytest.raises(RuntimeError, match=message):
        if paged:
            host._paged_update_cache(cache, src, pos, table, users, S // BLOCK, BLOCK, 24, 1)
        else:
            host._batch_update_cache(cache, src, pos, users, S, 1)
    assert torch.equal(cache, old)


@needs_sim
def test_a_bad_position_is_one_line_from_the_simulator():
    from spatial_dialect.tools.backend.ttlang.runner import run_tt_lang_sim

    fn = entry_function(parse_module(write(3, True)))
    inputs = inputs_for(fn, 3, 0)
    inputs["pos"][2] = S
    with pytest.raises(BackendFailed, match=rf"position {S} of user 2 \(pos\[2\]\)"):
        run_tt_lang_sim(compile_module(fn, "wormhole_n150"), [inputs[n] for n in input_names(fn)])


def test_a_block_id_past_the_pool_gathers_nothing(monkeypatch):
    users = 3
    monkeypatch.setattr(host, "ttnn", _Sim, raising=False)
    monkeypatch.setattr(host, "torch", torch, raising=False)
    cache = torch.arange(users * S * 2, dtype=torch.float32).reshape(users * S, 2)
    out = torch.full((users * S, 2), 7.0)
    pos = torch.tensor([[S - 1, 0, 5]], dtype=torch.int32)
    table = torch.arange(users * S // BLOCK, dtype=torch.int32).reshape(users, -1)
    table[2, 1] = 99  # user 2's second block: position 5 is in it
    table[1, 1:] = -1  # past user 1's position: never read
    with pytest.raises(RuntimeError, match=r"block id 99 of user 2 \(table\[2, 1\]\) outside"):
        host._paged_gather(pos, cache, out, table, users, S, 1, BLOCK, 12)
    assert (out == 7).all()
    table[2, 1] = 4
    host._paged_gather(pos, cache, out, table, users, S, 1, BLOCK, 12)
    assert torch.equal(out[:S], cache[:S])  # user 0 holds all 16 positions: blocks 0..3
    assert torch.equal(out[S], cache[16]) and not out[S + 1 : 2 * S].any()  # user 1: position 0
    assert torch.equal(out[2 * S + 4 : 2 * S + 6], cache[16:18])  # user 2: block 4 at j = 4, 5
    assert not out[2 * S + 6 :].any()


def _reads_block_ids(tmp_path) -> str:
    """A Tensix chip whose kernels are said to read block ids (a what-if): link keeps the
    paged attention one section, which TT-Lang cannot print."""
    template = (
        Path(__file__).resolve().parents[3] / "examples/targets/tensix_4x4.toml"
    ).read_text()
    path = tmp_path / "reads_ids.toml"
    path.write_text(template.replace("kernel_reads_by_id = false", "kernel_reads_by_id = true"))
    return str(path)


@pytest.mark.parametrize(
    "text, message, reads_ids",
    [
        (step(3, True, "f32"), r"section @o: sp\.load users table \(the paged caches", True),
        (
            step(3, False, "f32").replace("3x128xf32>", "6x128xf32>").replace("3x64x", "6x64x"),
            r"section @o: sp\.attention users 3 with 2 query rows each",
            False,
        ),
    ],
)
def test_what_is_not_printed_is_refused_by_name(tmp_path, text, message, reads_ids):
    fn = entry_function(parse_module(text))
    module = compile_module(fn, _reads_block_ids(tmp_path) if reads_ids else "wormhole_n150")
    with pytest.raises(TTLangUnsupported, match=message):
        print_ttlang(module, io.StringIO())


TINY_STEPS = [(3, None, "wormhole_n150"), (3, 16, "blackhole_p150")]
if FULL:
    TINY_STEPS += [
        (u, b, t) for u in (1, 8) for b in (None, 16) for t in ("wormhole_n150", "blackhole_p150")
    ]


@needs_sim
@pytest.mark.parametrize("users, block_size, target", TINY_STEPS)
def test_a_whole_batched_decode_step_passes(tmp_path, capsys, users, block_size, target):
    """examples/generate.py's tiny model as `spatial-import --batch [--paged 16]` writes it:
    embedding, a layer with B x K x N GEMMs, the batched write and attention (paged: each pool
    gathered contiguous first), the head, arg-max per user."""
    import sys

    from spatial_dialect.tools.spatial_run import main

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "examples"))
    import generate

    path = tmp_path / "step.mlir"
    path.write_text(
        generate.decode_step_program(generate.TINY, 1, 64, users=users, block_size=block_size)
    )
    assert main([str(path), "--target", target, "--backend", "tt-lang-sim"]) == 0
    assert "PASS" in capsys.readouterr().out
