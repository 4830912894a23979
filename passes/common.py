"""What the passes share: the module's target and options, phase gates, and a section's GEMM.

The target is chosen once (link records it on the module) and every later pass reads it from
there, so no two passes can plan for different chips. The pipeline options that change the target
(`grid`) or the numbers (`fidelity`, `format`) are recorded next to it, and the report prints them.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

from xdsl.dialects.builtin import DictionaryAttr, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, PatternRewriteWalker, RewritePattern

from spatial_dialect import sp
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import InvalidTarget, SpatialPassError, WrongPhase
from spatial_dialect.targets import Target, TargetError, load_target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape, gemm_cost, plan_fits

TARGET_ATTR = "sp.target"
OPTIONS_ATTR = "sp.options"
DEFAULT_TARGET = "wormhole_n150"


# ── The module's target ───────────────────────────────────────────────────────────────────────


@lru_cache(maxsize=32)
def _load(name: str) -> Target:
    try:
        return load_target(name)
    except TargetError as err:
        raise InvalidTarget(str(err)) from None


def options(module: ModuleOp) -> dict[str, str]:
    attr = module.attributes.get(OPTIONS_ATTR)
    if not isinstance(attr, DictionaryAttr):
        return {}
    return {k: v.data for k, v in attr.data.items() if isinstance(v, StringAttr)}


def record(module: ModuleOp, **values: str) -> None:
    """Record pipeline options on the module (a later value of the same option replaces it)."""
    merged = options(module) | values
    module.attributes[OPTIONS_ATTR] = DictionaryAttr(
        {k: StringAttr(v) for k, v in sorted(merged.items())}
    )


def parse_grid(text: str) -> tuple[int, int]:
    try:
        x, y = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise InvalidTarget(f"grid must be XxY (e.g. 4x4), got {text!r}") from None
    return x, y


def recorded_target_name(module: ModuleOp) -> str | None:
    attr = module.attributes.get(TARGET_ATTR)
    return attr.data if isinstance(attr, StringAttr) else None


def module_target(module: ModuleOp, pass_name: str) -> Target:
    """The target the module was linked for, for a pass after link: one that still holds tg ops
    is refused at the first of them."""
    refuse_unlinked(module, pass_name)
    return recorded_target(module, pass_name)


def recorded_target(module: ModuleOp, pass_name: str) -> Target:
    """The target recorded on the module, restricted to the recorded sub-grid and budget."""
    name = recorded_target_name(module)
    if name is None:
        raise WrongPhase(
            pass_name, Phase.LINKED.value, "unlinked (no target recorded: run link first)"
        )
    target = _load(name)
    recorded = options(module)
    try:
        if "grid" in recorded:
            target = target.with_grid(*parse_grid(recorded["grid"]))
        if "local_mem" in recorded:
            target = target.with_local_mem(int(recorded["local_mem"]))
    except (TargetError, ValueError) as err:
        raise InvalidTarget(str(err)) from None
    return target


def choose_target(module: ModuleOp, requested: str | None) -> str:
    """The target link records: the one asked for, the one already recorded, or the default.
    Asking for another target than the module was linked for is refused."""
    recorded = recorded_target_name(module)
    name = requested or recorded or DEFAULT_TARGET
    _load(name)
    if recorded is not None and recorded != name:
        raise InvalidTarget(
            f"the module is linked for target {recorded}; it cannot be re-linked for {name}"
        )
    return name


# ── Phases ────────────────────────────────────────────────────────────────────────────────────


def programs(module: ModuleOp) -> Iterator[sp.ProgramOp]:
    for op in module.walk():
        if isinstance(op, sp.ProgramOp):
            yield op


def takes(program: sp.ProgramOp, pass_name: str, expected: Phase) -> bool:
    """Whether `pass_name` (which takes `expected` programs) has work to do on `program`: False
    when it already ran (the pass is the identity on its own output), WrongPhase when the program
    has not reached `expected` yet."""
    phase = program.phase_value
    if phase.rank > expected.rank:
        return False
    if phase.rank < expected.rank:
        raise WrongPhase(pass_name, expected.value, phase.value)
    return True


def refuse_unlinked(module: ModuleOp, pass_name: str) -> None:
    """A pass after link refuses a module that still holds tg ops, at the first of them."""
    from spatial_dialect.tg import TgOp

    for op in module.walk():
        if isinstance(op, TgOp):
            err = WrongPhase(
                pass_name,
                Phase.LINKED.value,
                f"unlinked ({op.name} has no section yet; run link first)",
            )
            op.emit_error(str(err), err)


class SectionPattern(RewritePattern):
    """A per-section step: `rewrite(program, rewriter)` runs on every sp.program the pass takes."""

    pass_name: str
    takes_phase: Phase

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, sp.ProgramOp) and takes(op, self.pass_name, self.takes_phase):
            self.rewrite(op, rewriter)
            rewriter.notify_op_modified(op)

    def rewrite(self, program: sp.ProgramOp, rewriter: PatternRewriter) -> None:
        raise NotImplementedError


def run_sections(module: ModuleOp, pattern: SectionPattern) -> None:
    PatternRewriteWalker(pattern, apply_recursively=False, walk_regions_first=False).rewrite_module(
        module
    )


# ── A section's GEMM ──────────────────────────────────────────────────────────────────────────


@dataclass(frozen=True)
class SectionGemm:
    """The matmul of a section with its operands: the stage, the loads of A and B, the store."""

    matmul: sp.MatmulTilesOp
    load_a: sp.LoadOp
    load_b: sp.LoadOp
    store: sp.StoreOp

    @staticmethod
    def of(program: sp.ProgramOp) -> SectionGemm:
        name = program.sym_name.data
        matmul = program.one(sp.MatmulTilesOp)
        if matmul is None:
            raise SpatialPassError(f"section @{name} has no matmul_tiles stage")
        loads = {ld.dst: ld for ld in program.ops_of(sp.LoadOp)}
        stores = {st.src: st for st in program.ops_of(sp.StoreOp)}
        if matmul.in0 not in loads or matmul.in1 not in loads or matmul.out not in stores:
            raise SpatialPassError(
                f"section @{name}: a GEMM section loads both operands of its matmul_tiles and stores its output"
            )
        return SectionGemm(matmul, loads[matmul.in0], loads[matmul.in1], stores[matmul.out])

    def tensor(self, stage: sp.LoadOp | sp.StoreOp) -> sp.TensorOp:
        return self.matmul.program.tensor(stage.tensor.root_reference.data)

    def shape(self) -> GemmShape:
        a, b, c = self.tensor(self.load_a), self.tensor(self.load_b), self.tensor(self.store)
        (m, k), (_, n) = a.shape2d, b.shape2d
        # The datatype the chip computes in: the operand FIFO's (an integer operand may convert
        # on load to the precision link chose from its interval).
        in_dtype = str(sp.buffer_of(self.matmul.in0).elt)
        return GemmShape(
            m,
            k,
            n,
            in_dtype,
            str(c.element_type),
            fmt=a.format.data if a.format else None,
        )


def gemm_plan(program: sp.ProgramOp) -> GemmPlan:
    """The cost model's plan of a tiled section, exactly as tile priced it (an operand the plan does
    not multicast is read by each site; where no two sites share it the choice costs nothing)."""
    plan, work = program.one(sp.PlanOp), program.one(sp.WorkOp)
    assert plan is not None and work is not None
    grid = plan.grid
    if plan.streaming:
        return GemmPlan.streaming_plan(*grid)
    operands = plan.multicast_operands
    return GemmPlan(
        *grid,
        *work.block,
        *plan.sub_block,
        work.k_block,
        mcast_a="a" in operands,
        mcast_b="b" in operands,
        line=plan.is_line,
    )


@dataclass(frozen=True)
class Numerics:
    """How a GEMM section accumulates: the accumulator's precision, and whether the output is
    accumulated in place.

    tt-metal's defaults, which the cost model's numbers are measured with: integer products
    accumulate in i32; a register accumulator (GPU fragments, RDU pipeline registers) in f32;
    Tensix dest in f32 when the GEMM touches f32 (fp32_dest_acc_en) and in its 16-bit mode
    otherwise, which holds twice the tiles. Partial sums spill between K blocks at the
    accumulator's precision, and where that is the output's type they accumulate in the output
    FIFO itself (the interm and output circular buffers share memory when their formats agree),
    so no separate spill buffer exists.
    """

    acc: str
    in_place: bool

    @staticmethod
    def of(target: Target, in_dtype: str, out_dtype: str) -> Numerics:
        if in_dtype.startswith("i"):
            acc = "i32"
        elif target.acc_in_registers or "f32" in (in_dtype, out_dtype):
            acc = "f32"
        else:
            acc = in_dtype
        return Numerics(acc, acc == out_dtype)

    @property
    def exact(self) -> bool:
        # Where the output is not the accumulator's type, partial sums spill at the accumulator's
        # 32-bit precision (f32 or i32), which the footprint and the cost model call exact.
        return not self.in_place

    def cost(self, target: Target, shape: GemmShape, plan: GemmPlan, fidelity: str) -> GemmCost:
        return gemm_cost(target, shape, plan, fidelity, in_place=self.in_place, exact=self.exact)

    def fits(self, target: Target, shape: GemmShape, plan: GemmPlan) -> bool:
        return plan_fits(target, shape, plan, in_place=self.in_place, exact=self.exact)


def section_cost(program: sp.ProgramOp, target: Target, fidelity: str) -> GemmCost:
    """The cost model's prediction for a tiled section's plan, as tile ranked it."""
    shape = SectionGemm.of(program).shape()
    return Numerics.of(target, shape.in_dtype, shape.out_dtype).cost(
        target, shape, gemm_plan(program), fidelity
    )
