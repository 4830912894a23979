"""One tile-matmul on a Tensix site: the matrix engine's cycles, its thread's other instructions,
and the unpackers that feed it.

Decided here, and why (docs/targets.md#tile-matmul-issue):

* the engine's cycles are the fidelity's passes over the tile (``Target.matmul_tile_cycles``), a
  short row paying a whole row pass, plus the *issue* cycles: the instructions the matmul LLK's
  loop issues per tile-matmul besides the passes (tt-llk ``llk_math_matmul.h``: a fixed handover,
  a phase reset above LoFi, and a source-bank release once per row of the sub-block's reuse, or
  every tile-matmul where the chip's LLK releases per tile on sub-blocks 2x2 or wider). They are
  instruction counts from the LLK and the ISA's MOP expander, not fitted to the measured GEMMs;
* the unpackers bound the rate from below: the streamed operand's bytes through one unpacker, and
  both operands' through the two together, whose joint rate is the chip's
  (``unpack_joint_bytes_per_cycle``).

:mod:`.cost` prices a step's compute as the slower of the two per tile-matmul.
"""

from __future__ import annotations

from .gemm import GemmPlan, GemmShape
from .quantities import GemmQuantities
from .spec import FIDELITIES, Target, normalize_fidelity


def issue_cycles_per_tile_matmul(target: Target, fidelity: str, osh: int, osw: int) -> float:
    """Cycles per tile-matmul the engine's thread issues other than the tile's passes, for an osh x
    osw sub-block (docs/targets.md#tile-matmul-issue): the per-tile instructions, the fidelity loop's
    closing one at more than one phase, and the bank release: once per row of the reuse (1 / the
    longer side), or every tile where the chip's LLK releases per tile and the sub-block is at least
    2x2."""
    if target.matmul_release_each_tile and min(osh, osw) > 1:
        return _fixed_issue_cycles(target, fidelity) + target.matmul_release_cycles
    return _fixed_issue_cycles(target, fidelity) + target.matmul_release_cycles / max(osh, osw)


def least_issue_cycles_per_tile_matmul(
    target: Target, fidelity: str, longest: int | None = None
) -> float:
    """The least :func:`issue_cycles_per_tile_matmul` of any sub-block whose longer side is at
    most ``longest`` (None: any sub-block at all, so no release is counted)."""
    release = target.matmul_release_cycles / longest if longest else 0.0
    return _fixed_issue_cycles(target, fidelity) + release


def _fixed_issue_cycles(target: Target, fidelity: str) -> float:
    """The issue cycles every tile-matmul pays whatever its sub-block."""
    cycles = float(target.matmul_handover_cycles)
    if normalize_fidelity(fidelity) != FIDELITIES[0]:
        cycles += target.matmul_phase_reset_cycles
    return cycles


def engine_cycles_per_tile_matmul(
    target: Target, shape: GemmShape, q: GemmQuantities, fidelity: str, issue: float
) -> float:
    """The matrix engine's cycles per tile-matmul of the busiest site at ``fidelity``: short rows pay
    whole row passes, and each tile-matmul pays ``issue``, its thread's other instructions."""
    fid = float(target.matmul_tile_cycles(shape.in_dtype, fidelity))
    eff_ratio = q.tile_matmuls_busiest_eff / max(1, q.tile_matmuls_busiest)
    return fid * eff_ratio + issue


def unpack_cycles_per_tile_matmul(target: Target, shape: GemmShape, plan: GemmPlan) -> float:
    """Unpacker cycles per tile-matmul (0 where the target declares no unpack rate).

    The unpackers feed the engine's two source registers from local memory. For a sub-block of
    osh x osw tiles the matmul LLK (tt-llk ``_llk_unpack_AB_matmul_``: ``reuse_a = ct_dim >= rt_dim``)
    holds one tile of one operand while it streams the other operand's tiles past it: per K tile,
    min(osh, osw) x (1 + max(osh, osw)) tile unpacks for osh x osw tile-matmuls. The streamed operand
    (one tile per tile-matmul) goes through one unpacker at ``unpack_bytes_per_cycle``; both together
    are capped at ``unpack_joint_bytes_per_cycle`` (they share L1 ports; on Wormhole each gets x2 when
    both want x4). On Tensix this is what makes a 1x1 sub-block, or bf16 at LoFi, slower than the
    fidelity alone says."""
    if not target.unpack_bytes_per_cycle:
        return 0.0
    # The streamed operand is B where the sub-block is at least as wide as tall (reuse_a), else A;
    # their tiles differ where B is a Q8_0 weight.
    tba, tbb = shape.operand_tile_bytes(target), shape.b_tile_bytes(target)
    held_tb, streamed_tb = (tba, tbb) if plan.osw >= plan.osh else (tbb, tba)
    big = max(plan.osh, plan.osw)
    streamed = streamed_tb / target.unpack_bytes_per_cycle
    joint_rate = target.unpack_joint_bytes_per_cycle or target.unpack_bytes_per_cycle
    both = (streamed_tb + held_tb / big) / joint_rate
    return max(streamed, both)
