"""A GEMM section read as the cost model sees it: its shape and the plan tile recorded on it.

Tile ranks GEMM plans with the cost model (targets/cost.py), which knows nothing of the IR; the
passes after it, the report and the tests ask the model about the same section again. So the IR
is read back into the model's two inputs in one place: `GemmView` finds the section's matmul and
the loads and store of its operands and gives its `GemmShape` (the datatype the chip computes in,
the storage formats of A and B), and `gemm_plan` rebuilds the `GemmPlan` from the section's
`sp.plan` and `sp.work`, so what they price is exactly what tile priced.
"""

from __future__ import annotations

from dataclasses import dataclass

from spatial_dialect import sp, tg
from spatial_dialect.sp.errors import SpatialPassError
from spatial_dialect.targets.cost import GemmPlan, GemmShape


@dataclass(frozen=True)
class GemmView:
    """The matmul of a section with its operands: the stage, the loads of A and B, the store."""

    matmul: sp.MatmulTilesOp
    load_a: sp.LoadOp
    load_b: sp.LoadOp
    store: sp.StoreOp

    @staticmethod
    def of(program: sp.ProgramOp) -> GemmView:
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
        return GemmView(matmul, loads[matmul.in0], loads[matmul.in1], stores[matmul.out])

    def tensor(self, stage: sp.LoadOp | sp.StoreOp) -> sp.TensorOp:
        return self.matmul.program.tensor(stage.tensor.root_reference.data)

    def shape(self) -> GemmShape:
        a, b, c = self.tensor(self.load_a), self.tensor(self.load_b), self.tensor(self.store)
        # A B read transposed (matmul_tiles transpose_b) is stored N x K: the same bytes.
        (m, k), n = a.shape2d, tg.b_dims(b.shape2d, self.matmul.transposes_b)[1]
        # The datatype the chip computes in: the operand FIFO's (an integer operand may convert
        # on load to the precision link chose from its interval), or for Q8_0 operands the type
        # the compute stage widens them to (link/quant.py; without one, the int8 dot).
        widened = self.matmul.dequantize
        in_dtype = str(widened or sp.buffer_of(self.matmul.in0).elt)
        b_fmt = b.format.data if b.format and b.format != a.format else None
        return GemmShape(
            m,
            k,
            n,
            in_dtype,
            str(c.element_type),
            fmt=a.format.data if a.format else None,
            b_fmt=b_fmt,
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
        split_k=work.k_slices,
        split_axis=work.split_axis or "y",
    )
