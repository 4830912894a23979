"""Which sections a pass takes, and where its refusals are reported.

A pass is the identity on its own output and refuses input that has not reached its phase: each
section records its phase (`sp.program`'s `phase`), so a pass asks the section, never its stages
(`takes`, `sections_taken`). A refusal raised while a pass works on a section is reported at that
section with the module printed around it (`refusals_at`), never as a bare traceback. A pass
after link refuses a module that still holds tg ops at the first of them (`refuse_unlinked`).

Every pass imports this module and it imports no pass, so no pass imports a later one for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from xdsl.dialects.builtin import ModuleOp

from spatial_dialect import sp, tg
from spatial_dialect.sp import Phase
from spatial_dialect.sp.errors import WrongPhase


def programs(module: ModuleOp) -> Iterator[sp.ProgramOp]:
    for op in module.walk():
        if isinstance(op, sp.ProgramOp):
            yield op


def takes(program: sp.ProgramOp, pass_name: str, expected: Phase) -> bool:
    """Whether `pass_name` (which takes `expected` programs) has work to do on `program`: False
    when it already ran (the pass is the identity on its own output), WrongPhase when the program
    has not reached `expected` yet."""
    phase = program.phase_value
    if phase.rank > expected.rank:
        return False
    if phase.rank < expected.rank:
        raise WrongPhase(pass_name, expected.value, phase.value)
    return True


def refuse_unlinked(module: ModuleOp, pass_name: str) -> None:
    """A pass after link refuses a module that still holds tg ops, at the first of them."""
    for op in module.walk():
        if isinstance(op, tg.TgOp):
            err = WrongPhase(
                pass_name,
                Phase.LINKED.value,
                f"unlinked ({op.name} has no section yet; run link first)",
            )
            op.emit_error(str(err), err)


@contextmanager
def refusals_at(program: sp.ProgramOp) -> Iterator[None]:
    """Report a refusal raised while a pass works on `program` at the section, with the module
    printed around it (a refusal is never a bare traceback)."""
    try:
        yield
    except Exception as err:
        program.emit_error(str(err), err)


def sections_taken(module: ModuleOp, pass_name: str, expected: Phase) -> list[sp.ProgramOp]:
    """The sections `pass_name` has work on, in module order (`takes`): a whole-section pass walks
    these, deciding and building each under `refusals_at`. A section in an earlier phase is
    refused at the section."""
    taken = []
    for program in programs(module):
        with refusals_at(program):
            if takes(program, pass_name, expected):
                taken.append(program)
    return taken
