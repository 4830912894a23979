"""`spatial-opt -t triton`: the sized sp program as a self-contained Python module of Triton
kernels (docs/backend-triton.md).

One `@triton.jit` kernel per section (split-K's sum included: splitk.py); a host function `run`
launches them in program order over
DRAM tensors held as torch tensors; `__main__` reads an .npz (or draws seeded inputs) and writes
the outputs to an .npz. Everything the kernels need is READ from the sized IR, never decided
again:

- the block sizes: BLOCK_M x BLOCK_N = the `sp.work` block times the tile, BLOCK_K = its K block
  (kw) times the tile (an `tl.arange` extent is that block rounded up to a power of two, masked
  back to the block);
- the launch grid: one program per site of the section's `sp.sites` ranges, in range order;
- which blocks each program covers: the per-site table (first item, count) of `sp.sites` and
  the item table (origin and clipped extent, in tiles) of the item space, so rounds and boundary
  blocks are exactly the IR's;
- `num_stages`: the depth of the operand FIFOs; `num_warps` is 4 (a site's threads, which the
  IR does not model).

DRAM tensors are row-major torch tensors of their logical shape (a rank-1 tensor is one row):
`tiled` and `rows` layouts hold the same elements, and the zero padding of a partial tile is a
load mask (`other=0`), so padding never leaks. A construct with no Triton form is refused by
name (`TritonNotEmitted`, a diagnostic: spatial-opt reports it as one line, exit 1).
"""

from __future__ import annotations

import inspect
import re
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO

from xdsl.dialects.builtin import (
    ModuleOp,
    StringAttr,
)

from spatial_dialect import sp
from spatial_dialect.mesh import StepOp
from spatial_dialect.tools.backend.triton import mesh_host, steps
from spatial_dialect.tools.backend.triton.bodies import (
    kernel_of,
)
from spatial_dialect.tools.backend.triton.host import ALWAYS, HELPERS
from spatial_dialect.tools.backend.triton.kernel import (
    NUM_WARPS,
    TORCH_DTYPES,
    Kernel,
    TritonNotEmitted,
    preamble,
    scales_of,
    scales_shape,
    section_of,
)
from spatial_dialect.tools.backend.triton.text import INDENT, WIDTH, wrap, wrap_table
from spatial_dialect.tools.interpreters.deployment import deployment_of

# ── The module ────────────────────────────────────────────────────────────────────────────────


@dataclass
class Emitted:
    """The printed module and what it holds, for the runner and the bench."""

    source: str
    entry: str
    inputs: list[str]
    outputs: list[str]
    sections: list[Kernel]
    numpy_dtypes: dict[str, str] = field(default_factory=dict)
    """Output name -> its numpy dtype name (bfloat16 through ml_dtypes)."""


HEADER = '''{summary}

{run_it}
"""

import argparse
import os
import sys

import numpy as np
import torch
{dist}import triton
import triton.language as tl

TARGET = {target!r}
ENTRY = {entry!r}
{mesh}{inputs}
{outputs}
TENSORS = {{
{tensors}
}}
"""DRAM tensor -> (rows x cols held, torch dtype, declared shape)."""
'''
RUN_IT = (
    "Run it: `python THIS.py [--inputs in.npz] [--out out.npz] [--seed N] [--device cuda|cpu]`"
    " (TRITON_INTERPRET=1 runs it on the CPU)."
)
SIZES_READ = (
    "Block sizes, grids, the blocks each program covers and num_stages are the sized IR's, never"
    " decided here."
)


INTERPRETED = '''
INTERPRETED = tl.constexpr(os.environ.get("TRITON_INTERPRET", "0") == "1")
"""Where Triton's CPU interpreter computes otherwise than the GPU, the kernels correct it: it
multiplies 16-bit floats wrongly in tl.dot, so there the operands are widened to f32 first (the
products of bf16/f16 values are exact in f32, so the sums are those a tensor core accumulates in
f32), and it truncates f32 to bf16 (to_bf16 rounds first)."""
'''
"""Printed where a kernel branches on it (a float GEMM's operands, to_bf16)."""

TO_BF16 = '''
@triton.jit
def to_bf16(x):
    """x rounded to bf16, to nearest with ties to even, as the GPU converts. Triton's CPU
    interpreter converts f32 to bf16 by dropping the low 16 bits (toward zero): there the f32
    bits are rounded first, after which dropping them is exact."""
    if INTERPRETED:
        b = x.to(tl.float32).to(tl.uint32, bitcast=True)
        b = (b + 0x7FFF + ((b >> 16) & 1)) & 0xFFFF0000
        x = b.to(tl.float32, bitcast=True)
    return x.to(tl.bfloat16)
'''
"""Printed where a kernel stores bf16 (Kernel.cast): every op result is rounded once to its
type, to nearest, in the reference and on the GPU; truncating under the interpreter instead put
half of the elements of a bf16 result one ulp toward zero, a bias that grew through the tiny bf16
Qwen3-Next layers' recurrence and norms past the tolerance."""


def _host(fn: Callable[..., object]) -> list[str]:
    return ["", ""] + inspect.getsource(fn).rstrip("\n").split("\n")


def _plan_comment(s: Kernel, clock_ghz: float | None) -> list[str]:
    lines = [f"# section @{s.name}: {s.program.source_op.data} (kind {s.program.kind.value})"]
    plan = s.program.one(sp.PlanOp)
    if plan is not None:
        text = str(plan).strip()
        lines.append(f"# plan: {text}")
        us = f" = {plan.predicted_cycles / clock_ghz / 1000:.3f} us" if clock_ghz else ""
        lines.append(
            f"# predicted: {plan.predicted_cycles} cycles{us} ({plan.bound.data.value}-bound)"
        )
    else:
        lines.append("# plan: none recorded")
    th, tw = s.tile
    split = f" in {s.k_slices} slices" if s.k_slices > 1 else ""
    lines.append(
        f"# block {s.block[0]}x{s.block[1]} tiles (BLOCK_M={s.block[0] * th}, BLOCK_N={s.block[1] * tw}),"
        f" K {s.k_tiles} tiles by {s.k_block} (BLOCK_K={s.k_block * tw}){split}; grid {len(s.sites)} program(s),"
        f" {len(s.items)} item(s); num_stages {s.num_stages} (FIFO depth)"
    )
    return [wrapped for line in lines for wrapped in wrap(line)]


def _kernel(fn: str, params: list[tuple[str, str, str]], body: list[str]) -> list[str]:
    """A kernel's definition: its pointers, the SITES and ITEMS tables, the item loop, `body`."""
    args = ", ".join(arg for _, arg, _ in params)
    return ["@triton.jit", *wrap(f"def {fn}_kernel({args}, SITES, ITEMS):"), *preamble(body), *body]


def _launch(
    fn: str, params: list[tuple[str, str, str]], grid: int, sites: str, items: str, stages: int
) -> list[str]:
    """A kernel's launch in `launch`: one program per row of the `sites` table."""
    tensors_of = ", ".join(f"t[{name!r}]" for name, _, _ in params)
    return wrap(
        f"{INDENT}{fn}_kernel[({grid},)]({tensors_of}, _table({sites}, device), "
        f"_table({items}, device), num_warps={NUM_WARPS}, num_stages={stages})"
    )


def emit_module(module: ModuleOp) -> Emitted:
    entries = [op for op in module.body.block.ops if isinstance(op, sp.EntryOp)]
    if len(entries) != 1:
        raise TritonNotEmitted("<module>", f"expected one sp.entry, found {len(entries)}")
    entry = entries[0]
    target_attr = module.attributes.get("sp.target")
    target = target_attr.data if isinstance(target_attr, StringAttr) else "?"
    clock = None
    try:
        from spatial_dialect.passes.target_choice import recorded_target

        clock = recorded_target(module, "triton").clock_ghz
    except Exception:  # noqa: BLE001 - the predicted time is a comment; the kernels do not need it
        clock = None
    # A deployment over a mesh (docs/backend-triton.md#several-chips): its steps between sections.
    dep = deployment_of(module)
    ordered = [op for op in module.body.block.ops if isinstance(op, sp.ProgramOp | StepOp)]
    if dep is None and any(isinstance(op, StepOp) for op in ordered):
        raise TritonNotEmitted("<entry>", "mesh.steps, but the entry has no mesh placements")
    used_steps: list[steps.Step] = []
    sections = []
    tensors: dict[str, tuple[tuple[int, int], str, tuple[int, ...]]] = {}
    out: list[str] = []
    launches: list[str] = []
    used_fns: set[str] = set()
    for program in ordered:
        if isinstance(program, StepOp):
            step = steps.step_of(program)
            for name, held in steps.tensors(step).items():
                tensors.setdefault(name, held)
            used_steps.append(step)
            launches.extend(steps.launch_lines(step))
            continue
        s = section_of(program)
        while s.fn in used_fns:
            s.fn += "_"
        used_fns.add(s.fn)
        for t in s.tensors:
            name = t.sym_name.data
            dims = tuple(t.type.get_shape())
            tensors.setdefault(name, (s.shape(name), str(t.type.get_element_type()), dims))
            if str(t.type.get_element_type()) not in TORCH_DTYPES:
                raise s.refuse(f"tensor @{name} of {t.type} has no torch dtype")
            scales = scales_of(t)
            if scales is not None:  # a Q8_0 tensor's f16 scales: a tensor of their own
                tensors.setdefault(scales, (scales_shape(t), "f16", scales_shape(t)))
        kernel_of(s)
        for x in s.scratch:
            tensors.setdefault(x.name, (x.held, x.elt, x.declared))
        sections.append(s)
        sites, items = f"{s.fn.upper()}_SITES", f"{s.fn.upper()}_ITEMS"
        out.append("")
        out.append("")
        out.extend(_plan_comment(s, clock))
        out.extend(_kernel(s.fn, s.params(), s.lines))
        out.append("")
        out.append("")
        out.extend(wrap_table(sites, s.sites))
        out.append(
            '"""Per program (site of the sp.sites ranges, in order): (first item, item count)."""'
        )
        out.extend(wrap_table(items, s.items))
        out.append(
            '"""Per item: (row tile, column tile, rows, columns) of its block, edge blocks clipped."""'
        )
        launches.append(f"{INDENT}# @{s.name}")
        launches.extend(line for c in s.checks for line in wrap(INDENT + c))
        launches.extend(_launch(s.fn, s.params(), len(s.sites), sites, items, s.num_stages))
    inputs = [a.data for a in entry.inputs.data]
    outputs = [a.data for a in entry.outputs.data]
    for name in (*inputs, *outputs):
        if name not in tensors:
            raise TritonNotEmitted("<entry>", f"entry tensor @{name} is in no section")
    tensor_lines = "\n".join(
        wrapped
        for n, (shape, dt, dims) in tensors.items()
        for wrapped in wrap(f"{INDENT}{n!r}: ({shape!r}, {TORCH_DTYPES[dt]}, {dims!r}),")
    )
    kernels = len(sections)
    summary = (
        f"Triton program for @{entry.function.data}, printed by spatial-dialect (`spatial-opt -t "
        f"triton`) for target {target}: {kernels} kernel(s), one per section of the sized "
        f"sp program, launched in program order."
    )
    if dep is not None:
        summary += (
            f" One SPMD program for a mesh of {'x'.join(map(str, dep.mesh_shape))} chips:"
            " one rank per chip, each on its own shard; collectives by torch.distributed."
        )
    header = HEADER.format(
        summary=textwrap.fill(
            '"""' + summary, WIDTH, break_on_hyphens=False, break_long_words=False
        ),
        entry=entry.function.data,
        target=target,
        inputs="\n".join(wrap(f"INPUTS = {inputs!r}")),
        outputs="\n".join(wrap(f"OUTPUTS = {outputs!r}")),
        tensors=tensor_lines,
        run_it=(
            f"{steps.run_it(dep.chips)}\n\n{textwrap.fill(SIZES_READ, WIDTH)}"
            if dep
            else textwrap.fill(
                f"{RUN_IT} {SIZES_READ}", WIDTH, break_on_hyphens=False, break_long_words=False
            )
        ),
        dist="import torch.distributed as dist\n" if dep else "",
        mesh=steps.mesh_tables(dep.mesh_shape) if dep else "",
    )
    lines = header.rstrip("\n").split("\n")
    body = "\n".join(out)  # every kernel's lines, a split-K section's second kernel too
    bf16_stores = re.search(r"\bto_bf16\(", body) is not None
    if bf16_stores or re.search(r"\bINTERPRETED\b", body):
        lines += ["", *INTERPRETED.strip("\n").split("\n")]
    if bf16_stores:
        lines += ["", "", *TO_BF16.strip("\n").split("\n")]
    if any(s.checks for s in sections):
        lines += [line for fn in HELPERS for line in _host(fn)]
    lines += out
    lines += ["", "", "def launch(t, device):", f'{INDENT}"""The kernels in program order."""']
    lines += launches
    host = mesh_host.always([s.kind for s in used_steps]) if dep else ALWAYS
    lines += [line for fn in host for line in _host(fn)]
    lines += ["", "", 'if __name__ == "__main__":', f"{INDENT}sys.exit(main())", ""]
    source = "\n".join(lines)
    np_names = {
        "bf16": "bfloat16",
        "f16": "float16",
        "f32": "float32",
        "i8": "int8",
        "i32": "int32",
    }
    return Emitted(
        source,
        entry.function.data,
        inputs,
        outputs,
        sections,
        {n: np_names[tensors[n][1]] for n in outputs},
    )


def print_triton(module: ModuleOp, stream: IO[str]) -> None:
    """spatial-opt `-t triton`: the Python module of Triton kernels of a sized sp program."""
    stream.write(emit_module(module).source)
