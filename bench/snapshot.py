"""Snapshot of what the compiler decides and computes, for refactors that must change none of it.

For every shipped example on every preset (and the shipped target files on the GEMMs) it records
the sha256 of the sized IR (`spatial-opt -p 'spatial-pipeline{target=T}'`), of the report (`-t
report`) and of the refusal where there is one; for every tiny example it also records
`spatial-run --timing --save` on each preset: its printed lines and the sha256 of every array it
saved. The snapshot lives in bench/results/snapshot.json; a refactor runs

    python bench/snapshot.py --check      # exit 1 and a line per difference
    python bench/snapshot.py --write      # after a change that is meant to move a plan

The Qwen3-Next 80B prefills (about 90 s a target) are compiled on wormhole_n150 alone unless
SPATIAL_EXAMPLES=all. It runs the CLIs as a user does, so it survives moves inside the package.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import os
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SNAPSHOT = ROOT / "bench" / "results" / "snapshot.json"
BIN = Path(sys.executable).parent
PRESETS = ["blackhole_p150", "h100", "h200", "plasticine", "rtx3060", "wormhole_n150"]
SLOW = ("qwen3_next_80b_a3b_prefill", "qwen3_next_80b_a3b_prefill_f32")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:16]


def _run(argv: list[str]) -> tuple[int, bytes, bytes]:
    done = subprocess.run(argv, capture_output=True, cwd=ROOT, check=False)
    return done.returncode, done.stdout, done.stderr


def _relative(path: Path) -> str:
    """Paths as the user types them from the checkout, so the records (errors quote the file, IR
    records a target file's path) are the same in any checkout."""
    return str(path.relative_to(ROOT))


def _opt(example: Path, target: str) -> dict[str, str]:
    quoted = f'"{target}"' if "/" in target else target  # a target file's path is quoted
    pipeline = f"spatial-pipeline{{target={quoted}}}"
    record = {}
    for view, extra in (("ir", []), ("report", ["-t", "report"])):
        rc, out, err = _run([str(BIN / "spatial-opt"), _relative(example), "-p", pipeline, *extra])
        record[view] = _sha(out) if rc == 0 else f"rc {rc}: {err.decode().strip()[:300]}"
    return record


def _run_record(example: Path, target: str) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        saved = Path(tmp) / "run.npz"
        argv = [str(BIN / "spatial-run"), _relative(example), "--target", target, "--timing"]
        rc, out, err = _run([*argv, "--save", str(saved)])
        arrays = {}
        if saved.exists():
            with np.load(saved) as npz:
                for name in sorted(npz.files):
                    buffer = io.BytesIO()
                    np.save(buffer, npz[name])
                    arrays[name] = _sha(buffer.getvalue())
    return {"rc": rc, "lines": (out + err).decode().splitlines(), "arrays": arrays}


def jobs() -> list[tuple[str, object]]:
    every_target = os.environ.get("SPATIAL_EXAMPLES") == "all"
    todo: list[tuple[str, object]] = []
    for example in sorted(EXAMPLES.glob("*.mlir")):
        targets = PRESETS if example.stem not in SLOW or every_target else ["wormhole_n150"]
        for target in targets:
            todo.append((f"opt {example.stem} {target}", (_opt, example, target)))
        if example.stem.startswith("tiny_"):
            for target in PRESETS:
                todo.append((f"run {example.stem} {target}", (_run_record, example, target)))
    for toml in sorted((EXAMPLES / "targets").glob("*.toml")):
        for example in ("gemm_small", "gemm_2048"):
            path = EXAMPLES / f"{example}.mlir"
            todo.append((f"opt {example} {toml.name}", (_opt, path, _relative(toml))))
    return todo


def snapshot() -> dict[str, object]:
    todo = jobs()
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = pool.map(lambda job: job[1][0](*job[1][1:]), todo)
        return {key: value for (key, _), value in zip(todo, results, strict=True)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--check", action="store_true", help="compare with the stored snapshot")
    mode.add_argument("--write", action="store_true", help="store a new snapshot")
    args = parser.parse_args()
    now = snapshot()
    if args.write:
        SNAPSHOT.write_text(json.dumps(now, indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(now)} records to {SNAPSHOT.relative_to(ROOT)}")
        return 0
    before = json.loads(SNAPSHOT.read_text())
    differ = [key for key in sorted(now) if key in before and now[key] != before[key]]
    for key in differ:
        print(f"differs: {key}\n  before: {before[key]}\n  now:    {now[key]}")
    missing = sorted(set(before) - set(now))
    for key in missing:
        print(f"not run now: {key}")
    print(f"{len(now) - len(differ)} of {len(now)} records identical; {len(differ)} differ")
    return 1 if differ or missing else 0


if __name__ == "__main__":
    sys.exit(main())
