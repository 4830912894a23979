"""Tile, place, fuse and size each distinct section once: a linked section that equals an earlier
one up to its names becomes a renamed copy of that one's result.

An 80-layer Llama-3-70B step links 1,766 sections, most of them one of a few dozen repeated per
layer with other tensor names (`@l0_q`, `@l1_q`, ...). What tile, place, fuse-operands and
size-buffers decide for a section reads only that section and what is the same for the whole
module, checked pass by pass:

- tile (`tile_section`): the section's kind, tensors, stages and buffers; the target; the
  options fidelity, accumulate and split-k. Its ranking memo (`RankedBefore`) is keyed by shape
  and plan facts, so it returns what a fresh ranking would.
- place (`place_section`): the section's plan, work and kind; the target.
- fuse-operands (`fuse_section` and `JoinMulticastGroup`): the section's loads, FIFOs and site
  ranges; the target. The rewrite walker acts on one load at a time inside its own section.
- size-buffers (`size_section`): the section's plan, work, buffers and site ranges; the target.
  No pass sums anything across sections (the DRAM layout is link's, before this).

So the four passes map a section to the same result whatever section came before it, and two
linked sections with one `section_key_and_names` key (equal up to a consistent renaming of their
names, value name hints included, since the printer writes them) come out of them equal up to
the same renaming, if the passes use names only by reference. That last condition is checked
on each distinct section's result rather than assumed: where a string there that is not one of
the section's own names (a new symbol, a literal, a name hint, a data attribute's text) holds
one of the names a copy renames, the copy is not made and its section goes through the passes
itself. Nothing else changes: the sections stay in module order, a copy keeps its own section's
location, and a refusal is raised at the first section that refuses, as before (a section
refusing means the first of its key refuses, and that one is processed).

`once_per_distinct_section` detaches the later sections of each key for the passes' run and puts
the renamed copies in their places afterwards; `unmemoised` turns it off (the tests compare
both).
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp, StringAttr, SymbolRefAttr
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from spatial_dialect.sp.distinct import attr_fields, section_key_and_names
from spatial_dialect.sp.program import ProgramOp

_enabled = True


@contextlib.contextmanager
def unmemoised() -> Iterator[None]:
    """Within: every section goes through the passes itself (what the memo must reproduce)."""
    global _enabled
    outer, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = outer


@dataclass
class _Copy:
    section: ProgramOp
    """The linked section, detached while the passes run."""
    first: ProgramOp
    """The first section of its key, which the passes do process."""
    names: dict[str, str]
    """The first's names to this one's, where they differ."""


@dataclass
class Memo:
    """What `once_per_distinct_section` did: the sections it copied and those it could not."""

    copies: list[_Copy] = field(default_factory=list)
    redo: list[ProgramOp] = field(default_factory=list)
    """Sections put back linked because a copy could not be made (the module docstring): the
    caller runs the passes again, which take only these."""


@contextlib.contextmanager
def once_per_distinct_section(module: ModuleOp) -> Iterator[Memo]:
    """Around the passes after link: the later linked sections of each key are detached before
    and come back as renamed copies of the first after (the module docstring)."""
    memo = Memo()
    if not _enabled:
        yield memo
        return
    block = module.body.block
    order = list(block.ops)
    firsts: dict[object, tuple[ProgramOp, list[str]]] = {}
    for op in order:
        if type(op) is not ProgramOp:
            continue
        keyed = section_key_and_names(op)
        if keyed is None:
            continue
        key, names = keyed
        seen = firsts.get(key)
        if seen is None:
            firsts[key] = (op, names)
            continue
        first, first_names = seen
        renames = {a: b for a, b in zip(first_names, names, strict=True) if a != b}
        memo.copies.append(_Copy(op, first, renames))
    copied = {id(c.section): c for c in memo.copies}
    for c in memo.copies:
        block.detach_op(c.section)
    try:
        yield memo
    except BaseException:
        _put_back(block, order, copied, lambda c: c.section)
        raise
    varying: dict[int, tuple[ProgramOp, set[str]]] = {}
    for c in memo.copies:
        varying.setdefault(id(c.first), (c.first, set()))[1].update(c.names)
    # Per first section: where its result holds a name some copy renames (None: a copy cannot
    # be made by renaming, the module docstring).
    # A first section a pass replaced rather than changed in place is not copied either.
    plans = {
        i: _rename_plan(first, names)
        if first.parent is block and _renames_cleanly(first, names)
        else None
        for i, (first, names) in varying.items()
    }

    def placed(c: _Copy) -> Operation:
        plan = plans[id(c.first)]
        if plan is None:
            memo.redo.append(c.section)
            return c.section
        copy = renamed_clone(c.first, c.names, plan)
        copy.location = c.section.location
        return copy

    _put_back(block, order, copied, placed)


def _put_back(
    block: Block,
    order: list[Operation],
    copied: dict[int, _Copy],
    make: Callable[[_Copy], Operation],
) -> None:
    """Each detached section's replacement (`make`) in its place of `order`, after the op
    before it that is still in the block."""
    prev: Operation | None = None
    for op in order:
        c = copied.get(id(op))
        if c is None:
            if op.parent is block:
                prev = op
            continue
        new = make(c)
        if prev is None:
            if block.first_op is None:
                block.add_op(new)
            else:
                block.insert_op_before(new, block.first_op)
        else:
            block.insert_op_after(new, prev)
        prev = new


# ── Renaming ─────────────────────────────────────────────────────────────────────────────────


_Plan = list[tuple[int, bool, str]]
"""Where a section holds names to rename: (op's index in the walk, a property?, its key)."""


def _rename_plan(program: ProgramOp, names: set[str] | dict[str, str]) -> _Plan:
    plan: _Plan = []
    for n, op in enumerate(program.walk()):
        for k, v in op.properties.items():
            if k == "sym_name" and type(v) is StringAttr:
                if v.data in names:
                    plan.append((n, True, k))
            elif _holds(v, names):
                plan.append((n, True, k))
        plan.extend((n, False, k) for k, v in op.attributes.items() if _holds(v, names))
    return plan


def _holds(a: Attribute, names: set[str] | dict[str, str]) -> bool:
    """Whether `a` holds a reference to one of `names`."""
    t = type(a)
    if t is StringAttr:
        return False
    if t is SymbolRefAttr:
        return a.root_reference.data in names or any(  # type: ignore[attr-defined]
            n.data in names
            for n in a.nested_references  # type: ignore[attr-defined]
        )
    if t is ArrayAttr:
        return any(_holds(x, names) for x in a.data)  # type: ignore[attr-defined]
    if t is DictionaryAttr:
        return any(_holds(x, names) for x in a.data.values())  # type: ignore[attr-defined]
    return any(_holds(getattr(a, f), names) for f in attr_fields(t) or ())


def renamed_clone(
    program: ProgramOp, names: dict[str, str], plan: _Plan | None = None
) -> ProgramOp:
    """A clone of `program` with every name in `names` (a symbol's own, a reference's parts)
    replaced by its image; literal strings are kept. `plan`: where `program` holds the names
    (`_rename_plan`), if known."""
    copy, ops = _clone(program)
    if not names:
        return copy
    if plan is None:
        plan = _rename_plan(program, names)
    for n, is_prop, k in plan:
        held = ops[n].properties if is_prop else ops[n].attributes
        v = held[k]
        if k == "sym_name" and is_prop and type(v) is StringAttr:
            if v.data in names:
                held[k] = StringAttr(names[v.data])
        else:
            held[k] = _renamed(v, names)
    return copy


def _clone(program: ProgramOp) -> tuple[ProgramOp, list[Operation]]:
    """`program.clone()` and its ops in walk order. A section's body is one block of ops without
    regions or successors (every sp op but the program): cloned in one pass over it, about half
    of xDSL's general clone, which walks the ops twice (operands are set after the regions)."""
    body = program.body
    flat = len(body.blocks) == 1 and not body.block.args
    if flat:
        flat = all(not op.regions and not op.successors for op in body.block.ops)
    if not flat:
        copy = program.clone()
        return copy, list(copy.walk())
    values: dict[SSAValue, SSAValue] = {}
    ops: list[Operation] = []
    for op in body.block.ops:
        new = type(op).create(
            operands=[values.get(v, v) for v in op.operands],
            result_types=[r.type for r in op.results],
            properties=op.properties,
            attributes=op.attributes,
            location=op.location,
        )
        for old, res in zip(op.results, new.results, strict=True):
            values[old] = res
            res.name_hint = old.name_hint
        ops.append(new)
    copy = type(program).create(
        properties=program.properties,
        attributes=program.attributes,
        location=program.location,
        regions=[Region(Block(ops))],
    )
    return copy, [copy, *ops]


def _renamed(a: Attribute, names: dict[str, str]) -> Attribute:
    t = type(a)
    if t is StringAttr:
        return a
    if t is SymbolRefAttr:
        root = a.root_reference.data  # type: ignore[attr-defined]
        nested = [n.data for n in a.nested_references]  # type: ignore[attr-defined]
        if root not in names and not any(n in names for n in nested):
            return a
        return SymbolRefAttr(names.get(root, root), [names.get(n, n) for n in nested])
    if t is ArrayAttr:
        items = [_renamed(x, names) for x in a.data]  # type: ignore[attr-defined]
        if all(x is y for x, y in zip(items, a.data, strict=True)):  # type: ignore[attr-defined]
            return a
        return ArrayAttr(items)
    if t is DictionaryAttr:
        entries = {k: _renamed(v, names) for k, v in a.data.items()}  # type: ignore[attr-defined]
        if all(entries[k] is v for k, v in a.data.items()):  # type: ignore[attr-defined]
            return a
        return DictionaryAttr(entries)
    fields = attr_fields(t)
    if fields is None:
        return a
    params = [getattr(a, f) for f in fields]
    new = [_renamed(p, names) for p in params]
    if all(x is y for x, y in zip(new, params, strict=True)):
        return a
    return t.new(new)  # type: ignore[attr-defined]


def _renames_cleanly(program: ProgramOp, varying: set[str]) -> bool:
    """Whether renaming `varying` in `program` (a processed section) renames everything a pass
    derived from those names: no symbol the passes named and no value's name hint holds one of
    them (`f"{name}_x"`), and no literal string mentions one as a word (`"in place: @l0_k"`).
    Other data attributes (numbers, enums, affine maps) hold no names."""
    if not varying:
        return True
    derived: list[str] = []
    literal: list[str] = []
    for op in program.walk():
        for k, v in op.properties.items():
            if k == "sym_name" and type(v) is StringAttr:
                if v.data not in varying:
                    derived.append(v.data)
                continue
            _texts(v, varying, derived, literal)
        for v in op.attributes.values():
            _texts(v, varying, derived, literal)
        derived.extend(r.name_hint for r in op.results if r.name_hint)
    if any(v in s for s in derived for v in varying):
        return False
    alternatives = "|".join(re.escape(v) for v in sorted(varying, key=len, reverse=True))
    word = re.compile(rf"(?<![\w$.-])(?:{alternatives})(?![\w$.-])")
    return not any(word.search(s) for s in literal)


def _texts(a: Attribute, varying: set[str], derived: list[str], literal: list[str]) -> None:
    t = type(a)
    if t is StringAttr:
        literal.append(a.data)  # type: ignore[attr-defined]
    elif t is SymbolRefAttr:
        for n in (a.root_reference, *a.nested_references):  # type: ignore[attr-defined]
            if n.data not in varying:
                derived.append(n.data)
    elif t is ArrayAttr:
        for x in a.data:  # type: ignore[attr-defined]
            _texts(x, varying, derived, literal)
    elif t is DictionaryAttr:
        for x in a.data.values():  # type: ignore[attr-defined]
            _texts(x, varying, derived, literal)
    else:
        for f in attr_fields(t) or ():
            _texts(getattr(a, f), varying, derived, literal)
