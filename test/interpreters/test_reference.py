"""Reference semantics of every tg op against small cases computed by hand in this file."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

from spatial_dialect.tools.interpreters.numerics import EvaluationError, OutOfRange
from spatial_dialect.tools.interpreters.reference import evaluate, input_names, output_names
from spatial_dialect.tools.spatial_run import entry_function, parse_module

BF16 = ml_dtypes.bfloat16


def run(signature: str, body: str, results: str, **inputs) -> list[np.ndarray]:
    """Evaluates `func.func @f(signature) -> (results) { body }` under the reference."""
    src = f"func.func @f({signature}) -> ({results}) {{\n{body}\n}}"
    return evaluate(entry_function(parse_module(src)), inputs)


def one(signature: str, op: str, result: str, **inputs) -> np.ndarray:
    """Evaluates a function of the one op `%out = op`."""
    (out,) = run(signature, f"  %out = {op}\n  func.return %out : {result}", result, **inputs)
    return out


def f32(*rows) -> np.ndarray:
    return np.array(rows, dtype=np.float32)


MM = "%a: tensor<{m}x{k}x{e}>, %b: tensor<{k}x{n}x{e}>"


def matmul(a: np.ndarray, b: np.ndarray, elt: str, out: str) -> np.ndarray:
    (m, k), (_, n) = a.shape, b.shape
    result = f"tensor<{m}x{n}x{out}>"
    op = f"tg.matmul %a, %b : (tensor<{m}x{k}x{elt}>, tensor<{k}x{n}x{elt}>) -> {result}"
    return one(MM.format(m=m, k=k, n=n, e=elt), op, result, a=a, b=b)


def test_matmul_f32():
    out = matmul(f32([1, 2], [3, 4]), f32([5, 6], [7, 8]), "f32", "f32")
    np.testing.assert_array_equal(out, f32([19, 22], [43, 50]))


def test_matmul_bf16_accumulates_in_f32_and_rounds_once():
    # 256 + 1 + 1: a bf16 accumulator would stay at 256 (257 rounds to even); f32 gives 258,
    # which bf16 holds exactly.
    a = np.array([[256, 1, 1]], dtype=BF16)
    b = np.ones((3, 1), dtype=BF16)
    out = matmul(a, b, "bf16", "bf16")
    assert out.dtype == BF16 and float(out[0, 0]) == 258.0
    # 257 itself is not a bf16: the one rounding goes to the even neighbour, 256.
    out = matmul(np.array([[256, 1]], dtype=BF16), np.ones((2, 1), dtype=BF16), "bf16", "bf16")
    assert float(out[0, 0]) == 256.0


def test_matmul_integers_accumulate_in_i32():
    a = np.array([[100, 100]], dtype=np.int8)
    b = np.array([[100], [100]], dtype=np.int8)
    wide = matmul(a, b, "i8", "i32")
    assert wide.dtype == np.int32 and wide[0, 0] == 20000
    narrow = matmul(a, b, "i8", "i8")
    assert narrow.dtype == np.int8 and narrow[0, 0] == 127  # saturated
    big = np.array([[2**30, 2**30]], dtype=np.int32)
    wrapped = matmul(big, np.array([[2], [0]], dtype=np.int32), "i32", "i32")
    assert wrapped[0, 0] == -(2**31)  # 2^31 wraps in the i32 accumulator


@pytest.mark.parametrize(
    "name, expected",
    [("add", [[11, 22], [13, 24]]), ("sub", [[-9, -18], [-7, -16]]), ("mul", [[10, 40], [30, 80]])],
)
def test_binary_broadcasts_a_1xC_operand_over_rows(name, expected):
    t = "tensor<2x2xf32>"
    op = f"tg.{name} %a, %b : ({t}, tensor<1x2xf32>) -> {t}"
    out = one(f"%a: {t}, %b: tensor<1x2xf32>", op, t, a=f32([1, 2], [3, 4]), b=f32([10, 20]))
    np.testing.assert_array_equal(out, np.array(expected, dtype=np.float32))


def test_binary_same_shape_and_rank_1():
    t = "tensor<3xf32>"
    out = one(
        f"%a: {t}, %b: {t}",
        f"tg.add %a, %b : ({t}, {t}) -> {t}",
        t,
        a=np.array([1, 2, 3], np.float32),
        b=np.array([4, 5, 6], np.float32),
    )
    np.testing.assert_array_equal(out, [5, 7, 9])


def unary(op_text: str, x: np.ndarray, elt: str = "f32") -> np.ndarray:
    t = f"tensor<{x.shape[0]}x{x.shape[1]}x{elt}>"
    return one(f"%x: {t}", op_text.format(t=t), t, x=x)


SIG1 = 1 / (1 + math.exp(-1))


@pytest.mark.parametrize(
    "op, x, expected",
    [
        ("tg.silu %x : ({t}) -> {t}", [0.0, 1.0], [0.0, SIG1]),
        ("tg.sigmoid %x : ({t}) -> {t}", [0.0, 1.0], [0.5, SIG1]),
        # no overflow at 100 (exp(100) is past f32); log(2) at 0
        (
            "tg.softplus %x : ({t}) -> {t}",
            [0.0, 100.0, -20.0],
            [math.log(2.0), 100.0, 2.061153622e-9],
        ),
        ("tg.relu %x : ({t}) -> {t}", [-1.0, 2.0], [0.0, 2.0]),
        ("tg.gelu %x : ({t}) -> {t}", [1.0, -1.0], [0.8413447460685429, -0.15865525393145707]),
        (
            'tg.gelu %x approximate "tanh" : ({t}) -> {t}',
            [1.0, 0.0],
            [0.5 * (1 + math.tanh(math.sqrt(2 / math.pi) * 1.044715)), 0.0],
        ),
        ("tg.scale %x factor 2.5 : ({t}) -> {t}", [2.0, -4.0], [5.0, -10.0]),
        ("tg.softcap %x cap 2.0 : ({t}) -> {t}", [2.0, 0.0], [2 * math.tanh(1.0), 0.0]),
        ("tg.softmax %x : ({t}) -> {t}", [0.0, math.log(3.0)], [0.25, 0.75]),
    ],
)
def test_pointwise_and_softmax(op, x, expected):
    out = unary(op, np.array([x], dtype=np.float32))
    np.testing.assert_allclose(out[0], expected, rtol=1e-6, atol=1e-7)


def test_relu_on_integers():
    out = unary("tg.relu %x : ({t}) -> {t}", np.array([[-3, 0, 7]], np.int32), "i32")
    np.testing.assert_array_equal(out, [[0, 0, 7]])


def test_pointwise_rounds_to_bf16():
    out = unary("tg.scale %x factor 3.0 : ({t}) -> {t}", np.array([[1.0078125]], BF16), "bf16")
    # 3 * (1 + 2^-7) = 3.0234375 lies between the bf16 neighbours 3.015625 and 3.03125.
    assert out.dtype == BF16 and float(out[0, 0]) == 3.03125


def test_swiglu():
    t = "tensor<1x2xf32>"
    out = one(
        f"%g: {t}, %u: {t}",
        f"tg.swiglu %g, %u : ({t}, {t}) -> {t}",
        t,
        g=f32([1.0, 0.0]),
        u=f32([2.0, 5.0]),
    )
    np.testing.assert_allclose(out, [[2 * SIG1, 0.0]], rtol=1e-6)


def test_rms_norm_per_group_with_residual():
    # h = x + residual = [2, 2, 2, 4]; groups of 2: [2, 2] has mean square 4 -> [1, 1];
    # [2, 4] has mean square 10 -> [2, 4] / sqrt(10); weight [1, 0.5] applies to each group.
    t = "tensor<1x4xf32>"
    op = f"tg.rms_norm %x, %w, %r eps 1.0e-12 width 2 : ({t}, tensor<1x2xf32>, {t}) -> {t}"
    out = one(
        f"%x: {t}, %w: tensor<1x2xf32>, %r: {t}",
        op,
        t,
        x=f32([1, 2, 2, 4]),
        w=f32([1, 0.5]),
        r=f32([1, 0, 0, 0]),
    )
    s10 = math.sqrt(10)
    np.testing.assert_allclose(out, [[1.0, 0.5, 2 / s10, 0.5 * 4 / s10]], rtol=1e-6)


def test_rms_norm_whole_row_with_eps():
    # mean square of [3, 4] is 12.5; with eps 0.5 the divisor is sqrt(13).
    t = "tensor<2x2xf32>"
    op = f"tg.rms_norm %x, %w eps 0.5 : ({t}, tensor<1x2xf32>) -> {t}"
    out = one(f"%x: {t}, %w: tensor<1x2xf32>", op, t, x=f32([3, 4], [0, 0]), w=f32([1, 2]))
    np.testing.assert_allclose(out, [[3 / math.sqrt(13), 8 / math.sqrt(13)], [0, 0]], rtol=1e-6)


def test_layer_norm():
    # [1, 2, 3, 4]: mean 2.5, variance 1.25; weight 2, bias 1.
    t, w = "tensor<1x4xf32>", "tensor<1x4xf32>"
    op = f"tg.layer_norm %x, %w, %b eps 1.0e-12 : ({t}, {w}, {w}) -> {t}"
    out = one(
        f"%x: {t}, %w: {w}, %b: {w}",
        op,
        t,
        x=f32([1, 2, 3, 4]),
        w=f32([2, 2, 2, 2]),
        b=f32([1, 1, 1, 1]),
    )
    z = np.array([-1.5, -0.5, 0.5, 1.5]) / math.sqrt(1.25)
    np.testing.assert_allclose(out[0], 2 * z + 1, rtol=1e-6)


def rope(style: str, x: np.ndarray) -> np.ndarray:
    t = f"tensor<1x{x.shape[1]}xf32>"
    c = "tensor<1x2xf32>"
    op = f'tg.rope %x, %c, %s head_dim 4 style "{style}" : ({t}, {c}, {c}) -> {t}'
    # Pair 0 turns by 90 degrees (cos 0, sin 1), pair 1 stays (cos 1, sin 0).
    return one(f"%x: {t}, %c: {c}, %s: {c}", op, t, x=x, c=f32([0, 1]), s=f32([1, 0]))


def test_rope_neox_pairs_i_with_i_plus_half():
    # pairs (0, 2) and (1, 3): (x0, x2) = (1, 3) -> (-3, 1); (x1, x3) stays; both heads alike.
    out = rope("neox", f32([1, 2, 3, 4, 5, 6, 7, 8]))
    np.testing.assert_array_equal(out, [[-3, 2, 1, 4, -7, 6, 5, 8]])


def test_rope_interleaved_pairs_2i_with_2i_plus_1():
    # pairs (0, 1) and (2, 3): (x0, x1) = (1, 2) -> (-2, 1); (x2, x3) stays.
    out = rope("interleaved", f32([1, 2, 3, 4, 5, 6, 7, 8]))
    np.testing.assert_array_equal(out, [[-2, 1, 3, 4, -6, 5, 7, 8]])


def gqa(t: int, causal: bool, pos: int | None) -> np.ndarray:
    """4 heads over 2 kv heads, head_dim 1, zero keys (uniform scores over the visible keys),
    3 cached rows; v's kv head 0 holds [1, 2, 4], kv head 1 holds [10, 20, 40]."""
    q, k, v = f"tensor<{t}x4xf32>", "tensor<3x2xf32>", "tensor<3x2xf32>"
    sig = f"%q: {q}, %k: {k}, %v: {v}" + (", %p: tensor<1xi32>" if pos is not None else "")
    operands = "%q, %k, %v" + (", %p" if pos is not None else "")
    types = f"{q}, {k}, {v}" + (", tensor<1xi32>" if pos is not None else "")
    op = (
        f"tg.attention {operands} heads 4 kv_heads 2 head_dim 1 causal {str(causal).lower()} "
        f"scale 1.0 : ({types}) -> {q}"
    )
    inputs = dict(
        q=np.ones((t, 4), np.float32),
        k=np.zeros((3, 2), np.float32),
        v=f32([1, 10], [2, 20], [4, 40]),
    )
    if pos is not None:
        inputs["p"] = np.array([pos], np.int32)
    return one(sig, op, q, **inputs)


def test_attention_gqa_causal_with_explicit_pos():
    # pos 0: row 0 sees key 0, row 1 keys 0..1. Heads 0, 1 read kv head 0; heads 2, 3 kv head 1.
    np.testing.assert_allclose(gqa(2, True, 0), [[1, 1, 10, 10], [1.5, 1.5, 15, 15]], rtol=1e-6)


def test_attention_causal_default_pos_is_s_minus_t():
    # p = 3 - 2 = 1: row 0 sees keys 0..1, row 1 all three.
    np.testing.assert_allclose(
        gqa(2, True, None), [[1.5, 1.5, 15, 15], [7 / 3, 7 / 3, 70 / 3, 70 / 3]], rtol=1e-6
    )


def test_attention_non_causal_sees_every_key():
    np.testing.assert_allclose(gqa(1, False, 0), [[7 / 3, 7 / 3, 70 / 3, 70 / 3]], rtol=1e-6)


def test_attention_decode_t1_softmax_of_scaled_scores():
    # q = [1, 1], keys [0, 0] and [2, 2], scale 0.5: scores [0, 2]; v is the identity, so the
    # output is the softmax itself.
    q, kv = "tensor<1x2xf32>", "tensor<2x2xf32>"
    op = f"tg.attention %q, %k, %v heads 1 kv_heads 1 head_dim 2 causal true scale 0.5 : ({q}, {kv}, {kv}) -> {q}"
    out = one(
        f"%q: {q}, %k: {kv}, %v: {kv}",
        op,
        q,
        q=f32([1, 1]),
        k=f32([0, 0], [2, 2]),
        v=f32([1, 0], [0, 1]),
    )
    e2 = math.exp(2)
    np.testing.assert_allclose(out, [[1 / (1 + e2), e2 / (1 + e2)]], rtol=1e-6)


def test_attention_pos_out_of_range_names_op_and_value():
    with pytest.raises(OutOfRange, match=r"tg.attention: pos 2 outside \[0, 1\]"):
        gqa(2, True, 2)
    with pytest.raises(OutOfRange, match=r"tg.attention: pos -1 outside"):
        gqa(1, True, -1)


def test_transpose():
    out = one(
        "%x: tensor<2x3xi32>",
        "tg.transpose %x : (tensor<2x3xi32>) -> tensor<3x2xi32>",
        "tensor<3x2xi32>",
        x=np.array([[1, 2, 3], [4, 5, 6]], np.int32),
    )
    np.testing.assert_array_equal(out, [[1, 4], [2, 5], [3, 6]])


GATHER = "tg.gather_rows %t, %i : (tensor<3x2xbf16>, tensor<{n}xi32>) -> tensor<{n}x2xbf16>"


def gather(ids: list[int]) -> np.ndarray:
    n = len(ids)
    return one(
        f"%t: tensor<3x2xbf16>, %i: tensor<{n}xi32>",
        GATHER.format(n=n),
        f"tensor<{n}x2xbf16>",
        t=np.array([[1, 2], [3, 4], [5, 6]], BF16),
        i=np.array(ids, np.int32),
    )


def test_gather_rows():
    out = gather([2, 0, 2])
    assert out.dtype == BF16
    np.testing.assert_array_equal(out.astype(np.float32), [[5, 6], [1, 2], [5, 6]])


@pytest.mark.parametrize("bad, at", [(3, 1), (-1, 1)])
def test_gather_rows_id_out_of_range(bad, at):
    with pytest.raises(
        OutOfRange, match=rf"tg.gather_rows: id {bad} outside \[0, 3\) \(ids\[{at}\]\)"
    ):
        gather([0, bad])


SET = (
    "tg.set_rows %c, %r, %p : (tensor<4x2xf32>, tensor<2x2xf32>, tensor<1xi32>) -> tensor<4x2xf32>"
)


def set_rows(pos: int) -> np.ndarray:
    return one(
        "%c: tensor<4x2xf32>, %r: tensor<2x2xf32>, %p: tensor<1xi32>",
        SET,
        "tensor<4x2xf32>",
        c=np.zeros((4, 2), np.float32),
        r=f32([1, 2], [3, 4]),
        p=np.array([pos], np.int32),
    )


def test_set_rows_writes_at_pos():
    np.testing.assert_array_equal(set_rows(1), [[0, 0], [1, 2], [3, 4], [0, 0]])
    np.testing.assert_array_equal(set_rows(2), [[0, 0], [0, 0], [1, 2], [3, 4]])


def test_set_rows_out_of_range():
    with pytest.raises(OutOfRange, match=r"tg.set_rows: pos 3 outside \[0, 2\]"):
        set_rows(3)


def test_argmax_takes_the_first_maximum():
    t = "tensor<3x4xbf16>"
    # Row 2: 1.001 and 1.0 are the same bf16 number, so the first one wins.
    x = np.array([[1, 3, 3, 2], [5, 5, 0, 0], [0, 1.001, 1.0, 0]], BF16)
    out = one(f"%x: {t}", f"tg.argmax %x : ({t}) -> tensor<3xi32>", "tensor<3xi32>", x=x)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [1, 0, 1])


def test_a_chain_rounds_each_result_to_its_type():
    # (1 + 2^-8) is not bf16: the add rounds to 1 before the scale by 2^8 sees it.
    t = "tensor<1x1xbf16>"
    body = (
        f"  %s = tg.add %a, %b : ({t}, {t}) -> {t}\n"
        f"  %r = tg.scale %s factor 256.0 : ({t}) -> {t}\n"
        f"  func.return %r, %s : {t}, {t}"
    )
    r, s = run(
        f"%a: {t}, %b: {t}",
        body,
        f"{t}, {t}",
        a=np.array([[1.0]], BF16),
        b=np.array([[2.0**-8]], BF16),
    )
    assert float(s[0, 0]) == 1.0 and float(r[0, 0]) == 256.0


def test_names_and_input_checks():
    fn = entry_function(
        parse_module(
            "func.func @f(%x: tensor<2xf32>, %1: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) {\n"
            "  %y = tg.add %x, %1 : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
            "  func.return %y, %y : tensor<2xf32>, tensor<2xf32>\n}"
        )
    )
    assert input_names(fn) == ["x", "arg1"]
    assert output_names(fn) == ["y", "y#1"]
    with pytest.raises(EvaluationError, match="no value for input %arg1"):
        evaluate(fn, {"x": np.zeros(2, np.float32)})
    with pytest.raises(EvaluationError, match="input %x must be"):
        evaluate(fn, {"x": np.zeros(3, np.float32), "arg1": np.zeros(2, np.float32)})


def test_f16_results_round_to_nearest_even():
    # 1024.5 * 2 = 2049 lies halfway between the f16 neighbours 2048 and 2050: even wins.
    out = unary("tg.scale %x factor 2.0 : ({t}) -> {t}", np.array([[1024.5]], np.float16), "f16")
    assert out.dtype == np.float16 and float(out[0, 0]) == 2048.0
