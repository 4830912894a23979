"""Verify each distinct section once: the check of a pipeline's output on a many-layer model.

An 80-layer Llama-3-70B step has 1,766 sections, most of them one of ~25 shapes repeated per
layer with other tensor names (`@l0_q`, `@l1_q`, ...). Verifying a section is a function of its
contents alone: the program op is IsolatedFromAbove and a symbol table of its own, every rule of
verify.py and every op's verifier read the section's ops, their properties, attributes, operands
and result types, and the program's parent only through the block-terminator check. Names enter
those rules only by equality (a reference resolves to the op of that name in the section, two
references name the same tensor) and in messages; no rule compares a name with a constant or
reads a name's spelling. So two sections whose contents are equal once their names are renamed
consistently pass or fail together, and the second need not be checked.

`section_key` is that structural key. Every string a section holds is a slot: a name (a
`sym_name`, a symbol reference's parts) stands for its order of first appearance among the
section's names; any other string is kept literally, beside the index of the name it equals, if
any (so a string compared with a name compares the same in both). The renaming is a bijection
between the two sections' names, so every equality the rules can test agrees. A section with an
operand defined outside it (which IsolatedFromAbove refuses) has no key and is always verified.

`section_key_and_names` is the same key with each value's name hint added (the printer writes
them), beside the section's names in order of first appearance: passes/section_memo.py pairs two
sections' names by position to make one a renamed copy of the other.

`distinct_sections()` scopes the saving to one verification (passes/pipeline.verify_output runs
it on what the compiler produced): a key is remembered only after its section passed, and
forgotten on exit. A failure is therefore reported exactly as before: the first section that
fails is one whose key no earlier section passed with.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Hashable, Iterator

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Operation, ParametrizedAttribute

_passed: set[Hashable] | None = None
"""The keys of the sections that passed in the current `distinct_sections()` scope."""


@contextlib.contextmanager
def distinct_sections() -> Iterator[None]:
    """Within: a section with the key of one that already passed is not verified again."""
    global _passed
    outer, _passed = _passed, set()
    try:
        yield
    finally:
        _passed = outer


def verify_once(op: Operation, verify: Callable[[], None]) -> None:
    """Run `verify()` for section `op` unless, inside `distinct_sections()`, a section with the
    same key passed already."""
    passed = _passed
    if passed is None:
        verify()
        return
    key = section_key(op)
    if key is not None and key in passed:
        return
    verify()
    if key is not None:
        passed.add(key)


class _Slots:
    """The strings of one section, in order, and which of them are names."""

    __slots__ = ("strings", "names")

    def __init__(self) -> None:
        self.strings: list[tuple[bool, str]] = []  # (is a name, the string)
        self.names: dict[str, int] = {}

    def name(self, text: str) -> str:
        self.strings.append((True, text))
        self.names.setdefault(text, len(self.names))
        return "@"

    def string(self, text: str) -> str:
        self.strings.append((False, text))
        return '"'

    def pattern(self) -> tuple[Hashable, ...]:
        names = self.names
        return tuple(names[s] if is_name else (s, names.get(s)) for is_name, s in self.strings)


_FIELDS: dict[type, tuple[str, ...] | None] = {}
"""Per attribute class: its parameters' field names, or None for a data attribute (its value
is the key as it is). Reading fields by name skips ParametrizedAttribute.parameters'
definition lookup, the key's main cost."""


def attr_fields(t: type) -> tuple[str, ...] | None:
    if t not in _FIELDS:
        _FIELDS[t] = (
            tuple(f for f, _ in t.get_irdl_definition().parameters)  # type: ignore[attr-defined]
            if issubclass(t, ParametrizedAttribute)
            else None
        )
    return _FIELDS[t]


def _attr(a: Attribute, slots: _Slots) -> Hashable:
    t = type(a)
    if t is StringAttr:
        return slots.string(a.data)  # type: ignore[attr-defined]
    if t is SymbolRefAttr:
        return (
            t,
            slots.name(a.root_reference.data),  # type: ignore[attr-defined]
            tuple(slots.name(n.data) for n in a.nested_references),  # type: ignore[attr-defined]
        )
    if t is ArrayAttr:
        return (t, tuple([_attr(x, slots) for x in a.data]))  # type: ignore[attr-defined]
    if t is DictionaryAttr:
        return (t, _dict(a.data, slots))  # type: ignore[attr-defined]
    fields = _FIELDS[t] if t in _FIELDS else attr_fields(t)
    if fields is None:
        return a  # any other data: compared as it is (a string inside it, literally)
    return (t, tuple([_attr(getattr(a, f), slots) for f in fields]))


def _dict(d: dict[str, Attribute], slots: _Slots) -> tuple[Hashable, ...]:
    return tuple((k, _attr(v, slots)) for k, v in d.items())


def section_key(program: Operation) -> Hashable | None:
    """The section's contents with its names renamed by first appearance (the module
    docstring); None where an operand comes from outside the section."""
    keyed = _key(program, hints=False)
    return None if keyed is None else keyed[0]


def section_key_and_names(program: Operation) -> tuple[Hashable, list[str]] | None:
    """`section_key` for a copy to be made (passes/section_memo.py): the key also holds each
    value's name hint (the printer writes them), and beside it the section's names in order of
    first appearance, so that the names of two sections with one key pair up by position."""
    keyed = _key(program, hints=True)
    if keyed is None:
        return None
    key, slots = keyed
    return key, list(slots.names)


def _key(program: Operation, hints: bool) -> tuple[Hashable, _Slots] | None:
    slots = _Slots()
    index: dict[object, tuple[int, ...]] = {}
    parts: list[Hashable] = []
    blocks: dict[object, int] = {}
    block = program.parent
    region = None if block is None else block.parent
    # What Operation.verify reads of the program's parent: its terminator rule.
    parent = (
        type(program.parent_op()),
        block is not None and block.last_op is program,
        None if region is None else len(region.blocks),
    )
    for n, op in enumerate(program.walk()):
        for i, r in enumerate(op.results):
            index[r] = (n, i)
        for reg in op.regions:
            for b, blk in enumerate(reg.blocks):
                blocks[blk] = len(blocks)
                for i, arg in enumerate(blk.args):
                    index[arg] = (n, b, i, _attr(arg.type, slots))
        operands = []
        for v in op.operands:
            where = index.get(v)
            if where is None:
                return None
            operands.append(where)
        props = tuple(
            (
                k,
                slots.name(v.data)
                if k == "sym_name" and type(v) is StringAttr
                else _attr(v, slots),
            )  # type: ignore[attr-defined]
            for k, v in op.properties.items()
        )
        parts.append(
            (
                type(op),
                blocks.get(op.parent) if op is not program else None,
                props,
                _dict(op.attributes, slots),
                tuple(operands),
                tuple(_attr(r.type, slots) for r in op.results),
                tuple(len(r.blocks) for r in op.regions),
                len(op.successors),
            )
        )
        if hints:
            parts.append(
                (
                    tuple(r.name_hint for r in op.results),
                    tuple(a.name_hint for reg in op.regions for b in reg.blocks for a in b.args),
                )
            )
    return (parent, tuple(parts), slots.pattern()), slots
