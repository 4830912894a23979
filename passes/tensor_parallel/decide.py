"""The tensor-parallel decision, op by op in program order (docs/tensor-parallel.md#decision-rules).

Decided here, and why:

- **Each op takes its cheapest plan** (rules.py), priced as one chip's time on the local shapes
  plus the collectives its operands need to reach the plan's layouts (price.py). In program order,
  because a plan's price depends on the layouts its producers chose; the layouts of the
  Megatron pairs follow: a column product is cheaper than a replicated one, and its reader (a row
  product) takes the shard as it is rather than gathering it.
- **An argument takes the layout its first reader chooses** (the host shards it for free); a later
  reader that wants another layout gathers it.
- **The runner-up is recorded** with its time and why it lost (slower, or the numbers that refuse
  it), so a reader of the IR sees each decision and its margin.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.mesh import Mesh

from .layout import REPLICATED, Layout, conversion
from .price import op_us, steps_us
from .rules import Context, Plan, head_hints, plans_of


@dataclass
class Decision:
    plan: Plan
    us: float
    runner_up: str


def _name(v: SSAValue) -> str:
    return f"%{v.name_hint}" if v.name_hint else "a value"


def _local_type(v: SSAValue, lay: Layout, sizes) -> TensorType:
    t = v.type
    assert isinstance(t, TensorType)
    return TensorType(t.get_element_type(), lay.local_shape(t.get_shape(), sizes))


@dataclass
class Decider:
    mesh: Mesh
    fn: func.FuncOp

    def __post_init__(self) -> None:
        self.sizes = self.mesh.shape
        self.rank = len(self.sizes)
        self.layouts: dict[SSAValue, Layout] = {}
        self.decisions: dict[Operation, Decision] = {}
        ops = list(self.fn.body.block.ops)
        self.ctx = Context(
            self.sizes,
            self.layouts.get,
            head_hints(ops, self.sizes),
            lambda v: [u.operation for u in v.uses],
        )

    def price(self, op: Operation, plan: Plan) -> tuple[float, str | None]:
        """One chip's time under ``plan`` with the collectives it needs, or why it cannot run."""
        convert = 0.0
        for v, want in zip(op.operands, plan.operands, strict=True):
            cur = self.layouts.get(v)
            if cur is None:
                continue
            steps = conversion(cur, want, self.rank)
            if steps is None:
                return 0.0, f"{_name(v)} is {cur.describe()} and cannot become {want.describe()}"
            t = v.type
            assert isinstance(t, TensorType)
            convert += steps_us(self.mesh, steps, t, cur.local_shape(t.get_shape(), self.sizes))
        locals_in = [
            _local_type(v, lay, self.sizes)
            for v, lay in zip(op.operands, plan.operands, strict=True)
        ]
        locals_out = [_local_type(r, plan.result, self.sizes) for r in op.results]
        return op_us(self.mesh, op, locals_in, locals_out) + convert, None

    def decide_op(self, op: Operation) -> None:
        plans, why_replicated = plans_of(op, self.ctx)
        priced: list[tuple[float, Plan]] = []
        refused: list[str] = []
        for plan in plans:
            if plan.refused is not None:
                refused.append(f"{plan.name}: {plan.refused}")
                continue
            us, why = self.price(op, plan)
            if why is None:
                priced.append((us, plan))
            else:
                refused.append(f"{plan.name}: {why}")
        if not priced:
            raise SpatialPassError(
                f"tensor-parallel: {op.name} has no plan over {self.mesh.name}: {'; '.join(refused)}"
            )
        priced.sort(key=lambda p: p[0])  # stable: the rules list sharded plans first
        us, best = priced[0]
        if len(priced) > 1:
            ru_us, ru = priced[1]
            runner = f"{ru.name}: {ru_us:.3f} us (slower by {ru_us - us:.3f} us)"
        elif refused:
            runner = refused[0]
        else:
            runner = f"none: {why_replicated}" if why_replicated else "none"
        self.decisions[op] = Decision(best, us, runner)
        for v, want in zip(op.operands, best.operands, strict=True):
            self.layouts.setdefault(v, want)  # an unread argument takes its first reader's layout
        for r in op.results:
            self.layouts[r] = best.result

    def run(self) -> None:
        for op in self.fn.body.block.ops:
            if isinstance(op, func.ReturnOp):
                break
            self.decide_op(op)
        for arg in self.fn.body.block.args:
            self.layouts.setdefault(arg, REPLICATED)
