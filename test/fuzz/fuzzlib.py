"""Seeded mutants of the shipped examples and broken TOML targets, and an in-process runner that
classifies each run (issue 16): exit 0, exit 1 with a diagnostic, an internal error, or a hang
(over the time limit). test/fuzz/test_fuzz.py runs a seeded subset; bench/fuzz.py the full table."""

from __future__ import annotations

import contextlib
import io
import random
import re
import signal
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["tiny_decode", "tiny_prefill", "tiny_decode_f32", "tiny_prefill_f32", "gemm_small"]
TEMPLATE_TARGET = ROOT / "examples" / "targets" / "tensix_4x4.toml"

_DIM = re.compile(r"(?<=[<x])(\d+)(?=x|[a-z])")


def _lines(text: str) -> list[str]:
    return text.split("\n")


def mutate_program(text: str, rng: random.Random) -> tuple[str, str]:
    """One mutation of a program: (kind, mutated text)."""
    lines = _lines(text)
    body = [i for i, line in enumerate(lines) if "= tg." in line or "func.return" in line]
    kind = rng.choice(
        [
            "dimension",
            "huge",
            "zero",
            "swap_types",
            "delete",
            "duplicate",
            "swap_lines",
            "truncate",
            "bytes",
            "property",
            "unknown_op",
            "nesting",
            "int64",
            "scale",
        ]
    )
    if kind == "scale":  # every dimension of one size replaced consistently: a valid program
        dims = sorted({m.group() for m in _DIM.finditer(text)})
        old = rng.choice(dims)
        new = str(rng.choice([1, 7, 2048, 65536, 131072, 10**6, 2**40]))
        return kind, _DIM.sub(lambda m: new if m.group() == old else m.group(), text)
    if kind in ("dimension", "huge", "zero", "int64"):
        dims = list(_DIM.finditer(text))
        m = rng.choice(dims)
        value = {
            "dimension": str(rng.choice([1, 2, 3, 31, 33, 64, 100, 127, 4097])),
            "huge": str(rng.choice([2**40, 1_000_000, 131072, 2**31])),
            "zero": "0",
            "int64": str(rng.choice([2**63 - 1, 2**63, 2**64 + 5, 10**20])),
        }[kind]
        return kind, text[: m.start()] + value + text[m.end() :]
    if kind == "swap_types":
        types = list(re.finditer(r"tensor<[^>]*>", text))
        a, b = rng.sample(types, 2)
        if a.start() > b.start():
            a, b = b, a
        return kind, (
            text[: a.start()] + b.group() + text[a.end() : b.start()] + a.group() + text[b.end() :]
        )
    if kind == "delete":
        i = rng.choice(body)
        return kind, "\n".join(lines[:i] + lines[i + 1 :])
    if kind == "duplicate":
        i = rng.choice(body)
        return kind, "\n".join(lines[: i + 1] + [lines[i]] + lines[i + 1 :])
    if kind == "swap_lines":
        i, j = sorted(rng.sample(body, 2)) if len(body) > 1 else (body[0], body[0])
        lines[i], lines[j] = lines[j], lines[i]
        return kind, "\n".join(lines)
    if kind == "truncate":
        return kind, text[: rng.randrange(len(text))]
    if kind == "bytes":
        chars = list(text)
        for _ in range(rng.randint(1, 5)):
            chars[rng.randrange(len(chars))] = rng.choice('(){}[]<>%@:,=x0129."\\ \n\x00é')
        return kind, "".join(chars)
    if kind == "property":
        new = rng.choice(
            ["eps 3 ", 'eps "x" ', "eps -1.0 ", "eps 0.0 ", "eps 1.0e+40 ", "eps inf "]
        )
        if "eps " in text:
            return kind, re.sub(r"eps \S+ ", new, text, count=1)
        return kind, text.replace("tg.matmul", 'tg.matmul {scale = "x"}', 1)
    if kind == "unknown_op":
        return kind, text.replace("tg.", rng.choice(["tg.matmull", "tg.", "foo."]) + "", 1).replace(
            "tg.tg.", "tg.nosuchop "
        )
    # nesting
    depth = rng.choice([70, 500, 5000])
    opener = rng.choice(["(", "[", "{", "<"])
    at = rng.randrange(len(text))
    return kind, text[:at] + opener * depth + text[at:]


def program_mutants(count: int, seed: int) -> list[tuple[str, str, str]]:
    """(name, kind, text) for `count` mutants, deterministic in `seed`."""
    rng = random.Random(seed)
    sources = {e: (ROOT / "examples" / f"{e}.mlir").read_text() for e in EXAMPLES}
    out = []
    for n in range(count):
        example = EXAMPLES[n % len(EXAMPLES)]
        kind, text = mutate_program(sources[example], rng)
        out.append((f"{example}#{n}", kind, text))
    return out


_FIELD = re.compile(r"^([a-z_]+)\s*=\s*(.+)$")


def mutate_target(text: str, rng: random.Random) -> tuple[str, str]:
    lines = _lines(text)
    fields = [i for i, line in enumerate(lines) if _FIELD.match(line)]
    kind = rng.choice(
        [
            "missing",
            "type",
            "negative",
            "zero",
            "nan",
            "absurd",
            "nested",
            "noc",
            "tile_bytes",
            "huge_latency",
        ]
    )
    i = rng.choice(fields)
    key = _FIELD.match(lines[i]).group(1)
    if kind == "missing":
        lines[i] = ""
    elif kind == "nested":
        lines.append("deep = " + "{a = " * rng.choice([50, 2000]) + "1" + "}" * 2000)
    elif kind == "noc":
        lines.append(f"receiver_noc = {rng.choice([2, 7, 1000])}")
    elif kind == "tile_bytes":
        lines = [re.sub(r"^bf16 = 2048", "bf16 = 1000", line) for line in lines]
        lines.append("[tile_bytes]\nf32 = 17")
    elif kind == "huge_latency":
        lines.append(
            rng.choice(
                [
                    "credit_return_cycles = 99999999",
                    "fetch_tile_cycles = 10000000",
                    "mesh_x = 99999999",
                    "mesh_y = 99999999",
                    "local_mem_base = 1000000000000",
                ]
            )
        )
    else:
        value = {
            "type": rng.choice(['"abc"', "true", "[1, 2]", "{ x = 1 }", "1.5"]),
            "negative": "-4",
            "zero": "0",
            "nan": rng.choice(["nan", "inf", "-inf"]),
            "absurd": rng.choice(["1000000000000000", "99999999999", "4294967296"]),
        }[kind]
        lines[i] = f"{key} = {value}"
    return f"{kind}:{key}", "\n".join(lines)


def target_mutants(count: int, seed: int) -> list[tuple[str, str, str]]:
    rng = random.Random(seed)
    base = TEMPLATE_TARGET.read_text()
    out = []
    for n in range(count):
        kind, text = mutate_target(base, rng)
        out.append((f"target#{n}", kind, text))
    return out


# Running ------------------------------------------------------------------------------------------


class Hang(BaseException):
    """Raised by the alarm: a BaseException, so the tools' own `except Exception` cannot hide it."""


@dataclass
class Outcome:
    tool: str
    name: str
    kind: str
    rc: int | None
    verdict: str  # success, diagnostic, internal, hang, silent
    stderr: str


def run_tool(main, argv: list[str], limit_s: int) -> tuple[int | None, str, str, bool]:
    """main(argv) in this process with stdout/stderr captured: (rc, stdout, stderr, hung)."""
    out, err = io.StringIO(), io.StringIO()

    def alarm(signum, frame):
        raise Hang()

    old = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(limit_s)
    rc, hung = None, False
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            rc = main(argv)
    except Hang:
        hung = True
    except SystemExit as e:
        rc = e.code if isinstance(e.code, int) else 1
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    return rc, out.getvalue(), err.getvalue(), hung


def classify(rc: int | None, stderr: str, hung: bool) -> str:
    if hung:
        return "hang"
    if "internal error" in stderr or "Traceback" in stderr:
        return "internal"
    if rc == 0:
        return "success"
    if rc == 1 and "error" in stderr:
        return "diagnostic"
    return "silent"  # exit 1 with nothing said, or another status: a failure too


def opt_case(name: str, kind: str, text: str, target: str, workdir: Path, limit_s: int) -> Outcome:
    from spatial_dialect.tools.spatial_opt import main

    path = workdir / f"{re.sub(r'[^a-z0-9_]', '_', name)}.mlir"
    path.write_text(text, errors="replace")
    rc, _, err, hung = run_tool(
        main, [str(path), "-p", f"spatial-pipeline{{target={target}}}", "-t", "report"], limit_s
    )
    return Outcome("spatial-opt", f"{name}@{target}", kind, rc, classify(rc, err, hung), err)


def run_case(name: str, kind: str, text: str, target: str, workdir: Path, limit_s: int) -> Outcome:
    from spatial_dialect.tools.spatial_run import main

    path = workdir / f"{re.sub(r'[^a-z0-9_]', '_', name)}.mlir"
    path.write_text(text, errors="replace")
    rc, out, err, hung = run_tool(main, [str(path), "--target", target], limit_s)
    verdict = classify(rc, err, hung)
    if verdict == "silent" and rc == 1 and "FAIL" in out:
        verdict = "fail"  # the simulator disagrees with the reference: reported, but a bug
    return Outcome("spatial-run", f"{name}@{target}", kind, rc, verdict, err + out[-400:])


def target_case(name: str, kind: str, text: str, how: str, workdir: Path, limit_s: int) -> Outcome:
    path = workdir / f"{re.sub(r'[^a-z0-9_]', '_', name)}.toml"
    path.write_text(text)
    program = str(ROOT / "examples" / "gemm_small.mlir")
    if how == "opt":
        from spatial_dialect.tools.spatial_opt import main

        argv = [program, "-p", f'spatial-pipeline{{target="{path}"}}', "-t", "report"]
    elif how == "memory-map":
        from spatial_dialect.tools.spatial_opt import main

        argv = [program, "-p", f'spatial-pipeline{{target="{path}"}}', "-t", "memory-map"]
    else:
        from spatial_dialect.tools.spatial_run import main

        argv = [program, "--target", str(path)]
    rc, _, err, hung = run_tool(main, argv, limit_s)
    tool = "spatial-run" if how == "run" else "spatial-opt"
    return Outcome(tool, f"{name}/{how}", kind, rc, classify(rc, err, hung), err)


def workdir() -> Path:
    return Path(tempfile.mkdtemp(prefix="spatial-fuzz-"))


# Byte-level mutations of binary files (GGUF, safetensors), and an isolated runner ----------------


def truncated(data: bytes, rng: random.Random, lo: int = 0, hi: int | None = None) -> bytes:
    """`data` cut at a random byte in [lo, hi) (a region: a header, one field, the data)."""
    hi = len(data) if hi is None else hi
    return data[: rng.randrange(lo, max(hi, lo + 1))]


def bit_flips(data: bytes, rng: random.Random, lo: int = 0, hi: int | None = None) -> bytes:
    """1 to 8 random bits of [lo, hi) flipped."""
    hi = len(data) if hi is None else hi
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(lo, hi)] ^= 1 << rng.randrange(8)
    return bytes(out)


OVERWRITES = (b"\xff" * 8, b"\x00" * 8, b"\xff\xff\xff\x7f", b"\x00\x00\x00\x80", b"\xff\xfe")


def overwritten(data: bytes, rng: random.Random, lo: int = 0, hi: int | None = None) -> bytes:
    """A run of all-ones, zeros, a sign bit or invalid UTF-8 written at a random byte of
    [lo, hi): a length, count or id becomes huge, zero or negative."""
    hi = len(data) if hi is None else hi
    at, pattern = rng.randrange(lo, hi), rng.choice(OVERWRITES)
    return data[:at] + pattern[: len(data) - at] + data[at + len(pattern) :]


def byte_mutation(
    data: bytes, rng: random.Random, regions: list[tuple[int, int]]
) -> tuple[str, bytes]:
    """One generic mutation of `data` inside one of `regions` (the parts of the file worth
    damaging: a header whose every byte is read, rather than megabytes of weights)."""
    lo, hi = rng.choice(regions)
    kind = rng.choice(["truncate", "bit_flip", "overwrite"])
    mutate = {"truncate": truncated, "bit_flip": bit_flips, "overwrite": overwritten}[kind]
    return kind, mutate(data, rng, lo, hi)


@dataclass
class Isolated:
    rc: int | None
    stdout: str
    stderr: str
    hung: bool
    seconds: float  # the tool's own time, without the fork


def isolated(main, argv: list[str], limit_s: int, memory_bytes: int) -> Isolated:
    """main(argv) in a forked child (the tools are imported already: no interpreter start) with
    its address space limited to `memory_bytes` more than the parent's, so a blow-up is a
    MemoryError rather than a swapping machine, and killed after `limit_s` (a hang). An exception
    that escapes main is reported as an internal error with its traceback."""
    import json
    import os
    import resource
    import select
    import time
    import traceback

    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns
        os.close(read_end)
        try:
            with open("/proc/self/status") as f:
                vm = next(int(line.split()[1]) * 1024 for line in f if line.startswith("VmSize"))
            _, hard = resource.getrlimit(resource.RLIMIT_AS)
            resource.setrlimit(resource.RLIMIT_AS, (vm + memory_bytes, hard))
            start = time.perf_counter()
            rc, out, err, hung = run_tool(main, argv, limit_s)
            result = {"rc": rc, "out": out, "err": err, "hung": hung}
        except BaseException:  # noqa: BLE001 - whatever escapes is the finding
            result = {"rc": None, "out": "", "err": "Traceback\n" + traceback.format_exc()}
            result["hung"] = False
        result["seconds"] = time.perf_counter() - start if "start" in locals() else 0.0
        payload = json.dumps(result).encode()
        with contextlib.suppress(BaseException):
            while payload:
                payload = payload[os.write(write_end, payload) :]
        os._exit(0)
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + limit_s + 10
    while True:
        ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:  # the child is stuck somewhere the alarm does not reach
            os.kill(pid, signal.SIGKILL)
            break
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    os.waitpid(pid, 0)
    if not chunks:
        return Isolated(None, "", "killed: no result from the child", True, float(limit_s))
    r = json.loads(b"".join(chunks))
    return Isolated(r["rc"], r["out"], r["err"], r["hung"], r["seconds"])


def binary_verdict(r: Isolated) -> str:
    """`classify`, and a run that ran out of memory is a blow-up even when the tool said so
    cleanly (spatial-run turns MemoryError into a line): no metadata may size an allocation."""
    if "out of memory" in r.stderr or "MemoryError" in r.stderr:
        return "memory"
    verdict = classify(r.rc, r.stderr, r.hung)
    if verdict == "diagnostic" and r.stderr.strip().count("\n"):
        return "lines"  # a refusal is one line
    if verdict == "diagnostic" and _RAW.search(r.stderr):
        return "raw"  # a library's exception passed on: it says where it broke, not what is wrong
    return verdict


_RAW = re.compile(r"\b[A-Z][A-Za-z]*(Error|Exception)\b")
