"""A tensor-parallel plan of one op: the layouts its operands need and its result takes, what
it is called and why a plan is refused. The rules (rules.py, norm.py) list an op's plans, decide.py
prices them, rewrite.py writes the one taken; this module is the type they share, apart from the
rules so that the rule modules can build plans without importing each other."""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.ir import Attribute, Operation

from .layout import REPLICATED, Layout, Step


@dataclass
class Plan:
    name: str
    operands: list[Layout] = field(default_factory=list)
    result: Layout = REPLICATED
    props: dict[str, Attribute] = field(default_factory=dict)
    refused: str | None = None
    over: str = ""
    """Where a 2-D mesh's plan splits over the minor axis alone: " over axis 1" (1-D against
    2-D is recorded in the runner-up)."""
    collective: Step | None = None
    """The collective that IS the op under this plan (the vocab arg-max's mesh.argmax_gather,
    which takes each chip's local arg-max itself): priced with the plan, written in its place."""
    stats: tuple[int, ...] | None = None
    """The mesh axes a distributed rms_norm all-reduces its rows x 1 statistics over (norm.py):
    priced with the plan; the op is written as tg.rms_stats, the all_reduce, tg.rms_apply."""

    @property
    def label(self) -> str:
        return self.name + self.over


def replicate(op: Operation) -> Plan:
    """The plan every op has: every operand and the result whole on every chip."""
    return Plan("replicate", [REPLICATED] * len(op.operands), REPLICATED)
