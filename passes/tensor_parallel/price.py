"""The numbers the tensor-parallel decision compares (docs/tensor-parallel.md#what-is-priced).

Decided here, and why:

- **One chip's op time is the chip target's roofline on the LOCAL shapes**: a product's
  `targets/cost.roofline_cycles` (its FLOPs at the chip's peak against its compulsory DRAM
  bytes), any other op's bytes in and out at the chip's DRAM bandwidth (plus attention's FLOPs at
  the peak; a batched attention's per user, against that user's positions; a gather's rows of
  its table, not the whole table; a cache write's rows, written in place, not the cache). The decision runs before tile has chosen plans, and a
  roofline ranks the shardings of one op as the planned time does: both shrink with the shard,
  and neither favours one plan.
- **An MoE is priced by the experts it reads under uniform routing** (routing is a runtime
  choice, so the price is an expectation): T tokens of k picks each touch each of E experts with
  probability p = 1 - (1 - k/E)^T (k of E exactly at T = 1), and a chip holding H of them reads
  the expected touched held experts of its BUSIEST chip (the all_reduce after it waits for the
  slowest): at T = 1 the exact expected maximum of the k-subset's counts over the E / H chips
  (multivariate hypergeometric), at T > 1 that of E / H independent Binomial(H, p). A chip
  holding every expert (``ffn``, ``replicate``) reads the mean, E x p, each expert at its local
  width. :func:`moe_reads` is the one definition; the decision records its numbers. What a chip
  is priced to read is what link lowers (:func:`linked_reads`): at T = 1 the gathered form reads
  k blocks on every chip whatever it holds (a pick it does not hold reads a held block at
  weight 0), so ``experts`` does not win a decode step by routing.
- **A collective's time is `targets/collectives.price`** on the bytes the mesh dialect prices it
  on (an all_gather's result, the input of the others), the number `passes/mesh_prices.cost_of`
  later writes on the op, so the decision and the IR agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate
from math import comb, exp, lgamma, log, log1p

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation

from spatial_dialect.mesh import Collective, entry_dim
from spatial_dialect.targets import TargetError
from spatial_dialect.targets.collectives import price
from spatial_dialect.targets.cost import roofline_cycles
from spatial_dialect.targets.gemm import GemmShape
from spatial_dialect.targets.mesh import Mesh
from spatial_dialect.tg import (
    AttentionOp,
    BatchAttentionOp,
    BatchSetRowsOp,
    GatherRowsOp,
    MatmulOp,
    MoeOp,
    SetRowsOp,
)

from .layout import Step


def width_bytes(t: TensorType) -> float:
    width = getattr(t.get_element_type(), "bitwidth", 32)
    return width / 8


def nbytes(t: TensorType, shape: Sequence[int] | None = None) -> int:
    shape = list(t.get_shape()) if shape is None else list(shape)
    n = 1
    for s in shape:
        n *= s
    return int(n * width_bytes(t))


def _dtype(t: TensorType) -> str:
    return str(t.get_element_type())


def op_us(
    mesh: Mesh, op: Operation, operands: Sequence[TensorType], results: Sequence[TensorType]
) -> float:
    """One chip's time for ``op`` on the local ``operands`` giving ``results``, in us."""
    chip = mesh.chip
    to_us = 1.0 / (chip.clock_ghz * 1000.0)
    if isinstance(op, MatmulOp):
        (m, k), (br, bc) = operands[0].get_shape(), operands[1].get_shape()
        n = br if op.transposes_b else bc
        try:
            shape = GemmShape(m, k, n, _dtype(operands[0]), _dtype(results[0]))
            return roofline_cycles(chip, shape) * to_us
        except TargetError:
            pass  # a datatype the chip's table lacks: priced by its bytes below
    moved = sum(nbytes(t) for t in operands) + sum(nbytes(t) for t in results)
    if isinstance(op, GatherRowsOp):
        # a gather reads the rows it gathers, not its table (Llama-3-70B's embedding is 2.1 GB
        # for one row of 16 KB: priced whole, it alone outweighed every other decision)
        moved += nbytes(results[0]) - nbytes(operands[0])
    if isinstance(op, (SetRowsOp, BatchSetRowsOp)):
        # a cache write reads its rows and writes them in place: the cache it returns is the one
        # it took (priced whole, a 4096-position cache outweighed the projections feeding it)
        moved += nbytes(operands[1]) - nbytes(operands[0]) - nbytes(results[0])
    if isinstance(op, MoeOp):
        # the experts' matrices (operands 2..4) are read only where routed (module docstring)
        experts = sum(nbytes(t) for t in operands[2:5])
        held = operands[2].get_shape()[0] // op.sizes()[1]
        moved += experts * (linked_reads(op, held) / held - 1)
    cycles = moved / chip.dram_bytes_per_cycle
    if isinstance(op, AttentionOp):
        t_rows, q_cols = operands[0].get_shape()
        s_rows = operands[1].get_shape()[0]
        flops = 4.0 * t_rows * s_rows * q_cols
        cycles = max(cycles, flops / chip.peak_flops_per_cycle("bf16"))
    elif isinstance(op, BatchAttentionOp):
        # each user's queries meet its own positions alone (its capacity), not the whole cache
        q_rows, q_cols = operands[0].get_shape()
        flops = 4.0 * q_rows * op.capacity() * q_cols
        cycles = max(cycles, flops / chip.peak_flops_per_cycle("bf16"))
    return cycles * to_us


def moe_reads(op: MoeOp, held: int) -> tuple[float, float]:
    """(mean, busiest chip's) expected number of its ``held`` experts a chip reads, under uniform
    routing of the op's T tokens x k picks over its E experts (module docstring)."""
    t, _, e, _ = op.sizes()
    k, chips = op.top_k.value.data, e // held
    p = 1.0 - (1.0 - k / e) ** t
    if t == 1:
        # P(every chip holds <= m of a uniform k-subset): [z^k] (sum_{j<=m} C(H,j) z^j)^chips
        def at_most(m: int) -> float:
            poly = [1]
            one = [comb(held, j) for j in range(min(m, held) + 1)]
            for _ in range(chips):
                poly = [
                    sum(poly[i] * one[j - i] for i in range(len(poly)) if 0 <= j - i < len(one))
                    for j in range(min(len(poly) + len(one) - 1, k + 1))
                ]
            return (poly[k] if k < len(poly) else 0) / comb(e, k)
    elif p >= 1.0:
        return float(held), float(held)  # every expert is touched
    else:
        # Binomial(H, p)'s cdf, its terms in logs (C(H, j) overflows a float past H = 1029)
        def term(j: int) -> float:
            ln = lgamma(held + 1) - lgamma(j + 1) - lgamma(held - j + 1)
            return exp(ln + j * log(p) + (held - j) * log1p(-p))

        cdf = list(accumulate(term(j) for j in range(held + 1)))

        def at_most(m: int) -> float:
            return min(cdf[m], 1.0) ** chips

    worst = sum(1.0 - at_most(m) for m in range(held))
    return held * p, worst


def linked_reads(op: MoeOp, held: int) -> float:
    """The experts a chip holding ``held`` reads as link lowers the op (link/moe.py): at T = 1
    the gathered form's k slots each read one block on every chip, a pick another chip holds
    reading held block 0 at weight 0 (no section skips a load by a routed id); at T > 1 the
    busiest chip's expected touched experts (moe_reads)."""
    t = op.sizes()[0]
    return float(op.top_k.value.data) if t == 1 else moe_reads(op, held)[1]


def moe_note(op: MoeOp, chips: int) -> str:
    """The routing the MoE's plans were priced at, with the experts each reads (moe_reads)."""
    t, _, e, _ = op.sizes()
    k = op.top_k.value.data
    whole = moe_reads(op, e)[0]
    line = (
        f"priced at uniform routing: {t} token(s) x {k} of {e} experts; a chip holding every "
        f"expert reads {whole:.2f}"
    )
    if e % chips == 0 and chips > 1:
        mean, worst = moe_reads(op, e // chips)
        line += (
            f", one holding {e // chips} reads {mean:.2f} on average and {worst:.2f} on the "
            f"busiest of {chips} chips"
        )
        if t == 1:
            line += f"; linked, a decode step reads a block per slot ({k}) on every chip"
    return line


def step_bytes(step: Step, t: TensorType, local: Sequence[int], sizes: Sequence[int]) -> int:
    """The bytes ``step`` is priced on, for a local shape ``local`` before it (the mesh
    dialect's `priced_bytes`: an argmax_gather's (value, 4-byte index) pair per row per chip)."""
    if step.kind is Collective.ARGMAX_GATHER:
        rows = nbytes(t, local[:-1]) / width_bytes(t) if len(local) > 1 else 1
        return int(sizes[step.axis] * rows * (width_bytes(t) + 4))
    if step.kind is Collective.ALL_GATHER:
        shape = list(local)
        shape[entry_dim(step.before[step.axis])] *= sizes[step.axis]
        return nbytes(t, shape)
    return nbytes(t, local)


def step_result_shape(step: Step, local: Sequence[int], sizes: Sequence[int]) -> list[int]:
    shape = list(local)
    if step.kind is Collective.ARGMAX_GATHER:
        return shape[:-1] if len(shape) > 1 else [1]
    if step.kind is Collective.ALL_GATHER:
        shape[entry_dim(step.before[step.axis])] *= sizes[step.axis]
    elif step.kind is Collective.REDUCE_SCATTER:
        shape[entry_dim(step.after[step.axis])] //= sizes[step.axis]
    return shape


def steps_us(mesh: Mesh, steps: Sequence[Step], t: TensorType, local: Sequence[int]) -> float:
    """The time of a chain of collectives on a tensor of type ``t`` whose local shape is ``local``
    before the first."""
    total, shape = 0.0, list(local)
    for step in steps:
        total += price(step.kind, mesh, step_bytes(step, t, shape, mesh.shape), step.axis).time_s
        shape = step_result_shape(step, shape, mesh.shape)
    return total * 1e6
