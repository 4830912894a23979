"""spatial-run: compile a tg function, simulate the compiled program, compare with the reference.

    spatial-run FILE.mlir --target NAME [--backend NAME] [--entry FN | --chain FN,FN...]
                [--seed N] [--inputs in.npz] [--weights MODEL.gguf|DIR] [--save out.npz]
                [--timing] [--reference-only] [--accumulate f32|bf16]

compiles the entry function (default: the only or the first func.func) through
`spatial-pipeline{target=NAME}`, draws seeded inputs (tools/interpreters/inputs.py: ids and positions inside
the range the ops that read them accept), evaluates the reference semantics (tools/interpreters/reference.py),
runs the sized program on a backend (tools/backend/executors.py: by default our functional simulator,
tools/simulator/program.py; or a vendor's executor of the program we emit), prints one line per
output (name, shape, element type, max absolute error, max relative error, tolerance) and ends
with a line that begins `PASS` or `FAIL`. Exit status 0 on PASS, 1 on FAIL.

Tolerances (tools/interpreters/compare.py): an element passes when
|sim - ref| <= rtol * (|ref| + rms(ref)), rtol = 2^-4 for bf16, 2^-7 for f16, 2^-14 for f32, and
0 (exact) for i8 and i32; an arg-max may pick another index only where the reference's value
there is within that tolerance of the row's maximum. `--accumulate bf16` compiles with the 16-bit
accumulator (`accumulate=bf16`), which breaks the f32 accumulation these assume, and checks
bf16 at 2^-3 and f16 at 2^-6. Downstream of a Q8_0 product a float output has more: one Q8_0
level where the product quantizes its activation, and 2^-4 where the backend stores Q8_0 as
bfp8_b (tt-lang-sim on Tensix).

`--chain prefill,decode` runs several functions of the file in that order as one deployment
(docs/simulator.md#chained-entries): they are compiled together, so the tensors they share by
argument name are laid out once for all of them (link/deployment.py), and each runs as its own
program; an output feeds every later function's input of the same name (the name sp.entry gives
it: a cache updated in place goes by its cache's name, in the output lines and --save too), in
the reference from the reference's outputs and in the simulator from the simulator's. What else
links the steps is the program's statement (tools/frontend/chaining.py, read by
tools/frontend/chain_inputs.py): `chain.fed_by` feeds an input the previous step's choice (the
decode's ids the prefill's last token, the reference's in both chains), `chain.position` places
it at the row after the previous step's, `chain.state` carries a state computed anew; on a
batched step they hold per user, an admission before it running once per user. With
--weights the chain starts from zero state at position 0, a real generation. An input named like
an earlier function's is that same tensor (the weights); the rest are drawn (or read from
--inputs / --weights) as for one function. Every function's outputs are compared; one verdict
ends the run.

A mesh preset (`--target n300`, docs/simulator.md#deployments-over-a-mesh) runs one deployment
over the mesh: a WHOLE function is compiled by spatial-pipeline (tensor-parallel first), its
inputs are drawn whole (or read from --inputs / --weights, a checkpoint's whole tensors), sharded
per the entry, every chip and the collectives between them run, and the unsharded outputs are
compared with the whole function's single-device reference. A per-chip function (its arguments
carry `mesh.sharding`) has no whole function: its drawn whole inputs are compared with its mesh
reference (tools/interpreters/mesh_reference.py).

`--reference-only` needs no target: it evaluates the reference and prints each output's name,
shape, element type and a checksum (CRC-32 of its bytes, sum, max |x|), then `PASS`.
`--timing` adds the cost model's predicted time of the compiled program.

Everything that stops a run is one message on stderr and exit status 1, never a traceback: a
missing or unparsable file, an unknown target, an input file that does not fit the function, an
index out of range in the reference. A program the compiler refuses (a typed diagnostic from a
pass) is reported as `spatial-run: compile refused: ...`, which is not a FAIL: nothing ran.
A simulator that finds the compiled program wrong (an access outside a tensor, a FIFO deadlock,
a buffer outside local memory, an output element never written) prints its report and `FAIL`;
a construct the simulator does not execute is `spatial-run: cannot simulate: ...` (exit 1).
A vendor executor that rejects the program (a deadlock, a local-memory overflow) is a FAIL with
its own message; one that is not installed is `spatial-run: backend unavailable: ...` (exit 1).
Usage errors exit 2. SPATIAL_RUN_TRACEBACK=1 shows the traceback of an internal error.
"""

from __future__ import annotations

import argparse
import os
import sys
import traceback
import zlib
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import TextIO

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.utils.exceptions import DiagnosticException, ParseError

from spatial_dialect import tg
from spatial_dialect.mesh.interface import is_per_chip
from spatial_dialect.passes.numerics import ACCUMULATE
from spatial_dialect.passes.pipeline import compile_module, default_context
from spatial_dialect.passes.target_choice import chip_target, mesh_named, parse_bytes
from spatial_dialect.passes.tensor_parallel.norm import NORM_DEFAULT, NORM_MODES
from spatial_dialect.sp import PlanOp, ProgramOp
from spatial_dialect.sp.errors import InternalError, InvalidTarget
from spatial_dialect.targets import Target, TargetError, load_target
from spatial_dialect.tools.backend.executors import (
    BACKENDS,
    Q8_0_AS_STORED,
    BackendFailed,
    BackendUnavailable,
    backend_runner,
    mesh_runner,
)
from spatial_dialect.tools.emit.report import entry_module
from spatial_dialect.tools.frontend.chain_inputs import (
    chain_runs,
    entry_inputs,
    fed_inputs,
    per_user,
)
from spatial_dialect.tools.frontend.chaining import ChainError, chain_names
from spatial_dialect.tools.frontend.diagnostics import (
    capture_diagnostic_ops,
    format_diagnostic,
    format_parse_error,
    parse_source,
)
from spatial_dialect.tools.interpreters.compare import (
    Comparison,
    compare,
    compare_argmax,
    q8_0_downstream,
    quantized_downstream,
    rule_text,
)
from spatial_dialect.tools.interpreters.deployment import whole_shapes
from spatial_dialect.tools.interpreters.inputs import draw_inputs, save_run
from spatial_dialect.tools.interpreters.mesh_reference import mesh_reference
from spatial_dialect.tools.interpreters.numerics import (
    EvaluationError,
    OutOfRange,
    element_name,
)
from spatial_dialect.tools.interpreters.reference import (
    evaluate_values,
    input_names,
    output_names,
    returned_values,
)
from spatial_dialect.tools.simulator.budget import (
    DEFAULT_WORK_BUDGET,
    OverBudget,
    check_budget,
    reference_bytes,
    simulator_bytes,
    work_tiles,
)
from spatial_dialect.tools.simulator.program import NotSimulated, SimulationError


class UsageError(Exception):
    """The user's input cannot be run: a missing file, a parse error, no such function."""


class CompileRefused(Exception):
    """The pipeline refused the program with a typed diagnostic (not a FAIL: nothing ran);
    `diagnostic` is the pass's exception."""

    def __init__(self, diagnostic: DiagnosticException):
        self.diagnostic = diagnostic
        super().__init__(str(diagnostic).strip())


def parse_module(text: str, filename: str = "<input>") -> ModuleOp:
    """Parse with op locations and the nesting limit (tools/frontend/diagnostics.py), and verify."""
    module = parse_source(default_context(), text, filename)
    module.verify()
    return module


DEFAULT_MEMORY_BUDGET = "8GiB"
"""What `--memory-budget` allows by default: the reference's and the simulator's arrays together."""


def entry_function(module: ModuleOp, name: str | None = None) -> FuncOp:
    """The function called `name`, else the only or the first one."""
    funcs = [op for op in module.walk() if isinstance(op, FuncOp)]
    if not funcs:
        raise UsageError("the file holds no func.func")
    if name is None:
        return funcs[0]
    for f in funcs:
        if f.sym_name.data == name:
            return f
    known = ", ".join(f"@{f.sym_name.data}" for f in funcs)
    raise UsageError(f"no function @{name} (the file has {known})")


def chained_functions(module: ModuleOp, args: argparse.Namespace) -> list[FuncOp]:
    """The functions to run, in order: --chain's, else the entry function alone."""
    if not args.chain:
        return [entry_function(module, args.entry)]
    twice = next((n for i, n in enumerate(args.chain) if n in args.chain[:i]), None)
    if twice is not None:
        raise UsageError(f"--chain names @{twice} twice; each function of a chain runs once")
    return [entry_function(module, n) for n in args.chain]


def predicted_us(module: ModuleOp, target: Target) -> list[tuple[str, float]]:
    """Each section's predicted time in microseconds, from the cycles its plan carries."""
    times = []
    for program in module.walk():
        if isinstance(program, ProgramOp) and (plan := program.one(PlanOp)) is not None:
            us = plan.predicted_cycles / (target.clock_ghz * 1e3)
            times.append((program.sym_name.data, us))
    return times


def simulated_outputs(
    fn: FuncOp,
    module: ModuleOp,
    inputs: dict[str, np.ndarray],
    backend: str = "sim",
) -> dict:
    """The compiled program's outputs by name, as `backend` ran it: sp.entry lists inputs and
    outputs in the function's argument and result order."""
    arrays = backend_runner(backend)(module, [inputs[n] for n in input_names(fn)])
    return dict(zip(output_names(fn), arrays, strict=True))


def reference_outputs(fn: FuncOp, inputs: dict[str, np.ndarray]) -> tuple[dict, dict]:
    """(outputs by name, every value of the function) under the reference semantics."""
    values = evaluate_values(fn, inputs)
    outputs = {n: values[v] for n, v in zip(output_names(fn), returned_values(fn), strict=True)}
    return outputs, values


def checksum_line(name: str, array: np.ndarray) -> str:
    wide = array.astype(np.float64)
    shape = "x".join(map(str, array.shape))
    return (
        f"{name:<12} {shape:>12} {element_name(array.dtype):<4} "
        f"crc32 {zlib.crc32(np.ascontiguousarray(array).tobytes()):08x}  sum {wide.sum():.6e}  "
        f"max|x| {np.abs(wide).max(initial=0):.6e}"
    )


def compare_outputs(
    fn: FuncOp,
    reference: dict[str, np.ndarray],
    values: dict,
    simulated: dict[str, np.ndarray],
    accumulate: str = ACCUMULATE[0],
    quantized: Collection[str] = (),
    bfp8_b: Collection[str] | None = None,
    names: Sequence[str] | None = None,
) -> list[Comparison]:
    """Each output against the reference, at the tolerance of the accumulation it was compiled
    with and one Q8_0 level more downstream of a quantized activation (`quantized`: the inputs
    an earlier chained function's such outputs feed); where the program stores Q8_0 as bfp8_b
    (`bfp8_b` not None: the inputs fed by such outputs), the bfp8_b term more downstream of a
    Q8_0 tensor; an arg-max against its input's near ties. `reference` and `simulated` are
    keyed by `names` (default: output_names), as the outputs are printed."""
    results = []
    downstream = quantized_downstream(fn, quantized)
    stored = q8_0_downstream(fn, bfp8_b) if bfp8_b is not None else set()
    for name, value in zip(names or output_names(fn), returned_values(fn), strict=True):
        ref, sim = reference[name], simulated[name]
        if isinstance(value.owner, tg.ArgmaxOp):
            logits = value.owner.x
            after, b8 = logits in downstream, logits in stored
            results.append(compare_argmax(name, ref, sim, values[logits], accumulate, after, b8))
        else:
            after, b8 = value in downstream, value in stored
            results.append(compare(name, ref, sim, accumulate, after, b8))
    return results


def function_list(text: str) -> list[str]:
    """--chain's value: function names separated by commas (an @ before a name is allowed)."""
    names = [n.strip().removeprefix("@") for n in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of function names (a,b)")
    return names


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="spatial-run",
        description=__doc__.split("\n\n")[0] if __doc__ else None,
        epilog=rule_text(),
    )
    parser.add_argument("file", help="a .mlir file holding a func.func of tg ops")
    parser.add_argument("--target", help="a preset name or a target TOML file")
    parser.add_argument(
        "--backend",
        choices=sorted(BACKENDS),
        default="sim",
        help="what executes the compiled program (default: sim, our simulator)",
    )
    parser.add_argument(
        "--accumulate",
        choices=ACCUMULATE,
        default=ACCUMULATE[0],
        help="how GEMMs accumulate: f32, the tg contract (default), or bf16, the 16-bit "
        "accumulator where the chip has one, checked at that mode's tolerance",
    )
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--entry", help="the function to run (default: the only or the first)")
    which.add_argument(
        "--chain",
        type=function_list,
        metavar="FN,FN...",
        help="run these functions in order as one deployment: compiled together (shared tensors "
        "in one layout), each output feeding the later functions' input of the same name",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the drawn inputs (0)")
    parser.add_argument("--inputs", help="an .npz file of inputs (the rest are drawn)")
    parser.add_argument("--save", help="write inputs and outputs to this .npz file")
    parser.add_argument(
        "--weights",
        help="a GGUF file or Hugging Face directory whose tensors feed the inputs (tools/frontend/weights.py)",
    )
    parser.add_argument("--timing", action="store_true", help="print the predicted time")
    parser.add_argument(
        "--prefer-sharded",
        action="store_true",
        help="on a mesh target, split every op that can be (tensor-parallel{prefer-sharded=true}) "
        "even where replicating it is cheaper",
    )
    parser.add_argument("--prefer-experts", action="store_true", help="MoEs take the experts plan")
    parser.add_argument(
        "--distributed-norm",
        choices=NORM_MODES,
        help="on a mesh target, tensor-parallel{distributed-norm=...}: rms_norm on chips' columns "
        f"(default {NORM_DEFAULT}: where it is cheaper)",
    )
    parser.add_argument(
        "--reference-only", action="store_true", help="only evaluate the reference; no target"
    )
    parser.add_argument(
        "--memory-budget",
        default=DEFAULT_MEMORY_BUDGET,
        help="the most memory the reference and the simulator may allocate, in bytes or with a "
        f"unit (e.g. 16GiB); checked before allocating (default {DEFAULT_MEMORY_BUDGET})",
    )
    parser.add_argument(
        "--work-budget",
        type=int,
        default=DEFAULT_WORK_BUDGET,
        help="the most tile steps the simulator may run, checked before it starts "
        f"(default {DEFAULT_WORK_BUDGET})",
    )
    args = parser.parse_args(argv)
    if not args.reference_only and not args.target:
        parser.error("--target is required (or --reference-only)")
    meshed = [args.prefer_sharded, args.prefer_experts, args.distributed_norm is not None]
    if mesh_named(args.target) is None and any(meshed):
        flag = ("--prefer-sharded", "--prefer-experts", "--distributed-norm")[meshed.index(True)]
        parser.error(f"{flag} needs a mesh preset as --target (e.g. n300)")
    if args.work_budget < 0:
        parser.error(f"--work-budget must be a number of tile steps >= 0, got {args.work_budget}")
    return args


def run(args: argparse.Namespace, out: TextIO) -> int:
    path = Path(args.file)
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise UsageError(f"cannot open '{path}': no such file") from None
    except OSError as e:
        raise UsageError(f"cannot read '{path}': {e.strerror}") from None
    module = parse_module(text, str(path))
    chain = chained_functions(module, args)
    budget = parse_bytes(args.memory_budget, "--memory-budget")
    for fn in chain:
        if not any(isinstance(op, tg.TgOp) for op in fn.body.walk()):
            raise UsageError(
                f"@{fn.sym_name.data} holds no tg op: there is nothing to compile or run"
            )
        check_budget("the reference", reference_bytes(fn), budget)
        if not args.reference_only and (work := work_tiles(fn)) > args.work_budget:
            raise OverBudget(
                f"the simulator would run about {work} tile steps, over the work budget of "
                f"{args.work_budget}; --work-budget=N raises it (or --reference-only)"
            )
    if is_per_chip(chain[0]):
        return run_deployment(args, chain, out)
    if args.chain and mesh_named(args.target) is not None:
        raise UsageError("a deployment over a mesh runs one function: no --chain with a mesh")
    runner = None if args.reference_only else Compiled(args, chain, out)
    own: dict[str, np.ndarray] = {}  # the chain's own inputs: one value per name
    outputs: dict[str, dict[str, np.ndarray]] = {"reference": {}, "simulated": {}}
    saved: dict[str, dict[str, np.ndarray]] = {}
    evaluated, bad, status = 0, [], 0
    quantized: set[str] = set()  # outputs downstream of a quantized activation, by chain name
    q8_0: set[str] = set()  # outputs downstream of a Q8_0 tensor, by chain name
    previous: list[tuple[FuncOp, dict[str, np.ndarray]]] = []
    runs = chain_runs(chain) if args.chain else [(chain[0], None)]
    for i, (fn, user) in enumerate(runs):
        name = fn.sym_name.data
        if user is None or user == 0:  # the step before this one is done
            before, previous = previous, []
        given = entry_inputs(args, fn, chain, own, outputs["reference"], before, user)
        own.update(given.values)
        inputs = {**given.values, **fed_inputs(fn, given.fed, outputs["reference"])}
        chosen = {n: inputs[n] for n in given.chosen}
        previous.append((fn, inputs))
        # A chain names an output as it feeds the next step (a cache by its cache's name), in the
        # lines, in --save and in feeding alike.
        keys = chain_names(fn) if args.chain else output_names(fn)
        reference, values = reference_outputs(fn, inputs)
        reference = dict(zip(keys, reference.values(), strict=True))
        line = given.line(fn, args.seed + (user or 0), bool(args.chain))
        print(line if user is None else f"{line}; admits user {user}", file=out)
        key = f"/{name}" if user is None else f"/{name}.user{user}"
        key = key if args.chain else ""
        saved[f"reference{key}"] = reference
        outputs["reference"].update(per_user(outputs["reference"], reference, runs, i))
        evaluated += len(reference)
        if runner is None:
            for output, array in reference.items():
                print(checksum_line(output, array), file=out)
            continue
        # A choice (the token a step picked) feeds both chains from the reference: where the
        # program picked a near tie, the next step still runs on the same token, so that the
        # two stay comparable.
        simulated_fed = {i: s for i, s in given.fed.items() if i not in given.chosen}
        inputs = {
            **given.values,
            **fed_inputs(fn, simulated_fed, outputs["simulated"]),
            **chosen,
        }
        simulated = runner.run(fn, inputs)
        if simulated is None:  # the program is wrong: the runner said how
            status = 1
            break
        simulated = dict(zip(keys, simulated.values(), strict=True))
        saved[f"simulated{key}"] = simulated
        outputs["simulated"].update(per_user(outputs["simulated"], simulated, runs, i))
        fed = {i for i, src in given.fed.items() if src in quantized}
        downstream = quantized_downstream(fn, fed)
        quantized.update(
            n for n, v in zip(keys, returned_values(fn), strict=True) if v in downstream
        )
        fed8 = {i for i, src in given.fed.items() if src in q8_0}
        downstream = q8_0_downstream(fn, fed8)
        q8_0.update(n for n, v in zip(keys, returned_values(fn), strict=True) if v in downstream)
        stored = fed8 if runner.stores_bfp8_b else None
        comparisons = compare_outputs(
            fn, reference, values, simulated, args.accumulate, fed, stored, keys
        )
        for c in comparisons:
            print(c.line(), file=out)
            if not c.ok:
                whose = f"@{name}" if user is None else f"@{name} (user {user})"
                bad.append(f"{c.name} of {whose}" if args.chain else c.name)
    if runner is None:
        print(f"PASS reference only: {evaluated} output(s) evaluated", file=out)
    elif status:
        print(f"FAIL: the compiled program is wrong ({runner.failure}){runner.timing}", file=out)
    elif bad:
        print(f"FAIL: {', '.join(bad)} outside tolerance{runner.timing}", file=out)
        status = 1
    else:
        print(f"PASS: {evaluated} output(s) within tolerance{runner.timing}", file=out)
    if args.save:
        save_run(args.save, own, saved)
    return status


def run_deployment(args: argparse.Namespace, chain: Sequence[FuncOp], out: TextIO) -> int:
    """A per-chip function (docs/mesh.md#the-per-chip-function) on a mesh: WHOLE inputs drawn for
    its whole tensors, compared with its mesh reference (tools/interpreters/deployment.py: the
    single-device reference needs the whole function, which a per-chip one lacks), run on the
    backend's mesh runner (every chip, then the steps, in lockstep)."""
    fn = chain[0]
    if args.chain or args.inputs or args.weights:
        raise UsageError(
            "a per-chip function runs alone on drawn inputs: no --chain/--inputs/--weights"
        )
    names = input_names(fn)
    whole = draw_inputs(fn, args.seed, whole_shapes(fn))
    outputs, values = mesh_reference(fn, [whole[n] for n in names])
    reference = dict(zip(output_names(fn), outputs, strict=True))
    print(f"inputs of @{fn.sym_name.data}: drawn whole with seed {args.seed}", file=out)
    if args.reference_only:
        for output, array in reference.items():
            print(checksum_line(output, array), file=out)
        print(f"PASS reference only: {len(reference)} output(s) evaluated", file=out)
        return 0
    try:
        module = compile_module(fn, args.target, accumulate=args.accumulate)
    except InternalError:
        raise
    except DiagnosticException as e:
        raise CompileRefused(e) from None
    try:
        arrays = mesh_runner(args.backend)(module, [whole[n] for n in names])
    except (SimulationError, BackendFailed) as e:
        print(f"{args.backend}: {type(e).__name__}: {e}", file=out)
        print(f"FAIL: the compiled program is wrong ({type(e).__name__})", file=out)
        return 1
    simulated = dict(zip(output_names(fn), arrays, strict=True))
    bad = []
    for c in compare_outputs(fn, reference, values, simulated, args.accumulate):
        print(c.line(), file=out)
        bad += [] if c.ok else [c.name]
    if bad:
        print(f"FAIL: {', '.join(bad)} outside tolerance", file=out)
        return 1
    print(f"PASS: {len(simulated)} output(s) within tolerance on {args.target}", file=out)
    return 0


class Compiled:
    """The chain's functions compiled together for the target (one module: one deployment), and
    each function's program run on the backend. Compiled when the first function runs, after its
    reference: an input the reference refuses is reported before any compile."""

    def __init__(self, args: argparse.Namespace, chain: Sequence[FuncOp], out: TextIO):
        self.args, self.chain, self.out = args, chain, out
        self.module: ModuleOp | None = None
        self.predicted = 0.0
        self.failure = ""
        # A mesh preset: one deployment over the mesh, each chip the mesh's chip.
        self.mesh = mesh_named(args.target)
        try:
            self.target = chip_target(args.target) if self.mesh else load_target(args.target)
        except TargetError as e:
            raise UsageError(str(e)) from None

    @property
    def stores_bfp8_b(self) -> bool:
        """The program stores Q8_0 tensors as bfp8_b: its backend prints them as the target
        stores them (Q8_0_AS_STORED) and the target stores them so (Target.q8_0_storage)."""
        return self.args.backend in Q8_0_AS_STORED and self.target.q8_0_storage == "bfp8_b"

    @property
    def timing(self) -> str:
        if not self.args.timing:
            return ""
        return f"; predicted {self.predicted:.3f} us on {self.target.name}"

    def compiled(self) -> ModuleOp:
        if self.module is None:
            fns = self.chain if self.args.chain else self.chain[0]
            keys = ("prefer_sharded", "prefer_experts", "distributed_norm") if self.mesh else ()
            options = {
                k: v for k in ("accumulate", *keys) if (v := getattr(self.args, k)) is not None
            }
            try:
                self.module = compile_module(fns, self.args.target, **options)
            except InternalError:
                raise  # the compiler's own bug, reported as such, not as a refusal
            except DiagnosticException as e:
                raise CompileRefused(e) from None
        return self.module

    def run(self, fn: FuncOp, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray] | None:
        """`fn`'s outputs as its program computes them; None where the program is found wrong
        (what was wrong is printed, and kept in `failure`)."""
        module = self.compiled()
        if self.args.chain:
            module = entry_module(module, fn.sym_name.data)
        check_budget(
            "the reference and the simulator",
            reference_bytes(fn) + simulator_bytes(module, self.target),
            parse_bytes(self.args.memory_budget, "--memory-budget"),
        )
        if self.args.timing:
            for section, us in predicted_us(module, self.target):
                print(f"predicted @{section}: {us:.3f} us", file=self.out)
                self.predicted += us
        try:
            if self.mesh is not None:
                arrays = mesh_runner(self.args.backend)(
                    module, [inputs[n] for n in input_names(fn)]
                )
                return dict(zip(output_names(fn), arrays, strict=True))
            return simulated_outputs(fn, module, inputs, self.args.backend)
        except (SimulationError, BackendFailed) as e:
            print(f"{self.args.backend}: {type(e).__name__}: {e}", file=self.out)
            self.failure = type(e).__name__
            return None


def _sources(args: argparse.Namespace) -> dict[str, str]:
    try:
        return {str(Path(args.file)): Path(args.file).read_text()}
    except (OSError, UnicodeDecodeError):
        return {}


def _error(message: str) -> int:
    print(f"spatial-run: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as e:  # argparse: --help exits 0, a usage error 2
        return 0 if e.code in (0, None) else 2
    try:
        with capture_diagnostic_ops():
            return run(args, sys.stdout)
    except (UsageError, EvaluationError, OutOfRange, OverBudget, ChainError) as e:
        return _error(str(e))
    except InvalidTarget as e:
        return _error(str(e))
    except CompileRefused as e:
        # The refusal first (one line, as before), then where it is: file:line:col, the op's line.
        located = format_diagnostic(e.diagnostic, _sources(args), "spatial-run").split("\n")
        print(f"spatial-run: compile refused: {e}", file=sys.stderr)
        if not located[0].startswith("spatial-run:"):
            at = located[0].split(": error: ", 1)[0]
            print("\n".join([f"{at}: note: the op refused", *located[1:]]), file=sys.stderr)
        return 1
    except NotSimulated as e:
        print(f"spatial-run: cannot simulate: {e}", file=sys.stderr)
        return 1
    except BackendUnavailable as e:
        print(f"spatial-run: backend unavailable: {e}", file=sys.stderr)
        return 1
    except ParseError as e:
        print(
            f"spatial-run: error: cannot parse {args.file}:\n{format_parse_error(e)}",
            file=sys.stderr,
        )
        return 1
    except DiagnosticException as e:  # the verifier of tg
        print(format_diagnostic(e, _sources(args), "spatial-run"), file=sys.stderr)
        return 1
    except RecursionError:
        return _error("the input is nested too deeply to process")
    except MemoryError:
        return _error("out of memory (lower the sizes, or see --memory-budget)")
    except OSError as e:  # writing --save
        return _error(f"cannot write '{e.filename}': {e.strerror}")
    except Exception as e:  # noqa: BLE001 - a bug must still not greet the user with a traceback
        if os.environ.get("SPATIAL_RUN_TRACEBACK"):
            traceback.print_exc()
        return _error(
            f"internal error: {type(e).__name__}: {e} "
            "(please report it; SPATIAL_RUN_TRACEBACK=1 shows where)"
        )


if __name__ == "__main__":
    sys.exit(main())
