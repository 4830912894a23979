"""The tensor-parallel decision, op by op in program order (docs/tensor-parallel.md#decision-rules).

Decided here, and why:

- **Each op takes its cheapest plan** (rules.py), priced as one chip's time on the local shapes
  plus the collectives its operands need to reach the plan's layouts (price.py), plus the gather
  of its result when a reader has no sharded plan that takes it as it is (one step of
  lookahead: a column LM head before an arg-max pays for the logits' gather). In program order,
  because a plan's price depends on the layouts its producers chose. The Megatron pairs follow
  where products outweigh a collective's fixed latency: a column product is cheaper than a
  replicated one, and its reader (a row product) takes the shard as it is.
- **Ties** (to the nanosecond the prices carry) go to fewer collectives, then to the rules'
  order: an all_reduce is priced as two all_gathers, so WO's row split ties with gathering
  around a column split, and one collective is the simpler program.
- **An argument takes the layout its first reader chooses** (the host shards it for free); a later
  reader that wants another layout gathers it.
- **The runner-up is recorded** with its time and why it lost (slower, or the numbers that refuse
  it), so a reader of the IR sees each decision and its margin.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import Float32Type, TensorType
from xdsl.ir import Operation, SSAValue

from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.mesh import Mesh
from spatial_dialect.tg import MoeOp

from .layout import REPLICATED, Layout, R, conversion, partial
from .norm import NORM_DEFAULT, NORM_PLANS
from .plan import Plan
from .price import moe_note, op_us, steps_us
from .rules import Context, head_hints, plans_of


@dataclass
class Decision:
    plan: Plan
    us: float
    """The priced time: the op, the collectives its operands need and the gathers of its result
    for readers that read it whole (what the plans are compared on)."""
    own: float
    """The op alone on one chip."""
    runner_up: str


def value_name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


def local_type(v: SSAValue, lay: Layout, sizes) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return TensorType(t.get_element_type(), lay.local_shape(t.get_shape(), sizes))


@dataclass
class Decider:
    mesh: Mesh
    fn: func.FuncOp
    prefer_sharded: bool = False
    """Take a sharded plan wherever one can run, the cheapest of them (tt-metal's fixed layouts
    at any size); the prices still rank the sharded plans and are recorded."""
    prefer_experts: bool = False
    """Take a tg.moe's ``experts`` plan wherever it can run (the tests' forcing hook, as
    ``prefer_sharded`` is); without it ``experts`` is ranked by its price like every plan."""
    replicate_all: bool = False
    """Take every op's replicate plan (the deployment-level alternative, __init__.per_chip); the
    other plans are still priced and the best of them recorded as the runner-up."""
    norm: str = NORM_DEFAULT
    """The distributed rms_norm's mode (norm.py): off or priced (whole-row norms replicated op by
    op; priced's other whole plan is a forced run, __init__.per_chip), or forced (its plans
    first)."""

    def __post_init__(self) -> None:
        self.sizes = self.mesh.shape
        self.rank = len(self.sizes)
        self.layouts: dict[SSAValue, Layout] = {}
        self.decisions: dict[Operation, Decision] = {}
        self.made: set[tuple[SSAValue, Layout]] = set()
        """Values already converted for an earlier reader: the rewrite writes each conversion
        once (rewrite.py), so a later reader of the same layout pays nothing for it."""
        ops = list(self.fn.body.block.ops)
        self.ctx = Context(
            self.sizes,
            self.layouts.get,
            head_hints(ops, self.sizes),
            lambda v: [u.operation for u in v.uses],
            self.mesh.chip.tile_rows,
            self.norm,
        )
        self.scatter = self.norm == "forced"

    def price(self, op: Operation, plan: Plan) -> tuple[float, float, int, str | None]:
        """One chip's time under ``plan`` (the op alone, and with the collectives its operands
        need and the gathers of its result that readers reading it whole will need), or why it
        cannot run; and how many collectives that takes."""
        convert, collectives = 0.0, 0
        for v, want in zip(op.operands, plan.operands, strict=True):
            cur = self.layouts.get(v)
            if cur is None or (v, want) in self.made:
                continue
            steps = conversion(cur, want, self.rank, self.scatter)
            if steps is None:
                why = (
                    f"{value_name(v)} is {cur.describe()}: no collective makes it {want.describe()}"
                )
                return 0.0, 0.0, 0, why
            convert += self.steps_us(v, cur, steps)
            collectives += len(steps)
        if plan.collective is not None:
            convert += self.pick_us(op, plan)
            collectives += 1
        if plan.stats is not None:
            stats, steps = self.stats_steps(op, plan.stats)
            convert += steps_us(self.mesh, steps, stats, stats.get_shape())
            collectives += len(steps)
        if plan.result.kind != R:
            for r in op.results:
                taken = [(u, self.accepts(u, r, plan.result)) for u in self.readers(r)]
                # a reader whose sharded plan is itself a collective (the vocab arg-max) pays it
                convert += sum(us for _, us in taken if us is not None)
                refusing = [u for u, us in taken if us is None]
                if not refusing:
                    continue
                steps = conversion(plan.result, REPLICATED, self.rank)
                if steps is None:
                    return 0.0, 0.0, 0, f"{refusing[0].name} cannot read {value_name(r)} so"
                convert += self.steps_us(r, plan.result, steps)
                collectives += len(steps)
        locals_in = [
            local_type(v, lay, self.sizes)
            for v, lay in zip(op.operands, plan.operands, strict=True)
        ]
        locals_out = [local_type(r, plan.result, self.sizes) for r in op.results]
        own = op_us(self.mesh, op, locals_in, locals_out)
        return own, own + convert, collectives, None

    @staticmethod
    def readers(v: SSAValue) -> list[Operation]:
        return [u.operation for u in v.uses if not isinstance(u.operation, func.ReturnOp)]

    def accepts(self, reader: Operation, v: SSAValue, lay: Layout) -> float | None:
        """The time of the collective a sharded plan of ``reader`` that reads ``v`` as ``lay``
        with no conversion (its other operands as they lie, or not laid out yet) is itself (0
        for an ordinary op; the vocab arg-max's argmax_gather), the cheapest such plan's; None
        when it has none. A reader that has none gathers ``v``, and the producer's plan is priced
        with that gather: one step of lookahead, which keeps a column product from feeding an op
        that reads it whole (a per-head norm whose heads do not split, a residual add) or an
        arg-max whose pick costs more, when replicating it is cheaper."""
        before = self.layouts.get(v)
        self.layouts[v] = lay
        try:
            plans, _ = plans_of(reader, self.ctx)
        finally:
            if before is None:
                del self.layouts[v]
            else:
                self.layouts[v] = before
        found: list[float] = []
        for plan in plans:
            if plan.refused is not None or plan.name == "replicate":
                continue
            if (us := self.scattered(reader, v, lay, plan)) is not None:
                found.append(us)
            elif all(
                want == lay if u is v else self.layouts.get(u) in (None, want)
                for u, want in zip(reader.operands, plan.operands, strict=True)
            ):
                found.append(self.pick_us(reader, plan))
        return min(found, default=None)

    def stats_steps(self, op: Operation, axes: tuple[int, ...]) -> tuple[TensorType, list]:
        """A distributed rms_norm's statistics (rows x 1, f32) and the all_reduces that sum
        them over ``axes``."""
        t = op.operands[0].type
        assert isinstance(t, TensorType)
        stats = TensorType(Float32Type(), [t.get_shape()[0], 1])
        steps = conversion(partial(axes), REPLICATED, self.rank)
        assert steps is not None
        return stats, steps

    def scattered(self, reader: Operation, v: SSAValue, lay: Layout, plan: Plan) -> float | None:
        """The reduce_scatter a ``scatter`` or ``local`` plan of an elementwise ``reader``
        (norm.py) turns ``v``, a partial sum, into its shard with: the lookahead of a row product whose reader keeps the residual
        stream split (without it the row product would be priced with an all_reduce it does
        not need); None for any other plan or when its other operands do not lie as it wants."""
        if plan.name not in ("scatter", "local") or not self.scatter:
            return None
        want = plan.operands[[u is v for u in reader.operands].index(True)]
        steps = conversion(lay, want, self.rank, True)
        others = all(
            u is v or self.layouts.get(u) in (None, w)
            for u, w in zip(reader.operands, plan.operands, strict=True)
        )
        return self.steps_us(v, lay, steps) if steps and others else None

    def pick_us(self, op: Operation, plan: Plan) -> float:
        """The time of the collective ``plan`` is (0 when it is none)."""
        if plan.collective is None:
            return 0.0
        t = op.operands[0].type
        assert isinstance(t, TensorType)
        local = plan.operands[0].local_shape(t.get_shape(), self.sizes)
        return steps_us(self.mesh, [plan.collective], t, local)

    def steps_us(self, v: SSAValue, cur: Layout, steps) -> float:
        t = v.type
        assert isinstance(t, TensorType)
        return steps_us(self.mesh, steps, t, cur.local_shape(t.get_shape(), self.sizes))

    def decide_op(self, op: Operation) -> None:
        plans, why_replicated = plans_of(op, self.ctx)
        priced: list[tuple[float, int, float, Plan]] = []
        refused: list[str] = []
        for plan in plans:
            if plan.refused is not None:
                refused.append(f"{plan.label}: {plan.refused}")
                continue
            own, us, collectives, why = self.price(op, plan)
            if why is None:
                priced.append((us, collectives, own, plan))
            else:
                refused.append(f"{plan.label}: {why}")
        if not priced:
            raise SpatialPassError(
                f"tensor-parallel: {op.name} has no plan over {self.mesh.name}: {'; '.join(refused)}"
            )
        # To the nanosecond the prices carry; a tie goes to fewer collectives (an all_reduce is
        # priced as two all_gathers), then to the rules' order (sharded plans first).
        forced = self.norm == "forced"
        priced.sort(
            key=lambda p: (
                forced and p[3].name not in NORM_PLANS,
                self.preference(p[3]),
                round(p[0], 3),
                p[1],
            )
        )
        us, _, own, best = priced[0]
        if forced and best.name in NORM_PLANS:
            # forced: the runner-up is the best plan of another kind (the replicated norm), not
            # the same plan over another axis group
            priced[1:] = sorted(priced[1:], key=lambda p: p[3].name in NORM_PLANS)
        if len(priced) > 1:
            ru_us, ru_n, _, ru = priced[1]
            if ru_us < us:
                runner = f"{ru.label}: {ru_us:.3f} us (faster by {us - ru_us:.3f} us)"
            elif round(ru_us, 3) == round(us, 3):
                runner = f"{ru.label}: {ru_us:.3f} us (as fast, with {ru_n} collectives)"
            else:
                runner = f"{ru.label}: {ru_us:.3f} us (slower by {ru_us - us:.3f} us)"
        elif refused:
            runner = "; ".join(refused)
        else:
            runner = f"none: {why_replicated}" if why_replicated else "none"
        if why_replicated and len(plans) > 1:
            runner += f"; {why_replicated}"  # an op with a sharded rule that one plan is not
        if isinstance(op, MoeOp):
            # three plans: the one refused is as telling as the priced runner-up
            if len(priced) > 1 and refused:
                runner += "; " + "; ".join(refused)
            runner += f"; {moe_note(op, self.mesh.chips)}"
        self.decisions[op] = Decision(best, us, own, runner)
        for v, want in zip(op.operands, best.operands, strict=True):
            if self.layouts.get(v, want) != want:
                self.made.add((v, want))
            self.layouts.setdefault(v, want)  # an unread argument takes its first reader's layout
        for r in op.results:
            self.layouts[r] = best.result

    def preference(self, plan: Plan) -> int:
        """The rank a plan is taken in before its price (lower first): the options' preferences."""
        if self.replicate_all:
            return int(plan.name != "replicate")
        if self.prefer_experts and plan.name == "experts":
            return 0
        if self.prefer_sharded and plan.name == "replicate":
            return 2
        return 1

    def run(self) -> None:
        for op in self.fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                break
            self.decide_op(op)
        for arg in self.fn.body.block.args:
            self.layouts.setdefault(arg, REPLICATED)
