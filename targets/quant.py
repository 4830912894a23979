"""What a chip computes a product over a Q8_0 weight in: decided here, once, for every target.

A Q8_0 weight moves as it is stored (34 bytes per 32 elements, :func:`.spec.q8_0_bytes`): that is
what halves a decode's weight bytes against bf16. What the matrix engine multiplies is the
chip's choice, a function of the target and the product's datatypes only:

- ``int8_dot``: ggml's Q8_0 x Q8_0 dot, where the product reads its activation through a Q8_0
  view, the chip multiplies i8 and its accumulator is in registers (a GPU's dp4a / int8 MMA):
  per block of 32 the exact int32 sum of the view's and the weight's values, scaled by the two f16
  scales into the f32 accumulator. A register accumulator can take that per-block scale between
  tile products; Tensix dest, accumulating across K in place, cannot.
- ``dequantize``: the compute stage widens each Q8_0 block (``f32(d) * q``) to a float type the
  matrix engine multiplies (the activation's, else f32) before the product. Tensix does this
  (its unpacker feeds the engine 19-bit source registers). Plasticine, with a 32-bit datapath
  only, widens to f32.

Where the weight is stored is the target's other fact, `Target.q8_0_storage`: Tensix has no Q8_0
tile, so `-t ttlang` stores it as bfp8_b (converted at load; the same 34 bytes per 32 values, the
format tt-metal stores Llama weights in), which the unpacker widens as it widens any block-float
tile. bfp8_b is exact only for a block whose scale is a power of two (it shares one power-of-two
exponent per 16 values; a Q8_0 scale has 11 significant bits): the difference is bfp8_b's
rounding, checked with its own tolerance term (tools/interpreters/compare.py: BFP8_B_STORAGE).
"""

from __future__ import annotations

from dataclasses import dataclass

from .spec import Target, TargetError

INT8_DOT = "int8_dot"
DEQUANTIZE = "dequantize"


@dataclass(frozen=True)
class Q8Compute:
    """The decision: the path, the datatype the matrix engine multiplies in, and why (the chosen
    option, its tile-matmul cycles, the runner-up)."""

    path: str
    dtype: str
    why: str


def matmul_cycles(target: Target, dtype: str) -> int | None:
    """The HiFi4 tile-matmul cycles of ``dtype`` on ``target``, None where it cannot multiply it."""
    try:
        return target.matmul_tile_cycles(dtype)
    except TargetError:
        return None


def q8_0_compute(target: Target, activation: str, act_dtype: str) -> Q8Compute:
    """What ``target`` computes a product over a Q8_0 weight in; ``activation`` is how the product
    reads its activation (``q8_0`` or ``q8_0_ref``: through a Q8_0 view, rounded by llama.cpp's x86
    or ggml's reference rule; ``float``: as it is, of ``act_dtype``).
    TargetError where the chip multiplies neither the activation's type nor f32."""
    widen = act_dtype if matmul_cycles(target, act_dtype) is not None else "f32"
    widen_cycles = matmul_cycles(target, widen)
    if widen_cycles is None:
        raise TargetError(
            f"target {target.name} multiplies neither {act_dtype} nor f32, so it cannot compute "
            "on a Q8_0 weight"
        )
    dequantize = f"dequantize to {widen} in the compute stage ({widen_cycles} cycles per tile)"
    i8_cycles = matmul_cycles(target, "i8")
    quantized = activation != "float"
    if quantized and i8_cycles is not None and target.acc_in_registers:
        return Q8Compute(
            INT8_DOT,
            "i8",
            f"int8 dot of the Q8_0 view and weight, per-block scales into the f32 register "
            f"accumulator ({i8_cycles} cycles per tile); runner-up: {dequantize}",
        )
    if not quantized:
        reason = "the activation is read as it is (no Q8_0 view)"
    elif i8_cycles is None:
        reason = f"{target.name} has no i8 matrix path"
    else:
        reason = (
            f"{target.name}'s accumulator adds across K in place, with no per-block scale "
            "between tile products"
        )
    runner = (
        f"; stored as {target.q8_0_storage} (34 bytes per 32 values), exact only for a block "
        "whose scale is a power of two"
        if target.q8_0_storage != "q8_0"
        else ""
    )
    return Q8Compute(DEQUANTIZE, widen, f"{dequantize}: {reason}{runner}")
