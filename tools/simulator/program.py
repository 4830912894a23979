"""The functional simulator of sized sp programs: it executes what the IR says.

A compiled program is right only if executing exactly what it says gives the reference's
numbers, so this simulator trusts nothing the passes know and reads everything from the IR:

- **Sites.** Each `sp.sites` range is expanded to its sites when the section runs; a site gets
  the range's size symbols (`SitesOp.bindings`) and runs the work items `first(x, y) ..` of it.
- **Local memory.** Every site owns a byte array of the section's local-memory size
  (`sp.mesh ... local`). Each buffer instance is a window of it at the offset the memory map
  gives (`sp.sites ... memory {...}`, an `alias` at its target's offset), and every page pushed
  is written into those bytes, tile after tile, and decoded from them when it is read. Two
  buffers laid over each other therefore corrupt each other's data as they would on the chip;
  a buffer that does not fit is `BufferOutsideMemory`.
- **Stages** are coroutines that wait on FIFOs, one page at a time: a push waits for a free
  page (for a multicast, a free page on every member), a pop for a full one. Stages on
  different engines run concurrently; stages sharing an engine are one kernel, which per work
  item runs, in program order, the stages before its first stage with a K loop, the K loop (each
  K block: its stages' iterations in program order) and then the other stages. When every
  unfinished stage waits and none can move, the program deadlocks: `FifoDeadlock` names each waiting stage and the FIFO it waits on.
- **Access patterns** are evaluated per iteration; a page is one numpy block of the padded
  DRAM tensor, so the work is vectorized over pages, never per element. A block that leaves
  its tensor is `AccessOutsideTensor` (stage, site, tile); a read of a tile no stage and no
  input ever wrote is `UnwrittenRead`; an output tile nothing wrote is `UnwrittenOutput`.
- **Compute** (`sp.matmul_tiles`, matmul.py) adds tile products into the accumulator in its
  declared precision, parks partials in the spill buffer between K blocks, and rounds the
  finished sub-block to the output FIFO's element type, with the same arithmetic as the
  reference (`reference.matmul`, `reference.round_to`).
- **The other stages** (data movement in movement.py, maps in maps.py, row reductions in rows.py,
  rope, flash attention, arg-max, the Gated DeltaNet and the router in stages.py) run one item at
  a time, with the same arithmetic as the reference; a runtime index outside its tensor is
  `IndexOutOfRange`, never a read or a write.
- **Dispatch.** Every stage runs through the one runner its op class registered
  (registry.STAGE_RUNNERS, filled by `@runs(...)` beside each runner; the package's __init__
  imports every runner module, so the table is full before this module runs). A stage op with
  no runner is `NotSimulated`, named.
- **DRAM** tensors are padded to whole tiles; inputs are zero-padded (the tilize contract),
  everything else holds what the program wrote there. Sections run one after the other and
  share DRAM tensors by name.

`simulate(module, inputs)` returns the outputs named by `sp.entry`. Everything it can find wrong
with a program is a `SimulationError` with the stage, site and numbers; a construct it does not
execute is `NotSimulated`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.sp.kinds import Q8_0_FORMATS
from spatial_dialect.targets.spec import q8_0_bytes
from spatial_dialect.tools.interpreters import q8_0 as gguf_quant
from spatial_dialect.tools.interpreters.numerics import numpy_dtype
from spatial_dialect.tools.simulator.machine import (
    DramTensor,
    Fifo,
    LocalMemory,
    NotSimulated,
    Pattern,
    Process,
    SimulationError,
    Site,
    SiteRun,
    run_processes,
)
from spatial_dialect.tools.simulator.registry import runner_of

# ── One section ───────────────────────────────────────────────────────────────────────────────


class ProgramRun:
    """The sites, buffers and stage processes of one sized sp.program."""

    def __init__(self, program: sp.ProgramOp, dram: dict[str, DramTensor]):
        self.program = program
        self.name = program.sym_name.data
        self.tile = program.tile
        self.dram = dram
        work, mesh = program.one(sp.WorkOp), program.one(sp.MeshOp)
        if work is None or mesh is None or not program.ops_of(sp.SitesOp):
            raise NotSimulated(
                f"section @{self.name} is not placed and sized (phase {program.phase_value.value})"
            )
        self.work = work
        self.k_tiles = work.k_tiles
        # Split-K: an item walks only its slice's K tiles (ItemSpace.k_slice).
        self.slice_tiles = work.k_slice_tiles
        self.space = program.item_space()
        self.memory = LocalMemory(mesh.local_mem)
        self.groups = {g.sym_name.data: g for g in program.ops_of(sp.GroupOp)}
        self.runs: dict[Site, SiteRun] = {}
        for sites in program.ops_of(sp.SitesOp):
            for site in sites.rect.sites():
                self.runs[site] = SiteRun(
                    site, sites, sites.bindings(work.k_block), sites.items(*site)
                )
        for run in self.runs.values():
            self._lay_out(run)
        self._patterns: dict[tuple[sp.StageOp, sp.SitesOp], Pattern] = {}
        self._runs_of_items: dict[int, SiteRun] | None = None

    def run_of(self, item: int) -> SiteRun:
        """The site that runs item `item` (read off the placed ranges)."""
        if self._runs_of_items is None:
            self._runs_of_items = {i: r for r in self.runs.values() for i in r.items}
        if item not in self._runs_of_items:
            raise SimulationError(f"section @{self.name}: no site runs item {item}")
        return self._runs_of_items[item]

    def stores(self, item: int) -> bool:
        """Whether item `item` stores its result: every item, but under split-K only the last
        slice's (the others pass their partial sums on)."""
        return self.space.k_slice(item) == self.space.k_slices - 1

    def _lay_out(self, run: SiteRun) -> None:
        offsets = run.sites.offsets()
        for buf in self.program.buffers():
            if isinstance(buf, sp.AccOp):
                continue
            assert isinstance(buf, sp.MemoryBufferOp)
            label = buf.label.data
            home = buf if label in offsets or buf.alias_of is None else buf.alias_of
            if home.label.data not in offsets:
                raise NotSimulated(
                    f"section @{self.name}: buffer {label} has no offset "
                    f"at {run.site} (the program is not sized)"
                )
            dtype = numpy_dtype(buf.elt)
            q8_axis = Q8_0_FORMATS.get(buf.storage)
            elements = self.tile[0] * self.tile[1]
            plain = q8_0_bytes(elements) if q8_axis is not None else elements * dtype.itemsize
            if (buf.format is not None and q8_axis is None) or buf.tile_bytes != plain:
                raise NotSimulated(
                    f"buffer {label}: storage {buf.storage} with "
                    f"{buf.tile_bytes}-byte tiles is not simulated"
                )
            window = self.memory.window(
                run.site,
                run.name(label),
                offsets[home.label.data],
                run.sites.bytes_of(buf, run.bindings),
            )
            page = buf.page.resolve(run.bindings)
            depth = run.sites.depth_of(buf, run.bindings)
            rule = gguf_quant.RULES.get(buf.storage, "x86")  # how floats round into a Q8_0 FIFO
            run.buffers[buf] = Fifo(
                run.name(label), window, depth, (page[0], page[1]), dtype, self.tile, q8_axis, rule
            )

    def pattern(self, stage: sp.LoadOp | sp.StoreOp, run: SiteRun) -> Pattern:
        key = (stage, run.sites)
        if key not in self._patterns:
            self._patterns[key] = Pattern(stage.access, run.bindings, self.k_tiles)
        return self._patterns[key]

    # Engines -----------------------------------------------------------------------------------

    def processes(self) -> list[Process]:
        """One process per (site, engine): the stages placed there, run as one kernel."""
        engines: dict[str, list[sp.StageOp]] = {}
        for stage in self.program.stages():
            if stage.engine is None:
                raise NotSimulated(f"section @{self.name}: {stage.stage_name()} has no engine")
            engines.setdefault(stage.engine.text(), []).append(stage)
        return [
            self._kernel(stages, run) for run in self.runs.values() for stages in engines.values()
        ]

    def _kernel(self, stages: list[sp.StageOp], run: SiteRun) -> Process:
        """Per item, in program order: the stages before the first one with a K loop, the K
        loop of the stages that have one (each K block: each stage's iterations, in program
        order), then the other stages' iterations."""
        k_stages = [
            s
            for s in stages
            if isinstance(s, sp.LoadOp | sp.StoreOp) and self.pattern(s, run).has_k_loop
        ]
        first = stages.index(k_stages[0]) if k_stages else len(stages)
        before = [s for s in stages[:first] if s not in k_stages]
        after = [s for s in stages[first:] if s not in k_stages]
        for item in run.items:
            for s in before:
                yield from self._iterations(s, run, item, None)
            k_first = self.space.k_slice(item) * self.slice_tiles
            k_range = range(k_first, k_first + self.slice_tiles, run.bindings["kw"])
            for k0 in k_range if k_stages else ():
                for s in k_stages:
                    yield from self._iterations(s, run, item, k0)
            for s in after:
                yield from self._iterations(s, run, item, None)

    def _iterations(self, stage: sp.StageOp, run: SiteRun, item: int, k0: int | None) -> Process:
        return runner_of(stage, f"section @{self.name}")(self, stage, run, item, k0)

    def run(self) -> None:
        run_processes(self.name, self.processes())


# ── Whole modules ─────────────────────────────────────────────────────────────────────────────


def simulate(module: ModuleOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Runs every section of a sized module in order on the entry's inputs (in argument order)
    and returns the entry's outputs (in result order)."""
    entry = the_entry(module)
    programs = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    dram = declare_dram(programs)
    given = fill_inputs(entry, dram, inputs)
    for program in programs:
        ProgramRun(program, dram).run()
    return read_outputs(entry, dram, given)


def the_entry(module: ModuleOp) -> sp.EntryOp:
    entries = [op for op in module.walk() if isinstance(op, sp.EntryOp)]
    if len(entries) != 1:
        raise NotSimulated(f"the module has {len(entries)} sp.entry ops; it needs one")
    return entries[0]


def declare_dram(programs: Sequence[sp.ProgramOp]) -> dict[str, DramTensor]:
    """One chip's DRAM: every tensor the sections declare, once by name, checked to be declared
    alike everywhere."""
    dram: dict[str, DramTensor] = {}
    for program in programs:
        for t in program.ops_of(sp.TensorOp):
            name, shape = t.sym_name.data, tuple(t.type.get_shape())
            if name not in dram:
                dram[name] = DramTensor(t, program.tile)
            elif (dram[name].shape, dram[name].dtype) != (shape, numpy_dtype(t.element_type)):
                raise SimulationError(
                    f"section @{program.sym_name.data} declares @{name} as "
                    f"{t.type}, an earlier section otherwise"
                )
            elif dram[name].layout != t.layout.data:
                # one layout per tensor for the whole program (the prelude); the other is a twin
                raise SimulationError(
                    f"section @{program.sym_name.data} declares @{name} in {t.layout.data.value} "
                    f"layout, an earlier section in {dram[name].layout.value}"
                )
    return dram


def fill_inputs(
    entry: sp.EntryOp, dram: dict[str, DramTensor], inputs: Sequence[np.ndarray]
) -> dict[str, np.ndarray]:
    """The entry's inputs written into DRAM (by name); returns them by name."""
    names = [s.data for s in entry.inputs.data]
    if len(names) != len(inputs):
        raise NotSimulated(f"sp.entry takes {len(names)} inputs, {len(inputs)} given")
    given = dict(zip(names, inputs, strict=True))
    scales = {t.scales_name: t for t in dram.values() if t.scales_name is not None}
    for name, array in given.items():
        if name in dram:  # an input no section reads needs no DRAM
            dram[name].fill(array)
        elif name in scales:  # the scales of a Q8_0 input, stored beside its values
            scales[name].fill_scales(array)
    return given


def read_outputs(
    entry: sp.EntryOp, dram: dict[str, DramTensor], given: dict[str, np.ndarray]
) -> list[np.ndarray]:
    """The entry's outputs: from DRAM, or `given` (an argument returned untouched; on a mesh, a
    step's result no section reads)."""
    outputs = []
    for out in (s.data for s in entry.outputs.data):
        if out in dram:
            outputs.append(dram[out].result())
        elif out in given:
            outputs.append(given[out].copy())
        else:
            raise SimulationError(f"output @{out} is a tensor of no section")
    return outputs
