"""Storage helpers shared by the sp ops: numbers are `IntegerAttr` (i64) properties, pairs are
`PairAttr`s, and each has a Python accessor that returns plain values (`IntValue`, `PairValue`),
so passes read `work.k_block` and `plan.grid` instead of unwrapping attributes."""

from __future__ import annotations

from typing import Any

from xdsl.dialects.builtin import I64, IntegerAttr, i64
from xdsl.irdl import IRDLOperation, opt_prop_def, prop_def

from spatial_dialect.sp.attrs import PairAttr

INT = IntegerAttr[I64]
"""The constraint of a number property: an i64 integer (prints bare, `8`, in a format)."""


def int_prop(name: str) -> Any:
    """An i64 property `name` (declare it as `name_attr = int_prop("name")`, with `name =
    IntValue("name")` beside it)."""
    return prop_def(INT, prop_name=name)


def opt_int_prop(name: str) -> Any:
    return opt_prop_def(INT, prop_name=name)


def pair_prop(name: str) -> Any:
    return prop_def(PairAttr, prop_name=name)


def opt_pair_prop(name: str) -> Any:
    return opt_prop_def(PairAttr, prop_name=name)


def int_attr(value: int | None) -> IntegerAttr | None:
    return None if value is None else IntegerAttr(value, i64)


def pair_attr(value: tuple[int, int] | None) -> PairAttr | None:
    return None if value is None else PairAttr(value[0], value[1])


def IntValue(name: str) -> Any:  # noqa: N802 (reads as a declaration beside the property)
    """A read-only accessor of the i64 property `name` as an int (None if absent)."""

    def get(op: IRDLOperation) -> int | None:
        attr = op.properties.get(name)
        return None if attr is None else attr.value.data  # type: ignore[attr-defined]

    return property(get)


def PairValue(name: str) -> Any:  # noqa: N802
    """A read-only accessor of the pair property `name` as (first, second) (None if absent)."""

    def get(op: IRDLOperation) -> tuple[int, int] | None:
        attr = op.properties.get(name)
        return None if attr is None else attr.values  # type: ignore[attr-defined]

    return property(get)
