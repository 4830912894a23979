"""How a GEMM section accumulates, and what that makes its plan cost.

The accumulator's precision is a contract (docs/tg.md#numerics-of-the-reference-semantics), not a
per-chip accident: link builds the accumulator buffer with it, tile sizes sub-blocks and ranks
plans with it, and the report and tests price a tiled section with the precision its accumulator
records (`Numerics.of_section`), so every reader agrees with what tile chose. `ELEMENT_TYPES`
turns the datatype names the targets and the cost model use into the IR's element types.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import BFloat16Type, Float16Type, Float32Type, IntegerType
from xdsl.ir import Attribute

from spatial_dialect import sp
from spatial_dialect.passes.gemm_view import GemmView, gemm_plan
from spatial_dialect.targets import Target
from spatial_dialect.targets.cost import GemmCost, GemmPlan, GemmShape, gemm_cost, plan_fits

ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": BFloat16Type(),
    "f16": Float16Type(),
    "f32": Float32Type(),
    "i8": IntegerType(8),
    "i32": IntegerType(32),
}
"""The element types by the names the target and the cost model use."""

ACCUMULATE = ("f32", "bf16")
"""The values of the `accumulate` option (docs/passes.md#tile-f32-accumulation-by-contract): `f32`,
the tg contract, is the default; `bf16` asks for the 16-bit accumulator where a chip has one."""


@dataclass(frozen=True)
class Numerics:
    """How a GEMM section accumulates: the accumulator's precision, and whether the output is
    accumulated in place.

    The tg contract (docs/tg.md#numerics-of-the-reference-semantics) says a float matmul
    accumulates in f32, and that is what every chip does by default: a register accumulator (GPU
    fragments, RDU pipeline registers) always, Tensix dest in its fp32 mode (tt-metal's
    fp32_dest_acc_en), which holds half the tiles of its 16-bit mode. Integer products
    accumulate in i32. `accumulate="bf16"` is the fast mode on a chip with a 16-bit accumulator
    (Tensix dest): a 16- or block-float-operand GEMM whose operands and result are not f32 then
    accumulates in the operands' 16-bit type, rounding after every tile-matmul, with twice the
    sub-block. Partial sums spill between K blocks at the accumulator's precision, and where that
    is the output's type they accumulate in the output FIFO itself (the interm and output
    circular buffers share memory when their formats agree), so no separate spill buffer exists.
    """

    acc: str
    in_place: bool

    @staticmethod
    def of(target: Target, in_dtype: str, out_dtype: str, accumulate: str = "f32") -> Numerics:
        if in_dtype.startswith("i"):
            acc = "i32"
        elif (
            accumulate == "bf16"
            and not target.acc_in_registers
            and "f32" not in (in_dtype, out_dtype)
        ):
            acc = in_dtype
        else:
            acc = "f32"
        return Numerics(acc, acc == out_dtype)

    @staticmethod
    def of_section(program: sp.ProgramOp) -> Numerics:
        """The numerics a GEMM section was planned with, read off its accumulator and its result."""
        view = GemmView.of(program)
        acc = str(sp.buffer_of(view.matmul.acc).elt)
        return Numerics(acc, acc == str(view.tensor(view.store).element_type))

    @property
    def narrow(self) -> bool:
        """A 16-bit accumulator (accumulate=bf16 on a chip that has one), where the contract's is
        32-bit (f32, i32)."""
        return self.acc not in ("f32", "i32")

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
    """The cost model's prediction for a tiled section's plan, as tile ranked it (with the
    numerics its accumulator records)."""
    shape = GemmView.of(program).shape()
    return Numerics.of_section(program).cost(target, shape, gemm_plan(program), fidelity)
