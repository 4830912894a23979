"""Head slicing and joining of tg: head_slice (a fused QKV projection split by columns), join
(results joined by columns) and head_matmul (a matmul per head, the heads side by side)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    IntegerAttr,
    TensorType,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from spatial_dialect.tg.base import (
    TgOp,
    Value,
    i64_property,
    is_float,
    shape_str,
    tensor_operand,
)


def head_slice_shape(x: Sequence[int], head_dim: int, heads: int) -> tuple[int, int]:
    """heads heads of head_dim columns of every row of x."""
    return (x[0], heads * head_dim)


def join_shape(parts: Sequence[Sequence[int]]) -> tuple[int, int]:
    """The parts side by side: their rows, the sum of their columns."""
    return (parts[0][0], sum(p[1] for p in parts))


def head_matmul_shape(a: Sequence[int], b: Sequence[int], heads: int) -> tuple[int, int]:
    """One M x N product per head, side by side: M x heads * N."""
    return (a[0], heads * b[1])


@irdl_op_definition
class HeadSliceOp(TgOp):
    """Columns first * head_dim .. (first + heads) * head_dim of x: heads `first` .. `first +
    heads - 1` of a fused projection (q, k or v of a fused QKV)."""

    name = "tg.head_slice"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    first = prop_def(IntegerAttr[I64])
    heads = prop_def(IntegerAttr[I64])
    assembly_format = (
        "$x `head_dim` $head_dim `first` $first `heads` $heads attr-dict `:`"
        " functional-type(operands, results)"
    )

    def __init__(
        self,
        x: Value,
        *,
        head_dim: int | IntegerAttr,
        first: int | IntegerAttr,
        heads: int | IntegerAttr,
    ):
        t = tensor_operand(self.name, "x", SSAValue.get(x), 2)
        props = {
            "head_dim": i64_property(self.name, "head_dim", head_dim),
            "first": i64_property(self.name, "first", first),
            "heads": i64_property(self.name, "heads", heads),
        }
        shape = head_slice_shape(
            t.get_shape(), props["head_dim"].value.data, props["heads"].value.data
        )
        self.init_tg([x], props, result_type=TensorType(t.element_type, shape))

    def column_range(self) -> tuple[int, int]:
        """The first column of the slice and its width, in columns of x."""
        d = self.head_dim.value.data
        return self.first.value.data * d, self.heads.value.data * d

    def verify_shapes(self) -> None:
        rows, cols = self.require_rank("x", 2)
        d = self.require_positive("head_dim")
        heads = self.require_positive("heads")
        first = self.first.value.data
        if first < 0:
            raise self.err(f"first must be non-negative, got {first}")
        if cols % d:
            raise self.err(f"x is {rows}x{cols}; head_dim {d} does not divide its {cols} columns")
        if (first + heads) * d > cols:
            raise self.err(
                f"x is {rows}x{cols}, {cols // d} heads of {d}; heads {first} .. "
                f"{first + heads - 1} run past them"
            )
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != head_slice_shape((rows, cols), d, heads):
            raise self.err(
                f"the result is {rr}x{rc}; {heads} heads of {d} of x's {rows} rows are "
                f"{rows}x{heads * d}"
            )
        self.require_same_element("res", "x")


@irdl_op_definition
class JoinOp(TgOp):
    """The parts side by side: result[:, offset_i .. offset_i + C_i] = parts[i], in order."""

    name = "tg.join"
    parts = var_operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$parts attr-dict `:` functional-type(operands, results)"

    def __init__(self, parts: Sequence[Value]):
        values = [SSAValue.get(p) for p in parts]
        if not values:
            raise VerifyException("tg.join: needs at least one part")
        types = [tensor_operand(self.name, f"part {i}", v, 2) for i, v in enumerate(values)]
        shape = join_shape([t.get_shape() for t in types])
        IRDLOperation.__init__(
            self, operands=[values], result_types=[TensorType(types[0].element_type, shape)]
        )

    def named_values(self) -> list[tuple[str, SSAValue]]:
        return [*((f"part {i}", v) for i, v in enumerate(self.parts)), ("res", self.res)]

    def _operand_field(self, index: int) -> str:
        return f"part {index}"

    def verify_shapes(self) -> None:
        if not self.parts:
            raise self.err("needs at least one part")
        shapes = []
        for i, p in enumerate(self.parts):
            s = self.shape(p)
            if len(s) != 2:
                raise self.err(f"part {i} must be a matrix (rank 2), got {shape_str(s)}")
            shapes.append(s)
        rows = shapes[0][0]
        for i, s in enumerate(shapes):
            if s[0] != rows:
                raise self.err(
                    f"part 0 is {shape_str(shapes[0])} and part {i} is {shape_str(s)}; "
                    f"the rows {rows} and {s[0]} differ"
                )
            e0, ei = self.elt(self.parts[0]), self.elt(self.parts[i])
            if ei != e0:
                raise self.err(f"part {i} holds {ei} but part 0 holds {e0}; they must agree")
        rr, rc = self.require_rank("res", 2)
        want = join_shape(shapes)
        if (rr, rc) != want:
            widths = " + ".join(str(s[1]) for s in shapes)
            raise self.err(f"the result is {rr}x{rc}; the parts joined are {rows}x{widths}")
        er = self.elt(self.res)
        if er != self.elt(self.parts[0]):
            raise self.err(f"res holds {er} but the parts hold {self.elt(self.parts[0])}")

    def offsets(self) -> list[int]:
        """The first column of each part in the result."""
        out, at = [], 0
        for p in self.parts:
            out.append(at)
            at += self.shape(p)[1]
        return out


@irdl_op_definition
class HeadMatmulOp(TgOp):
    """Per head h: res[:, h*N .. (h+1)*N] = a[:, h*K .. (h+1)*K] @ b[h*K .. (h+1)*K, :]."""

    name = "tg.head_matmul"
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    res = result_def(TensorType)
    heads = prop_def(IntegerAttr[I64])
    assembly_format = "$a `,` $b `heads` $heads attr-dict `:` functional-type(operands, results)"

    def __init__(
        self,
        a: Value,
        b: Value,
        *,
        heads: int | IntegerAttr,
        element_type: Attribute | None = None,
    ):
        """The result is M x heads * N of `element_type`, by default a's element type (f32 for
        bf16 operands kept in f32)."""
        ta = tensor_operand(self.name, "a", SSAValue.get(a), 2)
        tb = tensor_operand(self.name, "b", SSAValue.get(b), 2)
        h = i64_property(self.name, "heads", heads)
        shape = head_matmul_shape(ta.get_shape(), tb.get_shape(), h.value.data)
        self.init_tg(
            [a, b], {"heads": h}, result_type=TensorType(element_type or ta.element_type, shape)
        )

    def head_sizes(self) -> tuple[int, int, int]:
        """(heads, K, N): each head multiplies an M x K block by a K x N one."""
        h = self.heads.value.data
        return h, self.shape(self.a)[1] // h, self.shape(self.b)[1]

    def verify_shapes(self) -> None:
        m, hk = self.require_rank("a", 2)
        hk2, n = self.require_rank("b", 2)
        h = self.require_positive("heads")
        if hk % h:
            raise self.err(f"a is {m}x{hk}; heads {h} does not divide its {hk} columns")
        if hk2 != hk:
            raise self.err(
                f"a is {m}x{hk} and b is {hk2}x{n}; b must stack the {h} heads' {hk // h}x{n} "
                f"matrices, {hk} rows, got {hk2}"
            )
        self.require_same_element("a", "b")
        rr, rc = self.require_rank("res", 2)
        if (rr, rc) != head_matmul_shape((m, hk), (hk2, n), h):
            raise self.err(f"the result is {rr}x{rc}; {h} heads of {m}x{n} are {m}x{h * n}")
        ea, er = self.elt(self.a), self.elt(self.res)
        if is_float(ea) != is_float(er):
            kind = "a float" if is_float(ea) else "an integer"
            raise self.err(f"operands hold {ea}, so the result must be {kind} type, got {er}")
