"""The batched decode ops' reference semantics (docs/tg.md#batched-decode).

Two properties, drawn by hypothesis over users, positions (idle users included), block sizes,
head shapes and element types:
  * the paged and the contiguous layout give bitwise-identical outputs and caches on the same
    data, with every cache row a user does not own, and every position past a user's own, NaN:
    so a read of anything else would show;
  * one batched step equals B independent single-user steps of tg.set_rows + tg.attention (the
    single-user ops' own implementations) bitwise.
Then the runtime errors (a position past the cache, a block id past the pool, two users on one
slot: raised before anything is written) and the verifier's refusals by the shapes.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.tools.interpreters.numerics import OutOfRange, SlotConflict
from spatial_dialect.tools.interpreters.reference import evaluate
from spatial_dialect.tools.spatial_run import entry_function, parse_module

DTYPES = {"bf16": np.dtype(ml_dtypes.bfloat16), "f32": np.dtype(np.float32)}


def step_source(
    users: int,
    rows: int,
    heads: int,
    kv: int,
    d: int,
    elt: str,
    paged: tuple[int, int] | None,
    tokens: int = 1,
) -> str:
    """One layer's batched step: write each user's `tokens` k and v rows, attend, return all
    three."""
    n = users * tokens
    q, kd = f"tensor<{n}x{heads * d}x{elt}>", f"tensor<{n}x{kv * d}x{elt}>"
    cache, pos = f"tensor<{rows}x{kv * d}x{elt}>", f"tensor<{users}xi32>"
    args = [f"%q: {q}", f"%k: {kd}", f"%v: {kd}", f"%kc: {cache}", f"%vc: {cache}", f"%pos: {pos}"]
    operands, types, block = "%pos", f"{pos}", ""
    if paged is not None:
        block_size, max_blocks = paged
        table = f"tensor<{users}x{max_blocks}xi32>"
        args.append(f"%table: {table}")
        operands, types, block = "%pos, %table", f"{pos}, {table}", f" block_size {block_size}"
    write = f"({cache}, {kd}, {types}) -> {cache}"
    return (
        f"func.func @step({', '.join(args)}) -> ({q}, {cache}, {cache}) {{\n"
        f"  %kc2 = tg.batch_set_rows %kc, %k, {operands}{block} : {write}\n"
        f"  %vc2 = tg.batch_set_rows %vc, %v, {operands}{block} : {write}\n"
        f"  %o = tg.batch_attention %q, %kc2, %vc2, {operands} heads {heads} kv_heads {kv} "
        f"head_dim {d} scale 0.5{block} : ({q}, {cache}, {cache}, {types}) -> {q}\n"
        f"  func.return %o, %kc2, %vc2 : {q}, {cache}, {cache}\n}}"
    )


def single_source(s: int, heads: int, kv: int, d: int, elt: str, tokens: int = 1) -> str:
    """The same step for one user whose cache holds exactly its positions 0 .. s - 1."""
    q, kd, cache = (
        f"tensor<{tokens}x{heads * d}x{elt}>",
        f"tensor<{tokens}x{kv * d}x{elt}>",
        f"tensor<{s}x{kv * d}x{elt}>",
    )
    write = f"({cache}, {kd}, tensor<1xi32>) -> {cache}"
    return (
        f"func.func @one(%q: {q}, %k: {kd}, %v: {kd}, %kc: {cache}, %vc: {cache}, "
        f"%pos: tensor<1xi32>) -> ({q}, {cache}, {cache}) {{\n"
        f"  %kc2 = tg.set_rows %kc, %k, %pos : {write}\n"
        f"  %vc2 = tg.set_rows %vc, %v, %pos : {write}\n"
        f"  %o = tg.attention %q, %kc2, %vc2, %pos heads {heads} kv_heads {kv} head_dim {d} "
        f"causal true scale 0.5 : ({q}, {cache}, {cache}, tensor<1xi32>) -> {q}\n"
        f"  func.return %o, %kc2, %vc2 : {q}, {cache}, {cache}\n}}"
    )


def run(source: str, **inputs) -> list[np.ndarray]:
    return evaluate(entry_function(parse_module(source)), inputs)


def bits(a: np.ndarray) -> np.ndarray:
    """The bit patterns of a float array: bitwise equality, NaN included."""
    return a.view(np.uint16 if a.dtype.itemsize == 2 else np.uint32)


@st.composite
def batches(draw):
    users = draw(st.integers(1, 4))
    block_size = draw(st.sampled_from([1, 2, 4]))
    max_blocks = draw(st.integers(1, 3))
    heads, kv = draw(st.sampled_from([(2, 1), (2, 2), (4, 2)]))
    capacity = block_size * max_blocks
    tokens = draw(st.integers(1, min(3, capacity)))  # 1: a decode; more: prefills into slots
    pos = draw(st.lists(st.integers(-1, capacity - tokens), min_size=users, max_size=users))
    spare = draw(st.integers(0, 3))  # blocks of the pool no user owns
    return (
        users,
        block_size,
        max_blocks,
        heads,
        kv,
        tokens,
        pos,
        spare,
        draw(st.sampled_from(["bf16", "f32"])),
        draw(st.integers(0, 2**32 - 1)),
    )


def block_table(users, max_blocks, spare, rng) -> np.ndarray:
    """Each user's blocks, distinct and shuffled over a pool with `spare` blocks no one owns."""
    order = rng.permutation(users * max_blocks + spare)[: users * max_blocks]
    return order.reshape(users, max_blocks).astype(np.int32)


def layouts(table, block_size, width, pos, spare, dtype, rng):
    """The same cache contiguous (users x S rows) and paged (the pool `table` addresses): the
    rows of the positions each user holds (0 .. pos - 1; its whole range for an idle one) are
    drawn, all others are NaN (the writes fill pos .. pos + T - 1)."""
    users, max_blocks = table.shape
    s = block_size * max_blocks
    contiguous = np.full((users * s, width), np.nan, np.float32)
    for b, p in enumerate(pos):
        held = s if p < 0 else p
        contiguous[b * s : b * s + held] = rng.standard_normal((held, width))
    pool = np.full(((users * max_blocks + spare) * block_size, width), np.nan, np.float32)
    for b in range(users):
        for j in range(s):
            pool[table[b, j // block_size] * block_size + j % block_size] = contiguous[b * s + j]
    return contiguous.astype(dtype), pool.astype(dtype)


@settings(
    max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
@given(batches())
def test_paged_and_contiguous_agree_bitwise_and_equal_single_user_steps(batch):
    users, block_size, max_blocks, heads, kv, t, pos, spare, elt, seed = batch
    rng, d, dtype = np.random.default_rng(seed), 4, DTYPES[elt]
    s = block_size * max_blocks
    table = block_table(users, max_blocks, spare, rng)
    kc, kpool = layouts(table, block_size, kv * d, pos, spare, dtype, rng)
    vc, vpool = layouts(table, block_size, kv * d, pos, spare, dtype, rng)
    new = {
        n: rng.standard_normal((users * t, w)).astype(dtype)
        for n, w in (("q", heads * d), ("k", kv * d), ("v", kv * d))
    }
    p = np.array(pos, np.int32)
    contiguous = run(
        step_source(users, users * s, heads, kv, d, elt, None, t), **new, kc=kc, vc=vc, pos=p
    )
    paged = run(
        step_source(users, kpool.shape[0], heads, kv, d, elt, (block_size, max_blocks), t),
        **new,
        kc=kpool,
        vc=vpool,
        pos=p,
        table=table,
    )
    np.testing.assert_array_equal(bits(paged[0]), bits(contiguous[0]))
    for b in range(users):
        for j in range(s):
            slot = table[b, j // block_size] * block_size + j % block_size
            for c in (1, 2):
                assert bits(paged[c][slot]).tolist() == bits(contiguous[c][b * s + j]).tolist()
    for b, at in enumerate(pos):
        mine = slice(b * s, (b + 1) * s)
        rows = slice(b * t, (b + 1) * t)
        if at < 0:  # idle: nothing written, zero rows
            assert not contiguous[0][rows].any()
            assert bits(contiguous[1][mine]).tolist() == bits(kc[mine]).tolist()
            continue
        held = slice(b * s, b * s + at + t)
        o, k2, v2 = run(
            single_source(at + t, heads, kv, d, elt, t),
            q=new["q"][rows],
            k=new["k"][rows],
            v=new["v"][rows],
            kc=kc[held],
            vc=vc[held],
            pos=np.array([at], np.int32),
        )
        np.testing.assert_array_equal(bits(o), bits(contiguous[0][rows]))
        np.testing.assert_array_equal(bits(k2), bits(contiguous[1][held]))
        np.testing.assert_array_equal(bits(v2), bits(contiguous[2][held]))
        # the rows past the written position stay as they were (NaN here)
        rest = slice(b * s + at + t, (b + 1) * s)
        assert bits(contiguous[1][rest]).tolist() == bits(kc[rest]).tolist()


def paged_inputs(pos, table, users=2, blocks=3, block_size=2):
    f = np.float32
    return dict(
        q=np.ones((users, 8), f),
        k=np.ones((users, 4), f),
        v=np.ones((users, 4), f),
        kc=np.zeros((blocks * block_size, 4), f),
        vc=np.zeros((blocks * block_size, 4), f),
        pos=np.array(pos, np.int32),
        table=np.array(table, np.int32),
    )


PAGED = step_source(2, 6, 2, 1, 4, "f32", (2, 2))
CONTIGUOUS = step_source(2, 6, 2, 1, 4, "f32", None)


@pytest.mark.parametrize(
    ("pos", "table", "error", "message"),
    [
        (
            [4, 0],
            [[0, 1], [2, 2]],
            OutOfRange,
            r"tg.batch_set_rows: pos 4 of user 0 outside \[0, 3\]",
        ),
        (
            [0, -2],
            [[0, 1], [2, 2]],
            OutOfRange,
            r"pos -2 of user 1 outside \[0, 3\] .*-1 marks an idle user",
        ),
        (
            [0, 3],
            [[0, 1], [2, 3]],
            OutOfRange,
            r"block id 3 of user 1 \(table\[1, 1\]\) outside the pool's \[0, 3\)",
        ),
        ([0, 0], [[0, 1], [2, -1]], None, None),  # an unread entry is not checked
        ([1, 1], [[2, 1], [2, 0]], SlotConflict, r"users 0 and 1 both write cache row 5"),
    ],
)
def test_runtime_errors_name_the_user_and_write_nothing(pos, table, error, message):
    inputs = paged_inputs(pos, table)
    before = {n: a.copy() for n, a in inputs.items()}
    if error is None:
        out = run(PAGED, **inputs)
        assert out[1][0].tolist() == [1.0] * 4 and out[1][4].tolist() == [1.0] * 4
        return
    with pytest.raises(error, match=message):
        run(PAGED, **inputs)
    for n, a in inputs.items():
        np.testing.assert_array_equal(a, before[n])


def test_contiguous_position_past_the_users_rows():
    inputs = paged_inputs([0, 3], [[0, 0], [0, 0]])
    del inputs["table"]
    with pytest.raises(OutOfRange, match=r"pos 3 of user 1 outside \[0, 2\]"):
        run(CONTIGUOUS, **inputs)


def test_a_prefill_past_the_users_positions_writes_nothing():
    """One user, 2 tokens at pos 3 of a paged user of 4 positions: 3 and 4, past its last."""
    inputs = paged_inputs([3], [[0, 1]], users=1)
    inputs.update(q=np.ones((2, 8), np.float32), k=np.ones((2, 4), np.float32))
    inputs["v"] = inputs["k"]
    source = step_source(1, 6, 2, 1, 4, "f32", (2, 2), tokens=2)
    with pytest.raises(OutOfRange, match=r"pos 3 of user 0 outside \[0, 2\] \(pos\[0\]; 2 row"):
        run(source, **inputs)
    inputs["pos"] = np.array([2], np.int32)  # positions 2 and 3: block table[0, 1] = 1
    _, kc, _ = run(source, **inputs)
    assert np.flatnonzero(kc.any(axis=1)).tolist() == [2, 3]


def test_idle_users_write_nothing_and_attend_to_nothing():
    inputs = paged_inputs([-1, 1], [[0, 0], [1, 2]])
    o, kc, _ = run(PAGED, **inputs)
    assert not o[0].any()
    # user 1 at position 1: keys 0 (zeros, score 0) and 1 (its own row of ones, score
    # 4 x 0.5 = 2); v is zeros then ones, so each output is e^2 / (1 + e^2)
    np.testing.assert_allclose(o[1], [math.exp(2) / (1 + math.exp(2))] * 8, rtol=1e-6)
    assert kc[3].tolist() == [1.0] * 4 and np.count_nonzero(kc) == 4


def bad(op: str) -> str:
    return f"func.func @f(%c: tensor<6x4xf32>, %r: tensor<4x4xf32>, %p: tensor<4xi32>, %t: tensor<4x2xi32>, %t8: tensor<4x2xi8>, %t3: tensor<3x2xi32>, %p3: tensor<3xi32>, %q: tensor<4x8xf32>, %p1: tensor<1xi32>, %t1: tensor<1x1xi32>) -> tensor<6x4xf32> {{\n  %o = {op}\n  func.return %c : tensor<6x4xf32>\n}}"


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            "tg.batch_set_rows %c, %r, %p : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>) -> tensor<6x4xf32>",
            "tg.batch_set_rows: cache has 6 rows for 4 users; a contiguous cache holds users x S rows",
        ),
        (
            "tg.batch_set_rows %c, %r, %p block_size 2 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>) -> tensor<6x4xf32>",
            "block_size 2 is given without a block table",
        ),
        (
            "tg.batch_set_rows %c, %r, %p, %t : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x2xi32>) -> tensor<6x4xf32>",
            "a block table is given without block_size",
        ),
        (
            "tg.batch_set_rows %c, %r, %p, %t block_size 4 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x2xi32>) -> tensor<6x4xf32>",
            "cache has 6 rows, not a whole number of blocks of block_size 4",
        ),
        (
            "tg.batch_set_rows %c, %r, %p, %t block_size 0 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x2xi32>) -> tensor<6x4xf32>",
            "block_size must be positive, got 0",
        ),
        (
            "tg.batch_set_rows %c, %r, %p, %t8 block_size 2 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<4x2xi8>) -> tensor<6x4xf32>",
            "table must hold i32 block ids, got i8",
        ),
        (
            "tg.batch_set_rows %c, %r, %p, %t3 block_size 2 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<4xi32>, tensor<3x2xi32>) -> tensor<6x4xf32>",
            "table has 3 rows for 4 users; one row per user",
        ),
        (
            "tg.batch_set_rows %c, %r, %p3 : (tensor<6x4xf32>, tensor<4x4xf32>, tensor<3xi32>) -> tensor<6x4xf32>",
            "rows has 4 rows for 3 users (pos is tensor<3xi32>); each user has the same number T",
        ),
        (
            "tg.batch_attention %q, %c, %c, %p heads 2 kv_heads 1 head_dim 4 scale 0.5 : (tensor<4x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<4xi32>) -> tensor<4x8xf32>",
            "tg.batch_attention: k has 6 rows for 4 users",
        ),
        (
            "tg.batch_attention %q, %c, %c, %p3 heads 2 kv_heads 1 head_dim 4 scale 0.5 : (tensor<4x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<3xi32>) -> tensor<4x8xf32>",
            "tg.batch_attention: q has 4 rows for 3 users",
        ),
        (
            "tg.batch_set_rows %c, %r, %p1, %t1 block_size 2 : (tensor<6x4xf32>, tensor<4x4xf32>, "
            "tensor<1xi32>, tensor<1x1xi32>) -> tensor<6x4xf32>",
            "tg.batch_set_rows: rows has 4 rows per user but a user holds 2 positions",
        ),
        (
            "tg.batch_attention %q, %c, %c, %p1, %t1 heads 2 kv_heads 1 head_dim 4 scale 0.5 "
            "block_size 2 : (tensor<4x8xf32>, tensor<6x4xf32>, tensor<6x4xf32>, tensor<1xi32>, "
            "tensor<1x1xi32>) -> tensor<4x8xf32>",
            "tg.batch_attention: q has 4 rows per user but a user holds 2 positions",
        ),
    ],
)
def test_the_verifier_refuses_what_the_shapes_show(op, message):
    with pytest.raises(VerifyException, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_module(bad(op))


def test_drawn_inputs_give_each_user_its_own_blocks_and_a_position_it_holds():
    from spatial_dialect.tools.interpreters.inputs import draw_inputs

    fn = entry_function(parse_module(step_source(3, 40, 2, 1, 4, "f32", (4, 3))))
    for seed in range(5):
        inputs = draw_inputs(fn, seed)
        table, pos = inputs["table"], inputs["pos"]
        assert len(set(table.ravel().tolist())) == 9 and 0 <= table.min() and table.max() < 10
        assert 0 <= pos.min() and pos.max() < 12
        evaluate(fn, inputs)  # no OutOfRange, no SlotConflict
