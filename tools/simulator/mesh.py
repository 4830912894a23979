"""The functional simulator of a deployment over a mesh (docs/simulator.md#deployments-over-a-mesh).

Every chip has its own DRAM (the tensors the sections declare, at their local shapes) and runs
every section on it, one section after the other as program.py runs one chip; a step runs across
the chips between two sections: its input read from every chip's DRAM and stacked,
collectives.py's meaning applied (deployment.run_step), each chip's part written back by name for
the later sections. Chips run in lockstep, section by section: a step is a barrier, and SPMD
sections on disjoint DRAMs cannot interact between barriers, so lockstep is every interleaving's
result. The sharding of inputs and unsharding of outputs is the shared plumbing's
(tools/interpreters/deployment.py), as for every executor.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.tools.interpreters.deployment import (
    chips,
    deployment_of,
    run_step,
    shard_inputs,
    stack,
    unshard_outputs,
)
from spatial_dialect.tools.simulator.machine import NotSimulated, SimulationError
from spatial_dialect.tools.simulator.program import (
    ProgramRun,
    declare_dram,
    fill_inputs,
    read_outputs,
    the_entry,
)


def simulate_mesh(module: ModuleOp, whole: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The deployment's WHOLE outputs from its WHOLE inputs (entry order both)."""
    dep = deployment_of(module)
    if dep is None:
        raise NotSimulated("the module is no deployment over a mesh (its entry has no placements)")
    entry = the_entry(module)
    programs = [op for op in dep.schedule if isinstance(op, sp.ProgramOp)]
    per_chip = [chips(s, dep.mesh_shape) for s in shard_inputs(dep, whole)]
    drams = [declare_dram(programs) for _ in range(dep.chips)]
    held = [
        fill_inputs(entry, dram, [arrays[c] for arrays in per_chip]) for c, dram in enumerate(drams)
    ]
    for op in dep.schedule:
        if isinstance(op, sp.ProgramOp):
            for dram in drams:
                ProgramRun(op, dram).run()
            continue
        source, name = op.source.data, op.tensor.data
        parts = [_read(dram, h, source, op) for dram, h in zip(drams, held, strict=True)]
        result = run_step(op, stack(parts, dep.mesh_shape))
        for dram, h, local in zip(drams, held, chips(result, dep.mesh_shape), strict=True):
            h[name] = local
            if name in dram:
                dram[name].fill(local)
    outs = [read_outputs(entry, dram, h) for dram, h in zip(drams, held, strict=True)]
    stacks = [stack([o[i] for o in outs], dep.mesh_shape) for i in range(len(dep.output_names))]
    return unshard_outputs(dep, stacks)


def _read(dram, held: dict[str, np.ndarray], name: str, step) -> np.ndarray:
    if name in dram:
        return dram[name].result()
    if name in held:
        return held[name]
    raise SimulationError(f"mesh.step @{step.tensor.data} reads @{name}, which no chip holds")
