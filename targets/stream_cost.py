"""The cost model of a section that is not a GEMM: a stream of tiles through one compute stage.

Pure functions of (target, quantities): the quantities are what a plan moves and computes, read
off the section's IR by `passes/stream_plans.py` (tile and link price with it), and the rates are the target's
fields, as for a GEMM (cost.py):

* every item's tiles come from DRAM through a movement engine and leave through one: per site,
  max(bytes / link bytes per cycle, tiles x NoC issue cycles) cycles of movement, plus a DRAM
  round trip for each K block after an item's first (the reader waits for a block before it
  fetches the next, as in the GEMM model);
* its compute engine runs the stage's vector instructions, `VECTOR_OPS[kind]` per element (of
  the real rows of a tile, in row passes: `row_pass_fraction`), at the target's `vector_lanes`
  elements per cycle (a Tensix SFPU's 32 lanes, an SM's 128 FP32
  lanes, a PCU's 16), plus the tile-matmuls of a flash attention at the target's tile-matmul
  cycles;
* DRAM is shared by the whole mesh: every byte the plan reads or writes at the rate its traffic
  sustains (`dram.sustained_dram_bytes_per_cycle`, the one DRAM rate of every section kind);
* the items are dealt out over the mesh (split_work_to_sites), so the busiest site runs
  ceil(items / sites) of them, movement and compute overlapping through the FIFOs:
  total = max(compute, movement, DRAM) + fill, the fill being one DRAM round trip and one K
  block's compute (the first block's data arriving, the last block's result leaving; an item
  that walks no K loop is one block).

The roofline is the same bound as a GEMM's: max(FLOPs / peak, compulsory bytes / bandwidth), the
FLOPs counting the vector instructions at the mesh's vector rate and the tile-matmuls at its peak.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spatial_dialect.sp.kinds import MAP_KINDS

from .dram import dram_transfer_cycles
from .gemm import ceil_div
from .spec import Target

STAGE_VECTOR_OPS: dict[str, float] = {
    # data movement only
    "gather": 0.0,
    "scatter": 0.0,
    # rotate: two products and a sum per element
    "rope": 3.0,
    # statistics (their application is a map kind)
    "rms_norm": 4.0,
    "layer_norm": 6.0,
    "softmax": 5.0,
    "partial": 2.0,
    "combine": 2.0,
    "argmax": 2.0,
    # tg.moe's router: a score (exp or sigmoid), its k-way ranking (a compare and select per
    # chosen expert, k <= 16 in the models we link) and normalization
    "route": 16.0,
    # per score: scale, mask, exp and the running maximum and sum
    "attention": 6.0,
    # per partial output: rescale the running output and the split's, add (the exps are per row)
    "attention_combine": 3.0,
    # the Gated DeltaNet: the l2 norm's statistics; a convolution's multiply-add per tap (its
    # elements count the taps); the delta rule's decay masks, gates and state decay (its
    # elements: tools/interpreters/reference.py's delta_chunk)
    "l2_norm": 4.0,
    "causal_conv": 2.0,
    "gated_delta": 2.0,
}
"""Vector instructions per element of each compute stage that is not a map (a map kind states
its own: `MapKind.vector_ops`, sp/kinds.py)."""

VECTOR_OPS: dict[str, float] = {
    **{kind: spec.vector_ops for kind, spec in MAP_KINDS.items()},
    **STAGE_VECTOR_OPS,
}
"""Vector instructions per element of each kind of stage (the compute stages: `COMPUTE_STAGES`,
sp/compute.py)."""


@dataclass(frozen=True)
class StreamQuantities:
    """What a plan of a stream section moves and computes (no time in here). Per item: the DRAM
    bytes read and written, the tiles through the movement engines, the elements the compute
    stage works on, the tile-matmuls (flash attention); and the items."""

    kind: str
    items: int
    read_bytes: int
    write_bytes: int
    tiles_moved: int
    moved_bytes: int
    elements: float
    tile_matmuls: float = 0.0
    matmul_dtype: str = "f32"
    compulsory_bytes: int = 0
    steps: int = 1  # the K blocks an item walks (its read-compute pipeline's stages)
    serial: bool = False  # single-buffered operands: a block's load waits for the last compute

    def sites_used(self, target: Target) -> int:
        return min(self.items, target.sites)

    def busiest_items(self, target: Target) -> int:
        return ceil_div(self.items, target.sites)

    @property
    def dram_bytes(self) -> int:
        return self.items * (self.read_bytes + self.write_bytes)


@dataclass(frozen=True)
class StreamCost:
    """Cycles of a stream plan: the busiest site's compute and movement, the whole mesh's DRAM,
    and the total with its binding resource (`bound`: compute, noc or dram) and a one-line `why`."""

    compute_cycles: float
    movement_cycles: float
    dram_cycles: float
    fill_cycles: float
    total_cycles: int
    bound: str
    dram_bytes: int
    noc_bytes: int
    why: str


def row_pass_fraction(target: Target, rows: int, tile_rows: int) -> float:
    """The share of a tile's work a tile of `rows` real rows costs: its row passes of
    `matmul_row_pass` rows (the matrix engine is fed that many rows at a time; the vector engine
    can run a tile's first rows alone, tt-metal's row vector mode, so charging it the same
    passes is no cheaper than the chip)."""
    rp = max(1, target.matmul_row_pass)
    return min(1.0, ceil_div(rows, rp) * rp / tile_rows)


def _item_compute(target: Target, q: StreamQuantities, fidelity: str) -> float:
    vector = q.elements * VECTOR_OPS[q.kind] / target.vector_lanes
    matrix = (
        q.tile_matmuls * target.matmul_tile_cycles(q.matmul_dtype, fidelity)
        if q.tile_matmuls
        else 0
    )
    return vector + matrix


def stream_cost(target: Target, q: StreamQuantities, fidelity: str = "hifi4") -> StreamCost:
    busiest = q.busiest_items(target)
    item_move = q.moved_bytes / target.link_bytes_per_cycle
    if target.noc_issue_cycles:
        item_move = max(item_move, q.tiles_moved * target.noc_issue_cycles)
    # A reader waits for a block before it fetches the next (as the GEMM model's movement
    # chain): one DRAM round trip per K block after the first, which the fill holds.
    item_move += (max(1, q.steps) - 1) * (target.dram_latency_cycles or 0)
    item_compute = _item_compute(target, q, fidelity)
    compute = busiest * item_compute
    movement = busiest * item_move
    dram = dram_transfer_cycles(target, q.dram_bytes, q.sites_used(target), q.items * q.tiles_moved)
    # An item's K blocks stream through double-buffered FIFOs, so what does not overlap is the
    # first block's round trip and the last block's compute (as in the GEMM pipeline), not a
    # whole item's compute: charging that made a one-item section (a decode step's arg-max over
    # the vocabulary, its rms norms) pay its compute twice.
    fill = (target.dram_latency_cycles or 0) + item_compute / max(1, q.steps)
    steady = max(compute, movement, dram)
    bound = "compute" if steady == compute else "noc" if steady == movement else "dram"
    if q.serial:
        # One page per operand FIFO: the reader refills a page only once compute has released
        # it, so an item's movement and compute add up instead of overlapping.
        steady = max(compute + movement, dram)
        bound = "dram" if steady == dram else "compute" if compute >= movement else "noc"
    total = math.ceil(steady + fill)
    why = (
        f"{bound}-bound: {q.items} item(s), {busiest} on the busiest of {q.sites_used(target)} "
        f"site(s): compute {compute:.0f} / movement {movement:.0f} / DRAM {dram:.0f} cycles, "
        f"fill {fill:.0f}" + ("; single-buffered: movement and compute serial" if q.serial else "")
    )
    return StreamCost(
        compute,
        movement,
        dram,
        fill,
        total,
        bound,
        q.dram_bytes,
        q.items * q.moved_bytes,
        why,
    )


def stream_roofline_cycles(target: Target, q: StreamQuantities, fidelity: str = "hifi4") -> int:
    """max(work / the whole mesh's rate, compulsory bytes / DRAM bandwidth)."""
    work = q.items * _item_compute(target, q, fidelity) / target.sites
    return math.ceil(max(work, q.compulsory_bytes / target.dram_bytes_per_cycle))
