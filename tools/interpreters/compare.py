"""When a simulated output equals the reference: the tolerance rule of spatial-run.

The reference rounds every op's result to its element type, as the chip writes every tensor to
DRAM in its element type; so the simulated and the reference values differ only by what happens
inside one op: the order of an f32 accumulation, a partial sum the program keeps in a narrower
type, and the one-ulp differences those propagate through later ops. The rule is per element,
so one wrong tile cannot hide in a large tensor's average:

    |sim - ref| <= rtol(E) * (|ref| + rms(ref))

with rms(ref) the root mean square of the reference tensor's rows that hold anything (a row
all zero, a KV cache's row no step has written, says nothing of the tensor's size; a generation
starts from zero caches, and their unwritten rows would otherwise shrink the scale of the rows
written by sqrt(written / rows)): an element's error is relative to its own size, floored by
the tensor's typical size so that an element near zero (the result of a cancellation) is not
held to an absolute zero. The reported "max rel error" is the largest
|sim - ref| / (|ref| + rms(ref)), to be read against rtol.

    element type   rtol            why
    bf16           2^-4  (0.0625)  16 units of bf16 rounding u = 2^-8: 2u for the op's own result
                                   (two roundings of nearly equal f32 values differ by at most
                                   one ulp, 2u of the value), and what its bf16 inputs' one-ulp
                                   differences propagate: 2u through a well-conditioned op, up to
                                   14u through a recurrence (docs/simulator.md#tolerances)
    f16            2^-7            the same 16 units of f16 rounding (u = 2^-11)
    f32            2^-14           f32 sums in another order measure ~2e-6 at K = 8192
    i8, i32        0               integer results are exact

These hold where every matmul accumulates in f32, as the tg contract says. A program compiled
with accumulate=bf16 (the 16-bit accumulator, rounding after every tile-matmul) breaks the
contract on purpose; it is checked at 32 units of rounding (bf16 2^-3, f16 2^-6), the noise that
mode makes grows with K (measured 0.044 at 1x4096x4096, 0.079 at 1x14336x4096).

Downstream of a product that quantizes its activation (tg.matmul_q8_0, activation "q8_0" or
"q8_0_ref": each row rounded to levels of max|block| / 127), a float output may differ by one more
term, Q8_0_LEVEL = sqrt(32) / 127 (0.0445): an input one ulp away from the reference's (which
the rules above allow any tensor) may round to the neighbouring level, and one level is at most
sqrt(32)/127 of its block's rms (max|x| <= sqrt(32) rms over 32 elements); the product, a
weighted sum, carries that to its output's scale, and every later op onward. The program says
which products quantize; the term holds for any float type, since a level does not shrink with
the type's ulp (docs/simulator.md#tolerances measures it on Tensix, whose Q8_0 products widen
both operands to bf16 and so differ by an ulp in every output).

Where a Q8_0 tensor is stored as bfp8_b (`-t ttlang` on Tensix, Target.q8_0_storage: ttnn has no
Q8_0 tile), a float output downstream of an op that reads one (tg.matmul_q8_0,
tg.dequantize_q8_0) may differ by one more term, BFP8_B_STORAGE = 2^-4 (0.0625): bfp8_b rounds
each value to 7 bits below its group of 16's leading power of two (tools/interpreters/bfp8.py), at
most 2^-7 of the group's largest magnitude, so at most 2^-5 of the group's rms (max|x| <= sqrt(16)
rms over 16 elements); a product on the chip reads two such operands (the weight, and the
activation's Q8_0 view, which the packer rounds to bfp8_b where ggml quantizes it to Q8_0), 2^-5
each, carried to the output's scale as the Q8_0 level is. Measured with our rounding (not the
simulator's, which keeps bfloat8_b in f32), numpy alone: a bf16 activation times a Q8_0 weight
quantized from normal and Student-t(3) draws, 1x4096x4096, 1x14336x4096, 1x4096x14336,
32x4096x1024, 1x128x256 and 4x256x128, three seeds each, both operands rounded to bfp8_b as a chip
holds them, f32 sums rounded to bf16, against the Q8_0 reference: largest error 0.056 (without
the conversion 0.024), within rtol + Q8_0_LEVEL + BFP8_B_STORAGE = 0.170; tt-lang-sim, which
rounds the weights only (the host converts them with round_bfp8_b), 0.048
(test/interpreters/test_tolerance.py repeats the 1x4096x14336 case).

One wrong 32x32 tile of a 1024x1024x1024 bf16 GEMM is outside: a tile copied from elsewhere
measures ~3, a tile that misses one of its 32 K tiles ~0.5, a tile that drops one of its 1024
products 0.08-0.18 (test/interpreters/test_tolerance.py; downstream of a quantized activation that last
one passes, the others still fail).

An arg-max (i32 result of tg.argmax) is an index, not a number: a row may pick another index than
the reference only where the reference's values there are within tolerance of the row's maximum,
|max - x[sim]| <= rtol(E) * (|max| + rms(x)) with E the element type of the arg-max's input and x
the reference's input row, so a near tie may break either way and nothing else may. Its line
reports that gap.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.ir import Operation, SSAValue

from spatial_dialect import tg
from spatial_dialect.tools.interpreters.numerics import element_name, is_float_dtype
from spatial_dialect.tools.interpreters.q8_0 import BLOCK, LEVELS
from spatial_dialect.tools.interpreters.reference import input_names

RTOL: dict[str, float] = {"bf16": 2.0**-4, "f16": 2.0**-7, "f32": 2.0**-14, "i8": 0.0, "i32": 0.0}
"""rtol per element type, where matmuls accumulate in f32 (the tg contract)."""

RTOL_16BIT_ACCUMULATOR: dict[str, float] = {"bf16": 2.0**-3, "f16": 2.0**-6}
"""rtol of the 16-bit types under accumulate=bf16 (the others keep RTOL's)."""


Q8_0_LEVEL = math.sqrt(BLOCK) / LEVELS
"""What a float output downstream of a quantized activation may differ by besides rtol: one
level of the quantizer, at most sqrt(32)/127 of its block's rms."""

QUANTIZED_NOTE = "+1 Q8_0 level"
"""The note of an output checked with Q8_0_LEVEL."""


BFP8_B_STORAGE = 2.0**-4
"""What a float output downstream of a Q8_0 tensor stored as bfp8_b may differ by besides rtol
(and Q8_0_LEVEL): 2^-5 of a group's rms for each of a product's two bfp8_b operands."""

BFP8_B_NOTE = "+bfp8_b storage"
"""The note of an output checked with BFP8_B_STORAGE."""


def rtol(
    dtype: np.dtype, accumulate: str = "f32", quantized: bool = False, bfp8_b: bool = False
) -> float:
    """The tolerance of an element type, for a program compiled with `accumulate`; `quantized`:
    the value is downstream of a product that quantizes its activation; `bfp8_b`: downstream of
    a Q8_0 tensor the program stores as bfp8_b."""
    name = element_name(dtype)
    if accumulate == "bf16" and name in RTOL_16BIT_ACCUMULATOR:
        base = RTOL_16BIT_ACCUMULATOR[name]
    else:
        base = RTOL[name]
    if not is_float_dtype(dtype):
        return base
    return base + (Q8_0_LEVEL if quantized else 0.0) + (BFP8_B_STORAGE if bfp8_b else 0.0)


def _notes(quantized: bool, bfp8_b: bool) -> list[str]:
    return [n for n, on in ((QUANTIZED_NOTE, quantized), (BFP8_B_NOTE, bfp8_b)) if on]


def _downstream(
    fn: FuncOp, inputs: Collection[str], source: Callable[[Operation], bool]
) -> set[SSAValue]:
    """The values of `fn` computed from an op `source` picks: its results, those of every op
    reading such a value, and the arguments named in `inputs`."""
    args = zip(input_names(fn), fn.body.block.args, strict=True)
    downstream: set[SSAValue] = {arg for name, arg in args if name in inputs}
    for op in fn.body.walk():
        if source(op) or any(v in downstream for v in op.operands):
            downstream.update(op.results)
    return downstream


def quantized_downstream(fn: FuncOp, inputs: Collection[str] = ()) -> set[SSAValue]:
    """The values of `fn` computed from a quantized activation: the result of every
    tg.matmul_q8_0 that quantizes its activation, of every op reading such a value, and the
    arguments named in `inputs` (in a chain, an earlier function's outputs of that kind)."""
    return _downstream(
        fn, inputs, lambda op: isinstance(op, tg.MatmulQ8_0Op) and op.quantizes_activation
    )


def q8_0_downstream(fn: FuncOp, inputs: Collection[str] = ()) -> set[SSAValue]:
    """The values of `fn` computed from a Q8_0 tensor (BFP8_B_STORAGE's): the result of every
    tg.matmul_q8_0 and tg.dequantize_q8_0, of every op reading such a value, and the arguments
    named in `inputs` (in a chain, an earlier function's outputs of that kind)."""
    return _downstream(fn, inputs, lambda op: isinstance(op, tg.MatmulQ8_0Op | tg.DequantizeQ8_0Op))


def rule_text() -> str:
    """The rule in one paragraph, with the numbers of RTOL (spatial-run --help prints it)."""
    floats = ", ".join(f"{t} {v:.6g}" for t, v in RTOL.items() if v)
    exact = ", ".join(t for t, v in RTOL.items() if not v)
    fast = ", ".join(f"{t} {v:.6g}" for t, v in RTOL_16BIT_ACCUMULATOR.items())
    return (
        "An element passes when |sim - ref| <= rtol * (|ref| + rms(ref)), rms over the "
        f"reference tensor's rows that are not all zero; rtol: {floats}; {exact} exact ({fast} with --accumulate bf16); "
        f"plus {Q8_0_LEVEL:.4g} (one level, sqrt(32)/127) for a float output downstream of a "
        "product that quantizes its activation to Q8_0, and "
        f"{BFP8_B_STORAGE:.4g} downstream of a Q8_0 tensor the program stores as bfp8_b "
        "(tt-lang-sim). "
        "An arg-max may pick another index only where the reference's value there is within "
        "that tolerance of the row's maximum."
    )


@dataclass(frozen=True)
class Comparison:
    """One output against the reference."""

    name: str
    shape: tuple[int, ...]
    dtype: str
    max_abs: float
    max_rel: float
    tol: float
    bad: int  # elements (rows, for an arg-max) outside the tolerance
    first_bad: tuple[int, ...] | None
    note: str = ""

    @property
    def ok(self) -> bool:
        return self.bad == 0

    def line(self) -> str:
        shape = "x".join(map(str, self.shape))
        text = (
            f"{self.name:<12} {shape:>12} {self.dtype:<8} max abs err {self.max_abs:.3e}  "
            f"max rel err {self.max_rel:.3e}  tol {self.tol:.3e}"
        )
        if self.note:
            text += f"  ({self.note})"
        if not self.ok:
            text += f"  MISMATCH: {self.bad} outside tolerance, first at {self.first_bad}"
        return text


def _scale(values: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """|values| + rms(ref), in f64, rms over the rows of `ref` not all zero; rms is floored at
    the smallest positive float (an all-zero reference then tolerates nothing)."""
    r = ref.astype(np.float64)
    if r.ndim >= 2:
        rows = r.reshape(r.shape[0], -1)
        r = rows[np.any(rows != 0, axis=1)]
    rms = float(np.sqrt(np.mean(r * r))) if r.size else 0.0
    return np.abs(values.astype(np.float64)) + max(rms, np.finfo(np.float64).tiny)


def compare(
    name: str,
    ref: np.ndarray,
    sim: np.ndarray,
    accumulate: str = "f32",
    quantized: bool = False,
    bfp8_b: bool = False,
) -> Comparison:
    """A number-valued output (float or integer) against the reference; `quantized`: it is
    downstream of a product that quantizes its activation (`quantized_downstream`); `bfp8_b`:
    of a Q8_0 tensor stored as bfp8_b (`q8_0_downstream`)."""
    if sim.shape != ref.shape:
        raise ValueError(f"{name}: simulated shape {sim.shape} differs from {ref.shape}")
    tol = rtol(ref.dtype, accumulate, quantized, bfp8_b)
    err = np.abs(sim.astype(np.float64) - ref.astype(np.float64))
    rel = err / _scale(ref, ref) if is_float_dtype(ref.dtype) else err
    bad = ~(rel <= tol)  # NaN counts as bad
    floats = is_float_dtype(ref.dtype)
    note = "; ".join(_notes(quantized and floats, bfp8_b and floats))
    return _result(name, ref, err, rel, tol, bad, note)


def compare_argmax(
    name: str,
    ref: np.ndarray,
    sim: np.ndarray,
    logits: np.ndarray,
    accumulate: str = "f32",
    quantized: bool = False,
    bfp8_b: bool = False,
) -> Comparison:
    """An arg-max output: `logits` is the reference's input of the tg.argmax (`quantized`: it is
    downstream of a quantized activation; `bfp8_b`: of a Q8_0 tensor stored as bfp8_b)."""
    if sim.shape != ref.shape:
        raise ValueError(f"{name}: simulated shape {sim.shape} differs from {ref.shape}")
    x = logits.astype(np.float64).reshape(ref.shape[0], -1)
    rows = np.arange(ref.shape[0])
    inside = (sim >= 0) & (sim < x.shape[1])
    picked = np.where(inside, x[rows, np.clip(sim, 0, x.shape[1] - 1)], -np.inf)
    top = x.max(axis=1)
    gap = top - picked
    tol = rtol(logits.dtype, accumulate, quantized, bfp8_b)
    rel = gap / _scale(top, logits)
    bad = (sim != ref) & ~(rel <= tol)
    ties = int(np.count_nonzero((sim != ref) & ~bad))
    notes = [f"{ties} row(s) break a near tie another way"] if ties else []
    floats = is_float_dtype(logits.dtype)
    note = "; ".join(notes + _notes(quantized and floats, bfp8_b and floats))
    return _result(
        name, ref, np.where(sim != ref, gap, 0), np.where(sim != ref, rel, 0), tol, bad, note
    )


def _result(name, ref, err, rel, tol, bad, note) -> Comparison:
    count = int(np.count_nonzero(bad))
    first = tuple(int(i) for i in np.argwhere(bad)[0]) if count else None
    return Comparison(
        name=name,
        shape=tuple(ref.shape),
        dtype=element_name(ref.dtype),
        max_abs=float(np.max(err, initial=0.0)),  # NaN propagates, and shows
        max_rel=float(np.max(rel, initial=0.0)),
        tol=tol,
        bad=count,
        first_bad=first,
        note=note,
    )
