"""The reference semantics of the Gated DeltaNet ops (tools/interpreters/reference.py) against independent
statements of them, and the chunked delta rule the sections compute against the recurrent one
it must equal, over shapes and chunk sizes."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spatial_dialect.tools.interpreters import numerics as ref
from spatial_dialect.tools.spatial_run import main

F32 = np.float32


def _draw(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(F32)


def _delta_inputs(seed: int, t: int, heads: int, k_heads: int, d: int, dv: int):
    """q, k l2-normalised per head, g < 0 from tg.decay, beta in (0, 1): as the model feeds it."""
    rng = np.random.default_rng(seed)
    q = ref.l2_norm(_draw(rng, t, k_heads * d), 1e-6, d)
    k = ref.l2_norm(_draw(rng, t, k_heads * d), 1e-6, d)
    v = _draw(rng, t, heads * dv)
    g = ref.decay(_draw(rng, t, heads), _draw(rng, 1, heads), _draw(rng, 1, heads))
    beta = ref.sigmoid(_draw(rng, t, heads))
    state = _draw(rng, heads * d, dv)
    return q, k, v, g, beta, state


def _close(a: np.ndarray, b: np.ndarray) -> None:
    scale = float(np.sqrt(np.mean(b.astype(np.float64) ** 2))) + 1e-6
    assert np.max(np.abs(a - b)) <= 2e-5 * scale + 1e-6, np.max(np.abs(a - b)) / scale


@settings(max_examples=40, deadline=None)
@given(
    seed=st.integers(0, 2**31),
    t=st.integers(1, 80),
    k_heads=st.integers(1, 3),
    group=st.integers(1, 3),
    d=st.sampled_from([4, 8, 16]),
    dv=st.sampled_from([4, 8, 16]),
    chunk=st.sampled_from([1, 2, 7, 16, 32, 64]),
)
def test_the_chunked_delta_rule_equals_the_recurrent_one(seed, t, k_heads, group, d, dv, chunk):
    heads = k_heads * group
    args = _delta_inputs(seed, t, heads, k_heads, d, dv)
    scale = 1 / math.sqrt(d)
    o, s = ref.gated_delta(*args, heads, d, scale)
    o_c, s_c = ref.gated_delta_chunked(*args, heads, d, scale, chunk)
    _close(o_c, o)
    _close(s_c, s)


def test_one_step_from_a_zero_state_is_beta_k_outer_v():
    """S' = k^T (beta v) from S = 0 (nothing to decay, nothing remembered); o = scale q S'."""
    q, k, v = (np.array([[1.0, 2.0]], F32), np.array([[0.5, -1.0]], F32), np.array([[3.0]], F32))
    g, beta = np.array([[-0.7]], F32), np.array([[0.25]], F32)
    o, s = ref.gated_delta(q, k, v, g, beta, np.zeros((2, 1), F32), 1, 2, 0.5)
    np.testing.assert_allclose(s, [[0.375], [-0.75]], rtol=1e-6)
    np.testing.assert_allclose(o, [[0.5 * (0.375 - 1.5)]], rtol=1e-6)


def test_the_delta_rule_carries_its_state_across_calls():
    """Two steps carrying the state equal one step over both: state in, new state out."""
    args = _delta_inputs(3, 50, 4, 2, 8, 8)
    q, k, v, g, beta, state = args
    o, s = ref.gated_delta(*args, 4, 8, 0.3)
    cut = 17
    o1, s1 = ref.gated_delta(q[:cut], k[:cut], v[:cut], g[:cut], beta[:cut], state, 4, 8, 0.3)
    o2, s2 = ref.gated_delta(q[cut:], k[cut:], v[cut:], g[cut:], beta[cut:], s1, 4, 8, 0.3)
    _close(np.concatenate([o1, o2]), o)
    _close(s2, s)


def test_value_heads_read_their_key_head_as_repeat_interleave():
    """With 4 value heads over 2 key heads, heads 0 and 1 read key head 0: changing key head 1
    leaves their outputs alone."""
    q, k, v, g, beta, state = _delta_inputs(5, 6, 4, 2, 8, 8)
    o, _ = ref.gated_delta(q, k, v, g, beta, state, 4, 8, 0.3)
    k2 = k.copy()
    k2[:, 8:] += 1
    o2, _ = ref.gated_delta(q, k2, v, g, beta, state, 4, 8, 0.3)
    np.testing.assert_array_equal(o[:, :16], o2[:, :16])
    assert not np.allclose(o[:, 16:], o2[:, 16:])


def test_causal_conv_is_numpys_convolution_continuing_the_state():
    rng = np.random.default_rng(1)
    x, w, s = _draw(rng, 9, 5), _draw(rng, 4, 5), _draw(rng, 3, 5)
    out, new = ref.causal_conv(x, w, s, "none")
    xx = np.concatenate([s, x])
    for c in range(5):  # a convolution flips its kernel: tap j meets row t + j
        np.testing.assert_allclose(
            out[:, c], np.convolve(xx[:, c], w[::-1, c], "valid"), rtol=1e-5, atol=1e-5
        )
    np.testing.assert_array_equal(new, x[-3:])
    silu, _ = ref.causal_conv(x, w, s, "silu")
    np.testing.assert_allclose(silu, out / (1 + np.exp(-out)), rtol=1e-6)


def test_causal_conv_carries_its_state_across_calls():
    rng = np.random.default_rng(2)
    x, w, s = _draw(rng, 11, 6), _draw(rng, 4, 6), _draw(rng, 3, 6)
    out, new = ref.causal_conv(x, w, s, "silu")
    y = []
    state = s
    for row in range(11):  # decode, one token at a time
        step, state = ref.causal_conv(x[row : row + 1], w, state, "silu")
        y.append(step)
    np.testing.assert_allclose(np.concatenate(y), out, rtol=1e-6)
    np.testing.assert_array_equal(state, new)


def test_decay_is_minus_exp_a_log_times_softplus():
    a, a_log, dt = (
        np.array([[0.3, -50.0, 40.0]], F32),
        np.array([[0.1, 0.2, -1.0]], F32),
        np.array([[0.5, 0.0, 1.0]], F32),
    )
    want = [-math.exp(a_log[0, i]) * math.log1p(math.exp(a[0, i] + dt[0, i])) for i in range(3)]
    np.testing.assert_allclose(ref.decay(a, a_log, dt)[0], want, rtol=1e-6)


def test_l2_norm_gives_each_head_unit_length():
    rng = np.random.default_rng(4)
    y = ref.l2_norm(_draw(rng, 5, 24), 1e-12, 8).reshape(5, 3, 8)
    np.testing.assert_allclose(np.sum(y * y, axis=-1), 1.0, rtol=1e-5)


@pytest.mark.parametrize(
    "example, target",
    [
        ("tiny_qwen3_next_prefill", "tensix_4x4"),  # a 4x4 mesh: several heads a site
        ("tiny_qwen3_next_prefill_f32", "plasticine_fast_dram"),
    ],
)
def test_the_tiny_delta_layer_passes_on_toml_targets(capsys, example, target):
    root = Path(__file__).resolve().parents[2] / "examples"
    status = main(
        [str(root / f"{example}.mlir"), "--target", str(root / "targets" / f"{target}.toml")]
    )
    out, err = capsys.readouterr()
    assert status == 0, out + err
    assert out.strip().splitlines()[-1].startswith("PASS: 3 output(s) within tolerance")
