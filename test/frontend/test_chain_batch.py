"""spatial-run --chain over `spatial-import --step both --batch B`: the admission runs once per
user (user b into slot b, its own prompt and position drawn with seed + b) and the batched decode
takes each user's token at the row after its prompt (tools/frontend/chaining.py, per user).

Drawn, the users sit at different positions and the simulator agrees with the reference; with
--weights each user's tokens and logits are its own generation's: spatial-generate's loop over the
single-user deployment (`--step both` without --batch) for its prompt alone."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("gguf")
sys.path.insert(0, str(Path(__file__).parent))
from tiny_gguf import write_tiny  # noqa: E402

from spatial_dialect.tools.frontend.generation import REFERENCE, Generator  # noqa: E402
from spatial_dialect.tools.interpreters.inputs import draw_inputs  # noqa: E402
from spatial_dialect.tools.spatial_import import main as import_main  # noqa: E402
from spatial_dialect.tools.spatial_run import entry_function, parse_module  # noqa: E402
from spatial_dialect.tools.spatial_run import main as run_main  # noqa: E402

USERS, PROMPT = 3, 4
CHAIN = ["--chain", "qwen3_prefill,qwen3_decode"]


def imported(model: Path, out: Path, *extra: str) -> Path:
    args = ["--step", "both", "--tokens", str(PROMPT), "--cache", "32", "--dtype", "f32"]
    args.append("--logits")  # the whole choice compared, not only its arg-max
    assert import_main([str(model), "-o", str(out), *args, *extra]) == 0
    return out


def chained(program: Path, save: Path, *extra: str) -> dict[str, np.ndarray]:
    args = [str(program), "--target", "wormhole_n150", *CHAIN, "--save", str(save), *extra]
    assert run_main(args) == 0
    return dict(np.load(save))


@pytest.mark.parametrize("paged", [[], ["--paged", "8"]], ids=["contiguous", "paged"])
def test_drawn_users_sit_at_different_positions(tmp_path, paged, capsys):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    program = imported(model, tmp_path / "b.mlir", "--batch", str(USERS), *paged)
    saved = chained(program, tmp_path / "run.npz", "--backend", "sim")
    out = capsys.readouterr().out
    assert "PASS" in out
    for b in range(USERS):
        assert f"admits user {b}" in out
        assert f"reference/qwen3_prefill.user{b}/token" in saved
    # the decode's users sit at different positions, each the row after its admission's
    # prompt (the file keeps the last admission's own inputs: user USERS - 1's)
    pos = saved["decode.pos"]
    assert len(set(pos.tolist())) == USERS, pos
    assert pos[-1] == saved["prefill.pos"][0] + PROMPT
    if paged:  # the last admission wrote through its slot: the decode's last table row
        assert (saved["prefill.block_table"] == saved["decode.block_table"][-1:]).all()
    else:
        assert saved["prefill.block_table"].tolist() == [[USERS - 1]]


def test_weights_give_each_user_its_own_generation(tmp_path, capsys):
    model = write_tiny(tmp_path / "qwen3.gguf", "qwen3", "F16", tied=True)
    batched = imported(model, tmp_path / "b.mlir", "--batch", str(USERS), "--paged", "8")
    saved = chained(batched, tmp_path / "b.npz", "--backend", "sim", "--weights", str(model))
    assert "PASS" in capsys.readouterr().out
    # each user alone: spatial-generate's loop over the single-user deployment, the reference
    alone = Generator(str(model), PROMPT, 2, None, REFERENCE, "f32", extra=("logits",))
    admission = entry_function(parse_module(batched.read_text()), "qwen3_prefill")
    for b in range(USERS):
        prompt = draw_inputs(admission, b)["prefill.ids"]  # user b's, drawn with seed + b
        steps = alone.generate(prompt.tolist()).steps
        for kind in ("reference", "simulated"):
            assert saved[f"{kind}/qwen3_prefill.user{b}/token"][-1] == steps[0].token, (kind, b)
            assert saved[f"{kind}/qwen3_decode/token"][b] == steps[1].token, (kind, b)
            # at its own position over its own cache: the same logits within f32 rounding
            mine = saved[f"{kind}/qwen3_decode/logits"][b]
            expected = steps[1].outputs["logits"][0]
            np.testing.assert_allclose(mine, expected, rtol=1e-4, atol=1e-3, err_msg=f"{kind} {b}")
