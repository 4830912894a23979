"""Indexed tg ops: gather_rows and set_rows (an embedding lookup, a KV-cache write), and argmax."""

from __future__ import annotations

from typing import ClassVar

from xdsl.dialects.builtin import (
    TensorType,
)
from xdsl.ir import SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    result_def,
)

from spatial_dialect.tg.base import (
    ARGMAX_ELEMENT,
    TgOp,
    Value,
    argmax_shape,
    gather_rows_shape,
    tensor_operand,
)


@irdl_op_definition
class GatherRowsOp(TgOp):
    """table[ids]: embedding lookup. An id outside [0, V) is a runtime error."""

    name = "tg.gather_rows"
    table = operand_def(TensorType)
    ids = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$table `,` $ids attr-dict `:` functional-type(operands, results)"

    def __init__(self, table: Value, ids: Value):
        tt = tensor_operand(self.name, "table", SSAValue.get(table), 2)
        ti = tensor_operand(self.name, "ids", SSAValue.get(ids), 1)
        shape = gather_rows_shape(tt.get_shape(), ti.get_shape())
        self.init_tg([table, ids], result_type=TensorType(tt.element_type, shape))

    def verify_shapes(self) -> None:
        v, d = self.require_rank("table", 2)
        t = self.require_i32_vector("ids")
        rows, cols = self.require_rank("res", 2)
        if (rows, cols) != gather_rows_shape((v, d), (t,)):
            raise self.err(f"the result is {rows}x{cols}; it must be {t}x{d} (ids x table width)")
        self.require_same_element("res", "table")


@irdl_op_definition
class SetRowsOp(TgOp):
    """cache with rows written at pos .. pos + T - 1 (the KV-cache update)."""

    name = "tg.set_rows"
    cache = operand_def(TensorType)
    rows = operand_def(TensorType)
    pos = operand_def(TensorType)
    res = result_def(TensorType)
    RESULT_LIKE: ClassVar[str | None] = "cache"
    assembly_format = "operands attr-dict `:` functional-type(operands, results)"

    def __init__(self, cache: Value, rows: Value, pos: Value):
        self.init_tg([cache, rows, pos])

    def verify_shapes(self) -> None:
        s, d = self.require_rank("cache", 2)
        t, d2 = self.require_rank("rows", 2)
        if d2 != d:
            raise self.err(f"cache is {s}x{d} and rows is {t}x{d2}; the widths {d} and {d2} differ")
        if t > s:
            raise self.err(f"rows has {t} rows, more than the cache's {s}")
        self.require_same_element("rows", "cache")
        self.require_i32_vector("pos", 1)


@irdl_op_definition
class ArgmaxOp(TgOp):
    """The index of the first maximum of each row."""

    name = "tg.argmax"
    x = operand_def(TensorType)
    res = result_def(TensorType)
    assembly_format = "$x attr-dict `:` functional-type(operands, results)"

    def __init__(self, x: Value):
        t = tensor_operand(self.name, "x", SSAValue.get(x), 2)
        self.init_tg([x], result_type=TensorType(ARGMAX_ELEMENT, argmax_shape(t.get_shape())))

    def verify_shapes(self) -> None:
        rows, cols = self.require_rank("x", 2)
        n = self.require_i32_vector("res")
        if (n,) != argmax_shape((rows, cols)):
            raise self.err(f"x has {rows} rows, so the result must be tensor<{rows}xi32>")
