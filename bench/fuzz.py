"""The full fuzz run of issue 16: seeded program mutants through spatial-opt on three targets
(the compiling ones through spatial-run on a small one), broken TOML targets three ways, all
in-process with a time limit per run; prints the table (runs, clean diagnostic, success,
internal error, hangs) and the failures. With --gguf N, also N mutated GGUF files (issue 25,
test/fuzz/gguf_mutants.py) through spatial-import and `spatial-run --weights`, each forked under a
memory limit, with how long each took (the tool's own time: a refusal must take well under a
second, whatever the file claims).

    .venv/bin/python bench/fuzz.py [--programs 500] [--targets 100] [--seed 16] [--limit 60]
    .venv/bin/python bench/fuzz.py --programs 0 --targets 0 --gguf 1000
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test" / "fuzz"))
import fuzzlib  # noqa: E402

OPT_TARGETS = ("wormhole_n150", "plasticine", "h100")
RUN_TARGET = "blackhole_p150"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--programs", type=int, default=500)
    ap.add_argument("--targets", type=int, default=100)
    ap.add_argument("--seed", type=int, default=16)
    ap.add_argument("--limit", type=int, default=60, help="seconds per run before it is a hang")
    ap.add_argument(
        "--run-every", type=int, default=1, help="spatial-run every Nth compiling mutant"
    )
    ap.add_argument("--gguf", type=int, default=0, help="mutated GGUF files (0: none)")
    ap.add_argument(
        "--memory", type=int, default=2 << 30, help="bytes a GGUF case may map (default 2 GiB)"
    )
    args = ap.parse_args()
    work = fuzzlib.workdir()
    outcomes: list[fuzzlib.Outcome] = []
    start = time.time()
    compiled = 0
    for name, kind, text in fuzzlib.program_mutants(args.programs, args.seed):
        ok = False
        for target in OPT_TARGETS:
            o = fuzzlib.opt_case(name, kind, text, target, work, args.limit)
            outcomes.append(o)
            ok |= o.verdict == "success"
        if ok:
            compiled += 1
            if compiled % args.run_every == 0:
                outcomes.append(fuzzlib.run_case(name, kind, text, RUN_TARGET, work, args.limit))
    for name, kind, text in fuzzlib.target_mutants(args.targets, args.seed):
        for how in ("opt", "memory-map", "run"):
            outcomes.append(fuzzlib.target_case(name, kind, text, how, work, args.limit))
    gguf_runs = gguf_table(args, work) if args.gguf else []
    elapsed = time.time() - start
    print(
        f"fuzz: seed {args.seed}, {args.programs} programs, {args.targets} targets, "
        f"{args.gguf} GGUF files, {elapsed:.0f} s"
    )
    print()
    print("| tool | runs | clean diagnostic | success | internal error | hang | other |")
    print("|---|---|---|---|---|---|---|")
    bad = []
    for tool in ("spatial-opt", "spatial-run"):
        mine = [o for o in outcomes if o.tool == tool]
        c = Counter(o.verdict for o in mine)
        other = len(mine) - c["diagnostic"] - c["success"] - c["internal"] - c["hang"]
        print(
            f"| `{tool}` | {len(mine)} | {c['diagnostic']} | {c['success']} | {c['internal']} "
            f"| {c['hang']} | {other} |"
        )
        bad += [o for o in mine if o.verdict not in ("diagnostic", "success")]
    if gguf_runs:
        print()
        print(
            "| GGUF tool | runs | clean diagnostic | success | other | median s | p99 s | max s |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for tool in ("spatial-import", "spatial-run"):
            mine = [r for r in gguf_runs if r.tool == tool]
            c = Counter(r.verdict for r in mine)
            s = sorted(r.seconds for r in mine)
            print(
                f"| `{tool}` | {len(mine)} | {c['diagnostic']} | {c['success']} "
                f"| {len(mine) - c['diagnostic'] - c['success']} | {s[len(s) // 2]:.3f} "
                f"| {s[min(len(s) - 1, len(s) * 99 // 100)]:.3f} | {s[-1]:.3f} |"
            )
            bad += [r for r in mine if r.verdict not in ("diagnostic", "success")]
    for o in bad[:40]:
        print(f"\n{o.verdict}: {o.tool} {o.name} ({o.kind}): {o.stderr.strip()[-600:]}")
    return 1 if bad else 0


def gguf_table(args: argparse.Namespace, work: Path) -> list:
    import gguf_mutants

    runs = []
    steps = None
    for name, kind, data in gguf_mutants.gguf_mutants(work, args.gguf, args.seed):
        steps = steps or gguf_mutants.programs(work)
        runs += gguf_mutants.gguf_case(name, kind, data, work, steps, args.limit, args.memory)
    return runs


if __name__ == "__main__":
    sys.exit(main())
