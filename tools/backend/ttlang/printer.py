"""`spatial-opt -t ttlang`: a sized sp module as one self-contained TT-Lang program.

TT-Lang (tenstorrent/tt-lang) sits at the level of sp: one `@ttl.operation` per section, its grid
the section's mesh; a dataflow buffer per sp buffer (shape = the page, block_count = the depth);
`ttl.copy` in the two `@ttl.datamovement` kernels for sp.load / sp.store (movement engine 0 is
the first, 1 the second); block math in the `@ttl.compute` kernel; a `ttl.PipeNet` per multicast
group family. Every number is READ from the sized IR (docs/backend-ttlang.md):

- the kernels walk, per site range, the items `first(x, y) .. + count` of `ttl.node()`: one branch
  per RANGE, the site's first item is the range's affine map of the node's (x, y);
- an item's block (r0, c0) is the item space's numbering (sp/item_space.py) as integer
  statements in the kernel (coord.py), so uneven rounds and the 2-D map are the IR's;
- a range whose pages differ from another's (boundary blocks) has its own variant of the buffer,
  since a TT-Lang dataflow buffer has one block shape per operation.

What TT-Lang cannot express is refused at emission by name (`TTLangUnsupported`, a typed
diagnostic that spatial-opt and spatial-run report in one line): checks.py holds the refusals run
before a section prints, registry.py the tables of what each printer prints.

The program reads as a person would write it: every index is an `Ix` of tools/backend/index.py
(no `(0) * 32`, `+ 0` or `0 <= x <= 0`); a section declares only the DFBs its kernels use (each
takes L1) and takes only the constants they read; the program prints only the host functions
(host.py, by their source) and imports its text names; text.py keeps every line within 100
characters.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from typing import IO

from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp
from spatial_dialect.mesh import StepOp
from spatial_dialect.sp.kinds import Q8_0_FORMATS
from spatial_dialect.tools.backend.ttlang import host
from spatial_dialect.tools.backend.ttlang.deploy import deployment_lines, step_of
from spatial_dialect.tools.backend.ttlang.indexed import host_step
from spatial_dialect.tools.backend.ttlang.moe import experts_table
from spatial_dialect.tools.backend.ttlang.registry import SECTION_PRINTERS
from spatial_dialect.tools.backend.ttlang.section import OperationWriter, names_in
from spatial_dialect.tools.backend.ttlang.text import Lines
from spatial_dialect.tools.backend.ttlang.unsupported import TTLangUnsupported
from spatial_dialect.tools.interpreters.deployment import deployment_of

__all__ = ["TTLangUnsupported", "print_ttlang"]


def print_ttlang(module: ModuleOp, stream: IO[str]) -> None:
    """The module's entry function as one TT-Lang program (see the module docstring)."""
    from spatial_dialect.passes.target_choice import recorded_target, recorded_target_name

    entries = [op for op in module.walk() if isinstance(op, sp.EntryOp)]
    if len(entries) != 1:
        raise TTLangUnsupported("-", f"the module has {len(entries)} sp.entry ops; it needs one")
    entry = entries[0]
    target = recorded_target(module, "-t ttlang")
    if not target.name.startswith(("wormhole", "blackhole")) and "tensix" not in target.name:
        raise TTLangUnsupported("-", f"target {target.name} is not a Tensix chip")
    programs = [op for op in module.walk() if isinstance(op, sp.ProgramOp)]
    # a lone gather or scatter is a host step, a ttnn op between operations (indexed.py)
    sections = [host_step(p, i) or OperationWriter(p, i) for i, p in enumerate(programs)]
    # a deployment over several chips: its collectives between the sections (deploy.py)
    deployment = deployment_of(module)
    steps = [] if deployment is None else [step_of(op) for op in deployment.steps]
    body = Lines()
    for s in sections:
        s.emit(body)
    # tensors: name -> (shape, dtype); a Q8_0 tensor in the format the chip stores it in, and
    # an argument's (values, scales) converted to it at load: name -> (scales, block axis)
    tensors: dict[str, tuple[tuple[int, ...], str]] = {}
    q8_0: dict[str, tuple[str, int]] = {}
    for p in programs:
        for t in p.ops_of(sp.TensorOp):
            fmt = t.format.data if t.format is not None else None
            dtype = target.q8_0_storage if fmt in Q8_0_FORMATS else str(t.element_type)
            tensors.setdefault(t.sym_name.data, (tuple(t.type.get_shape()), dtype))
            if fmt in Q8_0_FORMATS and t.scales is not None:
                q8_0[t.sym_name.data] = (t.scales.root_reference.data, Q8_0_FORMATS[fmt])
    for step in steps:
        tensors.setdefault(step.dst, (step.dst_shape, step.dtype))
    consts: dict[str, str] = {}
    for sec in sections:
        for n, (shape, src) in sec.consts.items():
            tensors.setdefault(n, (shape, "f32"))
            consts[n] = src
    tables = Lines()
    tables(f"TENSORS = {tensors!r}")
    tables("CONSTANTS = {" + ("" if consts else "}"))
    if consts:
        with tables.indent():
            for n, src in consts.items():
                tables(f"{n!r}: lambda: {src},")
        tables("}")
    tables(f"EXPERTS = {experts_table([s for s in sections if isinstance(s, OperationWriter)])!r}")
    tables("Q8_0_WEIGHTS = {" + ("" if q8_0 else "}"))
    if q8_0:
        with tables.indent():
            for n, (scales, axis) in q8_0.items():
                tables(f"{n!r}: ({host._q8_0_as_bfp8_b.__name__}, {scales!r}, {axis}),")
        tables("}")
    tables(f"INPUTS = {[s.data for s in entry.inputs.data]!r}")
    tables(f"OUTPUTS = {[s.data for s in entry.outputs.data]!r}")
    if deployment is None:
        tables("SECTIONS = [")
        with tables.indent():
            for s in sections:
                tables(f"({s.fn}, {s.section_args()!r}),")
        tables("]")
        host_functions, entry_point = host.HOST, host.main.__name__
    else:
        launches = iter(sections)
        order = [
            step_of(op) if isinstance(op, StepOp) else _launch(next(launches))
            for op in deployment.schedule
        ]
        tables.extend(deployment_lines(order, deployment.mesh_shape))
        host_functions, entry_point = host.CHIPS_HOST, host.main_chips.__name__
    kernel_helpers = [
        *host.KERNEL_HELPERS,
        *(f for pr in SECTION_PRINTERS.values() for f in pr.host),
        *host.LOAD_HELPERS,
    ]
    helpers = used_helpers(
        [*dict.fromkeys(kernel_helpers), *host_functions],
        body.statement_text() + tables.statement_text() + f"\n{entry_point}()",
    )
    out = Lines()
    on = target.name
    if deployment is not None:
        on = f"{recorded_target_name(module)} ({'x'.join(map(str, deployment.mesh_shape))} {target.name})"
    out(f"# TT-Lang program for @{entry.function.data} on {on}, printed by spatial-opt -t ttlang.")
    out("# Run: tt-lang-sim THIS.py [--grid X,Y] [--max-l1 BYTES] -- [inputs.npz] [outputs.npz]")
    if deployment is not None:
        out("# (chip c's tensor NAME is NAME@c in both files)")
    source = {f: inspect.getsource(f) for f in helpers}
    everything = body.statement_text() + tables.statement_text() + "".join(source.values())
    out()
    for module_name, alias in IMPORTS:
        if re.search(rf"\b{alias}\.", everything):
            out(f"import {module_name}" + (f" as {alias}" if alias != module_name else ""))
    for f in helpers:
        if f not in host_functions:
            _print_source(out, source[f])
    out()
    out()
    out.extend(body)
    out.extend(tables)
    for f in helpers:
        if f in host_functions:
            _print_source(out, source[f])
    out()
    out()
    out('if __name__ == "__main__":')
    out(f"    {entry_point}()")
    stream.write(out.text())


IMPORTS = (("sys", "sys"), ("numpy", "np"), ("torch", "torch"), ("ttl", "ttl"), ("ttnn", "ttnn"))
"""The modules a program may use, each imported where its text names it."""


def _launch(section) -> tuple[str, list]:
    return (section.fn, section.section_args())


def used_helpers(candidates: list[Callable[..., object]], text: str) -> list[Callable[..., object]]:
    """The host functions `text` calls, and those they call in turn, in the candidates' order."""
    used: set[Callable[..., object]] = set()
    frontier = text
    while True:
        new = {f for f in candidates if f not in used and names_in(f.__name__, frontier)}
        if not new:
            return [f for f in candidates if f in used]
        used |= new
        frontier = "".join(inspect.getsource(f) for f in new)


def _print_source(out: Lines, source: str) -> None:
    out()
    out()
    for line in source.rstrip("\n").splitlines():
        out(line)
