"""The custom directives of the sp ops' assembly formats (`custom<Pair>($tile)`, ...).

Each directive prints one property (or a symbol and an access pattern) in the short form the
sp text uses (`8x8`, `[h, kw]`, `[r0, k0] x [h, kw]`, `[0, 7]x[0, 9]`, `movement 1 noc 0`),
where the attribute's own syntax (`#sp.pair<8x8>`, used by the generic form) would be noisier.
A directive is anchorable exactly when its property is optional, so it can anchor an optional
group: `(`over` custom<Pair>($over)^)?`.
"""

from __future__ import annotations

import struct
from typing import cast

from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    SymbolRefAttr,
    f32,
    i64,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute
from xdsl.irdl import IRDLOperation
from xdsl.irdl.declarative_assembly_format import (
    AttributeVariable,
    CustomDirective,
    ParsingState,
    PrintingState,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer

from spatial_dialect.sp.attrs import (
    AccessAttr,
    EngineAttr,
    PairAttr,
    RectAttr,
    SizesAttr,
    parse_pair,
    parse_site_map,
    site_map_text,
)


class OneAttr(CustomDirective):
    """A directive over one property `attr`: `value` parses it, `text` prints it."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        raise NotImplementedError

    def text(self, attr: Attribute) -> str:
        raise NotImplementedError

    def is_present(self, op: IRDLOperation) -> bool:
        return self.attr.is_present(op)

    def is_anchorable(self) -> bool:
        return self.attr.is_anchorable()

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.attr.set(state, self.value(parser))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        attr = self.attr.get(op)
        if attr is None:
            return
        state.print_whitespace(printer)
        printer.print_string(self.text(attr))


@irdl_custom_directive
class Pair(OneAttr):
    """`8x8`: a PairAttr."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return PairAttr(*parse_pair(parser, "a pair AxB"))

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, PairAttr)
        return attr.text()


@irdl_custom_directive
class Sizes(OneAttr):
    """`[h, kw]`: sizes in the size symbols."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return SizesAttr.parse_body(parser)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, SizesAttr)
        return attr.text()


@irdl_custom_directive
class Size(OneAttr):
    """`subs`: one size (a depth), without brackets."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return SizesAttr.parse_scalar(parser)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, SizesAttr)
        return attr.scalar_text()


@irdl_custom_directive
class Rect(OneAttr):
    """`[0, 7]x[0, 9]`: a site rectangle."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return RectAttr.parse_body(parser)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, RectAttr)
        return attr.text()


@irdl_custom_directive
class Engine(OneAttr):
    """`compute` or `movement 1 noc 0`."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return EngineAttr.parse_body(parser)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, EngineAttr)
        return attr.text()


@irdl_custom_directive
class SiteMap(OneAttr):
    """`y * 8 + x`: an affine function of the site's x and y."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return AffineMapAttr(parse_site_map(parser))

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, AffineMapAttr)
        return site_map_text(attr.data)


@irdl_custom_directive
class Offsets(OneAttr):
    """`{in0 = 0 depth 8, in1 = 32768, out = 65536}`: each buffer's offset by label, and its
    depth on this range where it is not the buffer's own (an `i64` offset, or an `array<i64:
    offset, depth>` in the generic form)."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        def entry() -> tuple[str, Attribute]:
            key = parser.parse_identifier()
            parser.parse_punctuation("=")
            offset = parser.parse_integer(allow_negative=False)
            if parser.parse_optional_keyword("depth") is None:
                return key, IntegerAttr(offset, i64)
            depth = parser.parse_integer(allow_negative=False)
            return key, DenseArrayBase.from_list(i64, (offset, depth))

        return DictionaryAttr(
            dict(parser.parse_comma_separated_list(parser.Delimiter.BRACES, entry))
        )

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, DictionaryAttr)

        def entry(key: str, value: Attribute) -> str:
            if isinstance(value, IntegerAttr):
                return f"{key} = {value.value.data}"
            offset, depth = cast(DenseArrayBase[IntegerType], value).get_values()
            return f"{key} = {offset} depth {depth}"

        return "{" + ", ".join(entry(k, v) for k, v in attr.data.items()) + "}"


def _f32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def float_text(x: float) -> str:
    """The shortest scientific form that reads back as the same f32 (at most nine digits)."""
    for digits in range(9):
        text = f"{x:.{digits}e}"
        if _f32(float(text)) == _f32(x):
            return text.replace("e", ".0e", 1) if digits == 0 else text
    return f"{x:.8e}"


@irdl_custom_directive
class F32(OneAttr):
    """`1.0e-05`: an f32 in its shortest exact form."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        return FloatAttr(parser.parse_float(), f32)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, FloatAttr)
        return float_text(attr.value.data)


@irdl_custom_directive
class Symbols(OneAttr):
    """`(@a, @b)`: names of symbols (stored as strings)."""

    attr: AttributeVariable

    def value(self, parser: Parser) -> Attribute:
        names = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_symbol_name)
        return ArrayAttr(names)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, ArrayAttr)
        return "(" + ", ".join(f"@{s.data}" for s in attr.data) + ")"  # type: ignore[attr-defined]


def _words(parser: Parser, delimiter: Parser.Delimiter) -> list[str]:
    return parser.parse_comma_separated_list(delimiter, parser.parse_identifier)


class EnumList(OneAttr):
    """A list of enum words; subclasses name the enum attribute (`ENUM`) and the brackets."""

    attr: AttributeVariable
    ENUM: type[EnumAttribute] = EnumAttribute  # type: ignore[type-arg]
    BRACKETS = True

    def value(self, parser: Parser) -> Attribute:
        delimiter = parser.Delimiter.SQUARE if self.BRACKETS else parser.Delimiter.NONE
        enum = self.ENUM.enum_type
        words: list[Attribute] = []
        for word in _words(parser, delimiter):
            if word not in enum.__members__.values():
                parser.raise_error(f"expected one of {', '.join(enum)}, got {word}")
            words.append(self.ENUM(enum(word)))
        return ArrayAttr(words)

    def text(self, attr: Attribute) -> str:
        assert isinstance(attr, ArrayAttr)
        words = ", ".join(str(a.data) for a in attr.data)  # type: ignore[attr-defined]
        return f"[{words}]" if self.BRACKETS else words


def symbol_text(ref: SymbolRefAttr) -> str:
    return f"@{ref.root_reference.data}"


@irdl_custom_directive
class TensorAccess(CustomDirective):
    """`@a[r0, k0] x [h, kw]`: a DRAM tensor and the access pattern into it."""

    tensor: AttributeVariable
    access: AttributeVariable

    def parse(self, parser: Parser, state: ParsingState) -> None:
        self.tensor.set(state, SymbolRefAttr(parser.parse_symbol_name()))
        self.access.set(state, AccessAttr.parse_body(parser))

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        tensor, access = self.tensor.get(op), self.access.get(op)
        assert isinstance(tensor, SymbolRefAttr) and isinstance(access, AccessAttr)
        state.print_whitespace(printer)
        printer.print_string(symbol_text(tensor) + access.text())
