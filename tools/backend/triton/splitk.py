"""Split-K in Triton: the K slices of a GEMM (`sp.work ... split S along x|y`) and the sum of
their partial sums, in one kernel (docs/sp.md#matmul_tiles, docs/backend-triton.md#split-k).

What is decided, and why:

- One kernel. Its grid covers every site of every slice, as planned; an item walks only its
  slice's K tiles [s K / S, (s + 1) K / S) (s = item // blocks: the items of slice s are
  numbered after those of slices 0 .. s - 1, docs/sp.md#work-items) and writes its unrounded
  sums, in the kernel's accumulator type (f32; i32 for an int8 GEMM), to slice s of a scratch
  tensor `<result>.partials` [S, M, N] that the host allocates.
- The last to arrive adds. Programs of one launch run in no order a program can wait on, so no
  slice waits for another: after its sums are stored, an item counts itself in at its block's
  counter (`<result>.arrivals`, one int32 a block, zeroed by the host) with an atomic add, and the
  item that finds the S - 1 others already there adds the S slices' sums of the block in slice
  order, ((P0 + P1) + P2) + ..., and stores the sum rounded once through the section's `sp.store`,
  then zeroes the counter for the next launch. Slice order is the order the plan adds them (slice
  s adds what slice s - 1 handed over to its own sums: f32 addition commutes), so the result is
  deterministic whichever item arrives last, and equals the simulator's (tools/simulator/matmul.py)
  up to the order within a slice's tl.dot. A second kernel would cost a launch (the GPU presets'
  `kernel_launch_cycles`, 2.5 us on H200) where this costs one atomic round trip.
- Ordering, as CUTLASS's semaphore does it: every thread's stores, a barrier, then the atomic at
  GPU scope with acquire-release semantics (one thread performs a scalar atomic, and its release
  covers what the barrier ordered before it); the adder reads the partials past L1
  (`cache_modifier=".cg"`: L1 is not coherent across SMs).
"""

from __future__ import annotations

from dataclasses import replace

from spatial_dialect import sp
from spatial_dialect.tools.backend.triton.kernel import Kernel, Scratch


def partials_of(s: Kernel) -> str:
    """The scratch tensor of a split-K section's partial sums."""
    return f"{s.name}.partials"


def arrivals_of(s: Kernel) -> str:
    """The scratch tensor of a split-K section's per-block arrival counters."""
    return f"{s.name}.arrivals"


def k_range(s: Kernel) -> str:
    """The `range(...)` arguments of an item's K blocks: every K tile, or (split-K) its slice
    `sl`'s, from `ks` (both emitted here, inside the item loop)."""
    if s.k_slices == 1:
        return f"0, {s.k_tiles}, {s.k_block}"
    s.emit(f"sl = item // {s.blocks}")
    s.emit(f"ks = sl * {s.k_slice_tiles}")
    return f"ks, ks + {s.k_slice_tiles}, {s.k_block}"


def store_partials(s: Kernel, acc_ty: str, M: int, N: int, mask: str) -> None:
    """The GEMM kernel's end under split-K: the item's block of sums `acc` (rows `rm`, columns
    `rn`) into its slice of the partials, unrounded; its arrival counted at its block; and, by
    the last of the block's S items to arrive, the S slices' sums added and stored."""
    name, counters = partials_of(s), arrivals_of(s)
    S = s.k_slices
    elt = "i32" if acc_ty == "tl.int32" else "f32"
    s.scratch.append(Scratch(name, (S * M, N), elt, (S, M, N)))
    s.scratch.append(Scratch(counters, (1, s.blocks), "i32", (s.blocks,)))
    p, c = s.arg(name), s.arg(counters)
    s.emit(f"""
p_at = {p} + (sl * {M} + rm)[:, None] * {N} + rn[None, :]
tl.store(p_at, acc, mask={mask})
tl.debug_barrier()
arrived = tl.atomic_add({c} + item % {s.blocks}, 1, sem="acq_rel")
if arrived == {S - 1}:
""")
    store = s.store_of(sp.buffer_of(s.program.ops_of(sp.MatmulTilesOp)[0].out))
    body = replace(s, depth=3)
    mask = body.store_mask(store)
    body.emit(f"""
p_at = {p} + o_r[:, None] * {N} + o_c[None, :]
acc = tl.load(p_at, mask={mask}, other=0, cache_modifier=".cg")
for k in range(1, {S}):
    acc += tl.load(p_at + k * {M * N}, mask={mask}, other=0, cache_modifier=".cg")
""")
    body.block_store("acc", store, masked=True)
    body.emit(f"tl.store({c} + item % {s.blocks}, 0)")
