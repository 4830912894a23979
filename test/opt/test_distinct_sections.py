"""The pipeline's output check verifies each distinct section once (sp/distinct.py): a section
equal to one that passed up to a consistent renaming of its names is skipped, and only that.
The copies here are a compiled GEMM section printed and renamed as text, so each is exactly what
the parser gives for that text."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from spatial_dialect.passes.pipeline import compile_module, default_context, verify_output
from spatial_dialect.sp import program as program_module
from spatial_dialect.sp.distinct import section_key
from spatial_dialect.sp.errors import InternalError
from spatial_dialect.sp.program import ProgramOp
from spatial_dialect.tools.frontend.fast_printer import FastPrinter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def section() -> str:
    """The text of gemm_small's one sized section (@c over @a, @b, group @in1_columns)."""
    from io import StringIO

    module = compile_module((EXAMPLES / "gemm_small.mlir").read_text(), target="wormhole_n150")
    (program,) = [op for op in module.body.block.ops if isinstance(op, ProgramOp)]
    out = StringIO()
    FastPrinter(stream=out).print_op(program)
    return out.getvalue()


def renamed(text: str, suffix: str) -> str:
    return re.sub(r"@(\w+)", rf"@\1{suffix}", text)


def parse(*sections: str) -> ModuleOp:
    return Parser(
        default_context(), "builtin.module {\n" + "\n".join(sections) + "\n}"
    ).parse_module()


def keys(*sections: str) -> list[object]:
    # a section after them: the last op of a block is one the terminator rule looks at
    module = parse(*sections, renamed(sections[0], "_end"))
    return [section_key(op) for op in module.body.block.ops][:-1]


def test_a_renamed_copy_has_the_same_key(section):
    first, second = keys(section, renamed(section, "_l1"))
    assert first is not None and first == second


def test_a_changed_number_or_literal_string_changes_the_key(section):
    assert "in0 = 57344" in section and 'sp.fifo "in0" depth 2' in section
    for changed in (
        section.replace("in0 = 57344", "in0 = 57345"),
        section.replace('sp.fifo "in0" depth 2', 'sp.fifo "in0" depth 3'),
        section.replace('op "tg.matmul"', 'op "tg.matmul2"'),
    ):
        first, second = keys(section, renamed(changed, "_l1"))
        assert first != second


def test_the_renaming_keeps_which_names_are_equal(section):
    # @b read where @a was: two loads of one tensor is not two loads of two tensors
    assert "sp.load @a[r0, k0]" in section
    same = section.replace("sp.load @a[r0, k0]", "sp.load @b[r0, k0]")
    first, second = keys(section, renamed(same, "_l1"))
    assert first != second


def test_a_string_equal_to_a_name_is_not_renamed_away(section):
    # the copy's "a" no longer equals its tensor @a_l1: the check could tell them apart
    noted = section.replace("tile 32x32 {", 'tile 32x32 attributes {note = "a"} {', 1)
    first, second = keys(noted, renamed(noted, "_l1").replace('note = "a_l1"', 'note = "a"'))
    assert first != second
    # a string is kept as it is: "a" and "a_l1" differ, and a string no name equals matches
    first, second = keys(noted, renamed(noted, "_l1"))
    assert first != second
    other = noted.replace('note = "a"', 'note = "z"')
    first, second = keys(other, renamed(other, "_l1"))
    assert first == second


def test_verify_output_checks_a_copy_once_and_a_broken_copy_fully(section, monkeypatch):
    calls: list[str] = []
    real = program_module.verify_program

    def counted(p):
        calls.append(p.sym_name.data)
        real(p)

    monkeypatch.setattr(program_module, "verify_program", counted)
    copies = [renamed(section, f"_l{n}") for n in (1, 2, 3)]
    verify_output(parse(section, *copies), "test")
    # the last is checked too: whether a section ends its block is part of its key (the
    # terminator rule reads it)
    assert calls == ["c", "c_l3"]
    # outside the pipeline's output check every section is verified, as before
    calls.clear()
    parse(section, renamed(section, "_l1")).verify()
    assert calls == ["c", "c_l1"]
    # a copy whose in0 overlaps in1 (both at offset 0) is not the section that passed
    calls.clear()
    broken = renamed(section.replace("in0 = 57344", "in0 = 0"), "_l1")
    with pytest.raises(InternalError, match="overlap"):
        verify_output(parse(section, broken, copies[1]), "test")
    assert calls == ["c", "c_l1"]
