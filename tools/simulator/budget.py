"""What a `spatial-run` will allocate and run, checked before it starts: the reference's and the
simulator's memory (upper bounds from the function's and the compiled program's tensors) against
`--memory-budget`, and the simulator's tile steps against `--work-budget`. A run past either is
refused with the numbers, never started and killed (docs/simulator.md)."""

from __future__ import annotations

import math

from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from spatial_dialect import tg
from spatial_dialect.sp import MeshOp, ProgramOp
from spatial_dialect.sp.kinds import Q8_0_FORMATS
from spatial_dialect.targets import Target


class OverBudget(Exception):
    """The run would allocate more than --memory-budget: refused before anything is allocated."""


def _elements(t) -> int:
    shape = t.get_shape() if hasattr(t, "get_shape") else ()
    return math.prod(shape) if shape else 0


def reference_bytes(fn: FuncOp) -> int:
    """An upper bound of what the reference holds: every argument and every op result of the
    function, at 8 bytes an element (numpy computes some in float64)."""
    values = [*fn.body.block.args, *(r for op in fn.body.block.ops for r in op.results)]
    return 8 * sum(_elements(v.type) for v in values)


def simulator_bytes(module: ModuleOp, target: Target) -> int:
    """An upper bound of what the simulator holds: every DRAM tensor of the compiled program at
    8 bytes an element (its tiles padded), and every site's local memory."""
    from spatial_dialect.passes.dram_layout import dram_layout

    tensors = sum(
        8 * t.bytes // max(1, _tile_elt_bytes(t.storage)) for t in dram_layout(module, target)
    )
    mesh = max(
        (p.one(MeshOp) for p in module.walk() if isinstance(p, ProgramOp) and p.one(MeshOp)),
        key=lambda m: m.local_mem,
        default=None,
    )
    local = 0 if mesh is None else mesh.size[0] * mesh.size[1] * mesh.local_mem
    return tensors + local


def _tile_elt_bytes(storage: str) -> int:
    """Bytes of an element as stored (at least one: a Q8_0 element is 34/32 bytes)."""
    return {"f32": 4, "i32": 4, "i8": 1, "u8": 1, **dict.fromkeys(Q8_0_FORMATS, 1)}.get(storage, 2)


DEFAULT_WORK_BUDGET = 400_000
"""What `--work-budget` allows by default: tile steps of the simulator (about what it runs in
tens of seconds)."""


def work_tiles(fn: FuncOp) -> int:
    """The simulator's work, roughly: per tg op its result's 32x32 tiles, times the inner
    dimension's tiles for a matmul, and every operand's tiles."""

    def tiles(t) -> int:
        shape = list(t.get_shape()) if hasattr(t, "get_shape") else []
        rows, cols = (shape + [1, 1])[:2] if len(shape) >= 2 else (1, shape[0] if shape else 1)
        return -(-rows // 32) * -(-cols // 32)

    total = 0
    for op in fn.body.walk():
        if not isinstance(op, tg.TgOp):
            continue
        out = sum(tiles(r.type) for r in op.results)
        if isinstance(op, tg.MatmulOp):
            out *= -(-op.a.type.get_shape()[-1] // 32)
        elif isinstance(op, tg.AttentionOp):
            out *= -(-op.k.type.get_shape()[0] // 32)
        total += out + sum(tiles(v.type) for v in op.operands)
    return total


def check_budget(what: str, needed: int, budget: int) -> None:
    if needed > budget:
        raise OverBudget(
            f"{what} would need about {needed} bytes ({needed / 2**30:.2f} GiB), over the memory "
            f"budget of {budget} bytes ({budget / 2**30:.2f} GiB); --memory-budget=BYTES raises it"
        )
