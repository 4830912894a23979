"""link: each tg op of a function becomes a section (docs/passes.md#link), the target recorded on the module.

What it decides: the DRAM tensors of every section (named after the function's values, with the
layout the prelude chose once for the whole function, and for bf16 on Tensix the storage format
the `format` option asks for), the buffers joining the stages, the stages themselves and their
access patterns. It decides no sizes: every shape is written with the size symbols (sp/attrs.py), so
one template serves whatever plan tile picks and whatever block a site ends up covering.

Each op family has its module: link/matmul.py (the GEMM), link/maps.py (pointwise ops,
transpose, the layout bridges), link/rope.py, link/indexed.py (gather_rows, set_rows), link/batched.py (the batched decode ops),
link/rows.py (rms_norm, layer_norm, softmax, l2_norm, arg-max), link/attention.py (flash
attention), link/delta.py (the Gated DeltaNet's decay, causal convolution and delta rule),
link/quant.py (the Q8_0 products, dequantize, and the activations' Q8_0 views) and
link/moe.py (mixture of experts);
`LINKERS` is the one table of which module links which op. Each records the section's kind on
it (`sp.program ... kind K`), so no later pass asks a section's stages what it is. Refused, by
name: an op that has no section form yet (NotLowered) and a datatype or storage format the chip
does not compute in (UnsupportedDatatype).

The function is replaced by `sp.entry` (its interface, by tensor name) and its sections, in
execution order: a section reads what an earlier one wrote, by tensor name, and the function's
results are the entry's outputs. Before any function is linked, the tensors that several functions
of the module share by argument name are agreed once for all of them (link/deployment.py: one
deployment, one layout per shared tensor); before any op is linked the prelude decides each
tensor's layout for the whole function, starting from that agreement (link/prelude.py); link
applies it (link/context.py): where a section wants
a tensor in the other layout, ONE bridge section (tilize or untilize) makes its twin, shared by
every later reader. Running link again changes nothing: there is no tg op left to link.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect import sp, tg
from spatial_dialect.mesh import CollectiveOp
from spatial_dialect.mesh.interface import is_per_chip
from spatial_dialect.passes.dram_layout import DramExceeded, check_dram
from spatial_dialect.passes.link import (
    attention,
    batched,
    delta,
    heads,
    indexed,
    integer,
    maps,
    matmul,
    moe,
    quant,
    rope,
    rows,
    steps,
)
from spatial_dialect.passes.link.context import (
    LinkContext,
    Q8View,
    Relayout,
    carried_names,
    value_names,
)
from spatial_dialect.passes.link.deployment import agree
from spatial_dialect.passes.link.prelude import Prelude
from spatial_dialect.passes.target_choice import (
    TARGET_ATTR,
    choose_target,
    record,
    recorded_mesh,
    recorded_target,
)
from spatial_dialect.sp.errors import NotLowered, SpatialPassError, UnsupportedDatatype
from spatial_dialect.targets import Target

__all__ = ["LINKERS", "REFUSED", "LinkPass"]

STORAGE_FORMATS = ("bf16", "bfp8_b", "bfp4_b")
"""What the `format` option may ask of bf16 tensors: bf16 itself or a Tensix block-float format."""


Linker = Callable[..., "sp.ProgramOp | list[sp.ProgramOp]"]

LINKERS: dict[type[Operation], Linker] = {
    **matmul.LINKERS,
    **maps.LINKERS,
    **rope.LINKERS,
    **indexed.LINKERS,
    **rows.LINKERS,
    **attention.LINKERS,
    **heads.LINKERS,
    **integer.LINKERS,
    **quant.LINKERS,
    **moe.LINKERS,
    **delta.LINKERS,
    **batched.LINKERS,
}
"""Each tg op and the function that links it to its section(s)."""
REFUSED = {**batched.REFUSED}
"""Each tg op link has no section form for, with why (test/test_coverage.py reads it)."""


def bridge_section(ctx: LinkContext, b: Relayout | Q8View) -> sp.ProgramOp:
    """The section a bridge is: a layout twin's tilize or untilize, or a Q8_0 view's quantize."""
    return quant.view_section(ctx, b) if isinstance(b, Q8View) else maps.bridge(ctx, b)


@dataclass(frozen=True)
class LinkFunction(RewritePattern):
    """A function of tg ops becomes its interface and its sections (the unit is the function:
    tensor names, layouts and the interface are decided for all its ops at once). A function
    without tg ops is left alone, so the walker reaches a fixed point."""

    target: Target
    fmt: str
    kv_splits: int | None = None
    agreed: frozenset[str] = frozenset()
    """The deployment's tensors laid out tiled in every function that takes them, by name
    (link/deployment.py)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        body = list(op.body.walk())
        if not any(isinstance(o, tg.TgOp) for o in body):
            return
        ret = op.body.block.last_op
        for o in body:
            if not isinstance(o, tg.TgOp | CollectiveOp | func.ReturnOp):
                raise NotLowered(
                    f"{o.name} in @{op.sym_name.data}: link takes functions of tg ops and mesh "
                    "collectives"
                )
        try:
            steps.entry_mesh_attributes(op, {})
        except VerifyException as err:  # the interface's refusal, at the function
            op.emit_error(str(err), err)
        ops = [o for o in body if isinstance(o, tg.TgOp | CollectiveOp)]
        results = frozenset(ret.operands if ret else ())
        names = value_names(op, ops)
        carried_names(ops, names, results)
        module = op.parent_op()
        taken = (
            {p.sym_name.data for p in module.walk() if isinstance(p, sp.ProgramOp)}
            if module
            else set()
        )
        agreed = [a for a in op.body.block.args if names[a] in self.agreed]
        ctx = LinkContext(
            names,
            Prelude.of(op, agreed),
            results,
            self.target,
            self.fmt,
            sections=taken,
            kv_splits=self.kv_splits,
            per_chip=is_per_chip(op),
        )
        sections: list[Operation] = []
        for o in ops:
            if isinstance(o, CollectiveOp):  # a step between sections (link/steps.py)
                ctx.wrote(o.result)
                sections.append(steps.step(o, ctx.names))
                continue
            linker = LINKERS.get(type(o))
            if linker is None:
                why = REFUSED.get(type(o), "it has no section form")
                raise NotLowered(f"{o.name}: {why}")
            try:
                linked = linker(o, ctx)
            except SpatialPassError as err:
                o.emit_error(str(err), err)  # a refusal is reported at the op it refuses
            before, after = ctx.bridges.take()
            made = [bridge_section(ctx, b) for b in before]
            made += linked if isinstance(linked, list) else [linked]
            made += [bridge_section(ctx, b) for b in after]
            for r in o.results:
                ctx.wrote(r)
            for section in made:  # a diagnostic about a section points at its tg op's line
                section.location = o.location
            sections += made
        entry = sp.EntryOp(
            op.sym_name.data,
            [*(ctx.names[a] for a in op.body.block.args), *ctx.chip_firsts],
            [ctx.names[v] for v in (ret.operands if ret else ())],
        )
        entry.attributes.update(steps.entry_mesh_attributes(op, ctx.chip_firsts))
        entry.location = op.location
        rewriter.replace(op, [entry, *sections], [])


@dataclass(frozen=True)
class LinkPass(ModulePass):
    """`link{target=NAME format=bf16 grid=XxY local-mem=BYTES}`: lower every tg function to
    sections and record the target (a preset name or a TOML file) and these options on the module:
    the storage format of bf16 tensors, the sub-grid of the mesh to use (tt-metal's compute grid)
    and the local-memory budget of a site (the target's configurable maximum by default)."""

    name = "link"
    target: str | None = None
    format: str = "bf16"
    grid: str | None = None
    local_mem: int | None = None
    dram_mem: str | int | None = None
    kv_splits: int | None = None

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.format not in STORAGE_FORMATS:
            raise UnsupportedDatatype(
                f"format {self.format}: bf16 tensors are stored as {', '.join(STORAGE_FORMATS)}"
            )
        op.attributes[TARGET_ATTR] = StringAttr(choose_target(op, self.target))
        extra = {
            "grid": self.grid,
            "local_mem": None if self.local_mem is None else str(self.local_mem),
            "dram_mem": None if self.dram_mem is None else str(self.dram_mem),
            "kv_splits": None if self.kv_splits is None else str(self.kv_splits),
        }
        record(op, format=self.format, **{k: v for k, v in extra.items() if v is not None})
        target = recorded_target(op, self.name)
        if self.kv_splits is not None and self.kv_splits < 1:
            raise NotLowered(f"kv-splits={self.kv_splits}: a count of splits is at least 1")
        agreed = agree(op)  # before any function is linked: the deployment's tensors
        link = LinkFunction(target, self.format, self.kv_splits, agreed)
        PatternRewriteWalker(link).rewrite_module(op)
        try:
            mesh = recorded_mesh(op)
            check_dram(op, target, mesh.name if mesh is not None else None)
        except DramExceeded as err:  # reported at the function the program came from
            entry = next((e for e in op.walk() if isinstance(e, sp.EntryOp)), None)
            if entry is None:
                raise
            entry.emit_error(str(err), err)
