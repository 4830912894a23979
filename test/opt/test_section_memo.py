"""spatial-pipeline tiles, places, fuses and sizes each distinct linked section once and copies the
result, renamed, for the sections equal to it up to their names (passes/section_memo.py). The
memoised compile must print exactly what compiling every section itself prints: here a
three-layer decode step of examples/generate.py's tiny model, whose layers repeat each other's
sections under other names, on several targets; and where a pass writes a section's name into
a string, which a renamed copy would get wrong, the memo must fall back to the passes."""

from __future__ import annotations

import sys
from io import StringIO
from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp, StringAttr

from spatial_dialect.passes import pipeline, place, section_memo
from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.frontend.fast_printer import FastPrinter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def step() -> str:
    sys.path.insert(0, str(EXAMPLES))
    import generate

    return generate.decode_step_program(generate.TINY, 1, 64, layers=3)


def printed(module: ModuleOp) -> str:
    out = StringIO()
    FastPrinter(stream=out).print_op(module)
    return out.getvalue()


@pytest.fixture
def memos(monkeypatch) -> list[section_memo.Memo]:
    """The memo of each compile that follows."""
    seen: list[section_memo.Memo] = []
    real = section_memo.once_per_distinct_section

    def spy(module):  # type: ignore[no-untyped-def]
        cm = real(module)

        class Wrapped:
            def __enter__(self):  # type: ignore[no-untyped-def]
                memo = cm.__enter__()
                seen.append(memo)
                return memo

            def __exit__(self, *exc):  # type: ignore[no-untyped-def]
                return cm.__exit__(*exc)

        return Wrapped()

    monkeypatch.setattr(pipeline, "once_per_distinct_section", spy)
    return seen


@pytest.mark.parametrize("target", ["wormhole_n150", "h200", "t3k"])
def test_memoised_prints_what_every_section_compiled_prints(step, target, memos):
    memoised = printed(compile_module(step, target))
    with section_memo.unmemoised():
        plain = printed(compile_module(step, target))
    assert memoised == plain
    (memo, unmemoised) = memos
    # Layers 1 and 2 repeat most of layer 0's sections (not the caches: their notes name them).
    sections = memoised.count("sp.program @")
    assert len(memo.copies) > sections // 3 and not memo.redo
    assert not unmemoised.copies
    assert {c.section.sym_name.data for c in memo.copies} >= {"l1_q", "l2_q", "l2_down"}


def test_a_name_written_into_a_string_is_not_copied(step, monkeypatch, memos):
    """A pass that writes the section's name into a literal string: a renamed copy would keep
    the first section's name there, so each such section goes through the passes itself."""
    real = place.place_section

    def naming(program, target, rewriter):  # type: ignore[no-untyped-def]
        real(program, target, rewriter)
        program.attributes["placed"] = StringAttr(f"@{program.sym_name.data} placed")

    monkeypatch.setattr(place, "place_section", naming)
    memoised = printed(compile_module(step, "wormhole_n150"))
    with section_memo.unmemoised():
        plain = printed(compile_module(step, "wormhole_n150"))
    assert memoised == plain
    assert '"@l2_q placed"' in memoised
    memo = memos[0]
    assert memo.redo and {p.sym_name.data for p in memo.redo} >= {"l1_q", "l2_q"}


def test_a_value_named_after_a_name_is_not_copied(step):
    """A value's name hint a pass derives from one of the section's names (`f"{name}_in"`) is
    not one of the names a copy renames: such a section is not copied."""
    module = compile_module(step, "wormhole_n150")
    (program,) = [
        op for op in module.body.block.ops if getattr(op, "sym_name", None) == StringAttr("l1_q")
    ]
    names = {t.sym_name.data for t in program.tensors()}
    assert section_memo._renames_cleanly(program, names)
    tensor = program.tensors()[0].sym_name.data
    program.buffers()[0].results[0].name_hint = f"{tensor}_in"
    assert not section_memo._renames_cleanly(program, names)
    assert section_memo._renames_cleanly(program, names - {tensor})
