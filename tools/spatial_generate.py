"""spatial-generate: greedy text generation with a checkpoint, compiled for a target.

    spatial-generate MODEL (--prompt TEXT | --ids 1,2,3) -n N --target T
                     [--backend reference|sim|tt-lang-sim|triton-interpret|triton]
                     [--dtype f32|f16|bf16] [--layers N] [--json] [--progress]

imports MODEL (a GGUF file, or a Hugging Face directory where spatial-import reads one) as one
deployment of a prefill of the prompt's length and a one-token decode, compiles it for --target
once, and generates N tokens greedily as llama.cpp does: the prefill at position 0 from zero
caches, then N - 1 decode steps, each on the last token (tools/frontend/generation.py). The
executor is our simulator by default, a vendor's (`tt-lang-sim`, `triton-interpret`, `triton`:
tools/backend/executors.py), or `reference`, the numpy reference semantics of the imported
program (no --target needed).

The prompt is text through the checkpoint's own tokenizer (tools/frontend/tokenizer.py: a
GGUF's tokenizer.ggml.* metadata, a directory's tokenizer.json) or ids. Output: one line per step
(its token, the text it decodes to, its time), then the prompt and the generated text. `--json`
prints one object, {"tokens": [the generated ids], "text": the generated text (null without a
tokenizer)}, and nothing else on stdout. A progress bar goes to stderr when it is a terminal,
or with --progress.

Errors (a bad --ids list, -n below 1, a prompt longer than the context, a checkpoint that does not
import, --prompt without a tokenizer) are one line on stderr and exit status 1; usage errors (an
unknown backend, a missing option) exit 2.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import traceback
from collections.abc import Sequence
from typing import TextIO

from spatial_dialect.tools.backend.executors import (
    BACKENDS,
    BackendFailed,
    BackendUnavailable,
)
from spatial_dialect.tools.frontend.generation import (
    REFERENCE,
    GenerationError,
    Generator,
    Step,
)
from spatial_dialect.tools.frontend.tokenizer import TokenizerError, checkpoint_tokenizer


class UsageError(Exception):
    """What was asked cannot run (one line)."""


def id_list(text: str) -> list[int]:
    """--ids' value: token ids separated by commas."""
    try:
        ids = [int(t) for t in text.split(",")]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of token ids (1,2,3)") from None
    if any(i < 0 for i in ids):
        raise argparse.ArgumentTypeError(f"{text!r}: a token id is not negative")
    return ids


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="spatial-generate", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    parser.add_argument("model", help="a GGUF file or a Hugging Face checkpoint directory")
    prompt = parser.add_mutually_exclusive_group(required=True)
    prompt.add_argument("--prompt", help="the prompt's text, through the model's tokenizer")
    prompt.add_argument("--ids", type=id_list, help="the prompt's token ids (1,2,3)")
    parser.add_argument("-n", type=int, default=16, help="tokens to generate (default 16)")
    parser.add_argument("--target", help="a preset name or a target TOML file")
    parser.add_argument(
        "--backend",
        choices=[REFERENCE, *sorted(BACKENDS)],
        default="sim",
        help="what runs each step: our simulator (default), a vendor's executor of the compiled "
        "program, or the reference semantics of the imported program",
    )
    parser.add_argument("--dtype", choices=("f32", "f16", "bf16"), help="the compute type")
    parser.add_argument("--layers", type=int, help="the first N layers (default: all)")
    parser.add_argument("--json", action="store_true", help='print {"tokens": [...], "text": ...}')
    parser.add_argument(
        "--progress", action="store_true", help="a progress bar on stderr even when not a terminal"
    )
    args = parser.parse_args(argv)
    if args.backend != REFERENCE and not args.target:
        parser.error(f"--target is required (or --backend {REFERENCE})")
    return args


class Progress:
    """A one-line bar on stderr, redrawn at each step."""

    def __init__(self, total: int, err: TextIO, on: bool) -> None:
        self.total, self.err, self.on = total, err, on

    def __call__(self, done: int, step: Step) -> None:
        if not self.on:
            return
        width = 30
        filled = width * done // self.total
        bar = "#" * filled + "." * (width - filled)
        end = "\n" if done == self.total else ""
        print(f"\r[{bar}] {done}/{self.total}", end=end, file=self.err, flush=True)


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    tokenizer = checkpoint_tokenizer(args.model)
    if args.prompt is not None:
        if tokenizer is None:
            raise UsageError(f"{args.model} carries no tokenizer: give the prompt as --ids")
        ids = tokenizer.encode(args.prompt).ids
        if not ids:
            raise UsageError("the prompt encodes to no token")
    else:
        ids = args.ids
    generator = Generator(
        args.model, len(ids), args.n, args.target, args.backend, args.dtype, args.layers
    )
    generator.check_ids(ids)

    def on_step(done: int, step: Step) -> None:
        piece = f" {json.dumps(tokenizer.decode([step.token])):<16}" if tokenizer else ""
        line = f"step {done:>3} @{step.function:<16} id {step.token:>6}{piece} {step.seconds:.3f} s"
        if not args.json:
            print(line, file=out, flush=True)
        progress(done, step)

    progress = Progress(args.n, err, args.progress or (err.isatty() and not args.json))
    if not args.json:
        where = "the reference" if args.backend == REFERENCE else f"{args.target} ({args.backend})"
        print(
            f"spatial-generate: {len(ids)} prompt token(s), {args.n} to generate on {where}; "
            f"compiled in {generator.compile_seconds:.2f} s",
            file=out,
        )
    result = generator.generate(ids, on_step)
    text = tokenizer.decode(result.tokens) if tokenizer is not None else None
    if args.json:
        print(json.dumps({"tokens": result.tokens, "text": text}), file=out)
        return 0
    decode = [s.seconds for s in result.steps[1:]]  # every step after the prefill decodes
    rate = f", {len(decode) / sum(decode):.2f} tokens/s decoding" if decode and sum(decode) else ""
    print(f"generated {len(result.tokens)} token(s){rate}", file=out)
    if text is None:
        print(" ".join(map(str, result.tokens)), file=out)
    else:
        print(tokenizer.decode(list(ids)) + text, file=out)
    return 0


def _error(message: str) -> int:
    print(f"spatial-generate: error: {message}", file=sys.stderr)
    return 1


def main(argv: Sequence[str] | None = None) -> int:
    try:
        args = parse_args(argv)
    except SystemExit as e:  # argparse: --help exits 0, a usage error 2
        return 0 if e.code in (0, None) else 2
    from xdsl.utils.exceptions import DiagnosticException

    from spatial_dialect.sp.errors import InternalError, InvalidTarget
    from spatial_dialect.targets import TargetError
    from spatial_dialect.tools.interpreters.numerics import EvaluationError
    from spatial_dialect.tools.simulator.program import NotSimulated, SimulationError
    from spatial_dialect.tools.spatial_import import CHECKPOINT_ERRORS

    try:
        return run(args, sys.stdout, sys.stderr)
    except (UsageError, GenerationError, TokenizerError, TargetError, *CHECKPOINT_ERRORS) as e:
        return _error(str(e))
    except InvalidTarget as e:
        return _error(str(e))
    except EvaluationError as e:  # an input the reference refuses (an id outside the vocabulary)
        return _error(str(e))
    except BackendUnavailable as e:
        print(f"spatial-generate: backend unavailable: {e}", file=sys.stderr)
        return 1
    except (BackendFailed, SimulationError) as e:  # the executor found the program wrong
        return _error(f"{args.backend} rejected the program: {type(e).__name__}: {e}")
    except NotSimulated as e:
        return _error(f"cannot simulate: {e}")
    except InternalError as e:  # the compiler's own bug, not a refusal of the program
        return _error(f"internal error: {str(e).strip()} (please report it)")
    except DiagnosticException as e:
        print(f"spatial-generate: compile refused: {str(e).strip()}", file=sys.stderr)
        return 1
    except Exception as e:  # noqa: BLE001 - a bug must still not greet the user with a traceback
        if os.environ.get("SPATIAL_GENERATE_TRACEBACK"):
            traceback.print_exc()
        return _error(
            f"internal error: {type(e).__name__}: {e} "
            "(please report it; SPATIAL_GENERATE_TRACEBACK=1 shows where)"
        )


if __name__ == "__main__":
    sys.exit(main())
