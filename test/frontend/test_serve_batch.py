"""examples/serve_batch.py: continuous batching over one admit and one decode program. Users
join (a free slot, fresh blocks of the pool), decode side by side at their own positions, idle
slots at -1, and leave (their blocks back to the pool, reused by later users): every user's
tokens are the ones it gets alone, from the single-user programs over its own cache, under the
reference and under our simulator running the compiled deployment (compiled once)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "serve_batch.py"


def load():
    spec = importlib.util.spec_from_file_location("serve_batch", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("backend", ["reference", "sim"])
def test_served_users_get_their_solo_tokens(backend, monkeypatch):
    serve = load()
    compiled = []
    compile_module = serve.compile_module

    def counted(functions, target):
        compiled.append([f.sym_name.data for f in functions])
        return compile_module(functions, target)

    monkeypatch.setattr(serve, "compile_module", counted)
    users = [serve.User(u.name, u.prompt, u.wants) for u in serve.USERS]
    server = serve.serve(users, backend=backend)
    # the loop did what the test means: a slot reused by a later user, idle slots in a step
    assert any(line.startswith("dee joins slot 1") for line in server.log)
    assert "decode at [9, -1, -1]" in server.log
    # one deployment compiled once, before the first user joined; none after
    expected = [["tiny_admit", "tiny_decode"]] if backend == "sim" else []
    assert compiled == expected
    solo = serve.Solo(backend=backend)
    for user in users:
        assert len(user.tokens) == user.wants
        assert user.tokens == solo(user), user.name
