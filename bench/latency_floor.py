"""The latency floor of a GEMM on a target: what no plan of the cost model can go below.

The roofline (``targets.cost.roofline_cycles``) has no latency in it, so a small GEMM, which waits
on one DRAM round trip before it computes and on another after it, sits far above it whatever the
plan. The floor states that wait from the target's fields (its DRAM round trip, link rate, tile
sizes and tile-matmul cycles), and bench/plan_quality.py measures the shapes it dominates against
it (issue 26: "no shape worse than 2x except where launch latency dominates").
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import GemmShape, compulsory_dram_bytes, roofline_cycles

LATENCY_DOMINATED = 2.0  # a shape whose roofline is under this many times its latency
GOAL_WORST = 2.0  # ours / roofline on every shape (ours / floor on a latency-dominated one)


@dataclass(frozen=True)
class Floor:
    """``latency``: one operand tile's DRAM round trip and transfer, one tile-matmul, one result
    tile's transfer and write round trip -- what the smallest GEMM takes. ``cycles``: the least any
    plan can take under the cost model: the roofline's compute with the read before it and the
    write-back after it, or the compulsory DRAM bytes at the peak bandwidth with the write-back
    after them. Every ``gemm_cost`` total is at least ``cycles``: it is fill + steps + drain, the fill
    at least a B block's round trip (or the first step's DRAM share), the steps at least the
    busiest site's compute (or the DRAM time), the drain at least the last write-back."""

    latency: int
    cycles: int
    dominated: bool
    launch: int = 0  # the target's kernel launch interval (GPUs), else 0

    @property
    def measure(self) -> int:
        """What a latency-dominated shape is measured against: the floor, or one launch where
        that is longer (a GPU's device time for a tiny kernel is under its launch interval, so
        the launch, not the model's floor, is what the next kernel waits for)."""
        return max(self.cycles, self.launch)


def latency_floor(target: Target, shape: GemmShape, fidelity: str) -> Floor:
    """The floor of ``shape`` on ``target``. Where the target states a kernel launch interval
    (``kernel_launch_cycles``, the GPU presets: the time from one dependent kernel's launch to the
    next's, measured), the latency is at least one launch, so a GPU's small shapes are
    launch-dominated and measured against max(floor, launch) (``Floor.measure``); ``cycles``
    stays the cost model's floor, which no plan's predicted device time goes under."""
    trip = float(target.dram_latency_cycles or 0)
    link = float(target.link_bytes_per_cycle)
    read = trip + shape.b_tile_bytes(target) / link
    write = shape.out_dram_tile_bytes(target) / link + trip
    tm = float(target.matmul_tile_cycles(shape.in_dtype, fidelity))
    compute = shape.flops / target.peak_flops_per_cycle(shape.in_dtype, fidelity)
    memory = compulsory_dram_bytes(target, shape) / target.dram_bytes_per_cycle
    launch = float(target.kernel_launch_cycles or 0)
    latency = math.ceil(max(read + tm + write, launch))
    cycles = math.floor(max(read + max(compute, tm) + write, memory + write))
    dominated = roofline_cycles(target, shape, fidelity) < LATENCY_DOMINATED * latency
    return Floor(latency, cycles, dominated, round(launch))
