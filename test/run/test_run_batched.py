"""The batched decode step compiled and simulated (docs/tg.md#batched-decode): the KV-cache
write (tg.batch_set_rows, linked as sp.scatter `tokens`) and the attention (tg.batch_attention,
linked as the flash section with sp.attention `users` over sp.load `users`): B = 1, 3, 8 users
at different positions (one idle), T rows each, contiguous and paged, on a Tensix card of each
generation and a GPU, against the reference (tools/interpreters, its own implementation);
paged and contiguous bitwise identical on the same data; a position past a user's cache or a
block id past the pool is the simulator's runtime error, raised before anything is written."""

from __future__ import annotations

import os

import numpy as np
import pytest

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.targets import PRESETS
from spatial_dialect.tools.emit.report import section_report
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.simulator.machine import IndexOutOfRange
from spatial_dialect.tools.simulator.program import (
    ProgramRun,
    declare_dram,
    fill_inputs,
    simulate,
    the_entry,
)
from spatial_dialect.tools.spatial_run import (
    compare_outputs,
    entry_function,
    parse_module,
    reference_outputs,
    simulated_outputs,
)

TARGETS = ["wormhole_n150", "blackhole_p150", "h100"]
S, W, BLOCK = 16, 64, 4  # positions a user holds, the cache's width, a paged block's rows


def write(users: int, tokens: int, paged: bool, keep_old: bool = False) -> str:
    """One batched write of `tokens` rows per user; `keep_old` also returns the old cache (so
    link copies it rather than updating in place)."""
    cache = f"tensor<{users * S}x{W}xf32>"
    rows, pos = f"tensor<{users * tokens}x{W}xf32>", f"tensor<{users}xi32>"
    args, operands, types, block = f"%pos: {pos}", "%pos", pos, ""
    if paged:
        table = f"tensor<{users}x{S // BLOCK}xi32>"
        args += f", %table: {table}"
        operands, types, block = "%pos, %table", f"{pos}, {table}", f" block_size {BLOCK}"
    results = f"{cache}, {cache}" if keep_old else cache
    returned = f"%c2, %c : {cache}, {cache}" if keep_old else f"%c2 : {cache}"
    return (
        f"func.func @w(%c: {cache}, %r: {rows}, {args}) -> ({results}) {{\n"
        f"  %c2 = tg.batch_set_rows %c, %r, {operands}{block} : ({cache}, {rows}, {types}) -> "
        f"{cache}\n  func.return {returned}\n}}"
    )


def inputs_for(fn, users: int, tokens: int, seed: int = 0, s: int = S) -> dict[str, np.ndarray]:
    """Drawn rows and cache of `s` positions a user; user b at its own position (user 1 idle
    where there are 3 or more), each user's blocks a shuffled share of the pool."""
    inputs = draw_inputs(fn, seed)
    rng = np.random.default_rng(seed)
    pos = rng.integers(0, s - tokens + 1, users).astype(np.int32)
    if users >= 3:
        pos[1] = -1
    inputs["pos"] = pos
    if "table" in inputs:
        inputs["table"] = rng.permutation(users * s // BLOCK).reshape(users, -1).astype(np.int32)
    return inputs


def compiled(text: str, target: str):
    fn = entry_function(parse_module(text))
    return fn, compile_module(fn, target)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "users, tokens, paged, keep_old",
    [
        (1, 1, False, False),
        (3, 1, True, False),
        (8, 1, False, True),
        (8, 1, True, False),
        (3, 2, True, True),
    ],
)
def test_batched_write_simulates_to_the_reference(target, users, tokens, paged, keep_old):
    fn, module = compiled(write(users, tokens, paged, keep_old), target)
    inputs = inputs_for(fn, users, tokens)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs)
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    # exact, not within a tolerance: a write moves the rows it is given
    for name, value in got.items():
        np.testing.assert_array_equal(value, reference[name])


def test_paged_and_contiguous_write_the_same_rows_bitwise():
    users, tokens = 8, 1
    fn_c, contiguous = compiled(write(users, tokens, False), "wormhole_n150")
    fn_p, paged = compiled(write(users, tokens, True), "wormhole_n150")
    inputs = inputs_for(fn_p, users, tokens, seed=3)
    table = inputs["table"]
    # the same logical cache in both layouts: user b's position j is row b * S + j of the
    # contiguous cache and row table[b, j / BLOCK] * BLOCK + j % BLOCK of the pool
    b, j = np.divmod(np.arange(users * S), S)
    slot = table[b, j // BLOCK] * BLOCK + j % BLOCK
    pool = np.empty_like(inputs["c"])
    pool[slot] = inputs["c"]
    (out_c,) = simulate(contiguous, [inputs["c"], inputs["r"], inputs["pos"]])
    (out_p,) = simulate(paged, [pool, inputs["r"], inputs["pos"], table])
    assert np.array_equal(out_p[slot].view(np.uint32), out_c.view(np.uint32))
    # and the idle user wrote nothing
    assert np.array_equal(out_c[S : 2 * S], inputs["c"][S : 2 * S])


@pytest.mark.parametrize(
    "paged, bad, message",
    [
        (False, ("pos", 2, S), rf"position {S} of user 2 \(pos\[2\]\) outside \[0, {S - 1}\]"),
        (True, ("pos", 0, -2), r"position -2 of user 0 \(pos\[0\]\) outside"),
        (True, ("table", 2, 99), r"block id 99 of user 2 \(table\[2, \d\]\) outside \[0, 24\)"),
    ],
)
def test_a_bad_position_or_block_id_writes_nothing(paged, bad, message):
    users = 6
    fn, module = compiled(write(users, 1, paged), "wormhole_n150")
    inputs = inputs_for(fn, users, 1)
    inputs["pos"][:] = np.arange(users)  # every user live, user b at position b
    name, user, value = bad
    if name == "table":
        inputs["table"][user, :] = value  # every block of the user is past the pool
    else:
        inputs[name][user] = value
    programs = [p for p in module.walk() if type(p).__name__ == "ProgramOp"]
    dram = declare_dram(programs)
    given = [inputs[a.name_hint] for a in fn.body.block.args]
    fill_inputs(the_entry(module), dram, given)
    with pytest.raises(IndexOutOfRange, match=message):
        for program in programs:
            ProgramRun(program, dram).run()
    cache = dram["c"]
    assert np.array_equal(cache.data[: cache.rows, : cache.cols], inputs["c"])


# ── The whole step: write, then attend ────────────────────────────────────────────────────────

HEADS, KV, D = 4, 2, 32


def step(users: int, tokens: int, paged: bool, elt: str = "f32", s: int = S) -> str:
    """One layer's batched step: each user's k and v rows written (caches of `s` positions a
    user), then its queries attend."""
    n = users * tokens
    q, kd = f"tensor<{n}x{HEADS * D}x{elt}>", f"tensor<{n}x{KV * D}x{elt}>"
    cache, pos = f"tensor<{users * s}x{KV * D}x{elt}>", f"tensor<{users}xi32>"
    args = f"%q: {q}, %k: {kd}, %v: {kd}, %c: {cache}, %vc: {cache}, %pos: {pos}"
    operands, types, block = "%pos", pos, ""
    if paged:
        table = f"tensor<{users}x{s // BLOCK}xi32>"
        args += f", %table: {table}"
        operands, types, block = "%pos, %table", f"{pos}, {table}", f" block_size {BLOCK}"
    write = f"({cache}, {kd}, {types}) -> {cache}"
    return (
        f"func.func @step({args}) -> ({q}, {cache}, {cache}) {{\n"
        f"  %c2 = tg.batch_set_rows %c, %k, {operands}{block} : {write}\n"
        f"  %vc2 = tg.batch_set_rows %vc, %v, {operands}{block} : {write}\n"
        f"  %o = tg.batch_attention %q, %c2, %vc2, {operands} heads {HEADS} kv_heads {KV} "
        f"head_dim {D} scale 0.25{block} : ({q}, {cache}, {cache}, {types}) -> {q}\n"
        f"  func.return %o, %c2, %vc2 : {q}, {cache}, {cache}\n}}"
    )


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    "users, tokens, paged, elt",
    [
        (1, 1, False, "f32"),
        (1, 1, True, "bf16"),
        (3, 1, True, "f32"),
        (3, 2, False, "bf16"),
        (8, 1, False, "bf16"),
        (8, 1, True, "f32"),
        (64, 1, True, "f32"),  # two query tile rows, each walking its own 32 users' caches
    ],
)
def test_batched_step_simulates_to_the_reference(target, users, tokens, paged, elt):
    fn, module = compiled(step(users, tokens, paged, elt), target)
    inputs = inputs_for(fn, users, tokens, seed=users)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs)
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    if users >= 3:  # the idle user's rows are zero
        assert not got["o"][tokens : 2 * tokens].any()


def _batch_notes(module) -> dict[str, str]:
    """Each section's name -> its `batch` note."""
    return {
        p.sym_name.data: p.attributes["batch"].data
        for p in module.walk()
        if type(p).__name__ == "ProgramOp" and "batch" in p.attributes
    }


def test_the_link_report_says_what_the_batched_sections_do():
    # h100's kernels read the block ids themselves: the attention reads the pool
    _, module = compiled(step(3, 1, True), "h100")
    batch = _batch_notes(module)
    assert set(batch) == {"c", "vc", "o"}
    assert "3 users x 1 query row(s)" in batch["o"]
    assert "paged: blocks of 4 rows named by @table" in batch["o"]
    assert "priced at every user's full capacity" in batch["o"]
    assert "3 users x 1 row(s)" in batch["c"]
    # a Tensix kernel cannot: the pools are gathered contiguous first, two sections more
    _, module = compiled(step(3, 1, True), "wormhole_n150")
    batch = _batch_notes(module)
    assert list(batch) == ["c", "vc", "c__users", "vc__users", "o"]
    assert "copied from the pool @c (blocks of 4 rows named by @table)" in batch["c__users"]
    assert "kernel_reads_by_id false" in batch["vc__users"]
    assert "contiguous: the paged caches copied to @c__users, @vc__users first" in batch["o"]


def test_the_gather_is_priced_as_the_copy_it_is():
    # its DRAM traffic: the users' rows read from the pool and written to the scratch
    _, module = compiled(step(8, 1, True), "blackhole_p150")
    (gather,) = [
        p
        for p in module.walk()
        if type(p).__name__ == "ProgramOp" and p.sym_name.data == "c__users"
    ]
    row = section_report(gather, PRESETS["blackhole_p150"], "hifi4")
    rows = 8 * S * KV * D * 4  # f32: 8 users x 16 positions x the cache's width
    assert row["dram_bytes"] == 2 * rows  # read once, written once
    assert row["predicted_cycles"] > 0


def test_a_block_id_past_the_pool_is_the_gathers_runtime_error():
    # the attention alone, paged, on a Tensix card: the gather checks every user's blocks
    # before it reads a row, so nothing is read or written
    users = 3
    q, cache = f"tensor<{users}x{HEADS * D}xf32>", f"tensor<{users * S}x{KV * D}xf32>"
    pos, table = f"tensor<{users}xi32>", f"tensor<{users}x{S // BLOCK}xi32>"
    text = (
        f"func.func @a(%q: {q}, %c: {cache}, %vc: {cache}, %pos: {pos}, %table: {table}) -> {q} "
        f"{{\n  %o = tg.batch_attention %q, %c, %vc, %pos, %table heads {HEADS} kv_heads {KV} "
        f"head_dim {D} scale 0.25 block_size {BLOCK} : ({q}, {cache}, {cache}, {pos}, {table}) "
        f"-> {q}\n  func.return %o : {q}\n}}"
    )
    fn, module = compiled(text, "wormhole_n150")
    inputs = inputs_for(fn, users, 1)
    inputs["pos"][:] = [S - 1, 0, 5]
    inputs["table"][2, 1] = 99  # user 2's second block (position 5 is in it)
    programs = [p for p in module.walk() if type(p).__name__ == "ProgramOp"]
    dram = declare_dram(programs)
    fill_inputs(the_entry(module), dram, [inputs[a.name_hint] for a in fn.body.block.args])
    with pytest.raises(IndexOutOfRange, match=r"block id 99 of user 2 \(table\[2, 1\]\) outside"):
        ProgramRun(programs[0], dram).run()
    assert not dram["c__users"].written.any()


def test_paged_and_contiguous_steps_are_bitwise_identical():
    users, tokens = 8, 1
    fn_c, contiguous = compiled(step(users, tokens, False, "bf16"), "wormhole_n150")
    fn_p, paged = compiled(step(users, tokens, True, "bf16"), "wormhole_n150")
    inputs = inputs_for(fn_p, users, tokens, seed=5)
    table = inputs["table"]
    b, j = np.divmod(np.arange(users * S), S)
    slot = table[b, j // BLOCK] * BLOCK + j % BLOCK
    pools = {}
    for name in ("c", "vc"):
        pools[name] = np.empty_like(inputs[name])
        pools[name][slot] = inputs[name]
    common = [inputs[n] for n in ("q", "k", "v")]
    # the Tensix form: the pools gathered contiguous, then the contiguous attention
    assert [p.kind.value for p in paged.walk() if type(p).__name__ == "ProgramOp"][2:] == [
        "gather",
        "gather",
        "attention",
    ]
    out_c = simulate(contiguous, [*common, inputs["c"], inputs["vc"], inputs["pos"]])
    out_p = simulate(paged, [*common, pools["c"], pools["vc"], inputs["pos"], table])
    assert np.array_equal(out_p[0].view(np.uint16), out_c[0].view(np.uint16))
    for got_p, got_c in zip(out_p[1:], out_c[1:], strict=True):
        assert np.array_equal(got_p[slot].view(np.uint16), got_c.view(np.uint16))


def test_a_position_past_the_cache_is_the_attentions_runtime_error_too():
    # an attention alone (no write before it): the loads and the stage check every user
    users = 3
    q, cache = f"tensor<{users}x{HEADS * D}xf32>", f"tensor<{users * S}x{KV * D}xf32>"
    pos = f"tensor<{users}xi32>"
    text = (
        f"func.func @a(%q: {q}, %c: {cache}, %vc: {cache}, %pos: {pos}) -> {q} {{\n"
        f"  %o = tg.batch_attention %q, %c, %vc, %pos heads {HEADS} kv_heads {KV} head_dim {D} "
        f"scale 0.25 : ({q}, {cache}, {cache}, {pos}) -> {q}\n  func.return %o : {q}\n}}"
    )
    fn, module = compiled(text, "h100")
    inputs = inputs_for(fn, users, 1)
    inputs["pos"][2] = S
    with pytest.raises(IndexOutOfRange, match=rf"position {S} of user 2 .*outside \[0, {S - 1}\]"):
        simulate(module, [inputs[n] for n in ("q", "c", "vc", "pos")])


# ── Triton's interpreter ──────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "users, tokens, paged, elt",
    [
        (1, 1, True, "bf16"),
        (3, 2, True, "f32"),
        (8, 1, False, "bf16"),
        (8, 1, True, "f32"),
        (32, 2, False, "bf16"),  # two query tile rows of 16 users each, each over its own
    ],
)
def test_batched_step_runs_under_tritons_interpreter(users, tokens, paged, elt):
    pytest.importorskip("triton")
    fn, module = compiled(step(users, tokens, paged, elt), "h100")
    inputs = inputs_for(fn, users, tokens, seed=users + 1)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, backend="triton-interpret")
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    if users >= 3:
        assert not got["o"][tokens : 2 * tokens].any()
    # the idle user's slots keep the cache they held
    np.testing.assert_array_equal(got["c2"], reference["c2"])


@pytest.mark.parametrize(
    "bad, message",
    [
        (("pos", 2, S), rf"position of a user .* {S} outside \[-1, {S - 1}\]"),
        (("table", 1, 99), r"block id of @table .* 99 outside \[0, 23\]"),
    ],
)
def test_tritons_host_checks_the_positions_and_block_ids_before_the_launch(bad, message):
    pytest.importorskip("triton")
    users = 6
    fn, module = compiled(step(users, 1, True), "h100")
    inputs = inputs_for(fn, users, 1)
    inputs["pos"][:] = np.arange(users)
    name, user, value = bad
    if name == "table":
        inputs["table"][user, :] = value
    else:
        inputs["pos"][user] = value
    with pytest.raises(Exception, match=message):
        simulated_outputs(fn, module, inputs, backend="triton-interpret")


def test_the_report_shows_the_weights_read_once_for_the_batch_and_the_attentions_price():
    users, d, n = 8, 128, 256
    a, w, y = f"tensor<{users}x{d}xbf16>", f"tensor<{d}x{n}xbf16>", f"tensor<{users}x{n}xbf16>"
    text = (
        f"func.func @g(%a: {a}, %w: {w}) -> {y} {{\n  %y = tg.matmul %a, %w : ({a}, {w}) -> {y}\n"
        f"  func.return %y : {y}\n}}"
    )
    _, module = compiled(text, "wormhole_n150")
    (gemm,) = [p for p in module.walk() if type(p).__name__ == "ProgramOp"]
    row = section_report(gemm, PRESETS["wormhole_n150"], "hifi4")
    assert row["dram_bytes_by_tensor"]["w"] == d * n * 2  # bf16, read once for the 8 users
    _, module = compiled(step(3, 1, True), "wormhole_n150")
    rows = [
        section_report(p, PRESETS["wormhole_n150"], "hifi4")
        for p in module.walk()
        if type(p).__name__ == "ProgramOp"
    ]
    assert "priced at every user's full capacity" in rows[-1]["batch"]


def test_each_key_and_value_byte_is_priced_once_where_tile_rows_walk_their_own_users():
    # 64 users of one token: two query tile rows of 32 users, each walking only its users'
    # caches (S / T = 16 key tiles from r0 * 16); one q head per kv head, so an item is (a tile
    # row, a head) and nothing but the K range decides how often K and V are read
    users, heads, d, elt = 64, 2, 32, 4  # f32
    q, cache = f"tensor<{users}x{heads * d}xf32>", f"tensor<{users * S}x{heads * d}xf32>"
    pos = f"tensor<{users}xi32>"
    text = (
        f"func.func @a(%q: {q}, %c: {cache}, %vc: {cache}, %pos: {pos}) -> {q} {{\n"
        f"  %o = tg.batch_attention %q, %c, %vc, %pos heads {heads} kv_heads {heads} "
        f"head_dim {d} scale 0.25 : ({q}, {cache}, {cache}, {pos}) -> {q}\n"
        f"  func.return %o : {q}\n}}"
    )
    for target in ("wormhole_n150", "h100"):
        _, module = compiled(text, target)
        (attention,) = [p for p in module.walk() if type(p).__name__ == "ProgramOp"]
        row = section_report(attention, PRESETS[target], "hifi4")
        items = (users // 32) * heads  # a query tile row by a head
        kv_bytes = 2 * users * S * heads * d * elt  # K and V, each byte once
        q_and_out = 2 * users * heads * d * elt
        positions = items * users * 4  # each item reads the users' i32 positions
        assert row["dram_bytes"] == kv_bytes + q_and_out + positions, target


# ── Flash decoding over the users' caches (sp.attention splits with users) ────────────────────

LONG = 128  # positions a user holds: four key tiles a user


def _splits(module) -> dict[str, str]:
    """Each section's name -> its `kv_splits` decision."""
    return {
        p.sym_name.data: p.attributes["kv_splits"].data
        for p in module.walk()
        if type(p).__name__ == "ProgramOp" and "kv_splits" in p.attributes
    }


def _far_apart(inputs: dict[str, np.ndarray], users: int) -> None:
    """Users at very different positions: the first at its cache's last, the last at 0, one
    idle (-1) where there are 3 or more (inputs_for)."""
    inputs["pos"][0] = LONG - 1
    if users > 1:
        inputs["pos"][-1] = 0


FULL = pytest.mark.skipif(
    os.environ.get("SPATIAL_BATCH_FULL") != "1",
    reason="SPATIAL_BATCH_FULL=1 runs the longer interpreted splits (30 s each)",
)


@pytest.mark.parametrize(
    "target, backend, users, paged, forced",
    [
        ("wormhole_n150", "sim", 1, False, 4),
        ("wormhole_n150", "sim", 3, True, 6),  # paged through the gather, a split per 2 tiles
        ("h100", "sim", 8, True, 16),  # the pool read through the block table, 2 tiles a split
        ("h100", "sim", 3, False, None),  # chosen by price
        ("h100", "sim", 8, False, None),
        ("h100", "triton-interpret", 1, True, 2),
        pytest.param("h100", "triton-interpret", 3, True, 3, marks=FULL),  # a user a split
        pytest.param("h100", "triton-interpret", 8, False, None, marks=FULL),
    ],
)
def test_a_split_batched_attention_runs_to_the_reference(target, backend, users, paged, forced):
    if backend != "sim":
        pytest.importorskip("triton")
    fn = entry_function(parse_module(step(users, 1, paged, s=LONG)))
    options = {} if forced is None else {"kv_splits": forced}
    module = compile_module(fn, target, **options)
    decisions = _splits(module)
    assert set(decisions) == {"o__splits", "o"}, decisions
    count = int(decisions["o"].split(":")[0].split()[0])  # "4: ..." or "4 by users: ..."
    assert count == forced if forced else count > 1, decisions["o"]
    assert ("forced" in decisions["o"]) == (forced is not None)
    inputs = inputs_for(fn, users, 1, seed=users, s=LONG)
    _far_apart(inputs, users)
    reference, values = reference_outputs(fn, inputs)
    got = simulated_outputs(fn, module, inputs, backend=backend)
    comparisons = compare_outputs(fn, reference, values, got)
    assert all(c.ok for c in comparisons), [c.line() for c in comparisons]
    if users >= 3:  # the idle user's rows: no split saw a key of its
        assert not got["o"][1].any()


def test_the_batched_split_is_chosen_where_the_kernels_carry_it():
    text = step(8, 1, False, s=LONG)
    (h100,) = [v for k, v in _splits(compiled(text, "h100")[1]).items() if k == "o"]
    assert "runner-up" in h100 and "unsplit" in h100 and "priced at hifi4" in h100
    # TT-Lang prints one query row's partials only (Target.batched_kv_splits false): the key
    # splits are not priced there, the splits by whole users are (each a result page)
    n150 = _splits(compiled(text, "wormhole_n150")[1])["o"]
    assert " by users: " in n150.split(";")[0] and "unsplit" in n150, n150
    assert all(f"{p}: " not in n150 for p in (16, 32)), n150  # no key split priced


def test_the_batched_split_refusals_name_the_numbers():
    from spatial_dialect.sp.errors import NotLowered
    from spatial_dialect.tools.backend.ttlang.runner import emit
    from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported

    # 32 users' partials and statistics are 64 rows: past one tile's page
    fn = entry_function(parse_module(step(32, 1, False, s=LONG)))
    with pytest.raises(NotLowered, match=r"kv-splits=3 .* 32 query rows .*\(64 rows\), past a"):
        compile_module(fn, "h100", kv_splits=3)
    # forced on a TT-Lang target: the printer refuses it by name
    fn = entry_function(parse_module(step(3, 1, False, s=LONG)))
    with pytest.raises(TTLangUnsupported, match="sp.attention users 3 splits 2"):
        emit(compile_module(fn, "wormhole_n150", kv_splits=2))


# ── Splits by users ───────────────────────────────────────────────────────────────────────────


@pytest.mark.parametrize(
    "target, backend, users, paged, forced",
    [
        ("wormhole_n150", "sim", 8, False, 4),
        ("blackhole_p150", "sim", 8, True, 2),  # the pools gathered first, then split
        ("h100", "triton-interpret", 8, True, None),  # chosen by price, the pool read by id
    ],
)
def test_a_batched_attention_split_by_users_is_bitwise_the_unsplit_one(
    target, backend, users, paged, forced
):
    """A split by users computes each user's rows as the unsplit section does (the other users'
    keys are masked there, absent here) and the combine adds exact zeros: the same bits."""
    if backend != "sim":
        pytest.importorskip("triton")
    fn = entry_function(parse_module(step(users, 1, paged, s=LONG)))
    split = compile_module(fn, target, **({} if forced is None else {"kv_splits": forced}))
    how = _splits(split)["o"].split(";")[0]
    assert how.startswith(f"{forced} by users" if forced else "") and " by users" in how, how
    whole = compile_module(fn, target, kv_splits=1)
    assert "by_users" in str(split) and "attention_combine" not in str(whole)
    inputs = inputs_for(fn, users, 1, seed=users, s=LONG)
    _far_apart(inputs, users)
    got = simulated_outputs(fn, split, inputs, backend=backend)
    reference, values = reference_outputs(fn, inputs)
    assert all(c.ok for c in compare_outputs(fn, reference, values, got))
    np.testing.assert_array_equal(
        got["o"], simulated_outputs(fn, whole, inputs, backend=backend)["o"]
    )
    assert not got["o"][1].any()  # the idle user's row
