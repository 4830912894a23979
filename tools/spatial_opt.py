"""spatial-opt: xdsl-opt with the tg and sp dialects, our passes and our output targets.

    spatial-opt FILE.mlir --pass-pipeline='builtin.module(spatial-pipeline{target=h100})' -t report

Every user error ends in a diagnostic on stderr and exit status 1, never a Python traceback:
parse and verifier errors, pass failures (typed diagnostics at the offending op), an unknown pass,
option or output target, a missing file. A diagnostic about an op prints as MLIR's do,
`file:line:col: error: MESSAGE`, then the op's source line and a caret; `--print-ir-on-diagnostic`
adds the whole module in generic form with the op marked (xDSL's rendering). A crash inside the
compiler is reported as an internal error; SPATIAL_OPT_TRACEBACK=1 shows its traceback.

As mlir-opt users expect (docs/passes.md#spatial-opt):
- `--pass-pipeline` beside `-p`, plain (`spatial-pipeline{target=h100}`) or anchored
  (`builtin.module(spatial-pipeline{target=h100})`, `builtin.module(func.func(link))`: our
  passes all run on the module, so a `func.func(...)` nest is the same passes);
- `-` (or no file) reads standard input;
- `--split-input-file` goes on past a failing chunk, reports each, and exits 1 if any failed;
- `--verify-diagnostics` checks `// expected-error {{...}}` annotations (`@above`, `@below`,
  `@+N`, `@-N`) against the diagnostics produced, and fails on a missing, extra or different one;
- `--help` lists our passes and their options;
- `spatial-pipeline` runs as its five passes, so `--time-passes` and `--print-between-passes`
  show each.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import os
import re
import sys
import traceback
from collections.abc import Iterator, Sequence
from typing import get_type_hints

from xdsl.passes import PassPipeline
from xdsl.utils.arg_spec import parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from spatial_dialect import get_all_dialects
from spatial_dialect.passes import get_all_output_targets, get_all_passes
from spatial_dialect.passes.pipeline import verify_output
from spatial_dialect.tools.frontend.diagnostics import (
    capture_diagnostic_ops,
    diagnostic_location,
    format_diagnostic,
    format_parse_error,
    parse_error_line,
    parse_source,
)
from spatial_dialect.tools.frontend.fast_printer import FastMLIRTarget


class UsageError(Exception):
    """A command line that cannot run: one line on stderr, exit 1."""


# --pass-pipeline -------------------------------------------------------------------------------


def _split_top(text: str) -> list[str]:
    """Split on commas outside brackets and quotes."""
    parts, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(text):
        if c == '"':
            quoted = not quoted
        elif quoted:
            continue
        elif c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


_NEST = re.compile(r"^(builtin\.module|func\.func|any)\((.*)\)$", re.S)


def normalize_pipeline(text: str) -> str:
    """MLIR's textual pipeline to xDSL's: `builtin.module(a,func.func(b))` is `a,b` (every pass
    of ours runs over the whole module, each function in it included)."""
    out = []
    for part in _split_top(text.strip()):
        m = _NEST.match(part)
        if m:
            inner = normalize_pipeline(m.group(2))
            if inner:
                out.append(inner)
        elif "(" in part.split("{", 1)[0]:
            raise UsageError(
                f"--pass-pipeline: cannot anchor passes on {part.split('(', 1)[0]!r}; "
                "use builtin.module(...) or func.func(...)"
            )
        else:
            out.append(part)
    return ",".join(out)


# --help ----------------------------------------------------------------------------------------


def _type_name(t: object) -> str:
    return str(t).replace("typing.", "").replace("<class '", "").replace("'>", "")


def passes_help() -> str:
    """Our passes, one line each with the first line of their documentation, and their options
    (name, type, default)."""
    lines = ["passes of spatial-dialect (docs/passes.md):"]
    for name, factory in get_all_passes().items():
        cls = factory()
        doc = " ".join((cls.__doc__ or "").strip().split("\n\n")[0].split())
        lines.append(f"  {name}: {doc}")
        hints = get_type_hints(cls)
        for f in dataclasses.fields(cls):
            if f.name == "name":
                continue
            default = f.default if f.default is not dataclasses.MISSING else "required"
            lines.append(
                f"      {f.name.replace('_', '-')}: {_type_name(hints.get(f.name, f.type))}"
                f" (default {default})"
            )
    lines.append(
        "run them with -p or --pass-pipeline, e.g. "
        "--pass-pipeline='builtin.module(spatial-pipeline{target=h100})'"
    )
    return "\n".join(lines)


# Option errors ---------------------------------------------------------------------------------

_INCOMPATIBLE = re.compile(r"Incompatible types: given \((.*?),?\), expected (.*)")


def explain_option_error(spec: str, available, err: ValueError) -> str:
    """xDSL's `Incompatible types: given (3,), expected str | None` names neither the pass nor
    the option: find them by trying the options one at a time."""
    message = str(err).strip().split("\n")[0]
    if not _INCOMPATIBLE.match(message):
        return message
    try:
        specs = list(parse_pipeline(spec))
    except ArgSpecParseError:
        return message
    for pass_spec in specs:
        if pass_spec.name not in available:
            continue
        cls = available[pass_spec.name]()
        for option, value in pass_spec.parameters.items():
            one = dataclasses.replace(pass_spec, parameters={option: value})
            try:
                cls.from_pass_spec(one)
            except ValueError as e:
                m = _INCOMPATIBLE.match(str(e).strip())
                expected = m.group(2) if m else "another type"
                shown = " ".join(str(v) for v in value)
                return f"{pass_spec.name}: option {option} expects {expected}, got {shown!r}" + (
                    ' (quote text values: option="...")' if "str" in expected else ""
                )
    return message


# The tool --------------------------------------------------------------------------------------

_EXPECTED = re.compile(
    r"//\s*expected-(error|warning|note|remark)\s*(?:@(above|below|[+-]\d+|unknown))?\s*\{\{(.*?)\}\}"
)


@dataclasses.dataclass
class Expected:
    severity: str
    line: int | None  # None: @unknown
    text: str
    annotation_line: int


def expected_diagnostics(chunk: str, offset: int) -> list[Expected]:
    found = []
    for index, line in enumerate(chunk.split("\n")):
        at = index + 1 + offset
        for m in _EXPECTED.finditer(line):
            where = m.group(2)
            if where is None:
                target = at
            elif where == "above":
                target = at - 1
            elif where == "below":
                target = at + 1
            elif where == "unknown":
                target = None
            else:
                target = at + int(where)
            found.append(Expected(m.group(1), target, m.group(3).strip(), at))
    return found


class SpatialOptMain(xDSLOptMain):
    version_format = "spatial-opt (built on xDSL {xdsl_version})"

    def register_all_dialects(self) -> None:
        # xDSL's own dialects plus every xdsl.universe plugin, ours included once installed:
        # registering a name twice raises, so only what the plugin did not already bring.
        super().register_all_dialects()
        for name, factory in get_all_dialects().items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in get_all_passes().items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        # xDSL's `mlir` target printed by FastPrinter: the same text (frontend/fast_printer.py)
        self.available_targets["mlir"] = lambda: FastMLIRTarget
        for name, emit in get_all_output_targets().items():
            self.available_targets[name] = emit  # type: ignore[assignment]

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument(
            "--pass-pipeline",
            default=None,
            help="the pass pipeline, as mlir-opt takes it: 'spatial-pipeline{target=h100}' or "
            "'builtin.module(spatial-pipeline{target=h100})' (the same as -p)",
        )
        arg_parser.add_argument(
            "--print-ir-on-diagnostic",
            default=False,
            action="store_true",
            help="with a diagnostic, also print the whole module in generic form, the op "
            "marked (like mlir-opt's -mlir-print-op-on-diagnostic)",
        )
        arg_parser.formatter_class = argparse.RawDescriptionHelpFormatter
        arg_parser.epilog = passes_help()
        for action in arg_parser._actions:
            if action.dest == "verify_diagnostics":
                action.help = (
                    "check the diagnostics against the input's expected-error / "
                    "expected-warning annotations; exit 1 on a missing, extra or different one"
                )
            elif action.dest == "split_input_file":
                action.help = (
                    "process each `// -----` chunk on its own; go on past a failing chunk and "
                    "exit 1 if any failed"
                )
            elif action.dest == "input_file":
                action.help = "path to the input file ('-' or none: standard input)"

    def setup_pipeline(self) -> None:
        if self.args.pass_pipeline is not None:
            if self.args.passes:
                raise UsageError("give the pipeline with -p or with --pass-pipeline, not both")
            self.args.passes = normalize_pipeline(self.args.pass_pipeline)
        try:
            super().setup_pipeline()
        except ValueError as err:
            raise UsageError(
                explain_option_error(self.args.passes, self.available_passes, err)
            ) from None
        # Under a per-pass flag, spatial-pipeline runs as its passes, so the flag sees each of
        # them; otherwise as one pass, which tiles, places, fuses and sizes each distinct section
        # once (passes/section_memo.py; the output is the same). The module is verified before
        # and after the pipeline, as before, not between its own passes.
        per_pass = self.args.time_passes or self.args.print_between_passes
        expanded: list = []
        inner: set[int] = set()  # ids of passes followed by another pass of the same pipeline
        for p in self.pipeline.passes:
            sub = getattr(p, "passes", None)
            if per_pass and p.name == "spatial-pipeline" and callable(sub):
                parts = list(sub())
                inner.update(id(q) for q in parts[:-1])
                expanded.extend(parts)
            else:
                expanded.append(p)
        self.pipeline = PassPipeline(tuple(expanded), self._callback(inner))

    def _callback(self, inner: set[int]):
        """xDSL's callback (timing, verification, --print-between-passes), verifying only where
        a spatial-pipeline does not go on."""
        import time

        from xdsl.printer import Printer

        start = time.perf_counter()

        def callback(previous, module, next_pass) -> None:
            nonlocal start
            if self.args.time_passes and previous is not None:
                print(f"Pass {previous.name} took {time.perf_counter() - start} seconds")
            if not self.args.disable_verify and id(previous) not in inner:
                if previous is None:
                    module.verify()  # the input: its verifier errors are the user's
                else:  # InternalError: the compiler's, named after the pass that ran last
                    sub = getattr(previous, "passes", None)
                    last = sub()[-1] if previous.name == "spatial-pipeline" and sub else previous
                    verify_output(module, last.name)
            if previous and next_pass and self.args.print_between_passes:
                print(f"IR after {previous.name}:")
                Printer(stream=sys.stdout).print_op(module)
                print("\n\n\n")
            if self.args.time_passes and next_pass is not None:
                start = time.perf_counter()

        return callback

    def read_input(self) -> tuple[str, str]:
        path = self.args.input_file
        if path is None or path == "-":
            data, name = sys.stdin.buffer.read(), "<stdin>"
        else:
            with open(path, "rb") as f:
                data, name = f.read(), path
        try:
            return data.decode("utf-8"), name
        except UnicodeDecodeError as e:
            raise UsageError(f"{name}: not UTF-8 text (byte {e.start})") from None

    def run(self) -> int:  # type: ignore[override]
        text, name = self.read_input()
        sources = {name: text}
        if self.args.split_input_file:
            pieces = text.split("// -----")
            offsets, line = [], 0
            for piece in pieces:
                offsets.append(line)
                line += piece.count("\n")
            chunks = list(zip(pieces, offsets, strict=True))
        else:
            chunks = [(text, 0)]
        output = self.prepare_output()
        failed = False
        try:
            for i, (chunk, offset) in enumerate(chunks):
                if i > 0:
                    output.write("// -----\n")
                produced: list[tuple[int | None, str, str]] = []  # (line, message, rendering)
                try:
                    module = parse_source(
                        self.ctx, chunk, name, offset, not self.args.no_implicit_module
                    )
                    self.apply_passes(module)
                    output.write(self.output_resulting_program(module))
                except ParseError as e:
                    if self.args.parsing_diagnostics:
                        print(e)
                        continue
                    produced.append((parse_error_line(e), e.msg, format_parse_error(e)))
                except DiagnosticException as e:
                    loc = diagnostic_location(e)
                    produced.append(
                        (
                            None if loc is None else loc.line.data,
                            str(e).strip(),
                            format_diagnostic(e, sources, "spatial-opt"),
                        )
                    )
                output.flush()
                if self.args.verify_diagnostics:
                    failed |= not self.check_expected(chunk, offset, produced, name)
                    continue
                for _, _, rendering in produced:
                    print(rendering, file=sys.stderr, flush=True)
                    failed = True
                if produced and not self.args.split_input_file:
                    break
        finally:
            if output is not sys.stdout:
                output.close()
        return 1 if failed else 0

    def check_expected(
        self, chunk: str, offset: int, produced: list[tuple[int | None, str, str]], name: str
    ) -> bool:
        """mlir-opt's -verify-diagnostics: every expected diagnostic produced, nothing else."""
        expected = expected_diagnostics(chunk, offset)
        unmatched = list(produced)
        ok = True
        for want in expected:
            hit = next(
                (
                    p
                    for p in unmatched
                    if want.severity == "error" and p[0] == want.line and want.text in p[1]
                ),
                None,
            )
            if hit is None:
                where = "an unknown location" if want.line is None else f"line {want.line}"
                print(
                    f"{name}:{want.annotation_line}: error: expected {want.severity} "
                    f"at {where} was not produced: {want.text}",
                    file=sys.stderr,
                )
                ok = False
            else:
                unmatched.remove(hit)
        for _, _, rendering in unmatched:
            print(f"{name}: error: unexpected diagnostic:\n{rendering}", file=sys.stderr)
            ok = False
        return ok


def _fail(message: str) -> int:
    print(f"spatial-opt: error: {message}", file=sys.stderr)
    return 1


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Python's cyclic collector, tuned for one compile: what is loaded by now (the modules,
    the dialects) is frozen out of its scans, and a young collection runs every 10,000
    allocations rather than 700. On the 80-layer Llama-3-70B step the defaults make 1,278
    collections costing ~2.1 CPU s of 13; these make 84 costing ~0.5 s, for 2 MB more peak
    memory (the IR's cycles are still collected, only less often). Restored on return, for
    a caller that runs main() in its own process (the tests)."""
    threshold = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(10_000, 10, 10)
    try:
        yield
    finally:
        gc.set_threshold(*threshold)
        gc.unfreeze()


def main(argv: Sequence[str] | None = None) -> int:
    print_ir = "--print-ir-on-diagnostic" in (sys.argv[1:] if argv is None else argv)
    with _few_collections(), capture_diagnostic_ops(print_ir):
        try:
            tool = SpatialOptMain(description="spatial-dialect compiler driver", args=argv)
            return tool.run()
        except SystemExit as e:
            # argparse reports a bad flag itself and exits 2; --help and --version exit 0.
            return 0 if e.code in (0, None) else 1
        except ArgSpecParseError as e:  # a malformed `pass{...}` spec (a BaseException)
            return _fail(str(e).strip().split("\n")[0])
        except UsageError as e:
            return _fail(str(e))
        except (DiagnosticException, ParseError) as e:
            print(f"spatial-opt: error: {e}", file=sys.stderr)
            return 1
        except FileNotFoundError as e:
            return _fail(f"cannot open '{e.filename}': no such file")
        except OSError as e:
            return _fail(f"cannot read '{e.filename}': {e.strerror}")
        except ValueError as e:  # an unknown pass or pass option
            return _fail(str(e).strip().split("\n")[0])
        except RecursionError:
            return _fail("the input is nested too deeply to process")
        except Exception as e:  # noqa: BLE001 - a compiler bug still must not greet a user with a traceback
            if os.environ.get("SPATIAL_OPT_TRACEBACK"):
                traceback.print_exc()
            return _fail(
                f"internal error: {type(e).__name__}: {e} "
                "(please report it; SPATIAL_OPT_TRACEBACK=1 shows where)"
            )


if __name__ == "__main__":
    sys.exit(main())
