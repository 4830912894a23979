"""The inputs of each function of `spatial-run --chain`: what an earlier function gives it (its
outputs by the names chaining.py reads, its inputs of the same name), what --inputs, --weights
and the seed give, where it sits (the row after the previous step's), and, with --weights, the
zero state at position 0 a generation starts from (docs/simulator.md#chained-entries).

A run of one function (no --chain) takes its inputs the same way with nothing fed. An admission
before a batched step runs once per user (`chain_runs`, chaining.admissions): its own inputs
are each user's, its block table the user's slot, and its choice is gathered per user
(`per_user`) for the batched step to take user b's.
"""

from __future__ import annotations

import argparse
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue

from spatial_dialect.tools.frontend.chaining import (
    ChainError,
    admissions,
    batched_write,
    cache_rows,
    fed_by,
    fed_value,
    following_positions,
    next_position,
    position,
    state_inputs,
    state_links,
    step_rows,
)
from spatial_dialect.tools.interpreters.inputs import block_tables, draw_inputs, load_inputs
from spatial_dialect.tools.interpreters.numerics import element_name, value_type
from spatial_dialect.tools.interpreters.reference import input_names


@dataclass
class EntryInputs:
    """A chained function's own inputs (all but those an earlier function's outputs feed:
    `fed`, input -> the output feeding it; `chosen`, those of them fed by a choice, the token the
    step before picked), how many of them are an earlier function's (`shared`), drawn, or
    `placed` after the previous step (chaining.next_position); `started`: the state and
    position a --weights chain starts from (zero caches at position 0)."""

    values: dict[str, np.ndarray]
    fed: dict[str, str]
    chosen: dict[str, str]
    shared: int
    drawn: int
    placed: int = 0
    started: bool = False
    slotted: int = 0  # an admission's block table: its user's slot

    def line(self, fn: FuncOp, seed: int, chained: bool) -> str:
        given = len(self.values) - self.shared - self.drawn - self.placed - self.slotted
        line = (
            f"spatial-run: @{fn.sym_name.data}, {given} input(s) from file, "
            f"{self.drawn} drawn with seed {seed}"
        )
        if chained:
            line += f", {len(self.fed)} fed and {self.shared} shared by earlier entries"
        if self.placed:
            line += ", at the row after the previous entry's"
        if self.started:
            line += ", from zero state at position 0"
        return line


def entry_inputs(
    args: argparse.Namespace,
    fn: FuncOp,
    chain: Sequence[FuncOp],
    earlier: Mapping[str, np.ndarray],
    outputs: Collection[str],
    previous: Sequence[tuple[FuncOp, Mapping[str, np.ndarray]]] = (),
    user: int | None = None,
) -> EntryInputs:
    """`fn`'s own inputs: an input named like one of an `earlier` function's is that tensor (one
    deployment); the others come from --inputs, else --weights, else are drawn. Those named like
    an earlier function's `outputs`, or naming one by `chain.fed_by`, are fed by the run, not
    here; one placed by `chain.position` follows the `previous` step's runs' positions (per
    user). A chain with --weights starts from zero state at position 0: a real generation
    (tools/frontend/chaining.py). `user`: the run of an admission for user b of the batched step
    after it (chaining.admissions): the inputs no other function shares (its prompt, position,
    rope tables) are its own, drawn with seed + b, and its block table is user b's slot."""
    per_user = set() if user is None else unshared(fn, chain)
    chosen = {n: src for n, src in fed_by(fn).items() if src in outputs} if args.chain else {}
    carried = {n: src for n, src in state_links(fn).items() if src in outputs} if args.chain else {}
    fed = {n: n for n in input_names(fn) if n in outputs and n not in chosen} | carried | chosen
    shared = {
        n: earlier[n]
        for n in input_names(fn)
        if n in earlier and n not in fed and n not in per_user
    }
    for name, arg in zip(input_names(fn), fn.body.block.args, strict=True):
        if name in shared:
            check_fits(fn, name, arg, shared[name], "an earlier entry's input named so")
    loaded = load_inputs(args.inputs, fn, chain) if args.inputs else {}
    inputs = {k: v for k, v in loaded.items() if k not in fed}
    inputs.update(shared)
    placed = {}
    if args.chain and previous and (at := next_position(fn)) is not None:
        placed = {at: following_positions(previous)}
        arg = dict(zip(input_names(fn), fn.body.block.args, strict=True))[at]
        check_fits(fn, at, arg, placed[at], "the position after the previous entry's")
        inputs.update(placed)
    slot = {} if user is None else user_slot(args, fn, chain, user)
    inputs.update(slot)
    seed = args.seed + (user or 0)
    drawn = {k: v for k, v in draw_inputs(fn, seed).items() if k not in inputs and k not in fed}
    started = bool(args.chain and args.weights and fn is chain[0])
    if started:  # a generation: the caches empty, the first token at row 0
        zero = [n for n in (*state_inputs(fn), position(fn)) if n in drawn]
        drawn.update({n: np.zeros_like(drawn[n]) for n in zero})
    elif args.chain and fn is chain[0] and (at := position(fn)) in drawn:
        drawn[at] = first_position(chain, drawn[at])
    inputs.update(drawn)
    if args.weights:
        from spatial_dialect.tools.frontend.weights import checkpoint_inputs

        checkpoint = checkpoint_inputs(args.weights, fn, inputs)
        inputs.update(checkpoint)
        drawn = {k: v for k, v in drawn.items() if k not in checkpoint}
    if started:
        drawn = {k: v for k, v in drawn.items() if k not in zero}
    return EntryInputs(
        inputs, fed, chosen, len(shared), len(drawn), len(placed), started, len(slot)
    )


def unshared(fn: FuncOp, chain: Sequence[FuncOp]) -> set[str]:
    """`fn`'s inputs that no other function of the chain has: its own (its ids, position, rope
    tables, block table), which each admitted user has apart."""
    others = {n for f in chain if f is not fn for n in input_names(f)}
    return {n for n in input_names(fn) if n not in others}


def user_slot(
    args: argparse.Namespace, fn: FuncOp, chain: Sequence[FuncOp], user: int
) -> dict[str, np.ndarray]:
    """The block table of `fn`'s run admitting `user`: row `user` of the table of the batched
    step after it (as --inputs gives it or as it is drawn, so both steps address the same
    blocks), or, over a contiguous cache, the user's slot (block `user` of the cache's slots)."""
    tables = [a for a in block_tables(fn) if a in fn.body.block.args]
    if not tables:
        return {}
    name = input_names(fn)[fn.body.block.args.index(tables[0])]
    after = chain[chain.index(fn) + 1]
    op = batched_write(after)
    assert op is not None  # chaining.admissions: the step after an admission is batched
    if op.table is None:
        return {name: np.array([[user]], np.int32)}
    table = input_names(after)[after.body.block.args.index(op.table)]
    loaded = load_inputs(args.inputs, after, chain) if args.inputs else {}
    rows = loaded[table] if table in loaded else draw_inputs(after, args.seed)[table]
    slot = np.asarray(rows)[user : user + 1]
    arg = fn.body.block.args[input_names(fn).index(name)]
    check_fits(fn, name, arg, slot, f"row {user} of %{table}, user {user}'s slot")
    return {name: slot}


def first_position(chain: Sequence[FuncOp], drawn: np.ndarray) -> np.ndarray:
    """The drawn position of a chain's first step, brought into the range where every step placed
    after it (chaining.next_position) still fits in the cache."""
    first, later = chain[0], [f for f in chain[1:] if next_position(f) is not None]
    if not later:
        return drawn
    room = cache_rows(first) - step_rows(first) - sum(step_rows(f) for f in later)
    if room < 0:
        raise ChainError(
            f"the chain writes {step_rows(first) + sum(step_rows(f) for f in later)} rows, over "
            f"the {cache_rows(first)} rows of @{first.sym_name.data}'s cache"
        )
    return (drawn % (room + 1)).astype(drawn.dtype)


def check_fits(fn: FuncOp, name: str, arg: SSAValue, array: np.ndarray, what: str) -> None:
    """A value handed to `fn`'s input %name from elsewhere in a chain must be of its type."""
    shape, dtype = value_type(arg)
    if (array.shape, array.dtype) != (shape, dtype):
        raise ChainError(
            f"@{fn.sym_name.data} takes %{name} as {'x'.join(map(str, shape))}x"
            f"{element_name(dtype)}, but {what} is "
            f"{'x'.join(map(str, array.shape))}x{element_name(array.dtype)}"
        )


def fed_inputs(fn: FuncOp, fed: Mapping[str, str], outputs: Mapping[str, np.ndarray]) -> dict:
    """The inputs of `fn` that earlier functions' outputs give (`fed`: input -> output),
    checked against their types. An input fed by `chain.fed_by` takes the output's last rows
    (chaining.fed_value: the token chosen at the previous step's last position)."""
    args = dict(zip(input_names(fn), fn.body.block.args, strict=True))
    values = {}
    for name, source in fed.items():
        value = outputs[source]
        if source != name:
            value = fed_value(value, value_type(args[name])[0])
        what = "an earlier entry's output named so" if source == name else f"its feed %{source}"
        check_fits(fn, name, args[name], value, what)
        values[name] = value
    return values


def chain_runs(chain: Sequence[FuncOp]) -> list[tuple[FuncOp, int | None]]:
    """The runs of a chain in order: each function once, an admission once per user of the
    batched step after it (chaining.admissions: run b admits user b)."""
    runs: list[tuple[FuncOp, int | None]] = []
    for i, fn in enumerate(chain):
        n = admissions(fn, chain[i + 1] if i + 1 < len(chain) else None)
        runs += [(fn, None)] if n == 1 else [(fn, b) for b in range(n)]
    return runs


def per_user(
    known: dict[str, np.ndarray],
    outputs: dict[str, np.ndarray],
    runs: Sequence[tuple[FuncOp, int | None]],
    i: int,
) -> dict[str, np.ndarray]:
    """`outputs` of run i as the chain keeps them: those of an admission that feed the batched
    step by `chain.fed_by` (its choice) gather each user's, their last row after the users before
    it (the batched step's user b takes run b's); the others (the caches, written in place by
    every run) as they are."""
    fn, user = runs[i]
    if user is None:
        return outputs
    after = next(f for f, _ in runs[i + 1 :] if f is not fn)
    kept = dict(outputs)
    for source in fed_by(after).values():
        if source in outputs:
            mine = np.asarray(outputs[source])[-1:]
            kept[source] = mine if user == 0 else np.concatenate([known[source], mine])
    return kept
