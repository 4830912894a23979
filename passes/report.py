"""What the compiler decided, for people: `-t report` (JSON) and `-t memory-map` (text).

The report is a contract (DESIGN.md section 8): one JSON object

    {"target": ..., "options": {...},
     "sections": [{"name", "op", "plan", "predicted_cycles", "predicted_us", "roofline_us",
                   "dram_bytes", "noc_bytes", "sites", "peak_local_bytes", ...}],
     "total": {"predicted_us", "roofline_us"}}

Every number comes from the IR and the cost model's functions of it: the predicted cycles are the
ones tile recorded, the bytes are the cost model's for the recorded plan, except where
fuse-operands decided a sharing (Plasticine): there DRAM serves exactly the copies it chose.
The roofline is the cost model's lower bound: max(FLOPs / peak rate, compulsory DRAM bytes /
bandwidth). The memory map prints per site range each buffer's offset, bytes, depth and page,
and each site's use against its budget.
"""

from __future__ import annotations

import json
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.passes.common import (
    SectionGemm,
    module_target,
    options,
    programs,
    recorded_target_name,
    section_cost,
)
from spatial_dialect.passes.plan_ops import report_row as stream_report_row
from spatial_dialect.passes.size_buffers import memory_buffers, site_bytes
from spatial_dialect.passes.tile import DEFAULT_FIDELITY
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import WrongPhase
from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import roofline_cycles


def _sized(module: ModuleOp, what: str) -> list[sp.ProgramOp]:
    """The module's sections, refusing a module that is not linked or a section not sized."""
    module_target(module, what)
    sections = list(programs(module))
    for p in sections:
        if p.phase_value != Phase.SIZED:
            err = WrongPhase(what, Phase.SIZED.value, p.phase_value.value)
            p.emit_error(str(err), err)
    return sections


def shared_dram_bytes(
    program: sp.ProgramOp, target: Target, default: int, gemm: SectionGemm
) -> int:
    """DRAM bytes under the sharing decisions: each operand panel fetched `copies` times."""
    shares = program.ops_of(sp.ShareOp)
    if not shares:
        return default
    items = program.item_space().count
    operands = sum(items // s.consumers * s.copies * s.bytes for s in shares)
    c = gemm.tensor(gemm.store)
    return operands + c.tiles[0] * c.tiles[1] * target.tile_bytes(c.storage)


def section_report(program: sp.ProgramOp, target: Target, fidelity: str) -> dict[str, Any]:
    plan, work = program.one(sp.PlanOp), program.one(sp.WorkOp)
    assert plan is not None and work is not None
    ranges = program.ops_of(sp.SitesOp)
    clock_khz = target.clock_ghz * 1000.0
    if program.one(sp.MatmulTilesOp) is None:
        numbers = stream_report_row(program, target, fidelity)
    else:
        gemm = SectionGemm.of(program)
        cost = section_cost(program, target, fidelity)
        numbers = {
            "roofline_us": roofline_cycles(target, gemm.shape(), fidelity) / clock_khz,
            "dram_bytes": shared_dram_bytes(program, target, cost.dram_bytes, gemm),
            "noc_bytes": cost.noc_bytes,
        }
    return {
        "name": program.sym_name.data,
        "op": program.source_op.data,
        "plan": {
            "kind": plan.kind.data.value,
            "grid": list(plan.grid),
            "line": plan.is_line,
            "per_site": list(work.block),
            "over": list(work.over) if work.over is not None else None,
            "block": list(plan.sub_block),
            "k_block": work.k_block,
            "k_blocks": work.k_blocks,
            "packing": plan.packing.data,
            "sharing": {
                s.tensor.root_reference.data: s.sharing.data.value
                for s in program.ops_of(sp.ShareOp)
            },
            "multicast": [g.sym_name.data for g in program.ops_of(sp.GroupOp)],
        },
        "predicted_cycles": plan.predicted_cycles,
        "predicted_us": plan.predicted_cycles / clock_khz,
        "roofline_us": numbers["roofline_us"],
        "bound": plan.bound.data,
        "runner_up": None
        if plan.runner_up is None
        else {
            "plan": plan.runner_up.data,
            "cycles": plan.runner_up_cycles,
        },
        "dram_bytes": numbers["dram_bytes"],
        "noc_bytes": numbers["noc_bytes"],
        "sites": sum(r.rect.width * r.rect.height for r in ranges),
        "site_ranges": len(ranges),
        "peak_local_bytes": max(site_bytes(program, r) for r in ranges),
    }


def report(module: ModuleOp) -> dict[str, Any]:
    sections = _sized(module, "-t report")
    target = module_target(module, "-t report")
    recorded = options(module)
    fidelity = recorded.get("fidelity", DEFAULT_FIDELITY)
    rows = [section_report(p, target, fidelity) for p in sections]
    return {
        "target": recorded_target_name(module),
        "options": recorded,
        "sections": rows,
        "total": {
            "predicted_us": sum(r["predicted_us"] for r in rows),
            "roofline_us": sum(r["roofline_us"] for r in rows),
        },
    }


def print_report(module: ModuleOp, stream: IO[str]) -> None:
    json.dump(report(module), stream, indent=2)
    stream.write("\n")


def print_memory_map(module: ModuleOp, stream: IO[str]) -> None:
    sections = _sized(module, "-t memory-map")
    target = module_target(module, "-t memory-map")
    for program in sections:
        mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
        assert mesh is not None and work is not None
        budget = mesh.local_mem
        stream.write(
            f"section @{program.sym_name.data} ({program.source_op.data}) on {target.name}: "
            f"{mesh.size[0]}x{mesh.size[1]} sites, {budget} bytes each from address {target.local_mem_base}\n"
        )
        for r in program.ops_of(sp.SitesOp):
            b = r.bindings(work.k_block)
            used = site_bytes(program, r)
            sites = r.rect.width * r.rect.height
            stream.write(
                f"  sites {r.rect.text()} ({sites} site{'s' if sites > 1 else ''}, block {b['h']}x{b['w']}, "
                f"sub_block {b['sh']}x{b['sw']}): {used} of {budget} bytes ({100.0 * used / budget:.1f}%)\n"
            )
            offsets = r.offsets()
            for buf in memory_buffers(program):
                rows, cols = buf.page.resolve(b)
                depth = buf.depth.resolve(b)[0]
                label = buf.label.data
                where = (
                    f"alias of {buf.alias_of.label.data}"
                    if buf.alias_of
                    else f"offset {offsets[label]:>8}"
                )
                stream.write(
                    f"    {label:<6} {where}  bytes {buf.bytes(b):>8}  depth {depth:>3}  page {rows}x{cols} tiles "
                    f"({rows * cols * buf.tile_bytes} bytes, {buf.storage})\n"
                )


def site_load(program: sp.ProgramOp) -> tuple[list[list[int]], list[list[int]]]:
    """Per site of the mesh (rows y, columns x): output tiles it computes and local bytes it uses."""
    mesh, work = program.one(sp.MeshOp), program.one(sp.WorkOp)
    assert mesh is not None and work is not None
    space = program.item_space()
    tiles = [[0] * mesh.size[0] for _ in range(mesh.size[1])]
    used = [[0] * mesh.size[0] for _ in range(mesh.size[1])]
    for r in program.ops_of(sp.SitesOp):
        nbytes = site_bytes(program, r)
        for x, y in r.rect.sites():
            tiles[y][x] = sum(space.rect(i).h * space.rect(i).w for i in r.items(x, y))
            used[y][x] = nbytes
    return tiles, used


def write_heatmap(module: ModuleOp, path: str) -> None:
    """A PNG per sized module: for each section, the mesh coloured by the output tiles each site
    computes and by the local memory it uses (needs matplotlib: `pip install .[plot]`)."""
    # The phase check first: a user without matplotlib still learns that the file is not sized.
    sections = _sized(module, "heatmap")
    try:
        import matplotlib
    except ImportError:
        raise ImportError(
            "the heat map needs matplotlib: pip install 'spatial-dialect[plot]'"
        ) from None

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(sections), 2, figsize=(10, 4 * len(sections)), squeeze=False)
    for row, program in zip(axes, sections, strict=True):
        for ax, grid, what in zip(
            row, site_load(program), ("output tiles", "local bytes"), strict=True
        ):
            image = ax.imshow(grid, cmap="viridis", origin="upper")
            ax.set_title(f"@{program.sym_name.data}: {what} per site")
            ax.set_xlabel("x")
            ax.set_ylabel("y")
            fig.colorbar(image, ax=ax)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    """`python -m spatial_dialect.passes.report SIZED.mlir OUT.png`: the heat map of a sized file."""
    import argparse
    import sys

    from xdsl.parser import Parser
    from xdsl.utils.exceptions import DiagnosticException, ParseError

    from spatial_dialect.passes.pipeline import default_context

    parser = argparse.ArgumentParser(description="heat map of a sized spatial program")
    parser.add_argument("input")
    parser.add_argument("output")
    ns = parser.parse_args(argv)
    try:
        with open(ns.input) as f:
            module = Parser(default_context(), f.read(), ns.input).parse_module()
        write_heatmap(module, ns.output)
    except (DiagnosticException, ParseError, OSError, ImportError) as err:
        print(f"heatmap: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
