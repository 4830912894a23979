"""mesh.argmax_gather, the vocab-parallel arg-max (MPI's MAXLOC): its meaning on stacks, by hand,
ties across chips included; the two executors' host helpers (TT-Lang's and Triton's) on the same
cases; its price; and the tensor-parallel decision that writes it. The whole runs of tiny_decode
over n300 / p150x4 are test/run/test_run_mesh.py's (sim) and the backends' mesh tests
(tt-lang-sim, triton-interpret, SPATIAL_MESH_FULL=1)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context

from spatial_dialect.mesh import ArgmaxGatherOp, Collective
from spatial_dialect.passes.tensor_parallel import TensorParallelPass
from spatial_dialect.tools.interpreters.collectives import argmax_gather
from spatial_dialect.tools.interpreters.deployment import STEP_FUNCTIONS
from spatial_dialect.tools.spatial_run import main as run_main
from spatial_dialect.tools.spatial_run import parse_module

ROOT = Path(__file__).resolve().parents[2]

# Two chips, two rows of three local columns each (whole rows of six columns):
#   row 0: chip 0 [1, 5, 2], chip 1 [5, 1, 1] -> a tie of 5 across chips: global column 1 (chip 0)
#   row 1: chip 0 [0, 0, 9], chip 1 [9, 0, 0] -> a tie of 9 across chips: global column 2 (chip 0)
#   row 2: chip 0 [1, 2, 0], chip 1 [0, 7, 7] -> chip 1 wins, its first 7: global column 4
#   row 3: chip 0 [3, 3, 3], chip 1 [1, 1, 1] -> a tie within chip 0: global column 0
CHIP0 = np.array([[1, 5, 2], [0, 0, 9], [1, 2, 0], [3, 3, 3]], dtype=np.float32)
CHIP1 = np.array([[5, 1, 1], [9, 0, 0], [0, 7, 7], [1, 1, 1]], dtype=np.float32)
WANT = np.array([1, 2, 4, 0], dtype=np.int32)


def test_argmax_gather_by_hand_ties_go_to_the_lowest_global_column():
    out = argmax_gather(np.stack([CHIP0, CHIP1]), 1, 0)
    assert out.dtype == np.int32 and out.shape == (2, 4)
    assert out[0].tolist() == WANT.tolist() and out[1].tolist() == WANT.tolist()
    whole = np.concatenate([CHIP0, CHIP1], axis=1)
    assert whole.argmax(axis=1).tolist() == WANT.tolist()  # tg.argmax over the whole row


def test_argmax_gather_of_rank_1_shards_and_over_the_minor_axis_of_a_2d_mesh():
    # one row of 2 columns on each of 4 chips: [0, 1 | 6, 2 | 6, 6 | -1, 0] -> column 2
    line = np.array([[0, 1], [6, 2], [6, 6], [-1, 0]], dtype=np.float32)
    assert argmax_gather(line, 1, 0).tolist() == [[2]] * 4
    # a 2x2 mesh sharding over axis 1: mesh row 0 holds CHIP0 | CHIP1, mesh row 1 the reverse
    grid = np.stack([np.stack([CHIP0, CHIP1]), np.stack([CHIP1, CHIP0])])
    out = argmax_gather(grid, 2, 1)
    assert out.shape == (2, 2, 4)
    assert out[0, 1].tolist() == WANT.tolist()
    # [5,1,1|1,5,2] -> 0; [9,0,0|0,0,9] -> 0 (the first 9); [0,7,7|1,2,0] -> 1; [1,1,1|3,3,3] -> 3
    assert out[1, 0].tolist() == [0, 0, 1, 3]


def test_the_step_function_is_registered():
    assert (
        STEP_FUNCTIONS[Collective.ARGMAX_GATHER](np.stack([CHIP0, CHIP1]), 1, 0, "", "")[1].tolist()
        == WANT.tolist()
    )


def test_tt_lang_host_step_picks_as_the_reference(monkeypatch):
    torch = pytest.importorskip("torch")
    from spatial_dialect.tools.backend.ttlang import host

    monkeypatch.setattr(host, "torch", torch, raising=False)
    monkeypatch.setattr(host, "MESH", (1, 2), raising=False)
    monkeypatch.setattr(host, "TENSORS", {"logits": ((4, 3), "bf16"), "token": ((4,), "i32")})
    # a chip's DRAM tensor is its logical value here: no tile padding to cut, no device
    monkeypatch.setattr(host, "_logical", lambda t, name: t)
    monkeypatch.setattr(host, "_on_chip", lambda value, device, name: value.clone())
    drams = [{"logits": torch.tensor(c, dtype=torch.bfloat16)} for c in (CHIP0, CHIP1)]
    host._argmax_gather(None, [None, None], drams, "logits", "token", 1)
    for dram in drams:
        assert dram["token"].shape == (1, 4)
        assert dram["token"].reshape(-1).tolist() == WANT.tolist()


class _Ranks:
    """torch.distributed for ranks run one after the other: a first pass records what each rank
    gives to all_gather_into_tensor, the second hands every rank the concatenation."""

    def __init__(self, n: int):
        self.n, self.rank, self.given, self.torch = n, 0, {}, pytest.importorskip("torch")

    def get_world_size(self, group=None):
        return self.n

    def get_rank(self, group=None):
        return self.rank

    def all_gather_into_tensor(self, out, mine, group=None):
        self.given[self.rank] = mine.clone()
        if len(self.given) == self.n:
            out.copy_(self.torch.cat([self.given[r] for r in range(self.n)]))


def test_triton_helper_gathers_the_pairs_and_picks_as_the_reference(monkeypatch):
    torch = pytest.importorskip("torch")
    from spatial_dialect.tools.backend.triton import mesh_host

    ranks = _Ranks(2)
    monkeypatch.setattr(mesh_host, "torch", torch, raising=False)
    monkeypatch.setattr(mesh_host, "dist", ranks, raising=False)
    outs = [torch.zeros((1, 4), dtype=torch.int32) for _ in range(2)]
    for _ in range(2):  # the first pass records each rank's pairs, the second picks
        for r, chip in enumerate((CHIP0, CHIP1)):
            ranks.rank = r
            mesh_host._argmax_gather(torch.tensor(chip, dtype=torch.bfloat16), outs[r], None, 1)
    assert [o.reshape(-1).tolist() for o in outs] == [WANT.tolist()] * 2


def test_its_price_is_the_all_gather_of_the_pairs():
    text = """
    mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
    func.func @f(%l: tensor<4x256xbf16>) -> tensor<4xi32> {
      %t = mesh.argmax_gather %l axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<4x256xbf16> -> tensor<4xi32>
      func.return %t : tensor<4xi32>
    }"""
    module = parse_module(text)
    (op,) = [o for o in module.walk() if isinstance(o, ArgmaxGatherOp)]
    assert op.priced_bytes() == 2 * 4 * (2 + 4)  # 2 chips x 4 rows x (bf16 value + i32 index)


def test_the_decision_prices_the_pick_against_gathering_the_logits():
    """Over n300 the tiny step's LM head goes by vocab only when split is preferred, and then its
    arg-max is the pick, recorded with the logits' gather as its runner-up."""
    module = parse_module((ROOT / "examples" / "tiny_decode.mlir").read_text())
    TensorParallelPass("n300", prefer_sharded=True).apply(Context(), module)
    (pick,) = [o for o in module.walk() if isinstance(o, ArgmaxGatherOp)]
    assert pick.attributes["tp.plan"].data == "vocab"
    assert pick.attributes["tp.runner_up"].data.startswith("replicate: ")
    assert pick.cost is not None and pick.cost.bytes.data == 12
    module = parse_module((ROOT / "examples" / "tiny_decode.mlir").read_text())
    TensorParallelPass("n300").apply(Context(), module)
    assert not [o for o in module.walk() if isinstance(o, ArgmaxGatherOp)]


@pytest.mark.parametrize("target", ["n300", "p150x4"])
def test_tiny_decode_with_the_pick_runs_under_the_simulator(capsys, target):
    rc = run_main(
        [str(ROOT / "examples" / "tiny_decode.mlir"), "--target", target, "--prefer-sharded"]
    )
    out = capsys.readouterr().out
    assert rc == 0 and out.splitlines()[1].split()[:3] == ["token", "1", "i32"], out
    assert out.splitlines()[-1] == "PASS: 3 output(s) within tolerance"


PER_CHIP_HEAD = """
mesh.mesh @n300 shape 2 topology [line] links [1] preset "n300"
func.func @head(%x: tensor<4x64xbf16> {mesh.sharding = #mesh.sharding<@n300, [replicate]>},
                %w: tensor<64x128xbf16> {mesh.sharding = #mesh.sharding<@n300, [shard(1)]>})
    -> (tensor<4xi32> {mesh.sharding = #mesh.sharding<@n300, [replicate]>}) {
  %l = tg.matmul %x, %w : (tensor<4x64xbf16>, tensor<64x128xbf16>) -> tensor<4x128xbf16>
  %t = mesh.argmax_gather %l axis 0 from #mesh.sharding<@n300, [shard(1)]> to #mesh.sharding<@n300, [replicate]> : tensor<4x128xbf16> -> tensor<4xi32>
  func.return %t : tensor<4xi32>
}
"""
"""A per-chip LM head of four rows: its indices against the mesh reference, exactly."""


@pytest.mark.parametrize("backend", ["tt-lang-sim", "triton-interpret"])
def test_a_per_chip_head_picks_as_the_reference_on_each_backend(capsys, tmp_path, backend):
    pytest.importorskip("ttl" if backend == "tt-lang-sim" else "triton")
    path = tmp_path / "head.mlir"
    path.write_text(PER_CHIP_HEAD)
    rc = run_main([str(path), "--target", "n300", "--backend", backend])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1] == "PASS: 1 output(s) within tolerance on n300", out


FULL = os.environ.get("SPATIAL_MESH_FULL") == "1"


@pytest.mark.skipif(not FULL, reason="SPATIAL_MESH_FULL=1 runs tiny_decode on each backend")
@pytest.mark.parametrize("backend", ["tt-lang-sim", "triton-interpret"])
@pytest.mark.parametrize("target", ["n300", "p150x4"])
def test_tiny_decode_with_the_pick_runs_on_each_backend(capsys, target, backend):
    pytest.importorskip("ttl" if backend == "tt-lang-sim" else "triton")
    tiny = str(ROOT / "examples" / "tiny_decode.mlir")
    rc = run_main([tiny, "--target", target, "--prefer-sharded", "--backend", backend])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert out.splitlines()[-1] == "PASS: 3 output(s) within tolerance", out
