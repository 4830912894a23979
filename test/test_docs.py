"""The sp sample in docs/sp.md is what the tool prints today: a doc that drifts from the syntax
is a bug a user meets first."""

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_sized_section_in_docs_is_the_tools_output():
    text = (ROOT / "docs" / "sp.md").read_text()
    sample = re.search(r"```mlir\n(sp\.entry @gemm.*?)```", text, re.S)
    assert sample is not None, "docs/sp.md lost its sample section"
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "spatial_dialect.tools.spatial_opt",
            "examples/gemm_small.mlir",
            "-p",
            "spatial-pipeline{target=wormhole_n150}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    printed = [line.strip() for line in out.splitlines()]
    for line in sample.group(1).strip().splitlines():
        line = line.strip()
        if "attributes {why = ...," in line:  # the reasons are shortened in the doc
            prefix = line.split(" attributes {")[0]
            assert any(p.startswith(prefix + " attributes {why = ") for p in printed), line
        else:
            assert line in printed, line


def test_the_api_page_counts_the_tg_ops():
    from spatial_dialect.tg import TG

    text = (ROOT / "docs" / "api.md").read_text()
    stated = re.search(r"the tg dialect \((\d+) ops", text)
    assert stated is not None, "docs/api.md lost the tg op count"
    assert int(stated.group(1)) == len(list(TG.operations))
