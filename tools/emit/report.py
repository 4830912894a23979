"""`-t report`: what the compiler decided, as one JSON object.

The report is a contract (docs/architecture.md#outputs): one JSON object

    {"target": ..., "options": {...},
     "sections": [{"name", "function", "op", "plan", "predicted_cycles", "predicted_us", "roofline_us",
                   "dram_bytes", "noc_bytes", "sites", "peak_local_bytes",
                   "dram_bytes_by_tensor" (GEMMs: the bytes read of A and of B and written of C,
                   by tensor name: an indexed load's B counts the one block it reads), ...}],
     "total": {"predicted_us", "roofline_us"[, "q8_0_weight_bytes"]}}

A deployment over a mesh (docs/mesh.md#the-linked-deployment) adds `"mesh"` (the preset, its
shape and its chip) and `"collectives"`: per step, in execution order, its kind, tensor, axis,
priced bytes, links, hops and time (the price the step carries, or targets/collectives.price's of
it where it carries none), and the total adds their time: the chips run their sections in
lockstep, so a deployment's time is one chip's sections plus the steps between them. The
sections' rows are one chip's: every chip runs them on its own shard.

A section over a Q8_0 weight adds `"q8_0": {"compute", "weight_bytes"}`: what the target
computes it in (the section's `q8_0` decision) and the bytes of its Q8_0 weight (34 per 32
elements); the total sums the program's distinct Q8_0 weights. A section of a batched decode op
(docs/passes.md#link-the-batched-decode-step) adds `"batch"`: its users, layout and what its
price assumes of their positions.

Every number comes from the IR and the cost model's functions of it: the predicted cycles are the
ones tile recorded, the bytes are the cost model's for the recorded plan, except where
fuse-operands decided a sharing (Plasticine): there DRAM serves exactly the copies it chose.
The roofline is the cost model's lower bound: max(FLOPs / peak rate, compulsory DRAM bytes /
bandwidth). A printer decides nothing: it reads the section's kind, plan and sizes off the IR.
"""

from __future__ import annotations

import json
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp, StringAttr

from spatial_dialect import sp
from spatial_dialect.mesh import StepOp
from spatial_dialect.passes.dram_layout import dram_tile_bytes
from spatial_dialect.passes.gemm_view import GemmView
from spatial_dialect.passes.mesh_prices import cost_of
from spatial_dialect.passes.numerics import section_cost
from spatial_dialect.passes.phases import programs
from spatial_dialect.passes.site_footprint import site_bytes
from spatial_dialect.passes.target_choice import (
    module_target,
    options,
    recorded_mesh,
    recorded_target_name,
)
from spatial_dialect.passes.tile import DEFAULT_FIDELITY
from spatial_dialect.passes.tile.stream import report_row as stream_report_row
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import WrongPhase
from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import dram_bytes_by_operand, roofline_cycles


def sized_sections(module: ModuleOp, what: str) -> list[sp.ProgramOp]:
    """The module's sections, refusing a module that is not linked or a section not sized."""
    module_target(module, what)
    sections = list(programs(module))
    for p in sections:
        if p.phase_value != Phase.SIZED:
            err = WrongPhase(what, Phase.SIZED.value, p.phase_value.value)
            p.emit_error(str(err), err)
    return sections


def gemm_dram_bytes(
    program: sp.ProgramOp, target: Target, fidelity: str, gemm: GemmView
) -> dict[str, int]:
    """A GEMM section's DRAM bytes per tensor (A and B read, C written), as the cost model
    counts them for the recorded plan; under sharing decisions (Plasticine) each operand panel
    is fetched `copies` times."""
    name = {x: gemm.tensor(x).sym_name.data for x in (gemm.load_a, gemm.load_b, gemm.store)}
    a, b, c = dram_bytes_by_operand(
        target, gemm.shape(), section_cost(program, target, fidelity).quantities
    )
    shares = program.ops_of(sp.ShareOp)
    if not shares:
        return {name[gemm.load_a]: a, name[gemm.load_b]: b, name[gemm.store]: c}
    items = program.item_space().count
    by_tensor = {
        s.tensor.root_reference.data: items // s.consumers * s.copies * s.bytes for s in shares
    }
    ct = gemm.tensor(gemm.store)
    by_tensor[name[gemm.store]] = ct.tiles[0] * ct.tiles[1] * dram_tile_bytes(target, ct)
    return by_tensor


def section_functions(module: ModuleOp) -> dict[sp.ProgramOp, str]:
    """The function each section belongs to: link writes a function's `sp.entry` and then its
    sections, so a section belongs to the entry before it (a module may hold several)."""
    owner: dict[sp.ProgramOp, str] = {}
    function = ""
    for op in module.body.block.ops:
        if isinstance(op, sp.EntryOp):
            function = op.function.data
        elif isinstance(op, sp.ProgramOp):
            owner[op] = function
    return owner


def entry_module(module: ModuleOp, function: str) -> ModuleOp:
    """One function's program out of a compiled deployment: its sp.entry and the sections after
    it (section_functions), under the module's target and options."""
    owner = section_functions(module)
    ops = [
        op.clone()
        for op in module.body.block.ops
        if owner.get(op) == function  # type: ignore[call-overload]
        or (isinstance(op, sp.EntryOp) and op.function.data == function)
    ]
    program = ModuleOp(ops)
    program.attributes.update(module.attributes)
    return program


def q8_0_weights(program: sp.ProgramOp, target: Target) -> dict[str, int]:
    """The section's Q8_0 weights (the Q8_0 tensors that name their scales) and their bytes."""
    return {
        t.sym_name.data: t.tiles[0] * t.tiles[1] * target.tile_bytes(t.storage)
        for t in program.ops_of(sp.TensorOp)
        if t.scales is not None
    }


def section_report(program: sp.ProgramOp, target: Target, fidelity: str) -> dict[str, Any]:
    plan, work = program.one(sp.PlanOp), program.one(sp.WorkOp)
    assert plan is not None and work is not None
    ranges = program.ops_of(sp.SitesOp)
    clock_khz = target.clock_ghz * 1000.0
    if not program.kind.is_gemm:
        numbers = stream_report_row(program, target, fidelity)
    else:
        gemm = GemmView.of(program)
        cost = section_cost(program, target, fidelity)
        by_tensor = gemm_dram_bytes(program, target, fidelity, gemm)
        numbers = {
            "roofline_us": roofline_cycles(target, gemm.shape(), fidelity) / clock_khz,
            "dram_bytes": sum(by_tensor.values()),
            "dram_bytes_by_tensor": by_tensor,
            "noc_bytes": cost.noc_bytes,
        }
    extra: dict[str, Any] = {}
    weights = q8_0_weights(program, target)
    if weights:
        decision = program.attributes.get("q8_0")
        extra["q8_0"] = {
            "compute": decision.data if isinstance(decision, StringAttr) else None,
            "weight_bytes": sum(weights.values()),
        }
    batch = program.attributes.get("batch")  # a batched decode op's users, layout and price
    if isinstance(batch, StringAttr):
        extra["batch"] = batch.data
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
            "k_slices": work.k_slices,
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
        **({k: numbers[k] for k in ("dram_bytes_by_tensor",) if k in numbers}),
        **extra,
    }


def report(module: ModuleOp) -> dict[str, Any]:
    sections = sized_sections(module, "-t report")
    target = module_target(module, "-t report")
    recorded = options(module)
    fidelity = recorded.get("fidelity", DEFAULT_FIDELITY)
    function_of = section_functions(module)
    rows = [
        {"function": function_of.get(p, ""), **section_report(p, target, fidelity)}
        for p in sections
    ]
    total: dict[str, Any] = {
        "predicted_us": sum(r["predicted_us"] for r in rows),
        "roofline_us": sum(r["roofline_us"] for r in rows),
    }
    weights = {n: b for p in sections for n, b in q8_0_weights(p, target).items()}
    if weights:
        total["q8_0_weight_bytes"] = sum(weights.values())
    out: dict[str, Any] = {"target": recorded_target_name(module), "options": recorded}
    mesh = recorded_mesh(module)
    if mesh is not None:
        steps = collective_rows(module, mesh)
        total["predicted_us"] += sum(s["us"] for s in steps)
        out["mesh"] = {"preset": mesh.name, "shape": list(mesh.shape), "chip": mesh.chip.name}
        out["collectives"] = steps
    return {**out, "sections": rows, "total": total}


def collective_rows(module: ModuleOp, mesh) -> list[dict[str, Any]]:
    """One row per step of a deployment, in execution order (module docstring)."""
    rows = []
    for step in module.body.block.ops:
        if not isinstance(step, StepOp):
            continue
        cost = step.cost if step.cost is not None else cost_of(step, mesh)
        rows.append(
            {
                "kind": step.kind.data,
                "tensor": step.tensor.data,
                "source": step.source.data,
                "axis": step.axis.value.data,
                "bytes": cost.bytes.data,
                "links": cost.links.data,
                "hops": cost.hops.data,
                "us": cost.ns.data / 1000,
            }
        )
    return rows


def print_report(module: ModuleOp, stream: IO[str]) -> None:
    json.dump(report(module), stream, indent=2)
    stream.write("\n")
