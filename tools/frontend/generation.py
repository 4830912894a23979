"""Greedy generation with an imported checkpoint: the loop behind `spatial-generate`.

One deployment is imported and compiled once (spatial-import's `--step both`: the prefill of the
prompt's T tokens and the one-token decode, over caches of at least T + N rows), for the target,
with every function compiled together so that the caches are laid out once for both
(passes.pipeline.compile_module; tools/emit/report.py's `entry_module` splits out each function's
program). Then, as llama.cpp runs a prompt:

- the prefill runs at position 0 from zero state (KV caches, Qwen3-Next's conv and recurrent
  states) on the prompt's ids; its token at the last position is the first generated token;
- N - 1 decode steps follow, each on the last token, at the row after the previous step's, with
  its rope tables filled for that position and the state the previous step returned.

What feeds what is the program's own statement (tools/frontend/chaining.py: the state a step
updates in place or names by `chain.state`, `chain.fed_by`, `chain.position`), the same facts
`spatial-run --chain` reads, so that a chain checked by spatial-run is the generation this
module runs. Weights are filled
once per function from the checkpoint (tools/frontend/weights.py; a weight two functions share by
name is read once); only the rope tables are refilled at each step.

The executor is a backend of tools/backend/executors.py (our simulator, tt-lang-sim, Triton's
interpreter, native Triton) running the compiled program, or `reference`: the numpy reference
semantics of the tg program itself (tools/interpreters/reference.py), which needs no target.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp

from spatial_dialect import tg
from spatial_dialect.tools.frontend.chaining import (
    chain_names,
    fed_by,
    fed_value,
    following_position,
    next_position,
    position,
    state_inputs,
    state_links,
)
from spatial_dialect.tools.frontend.layers import STEP_OUTPUTS
from spatial_dialect.tools.interpreters.numerics import value_type
from spatial_dialect.tools.interpreters.reference import evaluate, input_names

REFERENCE = "reference"
"""The executor that runs the tg program's reference semantics instead of a compiled program."""

TILE = 32
"""Cache rows are rounded up to a tile (every target lays a cache out in 32-row tiles)."""


class GenerationError(Exception):
    """The generation cannot run as asked (one line that says why)."""


@dataclass
class Step:
    """One step of a generation: the token it chose and how long it took."""

    function: str  # the function that ran it (@llama_prefill, then @llama_decode)
    token: int
    seconds: float
    outputs: dict[str, np.ndarray] = field(default_factory=dict)  # the extra outputs kept


@dataclass
class Generation:
    prompt: list[int]
    steps: list[Step]
    compile_seconds: float

    @property
    def tokens(self) -> list[int]:
        """The generated ids, after the prompt."""
        return [s.token for s in self.steps]


def cache_rows(prompt: int, n: int, context: int) -> int:
    """Rows of the caches: the prompt and the N - 1 rows the decodes write after it, rounded up
    to a tile, within the model's context."""
    needed = prompt + n - 1
    if needed > context:
        raise GenerationError(
            f"a prompt of {prompt} token(s) and {n} generated need {needed} positions, over the "
            f"model's context_length {context}"
        )
    return min(-(-(prompt + n) // TILE) * TILE, context)


def context_length(path: str) -> int:
    """The model's context_length, from its header (a GGUF file's, a directory's config.json)."""
    from spatial_dialect.tools.spatial_import import gguf_checkpoint, hf_checkpoint

    return (hf_checkpoint(path) if Path(path).is_dir() else gguf_checkpoint(path, False)).context


Executor = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]
"""A step's inputs by name -> its outputs by chain name (chaining.chain_names)."""


def executor(fn: FuncOp, program: ModuleOp | None, backend: str) -> Executor:
    names = chain_names(fn)
    if backend == REFERENCE:

        def run(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
            return dict(zip(names, evaluate(fn, inputs), strict=True))

        return run
    from spatial_dialect.tools.backend.executors import backend_runner

    runner = backend_runner(backend)
    assert program is not None

    def run_program(inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        arrays = runner(program, [inputs[n] for n in input_names(fn)])
        return dict(zip(names, arrays, strict=True))

    return run_program


class Generator:
    """A checkpoint imported and compiled once for prompts of `prompt` tokens and `n` generated."""

    def __init__(
        self,
        path: str,
        prompt: int,
        n: int,
        target: str | None,
        backend: str = "sim",
        dtype: str | None = None,
        layers: int | None = None,
        extra: tuple[str, ...] = (),
    ) -> None:
        from spatial_dialect.passes.pipeline import compile_module, default_context
        from spatial_dialect.tools.emit.report import entry_module
        from spatial_dialect.tools.frontend.diagnostics import parse_source
        from spatial_dialect.tools.spatial_import import import_checkpoint

        if n < 1:
            raise GenerationError(f"-n {n}: generate at least one token")
        if prompt < 1:
            raise GenerationError("the prompt holds no token")
        if backend != REFERENCE and target is None:
            raise GenerationError(f"--backend {backend} runs a compiled program: give --target")
        self.path, self.backend, self.n = path, backend, n
        rows = cache_rows(prompt, n, context_length(path))
        text = import_checkpoint(
            path,
            "both",
            tokens=prompt,
            cache=rows,
            layers=layers,
            dtype=dtype,
            target=target,  # the activations it prefers, where --dtype does not say
            extra=extra,
        )
        module = parse_source(default_context(), text, f"<{Path(path).name}>")
        module.verify()
        self.functions: list[FuncOp] = [op for op in module.ops if isinstance(op, FuncOp)]
        self.prefill, self.decode = self.functions
        start = time.perf_counter()
        programs: dict[str, ModuleOp | None] = {f.sym_name.data: None for f in self.functions}
        if backend != REFERENCE:
            compiled = compile_module(self.functions, target)
            programs = {name: entry_module(compiled, name) for name in programs}
        self.compile_seconds = time.perf_counter() - start
        self.run = {
            f.sym_name.data: executor(f, programs[f.sym_name.data], backend) for f in self.functions
        }
        self.weights = self._weights()
        # the generated token: the output that feeds the decode's ids
        feeds = list(fed_by(self.decode).values())
        if len(feeds) != 1:
            raise GenerationError(f"@{self.decode.sym_name.data} states no single token it is fed")
        self.token = feeds[0]

    def _weights(self) -> dict[str, dict[str, np.ndarray]]:
        """Each function's weights from the checkpoint, read once: a tensor the functions share
        by name is one tensor of the deployment. What the checkpoint gives a step alone (its rope
        tables, which depend on its position) is left to `_positioned`."""
        from spatial_dialect.tools.frontend.weights import checkpoint_inputs

        read: dict[str, np.ndarray] = {}
        weights = {}
        for fn in self.functions:
            others = {n for f in self.functions if f is not fn for n in input_names(f)}
            shared = [n for n in input_names(fn) if n in others and n not in read]
            read.update(checkpoint_inputs(self.path, fn, {}, shared))
            weights[fn.sym_name.data] = {n: read[n] for n in input_names(fn) if n in read}
        return weights

    def _positioned(self, fn: FuncOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """What the checkpoint gives `fn` at the position in `inputs`: its own inputs that no
        other function shares (the rope tables), refilled at every step."""
        from spatial_dialect.tools.frontend.weights import checkpoint_inputs

        own = [n for n in input_names(fn) if n not in inputs]
        return checkpoint_inputs(self.path, fn, inputs, own)

    def vocabulary(self) -> int:
        """The ids a prompt may hold: the rows of the table the prefill gathers its ids from."""
        ids = self.prefill.body.block.args[0]
        gathers = [op for op in self.prefill.body.walk() if isinstance(op, tg.GatherRowsOp)]
        return next(op.table.type.get_shape()[0] for op in gathers if op.ids is ids)

    def check_ids(self, ids: Sequence[int]) -> None:
        vocab = self.vocabulary()
        if bad := [i for i in ids if not 0 <= i < vocab]:
            raise GenerationError(f"token id {bad[0]} is outside the vocabulary of {vocab}")

    def generate(
        self,
        ids: Sequence[int],
        on_step: Callable[[int, Step], None] | None = None,
    ) -> Generation:
        """Greedy generation of `self.n` tokens after `ids` (of the prompt length compiled for)."""
        prefill, decode = self.prefill, self.decode
        ids_name = input_names(prefill)[0]  # layers.step_function declares the ids first
        shape = value_type(prefill.body.block.args[0])[0]
        if len(ids) != shape[0]:
            raise GenerationError(f"compiled for a prompt of {shape[0]} tokens, given {len(ids)}")
        self.check_ids(ids)
        at = position(prefill)
        inputs = dict(self.weights[prefill.sym_name.data])
        args = dict(zip(input_names(prefill), prefill.body.block.args, strict=True))
        for name in state_inputs(prefill):  # a generation starts from empty caches
            inputs[name] = np.zeros(*value_type(args[name]))
        inputs[ids_name] = np.asarray(ids, np.int32)
        inputs[at] = np.zeros(1, np.int32)
        inputs.update(self._positioned(prefill, inputs))
        steps: list[Step] = []
        fn = prefill
        while True:
            start = time.perf_counter()
            outputs = self.run[fn.sym_name.data](inputs)
            token = int(fed_value(np.asarray(outputs[self.token]), (1,))[-1])
            kept = {k: v for k, v in outputs.items() if k in STEP_OUTPUTS}
            step = Step(fn.sym_name.data, token, 0.0, kept)
            step.seconds = time.perf_counter() - start
            steps.append(step)
            if on_step is not None:
                on_step(len(steps), step)
            if len(steps) == self.n:
                break
            # the next step: the decode, fed and placed as its program says
            pos = following_position(fn, inputs)
            previous, fn = outputs, decode
            args = dict(zip(input_names(fn), fn.body.block.args, strict=True))
            inputs = dict(self.weights[fn.sym_name.data])
            inputs.update({n: previous[n] for n in input_names(fn) if n in previous})
            inputs.update({n: previous[out] for n, out in state_links(fn).items()})
            for name, source in fed_by(fn).items():
                inputs[name] = fed_value(np.asarray(previous[source]), value_type(args[name])[0])
            placed = next_position(fn)
            if placed is None:
                raise GenerationError(f"@{fn.sym_name.data} states no position after the prefill")
            inputs[placed] = np.array([pos], np.int32)
            inputs.update(self._positioned(fn, inputs))
        return Generation(list(ids), steps, self.compile_seconds)
