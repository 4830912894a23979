"""Builds one `func.func` of tg ops with the ops' own Python builders, and prints functions as
the shipped programs lay them out.

`FunctionBuilder` grows a function in the order a model reads: an argument is declared when a
layer first asks for it (so a program's signature lists the weights in the order the layers use
them), an op is appended when it is built, and every value carries the name it is printed with
(the SSA name is the name a report, a plan and `spatial-run --weights` key on, so it is chosen
here, never left to the printer's numbering). The result types come from the builders' own
inference, so a program cannot state a type the op would refuse.

`print_functions` prints with xDSL's printer, but lays a signature out one argument a line when
it does not fit in 100 columns: a decode step has hundreds of arguments, and one a line is what a
person reads and what a diff of two programs shows argument by argument. An f32 constant is
written with 7 significant digits when they read back as the same f32 (`scale 1.767767e-01`,
where xDSL tries 6 and then falls back to 9, `0.176776707`): the programs have always been
written so, and a refusal quotes the op's line, so the spelling is part of what a user sees.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from io import StringIO

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    TensorType,
    i8,
    i32,
)
from xdsl.dialects.utils import print_func_argument
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.printer import Printer

ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": BFloat16Type(),
    "f16": Float16Type(),
    "f32": Float32Type(),
    "i8": i8,
    "i32": i32,
}
"""The element types a program is written in, by the name a model's configuration uses."""

LINE = 100
"""The columns a signature is kept on one line within (the project's line length)."""


class ProgramPrinter(Printer):
    """xDSL's printer, with an f32 written in 7 significant digits when they are exact."""

    def print_float(self, value: float, type: AnyFloat) -> None:
        if isinstance(type, Float32Type) and math.isfinite(value):
            seven = f"{value:.6e}"
            if type.unpack(type.pack([float(seven)]), 1)[0] == value:
                self.print_string(seven)
                return
        super().print_float(value, type)


def tensor(*shape: int, elt: str = "bf16") -> TensorType:
    return TensorType(ELEMENT_TYPES[elt], shape)


class FunctionBuilder:
    """One func.func being built: arguments as they are first asked for, ops in order."""

    def __init__(self) -> None:
        self.block = Block()
        self._attributes: list[dict[str, Attribute]] = []
        self._by_name: dict[str, SSAValue] = {}

    def argument(
        self, name: str, type: Attribute, attributes: Mapping[str, Attribute] | None = None
    ) -> SSAValue:
        """A new argument `%name`; a name is one tensor, so a second declaration is a bug."""
        value = self.block.insert_arg(type, len(self.block.args))
        self._name(value, name)
        self._attributes.append(dict(attributes or {}))
        return value

    def shared_argument(
        self, name: str, type: Attribute, attributes: Mapping[str, Attribute] | None = None
    ) -> SSAValue:
        """An argument every layer reads (the rope tables, the position): declared by the first
        layer that asks, the same value for the others."""
        if name in self._by_name:
            return self._by_name[name]
        return self.argument(name, type, attributes)

    def op(self, name: str, op: Operation) -> SSAValue:
        """Append `op` and name its one result `%name`."""
        (result,) = self.ops([name], op)
        return result

    def ops(self, names: Sequence[str], op: Operation) -> tuple[SSAValue, ...]:
        """Append `op` of several results (an output and a carried state) and name them."""
        if len(names) != len(op.results):
            raise ValueError(f"{op.name} has {len(op.results)} result(s), named {list(names)}")
        self.block.add_op(op)
        for result, name in zip(op.results, names, strict=True):
            self._name(result, name)
        return tuple(op.results)

    def _name(self, value: SSAValue, name: str) -> None:
        """Name `value` `%name`, which must be the name it is printed with: the printer would
        rename a second value of the name (`%q_1`), and xDSL drops a `_N` suffix from a name
        hint (it stands for the printer's own numbering), so either would silently print
        another name than the one a plan, a report and --weights look for."""
        if name in self._by_name:
            raise ValueError(f"%{name} names two values; a name is one tensor")
        value.name_hint = name
        if value.name_hint != name:
            raise ValueError(f"%{name}: xDSL would print it as %{value.name_hint}_N")
        self._by_name[name] = value

    def function(self, name: str, results: Sequence[SSAValue]) -> func.FuncOp:
        """The finished `func.func @name` returning `results`."""
        self.block.add_op(func.ReturnOp(*results))
        inputs = [arg.type for arg in self.block.args]
        outputs = [r.type for r in results]
        arg_attrs = None
        if any(self._attributes):
            arg_attrs = ArrayAttr([DictionaryAttr(a) for a in self._attributes])
        return func.FuncOp(name, (inputs, outputs), Region(self.block), arg_attrs=arg_attrs)


def print_functions(functions: Iterable[func.FuncOp]) -> str:
    """The functions as one program's text: blank-line separated, at the top level (the parser
    wraps top-level ops in a module)."""
    return "\n".join(_print_function(f) for f in functions)


def _print_function(function: func.FuncOp) -> str:
    out = StringIO()
    printer = ProgramPrinter(stream=out)
    args = function.body.block.args
    attrs = function.arg_attrs.data if function.arg_attrs else [None] * len(args)

    def signature(separator: str) -> None:
        printer.print_string(f"func.func @{function.sym_name.data}(")
        if separator != ", ":
            printer.print_string(separator.lstrip(","))
        for i, (arg, arg_attrs) in enumerate(zip(args, attrs, strict=True)):
            if i:
                printer.print_string(separator)
            print_func_argument(printer, arg, arg_attrs if arg_attrs and arg_attrs.data else None)
        printer.print_string(") -> ")
        outputs = function.function_type.outputs.data
        if len(outputs) == 1:
            printer.print_attribute(outputs[0])
        else:
            printer.print_string("(")
            printer.print_list(outputs, printer.print_attribute)
            printer.print_string(")")
        if function.attributes:  # a decision the importer records (tg.page_size)
            printer.print_string(" attributes ")
            printer.print_attr_dict(function.attributes)
        printer.print_string(" {\n")

    signature(", ")
    if len(out.getvalue()) > LINE + 1:  # with its newline
        out.seek(0)
        out.truncate()
        printer = ProgramPrinter(stream=out)  # names are given out again, from scratch
        signature(",\n    ")
    for op in function.body.block.ops:
        printer.print_string("  ")
        printer.print_op(op)
        printer.print_string("\n")
    printer.print_string("}\n")
    return out.getvalue()
