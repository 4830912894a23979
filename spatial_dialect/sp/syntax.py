"""The custom syntax shared by the sp ops: the `attributes {...}` that may end an op's form,
`keyword N` lists of integers and f32 scalars, and lists of buffer operands."""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TypeVar

from xdsl.dialects.builtin import FloatAttr, IntAttr, f32
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer

from spatial_dialect.sp.attrs import BUFFER

OpT = TypeVar("OpT", bound=Operation)


def print_attr_dict(op: Operation, printer: Printer) -> None:
    printer.print_op_attributes(op.attributes, print_keyword=True)


def parse_attr_dict(parser: Parser) -> dict[str, Attribute]:
    attrs = parser.parse_optional_attr_dict_with_keyword()
    return dict(attrs.data) if attrs is not None else {}


def with_attrs(op: OpT, parser: Parser) -> OpT:
    """The op parsed so far, with the `attributes {...}` that may end its custom form."""
    op.attributes.update(parse_attr_dict(parser))
    return op


def parse_numbers(parser: Parser, keywords: Sequence[str]) -> list[int]:
    """`kw1 N1 kw2 N2 ...`: non-negative integers, each after its keyword."""
    values = []
    for keyword in keywords:
        parser.parse_keyword(keyword)
        values.append(parser.parse_integer(allow_negative=False))
    return values


def numbers_text(pairs: Sequence[tuple[str, int]]) -> str:
    return "".join(f" {keyword} {value}" for keyword, value in pairs)


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def float_text(value: FloatAttr) -> str:
    """The shortest scientific form that reads back as the same f32 (at most nine digits)."""
    x = value.value.data
    for digits in range(9):
        text = f"{x:.{digits}e}"
        if _f32(float(text)) == _f32(x):
            return text.replace("e", ".0e", 1) if digits == 0 else text
    return f"{x:.8e}"


def _parse_f32(parser: Parser) -> FloatAttr:
    return FloatAttr(parser.parse_float(), f32)


def parse_props(parser: Parser, numbers: Sequence[str], floats: Sequence[str] = ()) -> dict:
    """`kw N kw N ... [fkw F]...`: the integer keywords in order, then any float keywords given."""
    props: dict[str, Attribute] = {}
    for keyword in numbers:
        parser.parse_keyword(keyword)
        props[keyword] = IntAttr(parser.parse_integer(allow_negative=False))
    for keyword in floats:
        if parser.parse_optional_keyword(keyword):
            props[keyword] = _parse_f32(parser)
    return props


def props_text(op: Operation, numbers: Sequence[str], floats: Sequence[str] = ()) -> str:
    text = "".join(f" {k} {op.properties[k].data}" for k in numbers)  # type: ignore[attr-defined]
    for k in floats:
        value = op.properties.get(k)
        if isinstance(value, FloatAttr):
            text += f" {k} {float_text(value)}"
    return text


def parse_operands(parser: Parser) -> list[SSAValue]:
    return parser.parse_comma_separated_list(
        parser.Delimiter.NONE, lambda: parser.parse_operand(BUFFER)
    )


def print_operands(printer: Printer, values: Sequence[SSAValue]) -> None:
    for i, v in enumerate(values):
        printer.print_string(", " if i else " ")
        printer.print_operand(v)
