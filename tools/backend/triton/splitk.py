"""Split-K in Triton: the K slices of a GEMM (`sp.work ... split S along x|y`) and the sum of
their partial sums (docs/sp.md#matmul_tiles, docs/backend-triton.md#split-k).

What is decided, and why:

- One kernel per phase. The GEMM kernel's grid covers every site of every slice, as planned;
  an item walks only its slice's K tiles [s K / S, (s + 1) K / S) (s = item // blocks: the
  items of slice s are numbered after those of slices 0 .. s - 1, docs/sp.md#work-items) and
  writes its unrounded sums, in the kernel's accumulator type (f32; i32 for an int8 GEMM), to
  slice s of a scratch tensor `<result>.partials` [S, M, N] that the host allocates. Programs
  of one launch run in no order a program can wait on, so a slice cannot add the sums of the
  slice before as the Tensix sites do (pipes between cores): the addition waits for the launch.
- The sum kernel is the last slice's part: launched after the GEMM kernel over the sites of the
  last slice (the ones that store in the plan), each item adds the S slices' sums of its block
  in slice order, ((P0 + P1) + P2) + ..., which is the order the plan adds them (slice s adds
  what slice s - 1 handed over to its own sums: f32 addition commutes), so the result is
  deterministic and equals the simulator's (tools/simulator/matmul.py) up to the order within
  a slice's tl.dot. It stores the sum rounded once to the result type, through the section's
  `sp.store`.
"""

from __future__ import annotations

from dataclasses import replace

from spatial_dialect import sp
from spatial_dialect.tools.backend.triton.kernel import After, Kernel, Scratch


def partials_of(s: Kernel) -> str:
    """The scratch tensor of a split-K section's partial sums."""
    return f"{s.name}.partials"


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
    `rn`) into its slice of the partials, unrounded; then the sum kernel is planned."""
    name = partials_of(s)
    S = s.k_slices
    elt = "i32" if acc_ty == "tl.int32" else "f32"
    s.scratch.append(Scratch(name, (S * M, N), elt, (S, M, N)))
    p = s.arg(name)
    s.emit(f"""
p_at = {p} + (sl * {M} + rm)[:, None] * {N} + rn[None, :]
tl.store(p_at, acc, mask={mask})
""")
    _sum_kernel(s, name, elt, M)


def _sum_kernel(s: Kernel, partials: str, elt: str, M: int) -> None:
    """The kernel over the last slice's sites: per item, its block's S partial sums added in
    slice order, stored rounded once through the section's store."""
    store = s.store_of(sp.buffer_of(s.program.ops_of(sp.MatmulTilesOp)[0].out))
    out = store.tensor.root_reference.data
    last = (s.k_slices - 1) * s.blocks
    sites = [i for i, (first, count) in enumerate(s.sites) if count and first >= last]
    p = s.arg(partials)
    body = replace(s, lines=[], checks=[], scratch=[], after=[])
    mask = body.store_mask(store)
    N = s.shape(out)[1]
    body.emit(f"""
p_at = {p} + o_r[:, None] * {N} + o_c[None, :]
acc = tl.load(p_at, mask={mask}, other=0)
for k in range(1, {s.k_slices}):
    acc += tl.load(p_at + k * {M * N}, mask={mask}, other=0)
""")
    body.block_store("acc", store, masked=True)
    s.passed_on.add(out)
    s.after.append(
        After(f"{s.fn}_sum", [(partials, p, elt), *s.params(only=out)], body.lines, sites)
    )
