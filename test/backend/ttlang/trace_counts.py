"""What a traced tt-lang-sim run moved (tools/backend/ttlang/runner.py: run_traced), counted the way the cost
model counts it, and what the cost model prices for the same sized GEMM section.

- `moved(traced)`: tiles read from DRAM per tensor (`copy_start` from a Tensor: its `dram`),
  tiles written per tensor, tiles sent into pipes (`pipe_send`) and received from them
  (`pipe_recv`).
- `priced(section, target)`: the section's plan as the cost model's GemmPlan (passes/gemm_view.py
  gemm_plan) and shape, through targets/quantities.py gemm_quantities and targets/cost.py.
- `node_buffers(traced, section)`: per node of the grid, the DataflowBuffers it declares and the
  ones its kernels use (their bytes), beside the bytes size-buffers laid out for its site.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

from spatial_dialect import sp


@dataclass
class Moved:
    dram_read: dict[str, int]  # tensor name (without t_) -> tiles read from DRAM
    dram_written: dict[str, int]
    pipe_sent: int  # the operands' multicast (or unicast fallback) pipes
    pipe_received: int
    partials_sent: int = 0  # split-K's partial sums, slice to slice (`partials_pipes`)
    partials_received: int = 0


def moved(traced, partials: set[str] = frozenset()) -> Moved:  # noqa: ANN001
    """`partials`: the names the trace gives split-K's hand-over pipes (`partials_pipes`)."""
    read: Counter[str] = Counter()
    written: Counter[str] = Counter()
    pipes: Counter[tuple[str, bool]] = Counter()
    for e in traced.events:
        ev = e["event"]
        if ev == "copy_start" and e.get("src") == "Tensor":
            read[e["tensor"].removeprefix("t_")] += e["dram"]
        elif ev == "copy_start" and e.get("dst") == "Tensor":
            written[e["tensor"].removeprefix("t_")] += e["dram"]
        elif ev in ("pipe_send", "pipe_recv"):
            pipes[(ev, e["pipe"] in partials)] += e["tiles"]
    return Moved(
        dict(read),
        dict(written),
        pipes[("pipe_send", False)],
        pipes[("pipe_recv", False)],
        pipes[("pipe_send", True)],
        pipes[("pipe_recv", True)],
    )


def partials_pipes(section: sp.ProgramOp) -> set[str]:
    """The trace's names of split-K's pipes (`pipe_(x,y)_to_(x2,y2)`): each site of slices
    0 .. S - 2 to the site one slice's grid further along the split axis (docs/passes.md#place-
    split-k-slices-side-by-side), derived from the plan, not from the printed program."""
    work = section.one(sp.WorkOp)
    gx, gy = section.item_space().grid
    s = work.k_slices
    dx, dy = (gx, 0) if work.split_axis == "x" else (0, gy)
    return {
        f"pipe_({x},{y})_to_({x + dx},{y + dy})"
        for x in range(gx * (s - 1) if dx else gx)
        for y in range(gy * (s - 1) if dy else gy)
    }


@dataclass
class Priced:
    plan: object  # GemmPlan
    shape: object  # GemmShape
    q: object  # GemmQuantities
    cost: object  # GemmCost
    tile_bytes: int
    out_tile_bytes: int


def priced(module, section: sp.ProgramOp) -> Priced:  # noqa: ANN001
    """The target is the module's recorded one (its sub-grid and budget), as tile priced it."""
    from spatial_dialect.passes.gemm_view import GemmView, gemm_plan
    from spatial_dialect.passes.numerics import Numerics
    from spatial_dialect.passes.target_choice import recorded_target
    from spatial_dialect.targets.quantities import gemm_quantities

    target = recorded_target(module, "trace counts")
    shape = GemmView.of(section).shape()
    plan = gemm_plan(section)
    cost = Numerics.of_section(section).cost(target, shape, plan, "hifi4")
    return Priced(
        plan,
        shape,
        gemm_quantities(target, shape, plan),
        cost,
        shape.operand_tile_bytes(target),
        shape.out_tile_bytes(target),
    )


@dataclass
class NodeBuffers:
    site: tuple[int, int]
    declared: int  # DFBs the operation declares on the node
    used_bytes: int  # bytes of the DFBs its kernels reserve or wait on
    laid_out: int  # bytes size-buffers laid out for its site (memory map spans, aliases once)
    aliased: int  # bytes of buffers size-buffers laid over another (a spill in the output FIFO)


def node_buffers(traced, section: sp.ProgramOp) -> list[NodeBuffers]:  # noqa: ANN001
    mesh = section.one(sp.MeshOp)
    work = section.one(sp.WorkOp)
    gx, gy = mesh.size
    by_name = {d["dfb"]: d for d in traced.dfbs}
    used: dict[int, set[str]] = defaultdict(set)
    for e in traced.events:
        if "dfb" in e and e.get("kernel"):
            used[int(e["kernel"].split("-")[0].removeprefix("node"))].add(e["dfb"])
    declared = Counter(d["node"] for d in traced.dfbs if d["node"] is not None)
    out = []
    for r in section.ops_of(sp.SitesOp):
        b = r.bindings(work.k_block)
        offsets = r.offsets()
        spans, aliased = set(), 0
        for buf in section.buffers():
            if isinstance(buf, sp.AccOp) or buf.label.data not in offsets:
                continue
            if buf.alias_of is not None:
                aliased += r.bytes_of(buf, b)
                continue
            spans.add((offsets[buf.label.data], r.bytes_of(buf, b)))
        laid_out = sum(n for _, n in spans)
        for x, y in r.rect.sites():
            node = x * gy + y  # the simulator's linear node index (ttl.node: y fastest)
            out.append(
                NodeBuffers(
                    (x, y),
                    declared[node],
                    sum(by_name[n]["bytes"] for n in used[node]),
                    laid_out,
                    aliased,
                )
            )
    return out
