"""spatial-pipeline: link, tile, place, fuse-operands and size-buffers in order (docs/architecture.md#pipeline).

`spatial-pipeline{target=NAME fidelity=hifi4 accumulate=f32 format=bf16 grid=XxY local-mem=BYTES
split-k=N kv-splits=N prefer-sharded=false prefer-experts=false distributed-norm=priced}`. With no target anywhere (neither the option nor one
recorded on the module) it compiles for wormhole_n150.

A target that names a mesh preset (`target=n300`) makes the module one deployment over the mesh:
its WHOLE-tensor functions first go through `tensor-parallel{mesh=n300 prefer-sharded=...
prefer-experts=... distributed-norm=...}`
(docs/tensor-parallel.md), and link and the rest then plan for the mesh's chip; a per-chip function
(its arguments already carry `mesh.sharding`) is taken as it is. The pass runs here and not in
link because it is a whole-program decision of its own, with its own refusals, that a reader can
also run alone and inspect. The options go to the pass that decides with them (target,
format, grid, the budget and kv-splits to link, which records them on the module for every later
pass; fidelity, accumulate and split-k to tile) and are recorded on the module, where the report
reads them back.

It also holds the one context builder (`default_context`) and the one compile function
(`compile_module`) that the CLIs, the tests and the benchmarks call, so that a program compiles
the same way wherever it is compiled. `compile_module` takes program text (parsed here, without
source locations: passes import no tools) or functions already parsed (spatial-run parses with
locations through tools/frontend/diagnostics.py and hands the functions over, which are cloned into
a fresh module so the caller's module is left as it was). A refusal is the pass's own typed
diagnostic, as from any xDSL pass; spatial-run, which must tell a refused program apart from a
verifier error in its input, wraps it in its CompileRefused. The compiled module failing the sp
verifier is not a refusal but a compiler bug, raised as InternalError (`verify_output`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.parser import Parser
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.mesh import MeshOp
from spatial_dialect.passes.fuse_operands import FuseOperandsPass
from spatial_dialect.passes.link import LinkPass
from spatial_dialect.passes.place import PlacePass
from spatial_dialect.passes.section_memo import once_per_distinct_section
from spatial_dialect.passes.size_buffers import SizeBuffersPass
from spatial_dialect.passes.target_choice import mesh_named
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.passes.tensor_parallel.norm import NORM_DEFAULT
from spatial_dialect.passes.tile import TilePass
from spatial_dialect.sp.distinct import distinct_sections
from spatial_dialect.sp.errors import InternalError


@dataclass(frozen=True)
class SpatialPipelinePass(ModulePass):
    """`spatial-pipeline{target=NAME fidelity=hifi4 accumulate=f32 format=bf16 grid=XxY
    local-mem=BYTES dram-mem=BYTES split-k=N kv-splits=N prefer-sharded=false
    prefer-experts=false distributed-norm=priced}`: on a mesh
    target, tensor-parallel first (module docstring); then link, tile, place, fuse-operands and
    size-buffers in order."""

    name = "spatial-pipeline"
    target: str | None = None
    fidelity: str | None = None
    accumulate: str | None = None
    format: str = "bf16"
    grid: str | None = None
    local_mem: int | None = None
    dram_mem: str | int | None = None
    split_k: int | None = None
    kv_splits: int | None = None
    prefer_sharded: bool = False
    distributed_norm: str = NORM_DEFAULT
    """priced, forced or off: tensor-parallel's distributed rms_norm (a mesh target only)."""
    prefer_experts: bool = False
    """tensor-parallel's forcing hook: every tg.moe that can takes its `experts` plan."""

    def passes(self) -> tuple[ModulePass, ...]:
        mesh = mesh_named(self.target)
        first = (
            (
                TensorParallelPass(
                    mesh.name,
                    self.prefer_sharded,
                    self.dram_mem,
                    self.distributed_norm,
                    self.prefer_experts,
                ),
            )
            if mesh is not None
            else ()
        )
        return (
            *first,
            LinkPass(
                self.target, self.format, self.grid, self.local_mem, self.dram_mem, self.kv_splits
            ),
            TilePass(self.fidelity, self.accumulate, self.split_k),
            PlacePass(),
            FuseOperandsPass(),
            SizeBuffersPass(),
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.run(op, lambda p: p.apply(ctx, op))

    def run(self, op: ModuleOp, apply: Callable[[ModulePass], None]) -> None:
        """The passes in order, each by `apply` (the bench times them), with each distinct linked
        section tiled, placed, fused and sized once (section_memo.py)."""
        passes = self.passes()
        linked = next(i for i, p in enumerate(passes) if isinstance(p, LinkPass)) + 1
        for p in passes[:linked]:
            apply(p)
        with once_per_distinct_section(op) as memo:
            for p in passes[linked:]:
                apply(p)
        if memo.redo:  # the sections put back linked: the passes take only these
            for p in passes[linked:]:
                apply(p)


def default_context() -> Context:
    """A Context with the builtin and func dialects, tg and sp, and every other dialect xDSL
    ships (loaded lazily), so a module mixing tg functions with func/arith/linalg parses."""
    from xdsl.dialects import get_all_dialects as xdsl_dialects

    from spatial_dialect import get_all_dialects

    ctx = Context()
    for name, factory in {**xdsl_dialects(), **get_all_dialects()}.items():
        ctx.register_dialect(name, factory)
    return ctx


def compile_module(
    program: str | FuncOp | Sequence[FuncOp],
    target: str | None = None,
    *,
    ctx: Context | None = None,
    **options: str | int,
) -> ModuleOp:
    """`program` through `spatial-pipeline{target=...}` with `options` (those of
    SpatialPipelinePass, e.g. grid="2x2"), verified: what the compiler produced must pass its own
    verifier. `program` is module text, or a function, or a chain's functions compiled together
    as one deployment (the tensors they share are agreed, link/deployment.py), cloned into a new
    module. A pass that refuses the program raises its typed diagnostic (sp/errors.py), as the
    verifier does for what it finds wrong after the pipeline."""
    ctx = ctx or default_context()
    if isinstance(program, str):
        module = Parser(ctx, program).parse_module()
    else:
        functions = [program] if isinstance(program, FuncOp) else program
        # A per-chip function's shardings name a mesh.mesh of its module: it comes along.
        parent = functions[0].parent_op() if functions else None
        meshes = (
            [op.clone() for op in parent.body.block.ops if isinstance(op, MeshOp)]
            if isinstance(parent, ModuleOp)
            else []
        )
        module = ModuleOp([*meshes, *(f.clone() for f in functions)])
    SpatialPipelinePass(target=target, **options).apply(ctx, module)  # type: ignore[arg-type]
    verify_output(module, "spatial-pipeline")
    return module


def verify_output(module: ModuleOp, after: str) -> None:
    """What a pass produced must pass its own verifier: the input was verified before it ran,
    so a failure here is the compiler's (InternalError), never a refusal of the program. A
    section identical to one that passed, up to its names (a layer's copy of the layer before),
    is not checked again (sp/distinct.py)."""
    try:
        with distinct_sections():
            module.verify()
    except VerifyException as e:
        raise InternalError(after, e) from e
