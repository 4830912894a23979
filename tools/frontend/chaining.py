"""What links the steps of one deployment, as the imported program states it: read by
`spatial-run --chain` and by `spatial-generate`, so both run a prefill and its decodes the same
way.

Three facts, each read from the program, never from a naming convention of the runner:

- State: an input a step updates in place (a KV cache written by `tg.set_rows` and returned)
  is carried to the next step under the input's name (link's name for it, `chain_names`); an
  input with `chain.state = "NAME"` (a state computed anew, Qwen3-Next's conv and recurrent
  states) takes the previous step's output NAME. A generation starts either at zero.
- Fed inputs: an input with `chain.fed_by = "NAME"` takes the last rows of the previous step's
  output NAME, as many as it has (the decode's `%decode.ids` the token the step before it chose
  at its last position).
- Placement: an input with `chain.position = "next"` is the row after the previous step's: that
  step's position plus the rows it wrote (a decode after a prefill of T tokens at p is at p + T;
  the next decode at p + T + 1). The position of a step is the argument its `tg.set_rows` writes
  at (`%pos`, `%decode.pos`); a generation starts the first step at 0.

spatial-import writes `chain.fed_by` and `chain.position` on a deployment's decode (`follows`)
and `chain.state` on both steps' Gated DeltaNet states (`carries`), on the built functions,
whatever the importer named their arguments.

Per user (a batched step, docs/tg.md#batched-decode): the same two marks on a step of B users
(`%decode.ids: tensor<Bxi32>`, `%decode.pos: tensor<Bxi32>`) mean them for each user b. A step
of one user (an admission, `%prefill.pos: tensor<1xi32>`) before a step of B users placed
after it runs once per user (`admissions`): run b admits user b into slot b (the batched step's
block-table row b, or its contiguous slot b), and the batched step's user b is fed the token
run b chose at its last row and sits at the row after run b's (`following_positions`). So a
chain of an admission and a batched decode is B users' generations side by side, each at its
own position, with nothing in the program but the marks a single-user chain has.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, StringAttr

from spatial_dialect import tg
from spatial_dialect.passes.link.context import carried_names, value_names
from spatial_dialect.passes.link.prelude import tg_ops
from spatial_dialect.tools.frontend.arguments import (  # the rope tables' position too
    position,
    run_position,
)
from spatial_dialect.tools.interpreters.numerics import EvaluationError
from spatial_dialect.tools.interpreters.reference import input_names, returned_values

FED_BY = "chain.fed_by"
"""On a step's input: the output of the step before it that feeds it (the decode's ids take the
token the previous step chose), by the name the chain gives that output."""

POSITION = "chain.position"
"""On a step's position input: "next", the row after the previous step's: its position plus the
rows it wrote (a decode after a prefill of T tokens at p is at p + T)."""

STATE = "chain.state"
"""On a step's input: carried state that is not updated in place (Qwen3-Next's conv and
recurrent states): the step's output of that name is its next value, which the next step's
input takes; a generation starts it at zero."""


def follows(fn: func.FuncOp, token: str) -> None:
    """State on `fn`, a step that runs after another (a deployment's decode), what links it to
    that step: its ids (the argument its embedding gathers) are fed the step's output `token`,
    and its position (the argument its caches are written at) is the row after that step's.
    Read from the program, so any importer's step (GGUF or Hugging Face names) is marked alike."""
    names = input_names(fn)
    gathered = {op.ids for op in fn.body.walk() if isinstance(op, tg.GatherRowsOp)}
    ids = [n for n, a in zip(names, fn.body.block.args, strict=True) if a in gathered]
    at = position(fn)
    if len(ids) != 1 or at is None:
        raise ChainError(f"@{fn.sym_name.data} has no single ids argument and position to link")
    _mark(fn, {ids[0]: (FED_BY, token), at: (POSITION, "next")})


STATE_OPS = (tg.CausalConvOp, tg.GatedDeltaOp)
"""The ops that compute a carried state anew (`state` in, `new_state` out): Gated DeltaNet's
convolution window and recurrent state."""


def carries(fn: func.FuncOp) -> None:
    """State on `fn` its carried state that is not updated in place: an argument a STATE_OPS op
    reads as its `state` whose `new_state` the function returns gets `chain.state` naming that
    output (the decode reads the state the prefill left, and a generation starts it at zero)."""
    names = input_names(fn)
    returned = dict(zip(returned_values(fn), chain_names(fn), strict=True))
    marks = {}
    for op in fn.body.walk():
        if isinstance(op, STATE_OPS) and op.state in fn.body.block.args:
            if op.new_state in returned:
                marks[names[fn.body.block.args.index(op.state)]] = (STATE, returned[op.new_state])
    _mark(fn, marks)


def _mark(fn: func.FuncOp, marks: dict[str, tuple[str, str]]) -> None:
    """Add the attribute (key, value) of `marks` to each named argument of `fn`."""
    names = input_names(fn)
    old = fn.arg_attrs.data if fn.arg_attrs is not None else [DictionaryAttr({})] * len(names)
    attrs = []
    for name, d in zip(names, old, strict=True):
        entries = dict(d.data) if isinstance(d, DictionaryAttr) else {}
        if name in marks:
            key, value = marks[name]
            entries[key] = StringAttr(value)
        attrs.append(DictionaryAttr(entries))
    fn.arg_attrs = ArrayAttr(attrs)


def chain_names(fn: func.FuncOp) -> list[str]:
    """The names `fn`'s outputs feed a chain by: those sp.entry gives them (link's names, so a
    cache updated in place and its update are one tensor, named after the cache)."""
    ops, results = tg_ops(fn), returned_values(fn)
    names = value_names(fn, ops)
    carried_names(ops, names, frozenset(results))
    return [names[v] for v in results]


def state_inputs(fn: func.FuncOp) -> list[str]:
    """The chain's carried state among `fn`'s inputs: those it updates in place and returns (its
    caches), and those whose next value it returns by `chain.state`."""
    outputs, links = set(chain_names(fn)), state_links(fn)
    return [n for n in input_names(fn) if n in outputs or n in links]


def state_links(fn: func.FuncOp) -> dict[str, str]:
    """`fn`'s state inputs carried by `chain.state`: input -> the output holding its next value
    (which the previous step returned under that name)."""
    return _links(fn, STATE)


def _links(fn: func.FuncOp, key: str) -> dict[str, str]:
    if fn.arg_attrs is None:
        return {}
    links = {}
    for name, attrs in zip(input_names(fn), fn.arg_attrs.data, strict=True):
        if isinstance(attrs, DictionaryAttr) and isinstance(v := attrs.data.get(key), StringAttr):
            links[name] = v.data
    return links


class ChainError(EvaluationError):
    """The program's chain attributes say something a run cannot do (one line)."""


def fed_by(fn: func.FuncOp) -> dict[str, str]:
    """`fn`'s inputs that the previous step's outputs feed by `chain.fed_by`: input -> output."""
    return _links(fn, FED_BY)


def fed_value(output: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """What an output gives the input it feeds by `chain.fed_by`: its last rows, as many as the
    input has (a prefill chooses a token at each of its T positions; the decode after it takes
    the one chosen at the last)."""
    if output.ndim != len(shape) or output.shape[0] < shape[0]:
        return output  # does not fit: the caller says so with both types
    return output[output.shape[0] - shape[0] :]


def next_position(fn: func.FuncOp) -> str | None:
    """`fn`'s input placed after the previous step (`chain.position = "next"`), if any."""
    links = _links(fn, POSITION)
    for name, value in links.items():
        if value != "next":
            raise ChainError(
                f'@{fn.sym_name.data}: %{name} has {POSITION} = "{value}"; only "next" is known'
            )
    return next(iter(links), None)


def batched_write(fn: func.FuncOp) -> tg.BatchSetRowsOp | None:
    """`fn`'s first `tg.batch_set_rows`, if it is a batched step."""
    return next((op for op in fn.body.walk() if isinstance(op, tg.BatchSetRowsOp)), None)


def users(fn: func.FuncOp) -> int:
    """The users a step serves: its batched writes' (one entry of its position each), else 1."""
    op = batched_write(fn)
    return 1 if op is None else op.users()


def admissions(fn: func.FuncOp, after: func.FuncOp | None) -> int:
    """How many times a chain runs `fn` before `after`: once per user of `after` where `fn` has
    one user and `after`, placed after it, has more (each run admits one user), else once."""
    if after is None or next_position(after) is None or users(fn) != 1:
        return 1
    return users(after)


def step_rows(fn: func.FuncOp) -> int:
    """The rows a step writes at its position (its tokens; a batched step's per user): the rows
    of its `tg.set_rows`."""
    if (op := batched_write(fn)) is not None:
        return op.tokens()
    rows = [op.rows.type.get_shape()[0] for op in fn.body.walk() if isinstance(op, tg.SetRowsOp)]
    if not rows:
        raise ChainError(f"@{fn.sym_name.data} writes no rows: it has no position to follow")
    return rows[0]


def following_position(before: func.FuncOp, inputs: Mapping[str, np.ndarray]) -> int:
    """The row after the step `before` ran with `inputs`: its position plus the rows it wrote
    (where a step placed by `chain.position = "next"` sits)."""
    at = position(before)
    if at is None or at not in inputs:
        raise ChainError(f"@{before.sym_name.data} has no position for the step after it to follow")
    return int(np.asarray(inputs[at]).reshape(-1)[0]) + step_rows(before)


def following_positions(runs: Sequence[tuple[func.FuncOp, Mapping[str, np.ndarray]]]) -> np.ndarray:
    """Per user, the row after the previous step's `runs` (each a step and its inputs): each
    run's users' positions plus the rows each wrote, in the order of the runs (one run per
    admitted user, or one run of every user)."""
    return np.concatenate(
        [np.atleast_1d(run_position(f, inputs)) + step_rows(f) for f, inputs in runs]
    ).astype(np.int32)


def cache_rows(fn: func.FuncOp) -> int:
    """The rows of the caches `fn` writes (the context a generation can fill; a batched step's:
    the positions one user holds)."""
    if (op := batched_write(fn)) is not None:
        return op.capacity()
    rows = [op.cache.type.get_shape()[0] for op in fn.body.walk() if isinstance(op, tg.SetRowsOp)]
    if not rows:
        raise ChainError(f"@{fn.sym_name.data} writes no cache")
    return min(rows)


__all__ = [
    "FED_BY",
    "POSITION",
    "STATE",
    "ChainError",
    "admissions",
    "batched_write",
    "cache_rows",
    "carries",
    "chain_names",
    "fed_by",
    "fed_value",
    "following_position",
    "following_positions",
    "follows",
    "next_position",
    "position",
    "state_inputs",
    "state_links",
    "step_rows",
    "users",
]
