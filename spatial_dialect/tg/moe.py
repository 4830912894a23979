"""tg.moe: a mixture-of-experts FFN block (Qwen3-MoE, Qwen3-Next, Mixtral), docs/tg.md#tgmoe.

A router scores every expert per token, each token's rows go through the SwiGLU FFNs of its
top-k experts, and the results combine weighted by the scores; an optional shared expert runs
on every token (Qwen3-Next gates it with a sigmoid of one more projection). tg tensors are rank 1
or 2, so the E experts' matrices are STACKED BY ROWS: expert e's D x F gate matrix is rows
e * D .. (e + 1) * D - 1 of `w_gate`, as `tg.head_matmul` stacks its heads.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, BoolAttr, IntegerAttr, StringAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    var_operand_def,
)

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    bool_property,
    i64_property,
    operand_values,
    str_property,
)

MOE_SCORES = ("softmax", "sigmoid")
"""How the router's logits become expert scores (the `scores` property)."""

SHARED_ROLES = ("shared_gate", "shared_up", "shared_down", "shared_weight")
"""The operands of the optional shared expert, in order: its SwiGLU FFN (3) and, optionally, the
D x 1 projection whose sigmoid gates its output (Qwen3-Next's shared_expert_gate)."""


@irdl_op_definition
class MoeOp(TgOp):
    """Mixture of experts: route each token to its top_k experts, sum their SwiGLU FFNs weighted
    by the scores, plus the (gated) shared expert."""

    name = "tg.moe"
    x = operand_def(TensorType)
    router = operand_def(TensorType)
    w_gate = operand_def(TensorType)
    w_up = operand_def(TensorType)
    w_down = operand_def(TensorType)
    shared = var_operand_def(TensorType)
    res = result_def(TensorType)
    top_k = prop_def(IntegerAttr[I64])
    scores = prop_def(StringAttr)
    renormalize = opt_prop_def(BoolAttr)
    experts_held = opt_prop_def(IntegerAttr[I64])
    """H, where the op holds H of the router's E experts (a chip's share under the tensor-parallel
    ``experts`` plan): the experts c x H .. c x H + H - 1 of chip c, its linear index on the mesh
    (row-major; 0 off a mesh). Absent: all E. The router stays whole, so every chip routes every
    token alike and sums only the chosen experts it holds."""
    RESULT_LIKE: ClassVar[str | None] = "x"
    assembly_format = (
        "operands `top_k` $top_k `scores` $scores (`renormalize` $renormalize^)? "
        "(`experts_held` $experts_held^)? attr-dict "
        "`:` functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        router: Value,
        w_gate: Value,
        w_up: Value,
        w_down: Value,
        shared: Sequence[Value] = (),
        *,
        top_k: int | IntegerAttr,
        scores: str | StringAttr = "softmax",
        renormalize: bool | IntegerAttr | None = None,
        experts_held: int | IntegerAttr | None = None,
        properties: Mapping[str, Attribute] | None = None,
    ):
        """`shared`: () or (gate, up, down) or (gate, up, down, gate weight). `renormalize` is
        left out of the IR when not given (false)."""
        props: dict[str, Attribute | None] = dict(properties or {})
        props["top_k"] = i64_property(self.name, "top_k", top_k)
        props["scores"] = str_property(self.name, "scores", scores)
        if renormalize is not None:
            props["renormalize"] = bool_property(self.name, "renormalize", renormalize)
        if experts_held is not None:
            props["experts_held"] = i64_property(self.name, "experts_held", experts_held)
        values = operand_values(x, router, w_gate, w_up, w_down)
        like = values[0]
        assert like is not None
        IRDLOperation.__init__(
            self,
            operands=[*values, [SSAValue.get(v) for v in shared]],
            result_types=[like.type],
            properties=props,
        )

    # The shared expert's operands by role -------------------------------------------------

    def shared_operand(self, role: str) -> SSAValue | None:
        i = SHARED_ROLES.index(role)
        return self.shared[i] if i < len(self.shared) else None

    def renormalized(self) -> bool:
        return self.renormalize is not None and bool(self.renormalize.value.data)

    def held(self) -> int:
        """H, the experts this op holds (``experts_held``; all E when absent)."""
        if self.experts_held is None:
            return self.shape(self.router)[1]
        return self.experts_held.value.data

    def sizes(self) -> tuple[int, int, int, int]:
        """(T tokens, D model width, E experts, F expert FFN width)."""
        t, d = self.shape(self.x)
        e = self.shape(self.router)[1]
        f = self.shape(self.w_gate)[1]
        return t, d, e, f

    def named_values(self) -> list[tuple[str, SSAValue]]:
        fixed = [(n, getattr(self, n)) for n in ("x", "router", "w_gate", "w_up", "w_down")]
        shared = [(SHARED_ROLES[i], v) for i, v in enumerate(self.shared)]
        return [*fixed, *shared, ("res", self.res)]

    def _operand_field(self, index: int) -> str:
        return self.named_values()[index][0]

    def verify_shapes(self) -> None:
        t, d = self.require_rank("x", 2)
        self.require_float("x")
        for name, value in self.named_values()[1:-1]:
            if len(self.shape(value)) != 2:
                raise self.err(f"{name} must be a matrix (rank 2), got {value.type}")
            if self.elt(value) != self.elt(self.x):
                raise self.err(
                    f"{name} holds {self.elt(value)} but x holds {self.elt(self.x)}; they must agree"
                )
        r_rows, e = self.shape(self.router)
        if r_rows != d:
            raise self.err(f"x is {t}x{d} and router is {r_rows}x{e}; router must have {d} rows")
        k = self.require_positive("top_k")
        if k > e:
            raise self.err(f"top_k {k} is more than the router's {e} experts")
        if self.scores.data not in MOE_SCORES:
            raise self.err(
                f'scores must be one of {", ".join(MOE_SCORES)}, got "{self.scores.data}"'
            )
        h = e
        if self.experts_held is not None:
            h = self.require_positive("experts_held")
            if e % h:
                raise self.err(f"experts_held {h} does not divide the router's {e} experts")
        g_rows, f = self.shape(self.w_gate)
        if g_rows != h * d:
            raise self.err(
                f"w_gate is {g_rows}x{f}; it must stack {h} experts' {d}x{f} matrices "
                f"({h * d} rows)"
            )
        if self.shape(self.w_up) != (h * d, f):
            raise self.err(f"w_up is {self._dims('w_up')}; it must be {h * d}x{f} as w_gate")
        if self.shape(self.w_down) != (h * f, d):
            raise self.err(
                f"w_down is {self._dims('w_down')}; it must stack {h} experts' {f}x{d} "
                f"matrices ({h * f}x{d})"
            )
        n = len(self.shared)
        if n not in (0, 3, 4):
            raise self.err(
                f"takes 0, 3 (shared gate, up, down) or 4 (and the shared gate weight) shared "
                f"expert operands, got {n}"
            )
        if n:
            sg = self.shared_operand("shared_gate")
            assert sg is not None
            s_rows, fs = self.shape(sg)
            if s_rows != d:
                raise self.err(f"shared_gate is {s_rows}x{fs}; it must have {d} rows")
            for role, want in (("shared_up", (d, fs)), ("shared_down", (fs, d))):
                got = self.shape(self.shared_operand(role))  # type: ignore[arg-type]
                if got != want:
                    raise self.err(f"{role} is {got[0]}x{got[1]}; it must be {want[0]}x{want[1]}")
            sw = self.shared_operand("shared_weight")
            if sw is not None and self.shape(sw) != (d, 1):
                got = self.shape(sw)
                raise self.err(f"shared_weight is {got[0]}x{got[1]}; it must be {d}x1")

    def _dims(self, field: str) -> str:
        s = self.shape(getattr(self, field))
        return f"{s[0]}x{s[1]}"
