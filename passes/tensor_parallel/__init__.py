"""`tensor-parallel{mesh=PRESET}`: the whole-tensor tg function becomes the per-chip function of
a tensor-parallel deployment (contract 23 section 1; docs/tensor-parallel.md).

Every chip runs the same per-chip function on its own shard (SPMD): arguments and results have
local types and carry `mesh.sharding` (and `mesh.repeat`), the mesh collectives sit where a
reader needs another layout than its producer's, and each tg op records its decision
(`tp.plan`, `tp.us`, `tp.runner_up`). The decision is decide.py's, op by op, on the chip target's
prices and the mesh's collective prices; rules.py says which shardings each op may take.

Decided here, and why:

- **The whole plan is a decision too**: the op-by-op plan is compared with every op replicated
  (each chip runs the whole program, no collective), and the cheaper is taken, the other recorded
  as the runner-up in `mesh.deployment`. Replication is only a plan where the whole program fits
  one chip's DRAM (its tensors at their element widths: the bytes before any `format=bfp8_b`, so a
  program that fits only in bfp8_b is split). The tiny models replicate (tiny_decode on n300: 1.7
  us against 16.1 us split); `prefer-sharded=true` keeps the split (tests of the split use it).
- **Running it twice changes nothing**: a function whose arguments already carry
  `mesh.sharding` is left alone, and the `mesh.mesh` op is added once.
- **A bad option is refused in one line** naming the presets, before anything is rewritten.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, TensorType
from xdsl.passes import ModulePass

from spatial_dialect.mesh import CollectiveOp, MeshOp
from spatial_dialect.mesh.interface import is_per_chip
from spatial_dialect.passes.dram_layout import human_bytes
from spatial_dialect.passes.mesh_prices import mesh_op_of
from spatial_dialect.passes.target_choice import parse_bytes
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.mesh import MESH_PRESETS, Mesh
from spatial_dialect.tg import RmsNormOp, RmsStatsOp

from .decide import Decider
from .norm import NORM_DEFAULT, NORM_MODES
from .price import nbytes
from .rewrite import Rewriter


def whole_bytes(fn: func.FuncOp) -> int:
    """The bytes of every tensor the whole function holds (arguments and op results, at their
    element widths): what one chip holds when it runs the function whole."""
    values = [*fn.args, *(r for op in fn.body.block.ops for r in op.results)]
    return sum(nbytes(v.type) for v in values if isinstance(v.type, TensorType))


def planned(
    mesh: Mesh,
    fn: func.FuncOp,
    prefer_sharded: bool,
    replicate_all: bool,
    norm: str = NORM_DEFAULT,
    prefer_experts: bool = False,
):
    """The per-chip function under one whole plan and its price per chip: each op alone plus
    each collective written (a decision's tp.us also counts the collectives it causes, which its
    neighbours' count too)."""
    decider = Decider(mesh, fn, prefer_sharded, prefer_experts, replicate_all, norm)
    decider.run()
    out = Rewriter(decider, mesh.name).function()
    collectives = [op for op in out.body.block.ops if isinstance(op, CollectiveOp)]
    total = sum(d.own for d in decider.decisions.values()) + sum(
        op.cost.ns.data / 1000.0 for op in collectives if op.cost is not None
    )
    return out, total, len(collectives)


def per_chip(
    fn: func.FuncOp,
    preset: str,
    prefer_sharded: bool = False,
    capacity: int | None = None,
    norm: str = NORM_DEFAULT,
    prefer_experts: bool = False,
) -> func.FuncOp:
    """The per-chip function of ``fn`` over mesh ``preset`` (a new op; ``fn`` is untouched): the
    cheaper of the op-by-op plan and every op replicated (module docstring). ``capacity``: one
    chip's DRAM (default the chip's; the pipeline's dram-mem where given). ``prefer_experts``:
    every tg.moe that can takes its ``experts`` plan (decide.Decider)."""
    mesh = MESH_PRESETS[preset]
    split, split_us, n = planned(mesh, fn, prefer_sharded, False, norm, prefer_experts)
    head = f"tensor-parallel over {preset} ({mesh.describe()})"
    split_line = f"split op by op: {split_us:.3f} us per chip with {n} collective(s)"
    if norm == "priced" and any(
        isinstance(op, RmsNormOp) and op.width is None for op in fn.body.block.ops
    ):
        # The distributed norm is a decision of the whole plan, not of each op: op by op, a
        # layer's first norm reads its input as it lies (replicated, no collective) and keeps it
        # so, while a split embedding or a scattered add taken greedily pays its gathers only
        # later (the tiny MoE decode over p150x4: about 38.5 us a chip mixed op by op against 23.3
        # us with replicated norms). So the plan with every norm replicated (above) is priced
        # against the plan with every norm distributed that can be (a program with no
        # whole-row norm has no such plan, and one whose norms cannot split reports none).
        dist, dist_us, dn = planned(mesh, fn, prefer_sharded, False, "forced", prefer_experts)
        if any(isinstance(op, RmsStatsOp) for op in dist.body.block.ops):
            dist_line = f"distributed norms: {dist_us:.3f} us per chip with {dn} collective(s)"
            if round(dist_us, 3) < round(split_us, 3):
                loser = f"{split_line}, slower by {split_us - dist_us:.3f} us"
                split, split_us, n, split_line = dist, dist_us, dn, dist_line
            else:
                loser = f"{dist_line}, slower by {dist_us - split_us:.3f} us"
            split_line += f" (against {loser})"
    need = whole_bytes(fn)
    capacity = mesh.chip.dram_bytes if capacity is None else capacity
    if prefer_sharded or prefer_experts:
        why = "prefer-sharded=true" if prefer_sharded else "prefer-experts=true"
    elif capacity is not None and need > capacity:
        why = (
            f"the whole program ({human_bytes(need)}) does not fit one chip's DRAM "
            f"({human_bytes(capacity)})"
        )
    else:
        why = None
    if why is not None or n == 0:
        # A split with no collective is replication already, or better.
        out = split
        runner = "every op replicated: " + (why if why is not None else "the split has none")
        line = f"{head}: {split_line}, taken (runner-up: {runner})"
    else:
        whole, whole_us, _ = planned(mesh, fn, False, True, "off")  # no norm is distributed
        if whole_us < split_us:
            out = whole
            line = (
                f"{head}: every op replicated: {whole_us:.3f} us per chip, taken (runner-up: "
                f"{split_line}, slower by {split_us - whole_us:.3f} us)"
            )
        else:
            out = split
            line = (
                f"{head}: {split_line}, taken (runner-up: every op replicated: {whole_us:.3f} "
                f"us, slower by {whole_us - split_us:.3f} us)"
            )
    out.attributes["mesh.deployment"] = StringAttr(line)
    return out


@dataclass(frozen=True)
class TensorParallelPass(ModulePass):
    """`tensor-parallel{mesh=PRESET prefer-sharded=false dram-mem=BYTES}`: each tg function
    becomes its per-chip function over the mesh preset (targets/mesh.py MESH_PRESETS).
    `prefer-sharded=true` takes a sharded plan wherever one can run (the Megatron layout at any
    size: the tiny models' collectives cost more than their products save, so by price alone they
    are gathered early). `dram-mem`: one chip's DRAM where replication must fit (link's option,
    which spatial-pipeline passes to both). `distributed-norm=off|priced|forced`: whether a
    whole-row rms_norm may run on a chip's columns (norm.py). `prefer-experts=true` takes every
    tg.moe's ``experts`` plan (E / chips whole experts a chip) where it can run."""

    name = "tensor-parallel"
    mesh: str | None = None
    prefer_sharded: bool = False
    dram_mem: str | int | None = None
    distributed_norm: str = NORM_DEFAULT
    """priced (the default), forced or off: the distributed rms_norm's mode (norm.py)."""
    prefer_experts: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.mesh is None:
            raise SpatialPassError(
                f"tensor-parallel: give mesh=PRESET (one of {', '.join(MESH_PRESETS)})"
            )
        if self.mesh not in MESH_PRESETS:
            raise SpatialPassError(
                f"tensor-parallel: unknown mesh {self.mesh!r} (known: {', '.join(MESH_PRESETS)})"
            )
        if self.distributed_norm not in NORM_MODES:
            raise SpatialPassError(
                f"tensor-parallel: distributed-norm={self.distributed_norm!r} is not one of "
                f"{', '.join(NORM_MODES)}"
            )
        fns = [f for f in op.body.block.ops if isinstance(f, func.FuncOp) and not is_per_chip(f)]
        if not fns:
            return
        capacity = None if self.dram_mem is None else parse_bytes(self.dram_mem, "dram-mem")
        have = {m.sym_name.data for m in op.body.block.ops if isinstance(m, MeshOp)}
        if self.mesh not in have:
            first = op.body.block.first_op
            mesh_op = mesh_op_of(self.mesh)
            if first is None:
                op.body.block.add_op(mesh_op)
            else:
                op.body.block.insert_op_before(mesh_op, first)
        for fn in fns:
            new = per_chip(
                fn,
                self.mesh,
                self.prefer_sharded,
                capacity,
                self.distributed_norm,
                self.prefer_experts,
            )
            op.body.block.insert_op_before(new, fn)
            fn.detach()
            fn.erase()
        op.verify()
