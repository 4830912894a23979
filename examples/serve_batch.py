"""Continuous batching over one compiled pair of steps: users join and leave between steps.

    python examples/serve_batch.py               # under our simulator (wormhole_n150)
    python examples/serve_batch.py reference     # under the reference semantics of the tg program

Two programs, written once by tools/frontend/layers.py for a tiny two-layer model (drawn weights):
`admit`, one user's prefill of its prompt into its slot of the paged KV cache (B = 1, the user's
block-table row), and `decode`, one token for each of the B slots (docs/tg.md#batched-decode).
They are one deployment, compiled once together (`spatial-pipeline`, as spatial-import's
`--step both` is): the weights and the caches are shared by name, each step's own inputs carry
its prefix (`%admit.pos`, `%decode.pos`), as an imported deployment's do.
A user holds as many blocks as its positions need; its table row's other entries are -1.
The serving loop below never compiles another program: a user joins by taking a free slot and
free blocks of the pool (its table row) and running `admit`; each step runs `decode` with every
slot's position, an idle slot at -1 (nothing written, its row ignored); a user leaves after its
tokens and its blocks return to the pool, shuffled, so a later user's table differs.

The compiled programs run on a backend of tools/backend/executors.py through
tools/frontend/generation.py's `executor` (what spatial-generate runs a step with): the caches
come back under their names and are handed to the next step. `solo` runs one user alone with the
single-user programs (tg.set_rows + tg.attention over its own cache), compiled as their own
deployment on the same backend; test/frontend/test_serve_batch.py checks the served tokens are
each user's solo tokens, under the reference and under the simulator.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field

import numpy as np
from xdsl.dialects.func import FuncOp

from spatial_dialect.passes.pipeline import compile_module
from spatial_dialect.tools.emit.report import entry_module
from spatial_dialect.tools.frontend.arguments import rope_table
from spatial_dialect.tools.frontend.generation import REFERENCE, Executor, executor
from spatial_dialect.tools.frontend.gguf_program import OWN_INPUTS
from spatial_dialect.tools.frontend.layers import (
    Argument,
    Batch,
    ExampleNames,
    Layer,
    Model,
    Role,
    step_function,
)
from spatial_dialect.tools.frontend.tg_builder import print_functions
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import input_names
from spatial_dialect.tools.spatial_run import parse_module

MODEL = Model("tiny", 64, 2, 1, 32, 128, 1e-5, qk_norm=False, vocab=100, elt="f32")
LAYERS, SLOTS, CACHE, BLOCK, PROMPT = 2, 3, 16, 4, 4
ROPE_BASE = 10000.0
CACHES = [f"l{i}_{kv}_cache" for i in range(LAYERS) for kv in ("k", "v")]
TARGET, BACKEND = "wormhole_n150", "sim"


class StepNames(ExampleNames):
    """The examples' names, a step's own inputs (ids, pos, the rope tables, the block table)
    prefixed with the step, as spatial-import names a deployment's (`%decode.pos`)."""

    def __init__(self, own: str) -> None:
        super().__init__()
        self.own = own

    def argument(self, role: Role, layer: Layer | None) -> Argument:
        arg = super().argument(role, layer)
        return Argument(self.own + arg.name, arg.attributes) if role in OWN_INPUTS else arg


@dataclass
class Step:
    """One program of a deployment, ready to run: its function and how it runs."""

    own: str  # its own inputs' prefix
    fn: FuncOp
    run: Executor

    def __call__(self, given: dict[str, np.ndarray], starts: np.ndarray) -> dict[str, np.ndarray]:
        """The step on `given` (its own inputs unprefixed), its rope tables those of each user's
        rows from `starts`: its outputs by chain name (a cache under the cache's name)."""
        inputs = {}
        for name, arg in zip(input_names(self.fn), self.fn.body.block.args, strict=True):
            short = name.removeprefix(self.own)
            if short in ("cos", "sin"):
                shape = tuple(arg.type.get_shape())
                inputs[name] = rope_table(short, shape, ROPE_BASE, starts)
            else:
                inputs[name] = given[short]
        return self.run(inputs)


def deployment(steps: list[tuple[str, int, Batch | None]], backend: str) -> list[Step]:
    """The steps (own prefix, tokens, batch) as one deployment, compiled once for TARGET unless
    `backend` is the reference."""
    fns = [
        step_function(MODEL, StepNames(f"{own}."), t, CACHE, LAYERS, f"tiny_{own}", batch)
        for own, t, batch in steps
    ]
    parsed = [op for op in parse_module(print_functions(fns)).body.ops]
    programs = {f.sym_name.data: None for f in parsed}
    if backend != REFERENCE:
        compiled = compile_module(parsed, TARGET)
        programs = {name: entry_module(compiled, name) for name in programs}
    return [
        Step(f"{own}.", f, executor(f, programs[f.sym_name.data], backend))
        for (own, _, _), f in zip(steps, parsed, strict=True)
    ]


def drawn_weights(fn: FuncOp, seed: int) -> dict[str, np.ndarray]:
    """The weights drawn from `seed` for `fn` (the batched decode: every step, served or solo,
    takes these tensors by name), and an empty pool of caches."""
    drawn = draw_inputs(fn, seed)
    weights = {n: a for n, a in drawn.items() if "." not in n}
    for name in CACHES:
        weights[name] = np.zeros_like(weights[name])
    return weights


@dataclass
class User:
    name: str
    prompt: list[int]
    wants: int  # tokens to generate
    tokens: list[int] = field(default_factory=list)
    pos: int = 0


class Server:
    """B slots over one paged pool; `admit` and `decode` are the only programs it runs, compiled
    once (unless `backend` is the reference)."""

    def __init__(self, seed: int = 0, backend: str = BACKEND) -> None:
        self.admit, self.decode = deployment(
            [
                ("admit", PROMPT, Batch.admission(SLOTS, CACHE, PROMPT, BLOCK)),
                ("decode", 1, Batch.decode(SLOTS, CACHE, BLOCK)),
            ],
            backend,
        )
        self.weights = drawn_weights(self.decode.fn, seed)
        self.rng = np.random.default_rng(seed)
        self.free = list(self.rng.permutation(SLOTS * CACHE // BLOCK))  # the pool's free blocks
        self.table = np.zeros((SLOTS, CACHE // BLOCK), np.int32)
        self.slots: list[User | None] = [None] * SLOTS
        self.log: list[str] = []

    def join(self, user: User) -> bool:
        """`user` takes a free slot and its blocks, and its prompt is prefilled: False if full."""
        if None not in self.slots:
            return False
        b = self.slots.index(None)
        last = len(user.prompt) + user.wants - 2  # the last position its decodes write
        blocks = [int(self.free.pop()) for _ in range(last // BLOCK + 1)]
        self.table[b] = -1  # the entries past its blocks are never read
        self.table[b, : len(blocks)] = blocks
        given = {**self.weights, "ids": np.array(user.prompt, np.int32)}
        given |= {"pos": np.array([0], np.int32), "block_table": self.table[b : b + 1]}
        out = self.admit(given, np.array([0]))
        self.weights |= {c: out[c] for c in CACHES}
        user.tokens.append(int(out["token"][-1]))  # the prompt's last row chooses
        user.pos = len(user.prompt)
        self.slots[b] = user
        self.log.append(f"{user.name} joins slot {b}, blocks {blocks}")
        return True

    def step(self) -> None:
        """One decode of every slot; users with all their tokens leave, freeing their blocks."""
        ids = np.array([u.tokens[-1] if u else 0 for u in self.slots], np.int32)
        pos = np.array([u.pos if u else -1 for u in self.slots], np.int32)
        given = {**self.weights, "ids": ids, "pos": pos, "block_table": self.table}
        out = self.decode(given, pos)
        self.weights |= {c: out[c] for c in CACHES}
        self.log.append(f"decode at {pos.tolist()}")
        for b, user in enumerate(self.slots):
            if user is None:
                continue
            user.tokens.append(int(out["token"][b]))
            user.pos += 1
            if len(user.tokens) == user.wants:
                mine = self.table[b][self.table[b] >= 0]
                self.free += [int(x) for x in self.rng.permutation(mine)]
                self.slots[b] = None
                self.log.append(f"{user.name} leaves slot {b}: {user.tokens}")


def serve(users: list[User], seed: int = 0, backend: str = BACKEND) -> Server:
    """Serve `users` in order, each joining as soon as a slot is free."""
    server, waiting = Server(seed, backend), list(users)
    while waiting or any(server.slots):
        while waiting and server.join(waiting[0]):
            waiting.pop(0)
        server.step()
    return server


class Solo:
    """One user alone: the single-user prefill and decode over its own cache, one deployment
    (compiled once for every user it runs), with the served users' drawn weights."""

    def __init__(self, seed: int = 0, backend: str = BACKEND) -> None:
        self.prefill, self.decode = deployment(
            [("prefill", PROMPT, None), ("decode", 1, None)], backend
        )
        batched = step_function(
            MODEL, StepNames("decode."), 1, CACHE, LAYERS, "b", Batch.decode(SLOTS, CACHE, BLOCK)
        )
        self.weights = drawn_weights(batched, seed)  # the same drawn weights as the server's

    def __call__(self, user: User) -> list[int]:
        """`user`'s greedy tokens."""
        rows = (CACHE, MODEL.kv_heads * MODEL.head_dim)
        state = {c: np.zeros(rows, np.float32) for c in CACHES}
        given = {**self.weights, **state, "ids": np.array(user.prompt, np.int32)}
        out = self.prefill(given | {"pos": np.array([0], np.int32)}, np.array([0]))
        tokens, pos = [int(out["token"][-1])], len(user.prompt)
        while len(tokens) < user.wants:
            state = {c: out[c] for c in CACHES}
            given = {**self.weights, **state, "ids": np.array(tokens[-1:], np.int32)}
            out = self.decode(given | {"pos": np.array([pos], np.int32)}, np.array([pos]))
            tokens.append(int(out["token"][0]))
            pos += 1
        return tokens


USERS = [
    User("ann", [5, 17, 42, 8], 9),
    User("bob", [1, 2, 3, 4], 3),
    User("cy", [99, 0, 7, 64], 5),
    User("dee", [33, 33, 12, 90], 4),
    User("eve", [61, 8, 2, 50], 2),
]


def main() -> None:
    backend = sys.argv[1] if len(sys.argv) > 1 else BACKEND
    server = serve([User(u.name, u.prompt, u.wants) for u in USERS], backend=backend)
    print("\n".join(server.log))


if __name__ == "__main__":
    main()
