"""bfp8_b as tt-metal packs it: the rounding a Q8_0 weight takes when `-t ttlang` stores it on
Tensix (docs/backend-ttlang.md#q8_0-weights), in numpy alone.

A bfp8_b tile is 1024 sign-and-magnitude bytes and 64 exponent bytes (1088): each row of 16
values within a 16 x 16 face (a tile's columns 0-15 or 16-31 of one row) shares one 8-bit
exponent, and each value keeps a sign bit and a 7-bit magnitude with no hidden one, so a value is
`m * 2^(E - 133)`, m in 0..127, E the group's exponent field.

The rules are tt-metal's host packer (`tt::tt_metal::detail::bfp::convert<8>`, called by
`pack_as_bfp_tiles`, which `ttnn.from_torch(..., dtype=ttnn.bfloat8_b)` runs):

- E is the largest biased f32 exponent field among the group's 16 values (a zero or an f32
  subnormal has field 0 and is stored as 0);
- a value's 24-bit significand (hidden one included) is shifted right by E minus its own exponent,
  the bits shifted out dropped (a shift of 32 or more leaves 0);
- the result is rounded to 7 bits at bit 17, to nearest with ties to even (on the shifted
  significand, so a value just above a tie whose excess was shifted out rounds as the tie does),
  and saturated at 127 (a value that rounds up to 128 keeps m = 127: the exponent never moves);
- the sign is kept where m is not 0.

Older tt-metal releases (bfloat8.hpp's `convert_u32_to_bfp8`) rounded ties up instead; this module
follows the current packer. A bfp8_b value has at most 7 significant bits, so bf16 (8) holds it
exactly: a tensor rounded here and stored as bf16 (tt-lang-sim backs ttnn.bfloat8_b with f32 or
bf16 and does not round) carries the values a chip would hold.

`tests: test/interpreters/test_bfp8.py` checks hand-computed groups and the rules' properties.
"""

from __future__ import annotations

import numpy as np

GROUP = 16
"""Values sharing one exponent: a row of a 16 x 16 face (round_bfp8_b spells it out, as its
source is printed alone)."""


def round_bfp8_b(x: np.ndarray) -> np.ndarray:
    """`x` (any float array, its last axis along a tile's rows) rounded to bfp8_b in f32: groups of
    16 consecutive values along the last axis, from index 0 (a tile's face rows, for a tensor laid
    out in 32 x 32 tiles). A last axis that is not a multiple of 16 is padded with zeros, as a
    tile's padding is. NaN and infinity are outside the format and not handled."""
    # kept self-contained (numpy only): the printed TT-Lang host program copies this function by
    # its source (tools/backend/ttlang/host.py), so that it rounds as the chip stores
    a = np.asarray(x, dtype=np.float32)
    n = a.shape[-1] if a.ndim else 1
    pad = -n % 16
    flat = a.reshape(-1, n)
    flat = np.pad(flat, ((0, 0), (0, pad)))
    bits = flat.view(np.uint32).reshape(flat.shape[0], -1, 16).astype(np.int64)
    exp = (bits >> 23) & 0xFF
    shared = exp.max(axis=-1, keepdims=True)
    sig = (bits & 0x7FFFFF) | 0x800000
    dist = shared - exp
    sig = np.where(dist >= 32, 0, sig >> np.minimum(dist, 31))
    odd = (sig >> 17) & 1
    mag = np.minimum((sig + (1 << 16) - 1 + odd) >> 17, 127)
    mag = np.where(exp == 0, 0, mag)
    value = np.ldexp(mag.astype(np.float64), (shared - 133).astype(np.int32))
    value = np.where(((bits >> 31) == 1) & (mag > 0), -value, value).astype(np.float32)
    out = value.reshape(flat.shape)[:, :n]
    return out.reshape(a.shape)
