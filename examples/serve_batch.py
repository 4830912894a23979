"""Continuous batching over one compiled pair of steps: users join and leave between steps.

    python examples/serve_batch.py        # prints each step: who is served, at which position

Two programs, written once by tools/frontend/layers.py for a tiny two-layer model (drawn weights):
`admit`, one user's prefill of its prompt into its slot of the paged KV cache (B = 1, the user's
block-table row), and `decode`, one token for each of the B slots (docs/tg.md#batched-decode).
A user holds as many blocks as its positions need; its table row's other entries are -1.
The serving loop below never writes another program: a user joins by taking a free slot and free
blocks of the pool (its table row) and running `admit`; each step runs `decode` with every
slot's position, an idle slot at -1 (nothing written, its row ignored); a user leaves after its
tokens and its blocks return to the pool, shuffled, so a later user's table differs.

The steps run under the reference (tools/interpreters); the same programs compile and run under
our simulator (`spatial-run --backend sim`, docs/passes.md#link-the-batched-decode-step). `solo` runs one user alone with the single-user programs (tg.set_rows +
tg.attention over its own cache); test/frontend/test_serve_batch.py checks the served tokens are
each user's solo tokens.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from spatial_dialect.tools.frontend.arguments import rope_table
from spatial_dialect.tools.frontend.layers import Batch, ExampleNames, Model, step_function
from spatial_dialect.tools.frontend.tg_builder import print_functions
from spatial_dialect.tools.interpreters.inputs import draw_inputs
from spatial_dialect.tools.interpreters.reference import evaluate, input_names, output_names
from spatial_dialect.tools.spatial_run import parse_module

MODEL = Model("tiny", 64, 2, 1, 32, 128, 1e-5, qk_norm=False, vocab=100, elt="f32")
LAYERS, SLOTS, CACHE, BLOCK, PROMPT = 2, 3, 16, 4, 4
ROPE_BASE = 10000.0
CACHES = [f"l{i}_{kv}_cache" for i in range(LAYERS) for kv in ("k", "v")]


def updated(out: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Each cache argument's new value: the step's result of that cache (%l0_k_cache: %l0_kc)."""
    return {c: out[c.removesuffix("_cache") + "c"] for c in CACHES}


def program(t: int, batch: Batch | None, name: str):
    """The step `name` as the reference evaluates it (printed and parsed, as a file would be)."""
    fn = step_function(MODEL, ExampleNames(), t, CACHE, LAYERS, name, batch)
    module = parse_module(print_functions([fn]))
    return next(iter(module.body.ops))


def run(fn, given: dict[str, np.ndarray], starts: np.ndarray) -> dict[str, np.ndarray]:
    """`fn` on `given`, its rope tables those of each user's rows from `starts`."""
    inputs = dict(given)
    for name, arg in zip(input_names(fn), fn.body.block.args, strict=True):
        if name in ("cos", "sin"):
            inputs[name] = rope_table(name, tuple(arg.type.get_shape()), ROPE_BASE, starts)
    return dict(zip(output_names(fn), evaluate(fn, inputs), strict=True))


@dataclass
class User:
    name: str
    prompt: list[int]
    wants: int  # tokens to generate
    tokens: list[int] = field(default_factory=list)
    pos: int = 0


class Server:
    """B slots over one paged pool; `admit` and `decode` are the only programs it runs."""

    def __init__(self, seed: int = 0) -> None:
        self.admit = program(PROMPT, Batch.admission(SLOTS, CACHE, PROMPT, BLOCK), "tiny_admit")
        self.decode = program(1, Batch.decode(SLOTS, CACHE, BLOCK), "tiny_serve_decode")
        drawn = draw_inputs(self.decode, seed)
        self.weights = {n: a for n, a in drawn.items() if n not in ("ids", "pos", "block_table")}
        for name in CACHES:  # an empty pool
            self.weights[name] = np.zeros_like(self.weights[name])
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
        out = run(self.admit, given, np.array([0]))
        self.weights |= updated(out)
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
        out = run(self.decode, given, pos)
        self.weights |= updated(out)
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


def serve(users: list[User], seed: int = 0) -> Server:
    """Serve `users` in order, each joining as soon as a slot is free."""
    server, waiting = Server(seed), list(users)
    while waiting or any(server.slots):
        while waiting and server.join(waiting[0]):
            waiting.pop(0)
        server.step()
    return server


def solo(user: User, seed: int = 0) -> list[int]:
    """`user`'s greedy tokens alone: the single-user prefill and decode over its own cache."""
    prefill, decode = program(PROMPT, None, "tiny_prefill"), program(1, None, "tiny_decode")
    weights = Server(seed).weights  # the same drawn weights
    state = {c: np.zeros((CACHE, MODEL.kv_heads * MODEL.head_dim), np.float32) for c in CACHES}
    given = {**weights, **state, "ids": np.array(user.prompt, np.int32)}
    out = run(prefill, given | {"pos": np.array([0], np.int32)}, np.array([0]))
    tokens, pos = [int(out["token"][-1])], len(user.prompt)
    while len(tokens) < user.wants:
        state = updated(out)
        given = {**weights, **state, "ids": np.array(tokens[-1:], np.int32)}
        out = run(decode, given | {"pos": np.array([pos], np.int32)}, np.array([pos]))
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
    server = serve([User(u.name, u.prompt, u.wants) for u in USERS])
    print("\n".join(server.log))


if __name__ == "__main__":
    main()
