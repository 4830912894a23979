"""Q8_0 numerics as ggml defines them: the reference meaning of tg.dequantize_q8_0 and
tg.matmul_q8_0 (docs/tg.md#q8_0-weights), in numpy alone (no `gguf` import).

A Q8_0 block is 32 int8 values `q` and one f16 scale `d`; its elements are `f32(d) * q`, exact in
f32 (an 11-bit significand times a 7-bit integer). Quantizing 32 floats `x`, `d = max|x| / 127`
in f32, the scale stored as f16(d), by one of two rules (RULES; the rule is the storage format
of an activation's Q8_0 view, tg.matmul_q8_0's `activation`):
- "x86" (format `q8_0`, the default): what llama.cpp runs on x86, ggml-cpu's AVX2/AVX
  `quantize_row_q8_0` (ggml/src/ggml-cpu/arch/x86/quants.c): `id = 127 / max|x|` (0 when
  max|x| = 0), `q = round-half-even(x * id)` in f32 (`_mm256_round_ps(_MM_ROUND_NEAREST)`).
- "ref" (format `q8_0_ref`): ggml's `quantize_row_q8_0_ref` (ggml/src/ggml-quants.c, which
  gguf's `Q8_0.quantize_blocks` follows, and ggml-cpu's generic path): `id = 1 / d` (0 when
  d = 0), `q = roundf(x * id)` (ties away from zero).
The two differ where 127 / max|x| and 1 / d are not the same f32 or x * id is a tie: on about
2e-6 of the elements of a real model's activations (block [2.29472, 0.6414374, 0, ...]: x86
gives 35 for the second element, ref 36).
The Q8_0 x Q8_0 dot (`ggml_vec_dot_q8_0_q8_0`): per block the exact int32 sum of `qa * qw`, times
`f32(da) * f32(dw)` in f32, the blocks summed in order in f32.

`tests: test/frontend/test_q8_0.py` checks dequantize and the "ref" rule bit for bit against
`gguf.quants`, and the "x86" rule against hand-computed blocks.
"""

from __future__ import annotations

import numpy as np

BLOCK = 32
"""Elements per Q8_0 block."""

BLOCK_BYTES = 34
"""Bytes per Q8_0 block: 32 int8 values and one f16 scale."""

LEVELS = 127
"""The largest |value| the quantizer writes: a block's scale is max|x| / LEVELS."""

F32 = np.float32

RULES = {"q8_0": "x86", "q8_0_ref": "ref"}
"""The rounding rule of each Q8_0 format an activation is quantized into (sp/kinds.py's
Q8_0_FORMATS; a weight's `q8_0_kn` is never quantized at run time)."""


def dequantize(values: np.ndarray, scales: np.ndarray, axis: int) -> np.ndarray:
    """f32 elements of a Q8_0 tensor: values (i8) with one f16 scale per 32 along `axis`."""
    scale = np.repeat(scales.astype(np.float16).astype(F32), BLOCK, axis=axis)
    return values.astype(F32) * scale


def quantize(x: np.ndarray, axis: int, rule: str = "x86") -> tuple[np.ndarray, np.ndarray]:
    """(values i8, scales f16) of x quantized to Q8_0 in blocks of 32 along `axis` by `rule`
    ("x86" or "ref", the module docstring)."""
    if rule not in ("x86", "ref"):
        raise ValueError(f"Q8_0 rounding rule {rule!r}: x86 or ref")
    moved = np.moveaxis(np.asarray(x, dtype=F32), axis, -1)
    lead, n = moved.shape[:-1], moved.shape[-1]
    blocks = moved.reshape(*lead, n // BLOCK, BLOCK)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    d = amax / F32(LEVELS)
    with np.errstate(divide="ignore"):
        if rule == "x86":
            inv = np.where(amax == 0, F32(0), F32(LEVELS) / amax).astype(F32)
        else:
            inv = np.where(d == 0, F32(0), F32(1) / d).astype(F32)
    scaled = blocks * inv
    if rule == "x86":
        q = np.rint(scaled).astype(np.int8)  # round half to even, as _MM_ROUND_NEAREST
    else:
        q = (np.sign(scaled) * np.floor(np.abs(scaled) + F32(0.5))).astype(np.int8)  # roundf
    values = np.moveaxis(q.reshape(*lead, n), -1, axis)
    scales = np.moveaxis(d[..., 0].astype(np.float16), -1, axis)
    return values, scales


def matmul_q8_0(
    a: np.ndarray, values: np.ndarray, scales: np.ndarray, activation: str
) -> np.ndarray:
    """a (M x K float) @ the Q8_0 weight (values K x N, scales K/32 x N), unrounded f32.

    activation "q8_0" / "q8_0_ref": each row of a is quantized to Q8_0 along K by that format's
    rule (RULES) and every block's product is ggml's Q8_0 x Q8_0 dot; "float": a (widened to
    f32) times the dequantized weight, in f32."""
    if activation == "float":
        return a.astype(F32) @ dequantize(values, scales, axis=0)
    qa, da = quantize(a.astype(F32), axis=1, rule=RULES[activation])  # M x K, M x K/32
    m, k = qa.shape
    n = values.shape[1]
    nb = k // BLOCK
    ia = qa.astype(np.int32).reshape(m, nb, BLOCK)
    iw = values.astype(np.int32).reshape(nb, BLOCK, n)
    out = np.zeros((m, n), F32)
    fa, fw = da.astype(F32), scales.astype(np.float16).astype(F32)
    for b in range(nb):
        sumi = ia[:, b, :] @ iw[b]  # exact: |sum| <= 32 * 127 * 128
        out = out + sumi.astype(F32) * (fa[:, b : b + 1] * fw[b : b + 1, :])
    return out
